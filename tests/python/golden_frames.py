#!/usr/bin/env python3
"""Every golden of tests/golden/hta through the Python API: TraceAnalysis(hta_compat=True) called with the
golden's arguments, each returned frame compared with HTA's (columns, index, dtypes, values; rtol 1e-6).

usage: golden_frames.py [ANALYSIS ...]   (prints one line per mismatch, then 'matched M/N')
Needs numpy and pandas; imports htac from python/ and libhta.so from $BUILD (default build)."""
import json
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("HTAC_LIB", os.path.join(ROOT, os.environ.get("BUILD", "build"), "libhta.so"))
TRACES = os.path.join(ROOT, "tests", "data", "hta")
GOLDEN = os.path.join(ROOT, "tests", "golden", "hta")
RTOL = 1e-6


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def same(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if num(a) and num(b):
        if isinstance(b, float) and math.isnan(b):
            return False
        return abs(a - b) <= 1e-9 + RTOL * max(abs(a), abs(b))
    return a == b


def py(v):
    """numpy scalars and lists -> plain Python, as the golden JSON holds them."""
    import numpy as np
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, tuple):
        return [py(x) for x in v]
    if isinstance(v, list):
        return [py(x) for x in v]
    return v


def compare_frame(g, df, sort_rows=False):
    """g: a golden DataFrame part; df: ours.  -> error text or None."""
    import pandas as pd
    if df is None:
        return "None returned, golden has a DataFrame"
    if not isinstance(df, pd.DataFrame):
        return f"{type(df).__name__} returned"
    cols = [py(c) for c in df.columns]
    gcols = [list(c) if isinstance(c, list) else c for c in g["columns"]]
    if cols != gcols:
        return f"columns {cols} != golden {gcols}"
    inames = [n for n in df.index.names]
    if inames != g["index_names"]:
        return f"index names {inames} != golden {g['index_names']}"
    dts = [str(t) for t in df.dtypes]
    if dts != g["dtypes"]:
        bad = [(c, a, b) for c, a, b in zip(cols, dts, g["dtypes"]) if a != b]
        return f"dtypes differ (column, ours, golden): {bad[:4]}"
    grows, gidx = g["data"], g["index"]
    if g.get("truncated"):
        # the golden holds the first rows of the frame sorted by its columns (the rest left out for size)
        if len(df) != g["total_rows"]:
            return f"{len(df)} rows, golden {g['total_rows']}"
        df = df.sort_values(list(df.columns), na_position="last", kind="stable").head(len(grows))
    rows = [[py(x) for x in r] for r in df.astype(object).values.tolist()]
    idx = [py(i) for i in df.index.tolist()]
    if len(rows) != len(grows):
        return f"{len(rows)} rows, golden {len(grows)}"
    if sort_rows:
        key = lambda r: json.dumps(r, default=str)
        rows, grows = sorted(rows, key=key), sorted(grows, key=key)
    for i, (r, gr) in enumerate(zip(rows, grows)):
        for j, (a, b) in enumerate(zip(gr, r)):
            if not same(a, b):
                return f"row {i} column {gcols[j]!r}: {b!r} != golden {a!r}"
    if not sort_rows:
        for i, (a, b) in enumerate(zip(gidx, idx)):
            if not same(a, b) and a != b:
                return f"index {i}: {b!r} != golden {a!r}"
    return None


def compare_series(g, s):
    import pandas as pd
    if not isinstance(s, pd.Series):
        return f"{type(s).__name__} returned, golden has a Series"
    if s.name != g["name"] or list(s.index.names) != g["index_names"] or str(s.dtype) != g["dtype"]:
        return f"series {s.name}/{list(s.index.names)}/{s.dtype} != golden {g['name']}/{g['index_names']}/{g['dtype']}"
    if [py(i) for i in s.index] != g["index"]:
        return f"series index {list(s.index)} != golden {g['index']}"
    for i, (a, b) in enumerate(zip(g["data"], s.tolist())):
        if not same(a, b):
            return f"series row {i}: {b!r} != golden {a!r}"
    return None


