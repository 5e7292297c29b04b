#!/usr/bin/env python3
"""The Python API's cost: TraceAnalysis(...) and then every analysis of HTA's API, in one process, on a
generated rank of --mb MB (tools/gen_kineto_trace.py) and on the real traces of tests/data/real; with
Python HTA side by side where it is installed (`import hta`), else said.

usage: bench/python_api.py [--mb 250] [--runs 3] [--keep DIR] [PATH ...]
Prints, per trace, the median over --runs of each step's seconds, and the process's peak RSS (each run a
fresh interpreter; 'import' = the interpreter with numpy, pandas and the package, before any trace).
Needs numpy and pandas (Debian's python3 has them with python3-pandas)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")

# one run in a fresh interpreter: the steps' seconds and the peak RSS, as JSON on stdout
CHILD = r'''
import json, os, resource, sys, time, tempfile
impl, path = sys.argv[1], sys.argv[2]
out = {}
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
t0 = time.perf_counter()
if impl == "htac":
    sys.path.insert(0, os.path.join(%(root)r, "python"))
    from htac.trace_analysis import TraceAnalysis
else:
    from hta.trace_analysis import TraceAnalysis
out["import_rss_mb"] = rss()
steps = {}
def step(name, f):
    t = time.perf_counter()
    try:
        f()
        steps[name] = time.perf_counter() - t
    except Exception as e:  # an analysis that does not apply to this trace
        steps[name] = "failed: %%s" %% (str(e).splitlines()[0][:60] if str(e) else type(e).__name__)
t = time.perf_counter()
a = TraceAnalysis(trace_dir=path)
steps["TraceAnalysis()"] = time.perf_counter() - t
ranks = sorted(a.t.get_ranks()) if hasattr(a.t, "get_ranks") else [0]
r0 = ranks[:1]
tmp = tempfile.mkdtemp()
step("get_temporal_breakdown", lambda: a.get_temporal_breakdown(visualize=False))
step("get_idle_time_breakdown", lambda: a.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True))
step("get_gpu_kernel_breakdown", lambda: a.get_gpu_kernel_breakdown(visualize=False))
step("get_comm_comp_overlap", lambda: a.get_comm_comp_overlap(visualize=False))
step("get_cuda_kernel_launch_stats", lambda: a.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False))
step("get_gpu_user_annotation_breakdown", lambda: a.get_gpu_user_annotation_breakdown(visualize=False))
step("get_queue_length_summary", lambda: a.get_queue_length_summary(ranks=ranks))
step("get_memory_bw_summary", lambda: a.get_memory_bw_summary(ranks=ranks))
step("get_time_spent_blocked_on_full_queue", lambda: a.get_time_spent_blocked_on_full_queue())
step("get_aten_op_kernels_and_delay", lambda: a.get_aten_op_kernels_and_delay(ranks=ranks))
step("get_frequent_cuda_kernel_sequences", lambda: a.get_frequent_cuda_kernel_sequences("aten::linear", tmp, rank=r0[0]))
step("get_potential_stragglers", lambda: a.get_potential_stragglers())
step("get_cupti_counter_data_with_operators", lambda: a.get_cupti_counter_data_with_operators(ranks=ranks))
step("critical_path_analysis", lambda: a.critical_path_analysis(rank=r0[0], annotation="", instance_id=None)[0].summary())
out["steps"] = steps
out["total_s"] = time.perf_counter() - t0
out["peak_rss_mb"] = rss()
print(json.dumps(out))
''' % {"root": ROOT}


def pandas_python():
    for py in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([py, "-c", "import numpy, pandas"], capture_output=True).returncode == 0:
            return py
    sys.exit("bench/python_api.py: needs numpy and pandas (apt-get install python3-pandas)")


def run_once(py, impl, path):
    p = subprocess.run([py, "-c", CHILD, impl, path], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(v):
    return f"{v:8.3f}" if isinstance(v, float) else f"{v}"


def bench(py, path, runs, impls):
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs) \
        if os.path.isdir(path) else os.path.getsize(path)
    print(f"\n== {path} ({size / 1e6:.1f} MB on disk), median of {runs} runs")
    res = {}
    for impl in impls:
        try:
            res[impl] = [run_once(py, impl, path) for _ in range(runs)]
        except RuntimeError as e:
            res[impl] = str(e)
    names = None
    for impl, rs in res.items():
        if isinstance(rs, list):
            names = list(rs[0]["steps"])
    if names is None:
        print("  " + "; ".join(f"{k}: {v}" for k, v in res.items()))
        return
    head = "".join(f"{k:>22}" for k in impls)
    print(f"  {'step (s)':40}{head}")

    def med(rs, key, sub=None):
        if not isinstance(rs, list):
            return "-"
        vals = [r[key][sub] if sub else r[key] for r in rs]
        return statistics.median(vals) if all(isinstance(v, (int, float)) for v in vals) else vals[0]

    for n in names:
        print(f"  {n:40}" + "".join(f"{fmt(med(res[i], 'steps', n)):>22}" for i in impls))
    for key, label in (("total_s", "whole script (s)"), ("import_rss_mb", "RSS after import (MB)"),
                       ("peak_rss_mb", "peak RSS (MB)")):
        print(f"  {label:40}" + "".join(f"{fmt(med(res[i], key)):>22}" for i in impls))
    for impl, rs in res.items():
        if not isinstance(rs, list):
            print(f"  {impl}: {rs}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--mb", type=int, default=250, help="size of the generated rank (0: none)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", help="folder for the generated rank (kept; made when missing)")
    a = ap.parse_args()
    py = pandas_python()
    impls = ["htac"]
    if subprocess.run([py, "-c", "import hta.trace_analysis"], capture_output=True).returncode == 0:
        impls.append("hta")
    else:
        print("Python HTA: not installed on this machine (no `import hta`): htac's figures only")
    paths = list(a.paths)
    tmp = None
    if a.mb:
        d = a.keep or tempfile.mkdtemp(prefix="htac-bench-")
        tmp = None if a.keep else d
        if not os.listdir(d) if os.path.isdir(d) else True:
            os.makedirs(d, exist_ok=True)
            subprocess.run([sys.executable, GEN, "--out", d, "--ranks", "1", "--target-mb", str(a.mb), "--quiet"],
                           check=True)
        paths.insert(0, d)
    if not a.paths:
        real = os.path.join(ROOT, "tests", "data", "real")
        paths += [os.path.join(real, n) for n in ("b200_eager", "mi300_falconsai", "vllm_decode_graph")]
    try:
        for p in paths:
            bench(py, p, a.runs, impls)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
