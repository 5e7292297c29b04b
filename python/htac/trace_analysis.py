"""TraceAnalysis: HTA's notebook API (same names, arguments and frames) over libhta, in-process.

    from htac.trace_analysis import TraceAnalysis
    analyzer = TraceAnalysis(trace_dir="traces/")

Each rank is loaded once, when the object is made, and every method reuses it.  hta_compat=True gives
Python HTA 0.6.1's numbers exactly; the default gives hta's exact ones (docs/differences-from-hta.md).
Every method also takes window= (docs/windows.md): '10ms:25ms', 'annot:ProfilerStep#3', ...
"""
import os
import shutil
import tempfile

import numpy as np
import pandas as pd

from . import _args, _plot
from ._dtypes import RankTypes, common, downcast
from ._lib import HtaError
from ._session import Session
from .trace import Trace

__all__ = ["TraceAnalysis", "TimeSeriesTypes"]

_STATS = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
_RANK = (0, 2**31 - 1)   # the ranks a trace can name
_COUNT = 10**9           # the most rows, kernels or candidates a count may ask for


class TimeSeriesTypes:
    """generate_trace_with_counters' series (HTA's flags)."""
    QUEUE_LENGTH = 1
    MEMCPY_BANDWIDTH = 2


def _integral(v):
    v = np.asarray(v, dtype=np.float64)
    return bool(np.all(np.isfinite(v))) and bool(np.all(v == np.round(v)))