def compare_part(g, ours, sort_rows=False):
    if isinstance(g, dict) and g.get("type") == "None":
        g = None
    if g is None:
        return None if ours is None else f"{type(ours).__name__} returned, golden None"
    if isinstance(g, dict) and g.get("type") == "DataFrame":
        return compare_frame(g, ours, sort_rows)
    if isinstance(g, dict) and g.get("type") == "Series":
        return compare_series(g, ours)
    return None if py(ours) == g else f"{ours!r} != golden {g!r}"


def calls(an, a, args, tmp):
    """The method call a golden records -> {part name: our value}."""
    rk = args.get("ranks")
    if an == "temporal_breakdown":
        return {"result": a.get_temporal_breakdown(visualize=False)}
    if an == "idle_time_breakdown":
        kw = {}
        if args.get("consecutive_kernel_delay") is not None:
            kw["consecutive_kernel_delay"] = args["consecutive_kernel_delay"]
        d, s = a.get_idle_time_breakdown(ranks=rk, visualize=False,
                                         show_idle_interval_stats=args.get("show_idle_interval_stats", False), **kw)
        return {"idle_time": d, "interval_stats": s}
    if an == "gpu_kernel_breakdown":
        kt, kd = a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=args["duration_ratio"],
                                            num_kernels=args["num_kernels"],
                                            include_memory_kernels=args["include_memory_kernels"])
        return {"kernel_type": kt, "all_kernels": kd}
    if an == "comm_comp_overlap":
        return {"result": a.get_comm_comp_overlap(visualize=False)}
    if an == "cuda_kernel_launch_stats":
        d = a.get_cuda_kernel_launch_stats(ranks=rk, runtime_cutoff=args["runtime_cutoff"],
                                           launch_delay_cutoff=args["launch_delay_cutoff"],
                                           include_memory_events=args["include_memory_events"], visualize=False)
        return {f"rank_{r}": v for r, v in d.items()}
    if an == "gpu_user_annotation_breakdown":
        return {"result": a.get_gpu_user_annotation_breakdown(visualize=False, duration_ratio=args["duration_ratio"],
                                                              num_kernels=args["num_kernels"])}
    if an == "queue_length_summary":
        return {"result": a.get_queue_length_summary(ranks=rk)}
    if an == "memory_bw_summary":
        return {"result": a.get_memory_bw_summary(ranks=rk)}
    if an == "time_spent_blocked_on_full_queue":
        return {"result": a.get_time_spent_blocked_on_full_queue({r: None for r in rk} if rk else None)}
    if an == "frequent_cuda_kernel_sequences":
        return {"result": a.get_frequent_cuda_kernel_sequences(args["operator_name"], tmp,
                                                               min_pattern_len=args["min_pattern_len"],
                                                               rank=args["rank"], top_k=args["top_k"])}
    if an == "aten_op_kernels_and_delay":
        return {f"rank_{r}": v for r, v in a.get_aten_op_kernels_and_delay(ranks=rk).items()}
    if an == "cupti_counter_data_with_operators":
        return {f"item_{i}": v for i, v in enumerate(a.get_cupti_counter_data_with_operators(ranks=rk))}
    if an == "profiler_steps":
        return {"result": a.get_profiler_steps()}
    if an == "potential_stragglers":
        return {"result": sorted(a.get_potential_stragglers(num_candidates=args.get("num_candidates", 2)))}
    if an == "critical_path":
        inst = args.get("instance_id")
        g, ok = a.critical_path_analysis(rank=args.get("rank", 0), annotation=args.get("annotation") or "",
                                         instance_id=tuple(inst) if isinstance(inst, list) else inst)
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            summ = g.summary()
        st = g.stats()
        stats = {k: st[k] for k in ("graph_nodes", "graph_edges", "critical_path_nodes", "critical_path_edges",
                                    "critical_path_total_weight", "critical_path_events") if k in st}
        stats["graph_edge_types"] = {k.split(".", 1)[1]: v for k, v in st.items()
                                     if k.startswith("graph_edge_types.") and v}
        return {"success": ok, "summary": summ, "breakdown_sorted": g.get_critical_path_breakdown(), "stats": stats}
    return None


def compare_stats(g, ours):
    for k, v in g.items():
        if k == "graph_edge_types":
            gv = {a: b for a, b in v.items() if b}
            if {a: float(b) for a, b in ours.get(k, {}).items()} != {a: float(b) for a, b in gv.items()}:
                return f"stats {k}: {ours.get(k)} != golden {gv}"
        elif k in ours and not same(v, ours[k]):
            return f"stats {k}: {ours[k]} != golden {v}"
    return None


