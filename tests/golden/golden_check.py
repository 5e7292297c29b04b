#!/usr/bin/env python3
# Golden comparison engine: runs hta on tests/data/hta and compares with HTA's results in tests/golden/hta.
"""Run the project's `hta` on every golden trace folder and compare its JSON tables with Python HTA's.

usage: golden_check.py HTA_BIN TRACES_ROOT GOLDEN_ROOT ANALYSIS [ANALYSIS ...] [--verbose]
  e.g. tests/golden/golden_check.py build/hta tests/data/hta tests/golden/hta temporal_breakdown --verbose

For each golden folder whose status for ANALYSIS is ok / ok-empty, it runs the command that the issues
specify, with the options recorded in the golden's args, and compares every DataFrame part:
named index levels become leading columns, two-level column names keep their last level, per-rank parts
(rank_N / item_N) are rows of one table with a `rank` column, a `result` part is named after the analysis.
Prints one line per mismatch (with --verbose) and a final figure 'matched M/N tables (P%)'.
Exit 0 when every table matched.
"""
import json
import math
import os
import subprocess
import sys

RTOL = float(os.environ.get("GOLDEN_RTOL", "1e-6"))  # looser for traces HTA rounds to whole us

# analysis -> (command words, golden args -> extra options)
def opts_temporal(a): return []
def opts_idle(a):
    o = ["--stats"]
    if a.get("consecutive_kernel_delay") is not None:
        o += ["--consecutive-kernel-delay", str(a["consecutive_kernel_delay"])]
    return o
def opts_kernels(a):
    o = []
    if a.get("num_kernels") is not None: o += ["--top", str(a["num_kernels"])]
    if a.get("duration_ratio") is not None: o += ["--duration-ratio", str(a["duration_ratio"])]
    if a.get("include_memory_kernels"): o += ["--include-memory"]
    return o
def opts_launch(a):
    o = []
    if a.get("runtime_cutoff") is not None: o += ["--runtime-cutoff", str(a["runtime_cutoff"])]
    if a.get("launch_delay_cutoff") is not None: o += ["--launch-delay-cutoff", str(a["launch_delay_cutoff"])]
    return o
def opts_patterns(a):
    o = ["--ranks", str(a.get("rank", 0)), "--op", a.get("operator_name") or "aten::linear"]
    if a.get("min_pattern_len") is not None: o += ["--min-len", str(a["min_pattern_len"])]
    if a.get("top_k") is not None: o += ["--top-k", str(a["top_k"])]
    return o
def opts_cp(a):
    o = ["--ranks", str(a.get("rank", 0))]
    if a.get("annotation"): o += ["--annotation", a["annotation"]]
    inst = a.get("instance_id")
    if isinstance(inst, list): o += ["--instance", f"{inst[0]}:{inst[1]}"]
    elif inst is not None: o += ["--instance", str(inst)]
    return o
def none(a): return []

COMMANDS = {
    "temporal_breakdown": (["temporal"], opts_temporal),
    "idle_time_breakdown": (["idle"], opts_idle),
    "gpu_kernel_breakdown": (["kernels"], opts_kernels),
    "comm_comp_overlap": (["overlap"], none),
    "cuda_kernel_launch_stats": (["launch"], opts_launch),
    "gpu_user_annotation_breakdown": (["annotations"], none),
    "potential_stragglers": (["stragglers"], none),
    "aten_op_kernels_and_delay": (["ops"], none),
    "queue_length_summary": (["counters"], none),
    "memory_bw_summary": (["counters"], none),
    "time_spent_blocked_on_full_queue": (["counters"], none),
    "frequent_cuda_kernel_sequences": (["patterns"], opts_patterns),
    "cupti_counter_data_with_operators": (["cupti"], none),
    "critical_path": (["critical-path"], opts_cp),
}


def flat_golden(name, part_name, part):
    """Golden DataFrame part -> (table name, columns, rows, rank or None)."""
    cols = [c[-1] if isinstance(c, list) else c for c in part["columns"]]
    idx_names = [n for n in (part.get("index_names") or []) if n]
    rows = []
    for i, r in enumerate(part["data"]):
        lead = []
        if idx_names:
            iv = part["index"][i]
            lead = list(iv) if isinstance(iv, list) else [iv]
        rows.append(lead + list(r))
    cols = idx_names + cols
    rank = None
    if part_name.startswith("rank_") or part_name.startswith("item_"):
        rank = int(part_name.split("_")[1])
        tname = name
    elif part_name == "result":
        tname = name
    else:
        tname = part_name
    return tname, cols, rows, rank


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def same(a, b):
    if num(a) and num(b):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b) or b is None
        return abs(a - b) <= 1e-9 + RTOL * max(abs(a), abs(b))
    if a is None and isinstance(b, float) and math.isnan(b):
        return True
    # a list cell (HTA's op_stack) is written '|'-joined in hta's tables: same elements, same order
    if isinstance(b, list) and isinstance(a, str):
        return a.split("|") == [str(x) for x in b] if b else a == ""
    return a == b


