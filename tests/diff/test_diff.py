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


def write_trace(path, names):
    """A one-rank trace whose CPU operators (1 us each, one after another) and kernels carry the given names."""
    ev, ts = [], 0
    for n in names:
        ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 1, "tid": 1, "ts": ts, "dur": 1})
        ts += 2
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "distributedInfo": {"rank": 0}}, f)


class Folding(unittest.TestCase):
    """Names that differ between two runs of one program only by a memory address or an integer template argument
    are one name (issue 39: they showed as both added and deleted); --exact-names and --hta-compat keep them
    apart; the 20 largest changes by default, --top 0 for all."""

    def setUp(self):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="hta-diff-")
        self.a, self.b = os.path.join(self.dir, "a.json"), os.path.join(self.dir, "b.json")
        write_trace(self.a, ["<built-in method to of Tensor object at 0x7f3a12>", "void k<128, float, (int)4>(int)",
                             "triton_0x1"] + ["op%02d" % i for i in range(30)])
        write_trace(self.b, ["<built-in method to of Tensor object at 0x55e0ff>",
                             "<built-in method to of Tensor object at 0x55e100>", "void k<64, float, (int)2>(int)",
                             "triton_0x1"] + ["op%02d" % i for i in range(30)])

    def tearDown(self):
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_addresses_and_numbers_folded(self):
        t = diff(self.a, self.b, "--top", "0")
        rows = {r["name"]: r for r in t["compare_traces"]}
        to = rows["<built-in method to of Tensor object at 0x*>"]
        self.assertEqual((to["Control_counts"], to["Test_counts"], to["diff_counts"]), (1, 2, 1))
        self.assertEqual(rows["void k<N, float, N>(int)"]["diff_counts"], 0)
        self.assertIn("triton_0x1", rows)  # inside a word: not an address
        self.assertEqual(len(rows), 33)
        self.assertFalse([r for r in t["ops_diff"] if r["category"] in ("added", "deleted")])

    def test_exact_names_and_hta_compat_keep_them(self):
        for opt in ("--exact-names", "--hta-compat"):
            with self.subTest(opt=opt):
                t = diff(self.a, self.b, "--top", "0", opt)
                cats = Counter(r["category"] for r in t["ops_diff"])
                self.assertEqual((cats["added"], cats["deleted"]), (3, 2))

    def test_top_20_by_default(self):
        p = subprocess.run([HTA, "diff", self.a, self.b, "--format", "json", "--exact-names"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["compare_traces"]["data"]), 20)
        self.assertIn("the 20 largest changes of 36 names (--top N for more, --top 0 for all)", p.stderr)
        self.assertEqual(len(diff(self.a, self.b, "--top", "0", "--exact-names")["compare_traces"]), 36)
        self.assertEqual(len(diff(self.a, self.b, "--hta-compat")["compare_traces"]), 36)  # HTA's: every row
        self.assertEqual(len(diff(self.a, self.b, "--top", "3")["compare_traces"]), 3)


if __name__ == "__main__":
    unittest.main()