class TraceAnalysis:
    def __init__(self, trace_files=None, trace_dir="/tmp/trace", include_last_profiler_step=False,
                 hta_compat=False, ranks=None, threads=0):
        """Loads the traces: trace_dir (a folder of rank files, or one file), or trace_files {rank: file
        name in trace_dir}.  ranks: load only these.  Bad input raises HtaError naming the file."""
        self._tmp = None
        self.trace_dir = _args.path("trace_dir", trace_dir)
        path = self.trace_dir
        if trace_files is not None and not isinstance(trace_files, dict):
            raise _args.ArgTypeError("trace_files must be a dict {rank: file name}, not "
                                     f"{type(trace_files).__name__}")
        files = {_args.integer("trace_files' rank", r, *_RANK): _args.path("trace_files' file", f)
                 for r, f in (trace_files or {}).items()}
        if files:
            # the files asked for, seen as one folder: links under their own names in a private folder (the
            # loader reads folders), kept while the analyzer lives (derived traces read the files again)
            self._tmp = tempfile.mkdtemp(prefix="htac-")
            for r, f in files.items():
                src = f if os.path.isabs(f) else os.path.join(self.trace_dir, f)
                dst = os.path.join(self._tmp, os.path.basename(src))
                if not os.path.exists(src) or os.path.lexists(dst):
                    shutil.rmtree(self._tmp, ignore_errors=True)
                    raise HtaError(f"{src}: " + ("no such file" if not os.path.exists(src) else
                                                 "two trace files of that name"), "EIO")
                os.symlink(os.path.abspath(src), dst)
            path = self._tmp
        try:
            self._s = Session(path, ranks=ranks, hta_compat=hta_compat,
                              include_last_step=include_last_profiler_step, threads=threads)
        except BaseException:
            self._drop_tmp()
            raise
        self.hta_compat = bool(hta_compat)
        self.t = Trace(self._s)
        self._types = {}

    # ---- helpers ----
    def _rank_types(self, rank):
        if rank not in self._types:
            self._types[rank] = RankTypes(self.t, rank)
        return self._types[rank]

    def _ranks(self, ranks):
        loaded = self._s.ranks
        if ranks is None:
            # HTA's default is [0]; a trace without rank 0 gets its first rank rather than an error
            return [0] if 0 in loaded else loaded[:1]
        return _args.loaded_ranks("ranks", ranks, loaded, f" from {self._s.path}")

    def _run(self, name, window=None, **opts):
        return self._s.run(name, window=window, **opts)

    def _dur_int(self, ranks):
        return all(self._rank_types(r).dur_int for r in ranks)

    def _ints(self, df, cols, cond):
        """Columns as int64 where HTA's would be integers (integer durations) and the values are whole."""
        for c in cols:
            if cond and _integral(df[c]):
                df[c] = df[c].astype(np.int64)
        return df

    @staticmethod
    def _of_ranks(df, ranks):
        return df[df["rank"].isin(ranks)].reset_index(drop=True)

    # ---- HTA's API ----
    def get_profiler_steps(self, window=None):
        """The ProfilerStep numbers of HTA's tables (the last step dropped unless include_last_profiler_step)."""
        self._s.set_window(window)
        steps = set()
        syms = self.t.symbols()
        for r in self._s.ranks:
            ev = self.t.events(r)
            names = ev["name"].cat.remove_unused_categories().cat.categories
            for n in names:
                if n.startswith("ProfilerStep"):
                    s = n[len("ProfilerStep"):].strip()
                    if s.startswith("#") and s[1:].strip().isdigit():
                        steps.add(int(s[1:].strip()))
        del syms
        return sorted(steps)

    def get_temporal_breakdown(self, visualize=True, window=None):
        res = self._run("temporal", window)
        df = res.frame("temporal_breakdown")
        ranks = list(df["rank"])
        self._ints(df, ["idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)"],
                   self._dur_int(ranks))
        if visualize:
            _plot.bar(df, "rank", ["idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"],
                      "Temporal breakdown across ranks")
        return df

    def get_idle_time_breakdown(self, ranks=None, streams=None, visualize=True, visualize_pctg=True,
                                show_idle_interval_stats=False, consecutive_kernel_delay=30, window=None):
        ranks = self._ranks(ranks)
        delay = _args.number("consecutive_kernel_delay", consecutive_kernel_delay, 0, 1e12)
        streams = _args.ints("streams", streams, -2**31, 2**31 - 1)
        res = self._run("idle", window, consecutive_kernel_delay_ns=int(round(delay * 1000)),
                        interval_stats=_args.flag("show_idle_interval_stats", show_idle_interval_stats),
                        streams=",".join(map(str, streams)) if streams else None)
        sdt = common([self._rank_types(r).stream for r in ranks])
        df = self._of_ranks(res.frame("idle_time", ["rank", "stream", "idle_category", "idle_time",
                                                      "idle_time_ratio"]), ranks)
        df["stream"] = df["stream"].astype(sdt)
        df.index = df.groupby("rank").cumcount().to_numpy()  # HTA concatenates the ranks' frames as they are
        stats = None
        if show_idle_interval_stats:
            stats = self._of_ranks(res.frame("interval_stats", ["idle_category", "rank", "stream"] + _STATS), ranks)
            stats["stream"] = stats["stream"].astype(sdt)
            stats = stats.set_index("idle_category")
        if visualize:
            y = "idle_time_ratio" if visualize_pctg else "idle_time"
            _plot.bar(df.assign(stream=df["stream"].astype(str)), "stream", y, "Idle time breakdown on each GPU",
                      color="idle_category")
            if self.hta_compat:
                df["stream"] = df["stream"].astype(str)  # HTA returns the column it converted for its plot
        return df, stats

    def get_gpu_kernel_breakdown(self, visualize=True, duration_ratio=0.8, num_kernels=10,
                                 include_memory_kernels=True, image_renderer="", window=None):
        res = self._run("kernels", window, top=_args.integer("num_kernels", num_kernels, 0, _COUNT),
                        duration_ratio=_args.number("duration_ratio", duration_ratio, 0, 1),
                        include_memory=_args.flag("include_memory_kernels", include_memory_kernels))
        kt = res.frame("kernel_type")
        kd = res.frame("all_kernels", ["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)",
                                       "kernel_type", "rank"])
        self._ints(kt, ["sum"], True)
        self._ints(kd, ["sum (us)", "max (us)", "min (us)"], self._dur_int(self._s.ranks))
        if visualize:
            _plot.pie(kt, "percentage", "kernel_type", "Kernel type percentage across all ranks")
            for t in kd["kernel_type"].unique():
                _plot.bar(kd[kd["kernel_type"] == t], "rank", "mean (us)", f"{t} kernels: mean time per rank",
                          color="name")
        return kt, kd

    def get_gpu_kernels_with_user_annotations(self, rank, expand_names=True, shorten_names=True, window=None):
        """Every GPU kernel of `rank` with the innermost gpu_user_annotation overlapping it on its (pid, tid)
        (analyses.md §5.2); None when the trace has no gpu_user_annotation."""
        from .utils.utils import shorten_name
        self._s.set_window(window)
        rank = self._ranks([rank])[0]
        syms = self.t.symbols()
        if "gpu_user_annotation" not in set(syms):
            return None
        ev = self.t.events(rank).reset_index()
        names = ev["name"].astype(object).to_numpy()
        cat = ev["cat"].astype(object).to_numpy()
        gpu = ((ev["stream"].to_numpy() >= 0) & (ev["correlation"].to_numpy() >= 0)) | \
            np.isin(names, ["Event Sync", "Context Sync"])
        ann = ev[cat == "gpu_user_annotation"].sort_values("dur", ascending=False, kind="stable")
        k = ev[gpu].reset_index(drop=True)
        label = np.full(len(k), None, dtype=object)
        kts = k["ts"].to_numpy()
        kend = kts + k["dur"].to_numpy()
        # the kernels of each (pid, tid) by start: an annotation looks only at those starting before its end
        # and after its start less the longest kernel there
        groups = {}
        for key, idx in k.groupby(["pid", "tid"], sort=False).indices.items():
            idx = idx[np.argsort(kts[idx], kind="stable")]
            groups[key] = (idx, kts[idx], int((kend[idx] - kts[idx]).max()))
        for a in ann.itertuples(index=False):
            g = groups.get((a.pid, a.tid))
            if g is None:
                continue
            idx, ts, longest = g
            lo, hi = np.searchsorted(ts, a.ts - longest, "left"), np.searchsorted(ts, a.ts + a.dur, "left")
            cand = idx[lo:hi]
            label[cand[kend[cand] > a.ts]] = a.name  # longest first: the innermost annotation is set last
        k["user_annotation"] = label
        if expand_names:
            f = shorten_name if shorten_names else (lambda s: s)
            k["s_name"] = [f(str(x)) for x in k["name"].astype(object)]
            k["s_cat"] = k["cat"].astype(object)
            k["s_user_annotation"] = ["" if x is None else f(x) for x in label]
        return k

    def get_gpu_user_annotation_breakdown(self, use_gpu_annotation=True, visualize=True, duration_ratio=0.8,
                                          num_kernels=1000, allowlist_patterns=None, image_renderer="",
                                          window=None):
        use_gpu_annotation = _args.flag("use_gpu_annotation", use_gpu_annotation)
        num_kernels = _args.integer("num_kernels", num_kernels, 0, _COUNT)
        duration_ratio = _args.number("duration_ratio", duration_ratio, 0, 1)
        allow = _args.texts("allowlist_patterns", allowlist_patterns)
        cat = "gpu_user_annotation" if use_gpu_annotation else "user_annotation"
        if cat not in set(self.t.symbols()):
            return None
        res = self._run("annotations", window, cpu=not use_gpu_annotation, num_kernels=num_kernels,
                        duration_ratio=duration_ratio, allow=allow or None)
        df = res.frame("gpu_user_annotation_breakdown") if "gpu_user_annotation_breakdown" in res else \
            res.frame(res.names()[0])
        df = df[["name", "sum (us)", "max (us)", "min (us)", "stddev", "mean (us)", "rank"]]
        if visualize:
            _plot.bar(df, "rank", "sum (us)", "User annotation breakdown", color="name")
        return df

    def get_comm_comp_overlap(self, visualize=True, window=None):
        df = self._run("overlap", window).frame("comm_comp_overlap", ["rank", "comp_comm_overlap_pctg"])
        if visualize:
            _plot.bar(df, "rank", "comp_comm_overlap_pctg", "Computation-communication overlap per rank")
        return df

    def get_cuda_kernel_launch_stats(self, ranks=None, runtime_cutoff=50, launch_delay_cutoff=100,
                                     include_memory_events=True, visualize=True, window=None):
        ranks = self._ranks(ranks)
        res = self._run("launch", window, runtime_cutoff=_args.number("runtime_cutoff", runtime_cutoff),
                        launch_delay_cutoff=_args.number("launch_delay_cutoff", launch_delay_cutoff),
                        include_memory_events=_args.flag("include_memory_events", include_memory_events))
        all_ = res.frame("cuda_kernel_launch_stats")
        out = {}
        for r in ranks:
            rt = self._rank_types(r)
            df = all_[all_["rank"] == r][["correlation", "cpu_duration", "gpu_duration", "launch_delay"]]
            df = df.reset_index(drop=True)
            df["correlation"] = df["correlation"].astype(rt.correlation)
            if rt.dur_int and _integral(df["cpu_duration"]) and _integral(df["gpu_duration"]):
                df["cpu_duration"] = df["cpu_duration"].astype(rt.dur)
                df["gpu_duration"] = df["gpu_duration"].astype(rt.dur)
                if _integral(df["launch_delay"]):
                    df["launch_delay"] = df["launch_delay"].astype(np.int64)
            out[r] = df
            if visualize:
                _plot.bar(df, "correlation", "launch_delay", f"Launch delay on rank {r}")
        return out

    def _counters(self, ranks, window, series=False, max_queue_length=1024):
        return self._run("counters", window, series=series,
                         max_queue_length=_args.integer("max_queue_length", max_queue_length, 0, 2**62))

    def _summary(self, df, keys, top):
        df = df.set_index(keys)
        df.columns = pd.MultiIndex.from_product([[top], _STATS])
        return df

    def get_queue_length_summary(self, ranks=None, window=None):
        ranks = self._ranks(ranks)
        df = self._of_ranks(self._counters(ranks, window).frame("queue_length_summary"), ranks)
        if df.empty:
            return None
        return self._summary(df, ["rank", "stream"], "queue_length")

    def get_queue_length_time_series(self, ranks=None, window=None):
        ranks = self._ranks(ranks)
        s = self._counters(ranks, window, series=True).frame("queue_length_series")
        return self._series(s, ranks, ["ts", "pid", "tid", "stream", "queue_length"])

    def _series(self, s, ranks, cols):
        """A series table -> {rank: its rows indexed by event index}, with the dtypes of the rank's table;
        a rank without rows is left out (HTA's None)."""
        out = {}
        for r in ranks:
            df = s[s["rank"] == r]
            if df.empty:
                continue
            rt = self._rank_types(r)
            df = df.set_index("index")[cols].copy()
            df.index.name = None
            self._ints(df, ["ts"], True)
            for c, t in (("pid", rt.pid), ("tid", rt.tid), ("stream", rt.stream)):
                if c in df and t != "object":
                    df[c] = df[c].astype(t)
            out[r] = df
        return out

    def get_queue_length_series(self, ranks=None, window=None):  # HTA's older name
        return self.get_queue_length_time_series(ranks, window=window)

    def get_time_spent_blocked_on_full_queue(self, queue_length_dict=None, max_queue_length=1024, window=None):
        cols = ["rank", "stream", "duration_at_max_queue_length", "relative_duration_at_max_queue_length"]
        if queue_length_dict is not None and not isinstance(queue_length_dict, dict):
            raise _args.ArgTypeError("queue_length_dict must be a dict {rank: series}, not "
                                     f"{type(queue_length_dict).__name__}")
        ranks = self._ranks(list(queue_length_dict)) if queue_length_dict else self._ranks(None)
        df = self._of_ranks(self._counters(ranks, window, max_queue_length=max_queue_length)
                            .frame("time_spent_blocked_on_full_queue", cols), ranks)
        if df.empty:
            return pd.DataFrame(columns=cols)  # HTA's empty frame (object columns)
        return df

    def get_memory_bw_summary(self, ranks=None, window=None):
        ranks = self._ranks(ranks)
        res = self._counters(ranks, window, series=True)
        series = self._of_ranks(res.frame("memory_bw_series"), ranks)
        if series.empty:
            return None
        df = self._of_ranks(res.frame("memory_bw_summary"), ranks)
        if df.empty:
            e = pd.DataFrame(columns=pd.MultiIndex.from_product([["memory_bw_gbps"], _STATS]), dtype=np.float64)
            return e
        return self._summary(df, ["rank", "name"], "memory_bw_gbps")

    def get_memory_bw_time_series(self, ranks=None, window=None):
        ranks = self._ranks(ranks)
        s = self._counters(ranks, window, series=True).frame("memory_bw_series")
        return self._series(s, ranks, ["ts", "pid", "name", "memory_bw_gbps"])

    def generate_trace_with_counters(self, time_series=None, ranks=None, output_suffix="_with_counters",
                                     window=None):
        """Writes each rank's trace with counter tracks (queue length, memory bandwidth) beside it:
        rank0.json.gz -> rank0_with_counters.json.gz.  Returns the paths written."""
        ranks = self._ranks(ranks)
        output_suffix = _args.text("output_suffix", output_suffix)
        if "/" in output_suffix:
            raise HtaError(f"output_suffix: a '/' in {output_suffix!r} (the file is written beside its trace)")
        written = []
        if not ranks:
            return written
        dirs = {os.path.dirname(os.path.realpath(self.t.path(r))) for r in ranks}
        tmp = tempfile.mkdtemp(prefix=".htac-counters-", dir=sorted(dirs)[0])
        try:
            res = self._run("augment", window, outdir=tmp)
            aug = res.frame("augmented")
            for r in ranks:
                row = aug[aug["rank"] == r]
                if row.empty:
                    continue
                src = row["file"].iloc[0]
                orig = os.path.realpath(self.t.path(r))  # beside the file itself (trace_files: a link)
                dst = os.path.join(os.path.dirname(orig),
                                   os.path.basename(orig).replace(".json", output_suffix + ".json"))
                os.replace(src, dst)
                written.append(dst)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return written

    def get_potential_stragglers(self, profiler_steps=None, num_candidates=2, visualize=False,
                                 straggler_identification_impl=None, window=None):
        if straggler_identification_impl is not None:
            raise NotImplementedError("htac runs HTA's default straggler identification only")
        steps = _args.ints("profiler_steps", profiler_steps, 0, 2**62)
        res = self._run("stragglers", window, candidates=_args.integer("num_candidates", num_candidates, 1, 10**6),
                        steps=",".join(map(str, steps)) if steps else None)
        df = res.frame("potential_stragglers")
        return [int(r) for r in df["rank"]]

    def get_frequent_cuda_kernel_sequences(self, operator_name, output_dir, min_pattern_len=3, rank=0,
                                           top_k=5, visualize=False, compress_other_kernels=True, window=None):
        """Most frequent kernel sequences launched under `operator_name` on `rank`; the rank's trace with
        the top_k patterns marked is written into output_dir (overlaid_<file>)."""
        rank = self._ranks([rank])[0]
        operator_name = _args.text("operator_name", operator_name)
        min_pattern_len = _args.integer("min_pattern_len", min_pattern_len, 1, 10**6)
        top_k = _args.integer("top_k", top_k, 0, 10**6)
        out_dir = _args.path("output_dir", output_dir) if output_dir else None
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".htac-patterns-", dir=out_dir) if out_dir else None
        try:
            res = self._run("patterns", window, op=operator_name, min_len=min_pattern_len, top_k=top_k,
                            overlay=tmp)
            if tmp:
                name = "overlaid_" + os.path.basename(self.t.path(rank))
                if os.path.exists(os.path.join(tmp, name)):
                    os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        df = res.frame("frequent_cuda_kernel_sequences")
        df = df[df["rank"] == rank].drop(columns=["rank"]).reset_index(drop=True)
        if df.empty:
            return pd.DataFrame()  # HTA's frame when nothing matched
        return df

    def get_aten_op_kernels_and_delay(self, ranks=None, sort_by=None, window=None):
        ranks = self._ranks(ranks)
        res = self._run("ops", window, sort_by=_args.texts("sort_by", sort_by) or None)
        all_ = res.frame("aten_op_kernels_and_delay")
        out = {}
        for r in ranks:
            df = all_[all_["rank"] == r].drop(columns=["rank"])
            # HTA's rows keep the labels of its groupby over (aten_op_name, kernel_sequence), ascending
            keys = list(zip(df["aten_op_name"], df["kernel_sequence"]))
            pos = {k: i for i, k in enumerate(sorted(set(keys)))}
            df.index = [pos[k] for k in keys]
            out[r] = df
        return out

    def get_cupti_counter_data_with_operators(self, ranks=None, window=None):
        ranks = self._ranks(ranks)
        if "cuda_profiler_range" not in set(self.t.symbols()):
            return []
        res = self._run("cupti", window)
        all_ = res.frame(res.names()[0])
        out = []
        for r in ranks:
            df = all_[all_["rank"] == r].drop(columns=["rank"]).reset_index(drop=True)
            if "op_stack" in df:
                df["op_stack"] = [s.split("|") if s else [] for s in df["op_stack"]]
            out.append(self._table_types(df, r))
        return out

    def _table_types(self, df, rank):
        """Rows of a rank's table with the dtypes of HTA's table: its own columns' (trace-format.md §11), ts
        in int64, and every other integer column downcast over its values."""
        rt = self._rank_types(rank)
        known = {"index": rt.index, "pid": rt.pid, "tid": rt.tid, "stream": rt.stream,
                 "correlation": rt.correlation, "external_id": rt.external_id}
        for c in df.columns:
            col = df[c]
            if c in known:
                df[c] = col.astype(known[c])
            elif c == "ts":
                self._ints(df, ["ts"], True)
            elif c == "dur":
                if rt.dur_int and _integral(col):
                    df[c] = col.astype(rt.dur)
            elif col.dtype.kind == "i" and len(col):
                df[c] = col.astype(downcast(int(col.min()), int(col.max())))
        return df

    def critical_path_analysis(self, rank, annotation, instance_id, data_load_events=None, window=None):
        """HTA's lightweight critical path of one rank -> (CPGraph, success)."""
        from .analyzers.critical_path_analysis import CPGraph
        rank = self._ranks([rank])[0]
        annotation = _args.text("annotation", annotation, none=True)
        data_load = _args.texts("data_load_events", data_load_events) or []
        self._s.set_window(window)
        if isinstance(instance_id, (tuple, list)):
            if len(instance_id) != 2:
                raise HtaError(f"instance_id: {instance_id!r} (N or (first, last))")
            a, b = (_args.integer("instance_id", x, 0, 2**62) for x in instance_id)
            inst = f"{a}:{b}"
        else:
            inst = None if instance_id is None else str(_args.integer("instance_id", instance_id, 0, 2**62))
        g = CPGraph._build(self, rank, annotation or "", inst, data_load)
        return g, True

    def overlay_critical_path_analysis(self, rank, critical_path_graph, output_dir, only_show_critical_events=True,
                                       show_all_edges=False):
        from .analyzers.critical_path_analysis import CPGraph
        if not isinstance(critical_path_graph, CPGraph):
            raise _args.ArgTypeError(f"critical_path_graph must be a CPGraph, not {type(critical_path_graph).__name__}")
        return critical_path_graph._overlay(self, _args.path("output_dir", output_dir),
                                            not _args.flag("only_show_critical_events", only_show_critical_events),
                                            _args.flag("show_all_edges", show_all_edges))

    # ---- beyond HTA ----
    def report(self, top=10, critical_path=True, window=None):
        """hta's report: findings (causes ranked by saving), headline, observations and the per-rank
        tables, as a dict of DataFrames (notes under the key 'notes')."""
        res = self._run("report", window, top=_args.integer("top", top, 1, 10**6),
                        critical_path=_args.flag("critical_path", critical_path))
        out = {name: res.frame(name) for name in res.names()}
        out["notes"] = list(res.notes)
        return out

    def get_collectives(self, peak_link_gbps=None, scale_up=8, window=None):
        """hta comms: per collective class (op, process group, group size, dtype, message size) the calls,
        the kernels' time, algorithm and bus bandwidth as nccl-tests counts them, the wait for the last
        rank and the link's share; the all-to-allv byte matrices; the link peak used.  A dict of DataFrames:
        'collectives', 'alltoallv_bytes', 'comm_link'."""
        pk = None if peak_link_gbps is None else _args.number("peak_link_gbps", peak_link_gbps, 1e-9)
        res = self._run("comms", window, peak_link_gbps=pk, scale_up=_args.integer("scale_up", scale_up, 1, 10**6))
        return {name: res.frame(name) for name in res.names()}

    def get_operator_efficiency(self, peak_tflops=None, peak_tbps=None, peak_vector_tflops=None, window=None):
        """hta efficiency: per operator and shape class the FLOPs and bytes from the recorded shapes, the GPU
        time and how near the device's roof it runs (TraceLens's perf model); the peaks used.  A dict of
        DataFrames: 'op_roofline', 'device'."""
        def peak(name, v):
            return None if v is None else _args.number(name, v, 1e-9)
        res = self._run("efficiency", window, peak_tflops=peak("peak_tflops", peak_tflops),
                        peak_tbps=peak("peak_tbps", peak_tbps),
                        peak_vector_tflops=peak("peak_vector_tflops", peak_vector_tflops))
        return {name: res.frame(name) for name in res.names()}

    def report_html(self, path, top=10, critical_path=True, window=None):
        """Writes the report as one self-contained HTML page; returns its path."""
        path = _args.path("path", path)
        self._run("report", window, top=_args.integer("top", top, 1, 10**6),
                  critical_path=_args.flag("critical_path", critical_path), html=path)
        return path

    def what_if(self, rules, ranks=None, all_ranks=False, data_load_events=None, trace_out=None, window=None):
        """Replays the simulation graph with rules applied (docs/critical-path.md, "What-if"): e.g.
        what_if(["kernel:nccl*=x0.5"]).  One rank's graph each (ranks, default the first loaded), or the
        job's joined at its collectives (all_ranks=True).  -> dict: what_if, what_if_steps,
        what_if_summary (and with all_ranks the job's tables)."""
        rules = _args.texts("rules", rules)
        all_ranks = _args.flag("all_ranks", all_ranks)
        data_load = _args.texts("data_load_events", data_load_events)
        trace_out = _args.path("trace_out", trace_out) if trace_out is not None else None
        rk = None if all_ranks else self._ranks(ranks)
        res = self._run("what_if", window, rule=rules, all_ranks=all_ranks,
                        ranks=",".join(map(str, rk)) if rk else None, data_load=data_load or None,
                        trace_out=trace_out)
        out = {name: res.frame(name) for name in res.names()}
        out["notes"] = list(res.notes)
        return out

    def events(self, rank=None, view=True, window=None):
        """The events of a rank as columns (see htac.trace.Trace.events)."""
        return self.t.events(rank, view=view, window=window)

    def _drop_tmp(self):
        if getattr(self, "_tmp", None):
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def close(self):
        """Frees the loaded trace (waiting for a call another thread is in); every call after it raises
        HtaError ("the trace was closed")."""
        s = getattr(self, "_s", None)
        if s is not None:
            s.close()
        self._drop_tmp()

    def __del__(self):
        try:
            self._drop_tmp()
        except Exception:  # noqa: BLE001 - at interpreter exit
            pass
