#!/usr/bin/env python3
"""hta diff compares what both traces ran (issue 37): a trace diffed with itself gives every row with zero
change and holds every GPU row of the compared iteration, on every real trace of tests/data, ROCm's
stream-0 kernels included (HTA gives them no iteration; --hta-compat keeps that); --by category compares a
CUDA and a ROCm trace category by category."""
import glob
import gzip
import json
import os
import subprocess
import unittest
from collections import Counter

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DIAG = os.path.join(ROOT, "tests", "data", "real-diag", "AMD-AGI__TraceLens", "tests", "traces")
MI300 = os.path.join(DIAG, "mi300", "Falconsai_nsfw_image_detection__1016002.json.gz")
H100 = os.path.join(DIAG, "h100", "google_owlv2-large-patch14-ensemble__1016001.json.gz")


def diff(a, b, *args):
    p = subprocess.run([HTA, "diff", a, b, "--format", "json", *args], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta diff {a}: exit {p.returncode}: {p.stderr}")
    return {k: [dict(zip(t["columns"], r)) for r in t["data"]] for k, t in json.loads(p.stdout).items()}


def traces():
    fs = glob.glob(os.path.join(ROOT, "tests", "data", "real*", "**", "*.json*"), recursive=True)
    return sorted(f for f in fs if "labels" not in f and "dlrm" not in f)


def gpu_kernels_in_first_step(path):
    """The GPU rows (kernels, copies, sets) whose launch lies in the first ProfilerStep (all when none)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    ev = [e for e in (d["traceEvents"] if isinstance(d, dict) else d) if e.get("ph") == "X"]
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep") and e.get("cat") in ("user_annotation", "cpu_op")),
                   key=lambda e: int(e["name"].split("#")[1]))
    launch = {e["args"]["correlation"]: e for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {})}
    n = 0
    for e in ev:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if not steps:
            n += 1
            continue
        la = launch.get(e["args"].get("correlation"))
        s = steps[0]
        if la and s["ts"] <= la["ts"] < s["ts"] + s["dur"]:
            n += 1
    return n


class SelfDiff(unittest.TestCase):
    def test_every_trace_with_itself(self):
        for f in traces():
            with self.subTest(trace=os.path.relpath(f, ROOT)):
                t = diff(f, f)
                rows = t["compare_traces"]
                self.assertTrue(rows)
                for r in rows:
                    self.assertEqual((r["diff_counts"], r["diff_duration"]), (0, 0), r["name"])
                self.assertTrue(all(r["category"] == "unchanged" for r in t["ops_diff"]))

    def test_rocm_kernels_are_compared(self):
        # Falconsai on MI300: its 155 kernels run on stream 0, all launched inside ProfilerStep#6
        rows = diff(MI300, MI300, "--device", "gpu")["compare_traces"]
        self.assertEqual(sum(r["Control_counts"] for r in rows), 155)
        self.assertEqual(gpu_kernels_in_first_step(MI300), 155)
        cat = {r["category"]: r["Control_counts"] for r in diff(MI300, MI300, "--by", "category")["compare_traces"]}
        self.assertEqual(cat, {"attention": 12, "convolution": 1, "elementwise": 44, "gemm": 73, "normalization": 25})

    def test_hta_compat_keeps_htas_iteration(self):
        # HTA: stream-0 device rows have no iteration, so its iteration 6 holds none of them
        rows = diff(MI300, MI300, "--device", "gpu", "--hta-compat")["compare_traces"]
        self.assertEqual(rows, [])


class CrossVendor(unittest.TestCase):
    def test_h100_against_mi300_by_category(self):
        t = diff(H100, MI300, "--by", "category")["compare_traces"]
        both = {r["category"] for r in t if r["Control_counts"] and r["Test_counts"]}
        # OWL-ViT on H100 against Falconsai (a ViT) on MI300: cuBLAS/hipBLASLt GEMMs, norms, convolutions
        self.assertTrue({"gemm", "elementwise", "normalization", "convolution"} <= both, t)
        mi = {r["category"]: r["Test_counts"] for r in t}
        self.assertEqual(mi["gemm"], 73)


if __name__ == "__main__":
    unittest.main()