SKIP = {"trace_summary"}  # the generator's own summary, not a method of TraceAnalysis


def folders():
    for root, dirs, files in sorted(os.walk(GOLDEN)):
        if "status.json" in files and not os.path.relpath(root, GOLDEN).startswith("_"):
            yield os.path.relpath(root, GOLDEN)


def check_folder(rel, analyses=None, per=None):
    """-> (matched, total, [problem lines]) for one golden folder; per (a dict), when given, gets
    per[analysis] = [compared, [problem lines]]."""
    from htac.trace_analysis import TraceAnalysis
    status = json.load(open(os.path.join(GOLDEN, rel, "status.json")))
    todo = [an for an, st in status.items() if an != "load" and an not in SKIP and str(st).startswith("ok")
            and (not analyses or an in analyses)]
    if not todo:
        return 0, 0, []
    a = TraceAnalysis(trace_dir=os.path.join(TRACES, rel), hta_compat=True)
    matched = total = 0
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for an in todo:
            g = json.load(open(os.path.join(GOLDEN, rel, an + ".json")))
            try:
                ours = calls(an, a, g.get("args") or {}, tmp)
            except Exception as e:  # noqa: BLE001 - reported as the mismatch
                total += 1
                bad.append(f"{rel} {an}: raised {type(e).__name__}: {e}")
                if per is not None:
                    per.setdefault(an, [0, []])[0] += 1
                    per[an][1].append(bad[-1])
                continue
            parts = g["parts"] if isinstance(g.get("parts"), dict) else {"result": g.get("parts")}
            for pn, gp in parts.items():
                total += 1
                if per is not None:
                    per.setdefault(an, [0, []])[0] += 1
                if an == "critical_path" and pn == "stats":
                    e = compare_stats(gp, ours.get(pn, {}))
                elif pn not in ours:
                    e = None if gp is None else f"no part {pn} (ours: {list(ours)})"
                else:
                    e = compare_part(gp, ours[pn], sort_rows=(pn == "breakdown_sorted"))
                if e:
                    bad.append(f"{rel} {an}/{pn}: {e}")
                    if per is not None:
                        per[an][1].append(bad[-1])
                else:
                    matched += 1
    a.close()
    return matched, total, bad


def check_diff():
    """The trace diff goldens (tests/golden/hta/_trace_diff__control_vs_test)."""
    from htac.trace_diff import DeviceType, LabeledTrace, TraceDiff
    d = os.path.join(GOLDEN, "_trace_diff__control_vs_test")
    c = LabeledTrace(label="Control", trace_dir=os.path.join(TRACES, "trace_diff", "control"), hta_compat=True)
    t = LabeledTrace(label="Test", trace_dir=os.path.join(TRACES, "trace_diff", "test"), hta_compat=True)
    matched = total = 0
    bad = []
    for f in sorted(os.listdir(d)):
        if not (f.startswith("compare_traces") or f.startswith("ops_diff")):
            continue
        g = json.load(open(os.path.join(d, f)))
        args = dict(g["args"])
        method = args.pop("method")
        if "device_type" in args:
            args["device_type"] = DeviceType[args["device_type"]]
        total += 1
        try:
            ours = getattr(TraceDiff, method)(c, t, **args)
            e = compare_part(g["parts"]["result"], ours)
        except Exception as ex:  # noqa: BLE001
            e = f"raised {type(ex).__name__}: {ex}"
        if e:
            bad.append(f"_trace_diff {f[:-5]}: {e}")
        else:
            matched += 1
    return matched, total, bad


def main():
    analyses = sys.argv[1:]
    m = n = 0
    for rel in folders():
        a, b, bad = check_folder(rel, analyses)
        m, n = m + a, n + b
        for line in bad:
            print(line)
    if not analyses or "trace_diff" in analyses:
        a, b, bad = check_diff()
        m, n = m + a, n + b
        for line in bad:
            print(line)
    print(f"matched {m}/{n}")
    return 0 if m == n else 1


if __name__ == "__main__":
    sys.exit(main())