def compare(gcols, grows, ours):
    """ours: {"columns": [...], "data": [...]}, maybe with extra columns. Returns error text or None."""
    ocols = ours.get("columns", [])
    miss = [c for c in gcols if c not in ocols]
    if miss:
        return f"missing columns {miss[:6]} (have {ocols[:10]})"
    pos = [ocols.index(c) for c in gcols]
    orows = [[r[p] for p in pos] for r in ours.get("data", [])]
    if len(orows) != len(grows):
        return f"{len(orows)} rows, golden {len(grows)}"
    def rows_equal(A, B):
        for i, (x, y) in enumerate(zip(A, B)):
            for j, (u, v) in enumerate(zip(x, y)):
                if not same(v, u):
                    return f"row {i} column {gcols[j]!r}: {v!r} != golden {u!r}"
        return None
    err = rows_equal(grows, orows)
    if err is None:
        return None
    key = lambda r: json.dumps(r, sort_keys=True, default=str)
    if rows_equal(sorted(grows, key=key), sorted(orows, key=key)) is None:
        return "same rows, different order"
    return err


def run_hta(hta, words, path, extra):
    # GOLDEN_EXTRA_ARGS: options added to every command (e.g. "--hta-compat")
    cmd = [hta] + words + [path] + extra + os.environ.get("GOLDEN_EXTRA_ARGS", "").split() + ["--format", "json"]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timeout: " + " ".join(cmd)
    if p.returncode != 0:
        return None, f"exit {p.returncode}: {' '.join(cmd)}: {p.stderr.decode(errors='replace')[:200]}"
    try:
        return json.loads(p.stdout), None
    except Exception as e:
        return None, f"not JSON ({e}): {' '.join(cmd)}"


def load_json(path):
    """A golden part, or its gzipped copy (PATH.gz: the large ones in the repository)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        import gzip
        with gzip.open(path + ".gz", "rt") as f:
            return json.load(f)
    with open(path) as f:
        return json.load(f)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose = "--verbose" in sys.argv
    hta, traces, golden = args[:3]
    analyses = args[3:]
    matched = total = 0
    cache = {}
    for root, dirs, files in sorted(os.walk(golden)):
        if "status.json" not in files:
            continue
        rel = os.path.relpath(root, golden)
        if rel.startswith("_"):
            continue
        status = json.load(open(os.path.join(root, "status.json")))
        tdir = os.path.join(traces, rel)
        for an in analyses:
            st = str(status.get(an, ""))
            if not st.startswith("ok"):
                continue
            g = load_json(os.path.join(root, an + ".json"))
            words, optf = COMMANDS[an]
            extra = optf(g.get("args") or {})
            ck = (tuple(words), tdir, tuple(extra))
            if ck not in cache:
                cache[ck] = run_hta(hta, words, tdir, extra)
            out, err = cache[ck]
            parts = g["parts"]
            if an == "critical_path":
                total += 1
                e = err or check_cp(parts, out)
                if e:
                    if verbose: print(f"{rel} {an}: {e}")
                else:
                    matched += 1
                continue
            if an == "potential_stragglers":
                total += 1
                e = err
                if not e:
                    t = out.get(an)
                    got = sorted(r[t["columns"].index("rank")] for r in t["data"]) if t else None
                    e = None if got == sorted(parts["result"]) else f"ranks {got} != golden {parts['result']}"
                if e:
                    if verbose: print(f"{rel} {an}: {e}")
                else:
                    matched += 1
                continue
            # group per-rank parts into one table
            tables = {}
            for pn, part in parts.items():
                if not isinstance(part, dict) or part.get("type") != "DataFrame":
                    continue
                tname, gcols, grows, rank = flat_golden(an, pn, part)
                if rank is not None:
                    gcols = ["rank"] + [c for c in gcols if c != "rank"]
                    grows = [[rank] + r for r in grows]
                t = tables.setdefault(tname, [gcols, []])
                t[1].extend(grows)
            for tname, (gcols, grows) in tables.items():
                total += 1
                if err:
                    e = err
                elif tname not in out:
                    e = None if not grows else f"no table {tname!r} (tables: {list(out)[:8]})"
                else:
                    e = compare(gcols, grows, out[tname])
                if e:
                    if verbose: print(f"{rel} {an}/{tname}: {e}")
                else:
                    matched += 1
    pct = 100.0 * matched / total if total else 0.0
    print(f"matched {matched}/{total} golden tables ({pct:.0f}%) for {', '.join(analyses)}")
    return 0 if total and matched == total else 1


def check_cp(parts, out):
    st = parts.get("stats") or {}
    t = out.get("stats")
    if not t:
        return f"no stats table (tables: {list(out)[:8]})"
    vals = {r[t["columns"].index("name")]: r[t["columns"].index("value")] for r in t["data"]}
    for k in ("graph_nodes", "graph_edges", "critical_path_total_weight"):
        if k in st and not same(st[k], vals.get(k)):
            return f"stats {k}: {vals.get(k)!r} != golden {st[k]!r}"
    for k, v in (st.get("graph_edge_types") or {}).items():
        if not same(v, vals.get("graph_edge_types." + k)):
            return f"stats graph_edge_types.{k}: {vals.get('graph_edge_types.' + k)!r} != golden {v!r}"
    summ = parts.get("summary") or {}
    s = out.get("summary")
    if summ and s:
        pc = s["columns"].index("percentage") if "percentage" in s["columns"] else None
        bb = s["columns"].index("bound_by")
        got = {r[bb]: r[pc] for r in s["data"]} if pc is not None else {}
        for k, v in zip(summ.get("index", []), summ.get("data", [])):
            if k == "" and v == 0:
                continue
            if not same(v, got.get(k, 0.0)):
                return f"summary {k}: {got.get(k)!r} != golden {v!r}"
    elif summ:
        return "no summary table"
    return None


if __name__ == "__main__":
    sys.exit(main())
