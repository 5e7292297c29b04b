#!/usr/bin/env python3
"""hta on the real ROCm and CUDA traces of tests/data/real: every GPU activity is found by every
analysis that counts launches, whichever vendor's call launched it.

The expected figures are computed here from the files themselves (gzip + json, exact nanoseconds
from the decimal text), independently of hta: the GPU rows (kernel, gpu_memcpy, gpu_memset) whose
correlation id is that of a cuda_runtime/cuda_driver call, and what follows from them.
"""
import collections
import glob
import gzip
import json
import os
import subprocess
import tempfile
import unittest
from decimal import Decimal

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
REAL = os.path.join(ROOT, "tests", "data", "real")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
HOST_CATS = ("cuda_runtime", "cuda_driver")


def hta(*args):
    """The JSON tables of an hta command, as lists of dicts."""
    p = subprocess.run([HTA, *args, "--format", "json", "--quiet"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return {k: [dict(zip(t["columns"], r)) for r in t["data"]] for k, t in json.loads(p.stdout).items()}


def hta_graph(path, *args):
    """HTA's graph with every vendor's corrections (what --save stores; the default answer is the simulation
    graph's): its tables, read back from the stored graph."""
    with tempfile.TemporaryDirectory() as d:
        g = os.path.join(d, "g.cpg")
        hta("critical-path", path, *args, "--save", g)
        return hta("critical-path", "--graph", g)


def ns(v):
    """Exact int ns of a Kineto time in us (parsed as Decimal)."""
    return int(Decimal(v) * 1000)


def us3(n):
    """ns as hta prints us: 3 decimals."""
    return round(n / 1000.0, 3)


class Trace:
    """One real trace file, read independently of hta."""

    def __init__(self, name):
        self.path = os.path.join(REAL, name)
        (f,) = glob.glob(os.path.join(self.path, "*.json.gz"))
        with gzip.open(f, "rt") as fh:
            self.ev = json.load(fh, parse_float=Decimal)["traceEvents"]
        for i, e in enumerate(self.ev):
            e["_index"] = i  # hta's event index: the position in traceEvents
        x = [e for e in self.ev if e.get("ph") == "X"]
        self.host = {e["args"]["correlation"]: e for e in x if e.get("cat") in HOST_CATS}
        # the GPU rows a host call launched (a graph launch: many under one correlation id)
        self.gpu = [e for e in x if e.get("cat") in GPU_CATS and e["args"].get("correlation") in self.host]
        self.ops = [e for e in x if e.get("cat") == "cpu_op" and e["name"].startswith("aten::")]

    def launch_of(self, g):
        return self.host[g["args"]["correlation"]]

    def stream_of(self, g):
        return g["args"]["stream"]


class Common:
    """What holds on every real trace.  TRACE: the folder under tests/data/real."""
    TRACE = None

    @classmethod
    def setUpClass(cls):
        cls.t = Trace(cls.TRACE)

    def test_launch_has_every_gpu_row(self):
        """One launch row per GPU row, with its correlation id, its call's and its own duration."""
        rows = hta("launch", self.t.path)["cuda_kernel_launch_stats"]
        self.assertEqual(collections.Counter(r["correlation"] for r in rows),
                         collections.Counter(g["args"]["correlation"] for g in self.t.gpu))
        want = collections.Counter((g["args"]["correlation"], us3(ns(self.t.launch_of(g)["dur"])), us3(ns(g["dur"])))
                                   for g in self.t.gpu)
        got = collections.Counter((r["correlation"], r["cpu_duration"], r["gpu_duration"]) for r in rows)
        self.assertEqual(got, want)

    def test_launch_hta_compat(self):
        """HTA's launch statistics know cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync and
        cudaMemsetAsync only: what --hta-compat counts."""
        names = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync")
        rows = hta("launch", self.t.path, "--hta-compat")["cuda_kernel_launch_stats"]
        self.assertEqual(sorted(r["correlation"] for r in rows),
                         sorted(g["args"]["correlation"] for g in self.t.gpu if self.t.launch_of(g)["name"] in names))

    def test_queue_length_series(self):
        """counters --series: a +1 sample for every GPU row at its launch (index of the call) and a -1
        sample at the GPU row itself (its index), on the row's stream."""
        series = hta("counters", self.t.path, "--series")["queue_length_series"]
        self.assertEqual(collections.Counter(r["index"] for r in series),
                         collections.Counter([g["_index"] for g in self.t.gpu] +
                                             [self.t.launch_of(g)["_index"] for g in self.t.gpu]))
        gpu_index = {g["_index"]: g for g in self.t.gpu}
        prev = collections.defaultdict(int)
        for r in series:
            g = gpu_index.get(r["index"])
            if g is not None:
                self.assertEqual(r["stream"], self.t.stream_of(g))
            step = -1 if g is not None else 1
            self.assertEqual(r["queue_length"], prev[r["stream"]] + step, r)
            prev[r["stream"]] = r["queue_length"]
        self.assertEqual(set(prev.values()), {0})

    def test_ops_has_every_kernel_inside_an_aten_op(self):
        """hta ops attributes every kernel whose launch lies inside an aten:: op (start <= call start,
        end >= call end; the innermost: the latest start) to that op: the (op, kernel sequence) counts,
        computed here.  Copies and sets are not kernels of an op, as in HTA's analysis."""
        ops = sorted(self.t.ops, key=lambda o: ns(o["ts"]))
        inst = collections.defaultdict(list)
        for g in self.t.gpu:
            if g["cat"] != "kernel":
                continue
            call = self.t.launch_of(g)
            a, b = ns(call["ts"]), ns(call["ts"]) + ns(call["dur"])
            best = None
            for i, o in enumerate(ops):
                if ns(o["ts"]) > a:
                    break
                if ns(o["ts"]) + ns(o["dur"]) >= b:
                    best = i
            if best is not None:
                inst[best].append((a, ns(g["ts"]), g["name"]))
        want = collections.Counter()
        for i, ks in inst.items():
            want[(ops[i]["name"], " -> ".join(k[2] for k in sorted(ks)))] += 1
        got = collections.Counter({(r["aten_op_name"], r["kernel_sequence"]): r["occurrence_count"]
                                   for r in hta("ops", self.t.path)["aten_op_kernels_and_delay"]})
        self.assertEqual(got, want)
        self.assertGreater(sum(want.values()), 0)


class Mi300Falconsai(Common, unittest.TestCase):
    """ROCm on MI300: hipLaunchKernel, hipExtModuleLaunchKernel, hipModuleLaunchKernel; two
    hipDeviceSynchronize; no sync records (ROCm writes none)."""
    TRACE = "mi300_falconsai"

    def test_vendor_names(self):
        self.assertEqual(collections.Counter(self.t.launch_of(g)["name"] for g in self.t.gpu),
                         {"hipExtModuleLaunchKernel": 78, "hipLaunchKernel": 65, "hipModuleLaunchKernel": 12})
        self.assertFalse([e for e in self.t.ev if e.get("cat") == "cuda_sync"])

    def test_device_syncs_give_sync_edges(self):
        """A hipDeviceSynchronize returns once the device is idle: an edge from the last GPU activity of
        every stream that ended by the call's end.  The first call comes before any GPU work (no edge),
        the second after all of it (one stream: one edge).  HTA's rules know no HIP sync: none."""
        syncs = [e for e in self.t.ev if e.get("name") == "hipDeviceSynchronize"]
        self.assertEqual(len(syncs), 2)
        want = 0
        for s in syncs:
            end = ns(s["ts"]) + ns(s["dur"])
            want += len({self.t.stream_of(g) for g in self.t.gpu if ns(g["ts"]) + ns(g["dur"]) <= end})
        self.assertEqual(want, 1)
        stats = {r["name"]: r["value"] for r in hta("critical-path", self.t.path)["stats"]}
        self.assertEqual(stats["graph_edge_types.critical_path_sync_dependency"], want)
        compat = {r["name"]: r["value"] for r in hta("critical-path", self.t.path, "--hta-compat")["stats"]}
        self.assertEqual(compat.get("graph_edge_types.critical_path_sync_dependency", 0), 0)

    def test_idle_and_critical_path_agree(self):
        """The GPU idles 75% of its span waiting for the host, and the critical path is the CPU's."""
        spans = sorted((ns(g["ts"]), ns(g["ts"]) + ns(g["dur"])) for g in self.t.gpu)
        busy, end = 0, None
        for a, b in spans:  # the union of the GPU rows (one stream)
            if end is None or a >= end:
                busy += b - a
            elif b > end:
                busy += b - end
            end = b if end is None else max(end, b)
        span = spans[-1][1] - spans[0][0]
        rep = hta("report", self.t.path)
        (rank,) = rep["ranks"]
        self.assertEqual(rank["span_us"], us3(span))
        self.assertEqual(rank["idle_pctg"], round(100.0 * (span - busy) / span, 2))
        self.assertEqual(rank["main_idle_cause"], "host_wait")
        self.assertGreater(rank["idle_pctg"], 50)
        cp = {r["bound_by"]: r["percentage"] for r in rep["critical_path"]}
        self.assertEqual(max(cp, key=cp.get), "cpu_bound")
        self.assertGreater(cp["cpu_bound"], 90)
        areas = {f["area"]: f["finding"] for f in rep["observations"] if f["rank"] == 0}
        self.assertIn("GPU idle 75.0%", areas["idle"])
        self.assertIn("cpu_bound", areas["critical path"])


class VllmDecodeGraph(Common, unittest.TestCase):
    """vLLM decode on ROCm replayed from a graph: one hipGraphLaunch starts 421 kernels under one
    correlation id; the GPU runs back to back."""
    TRACE = "vllm_decode_graph"

    def setUp(self):
        (self.graph,) = [e for e in self.t.host.values() if e["name"] == "hipGraphLaunch"]
        self.corr = self.graph["args"]["correlation"]

    def gaps(self):
        """The GPU rows in time order, and the sum of the gaps between them (ns)."""
        rows = sorted((ns(g["ts"]), ns(g["ts"]) + ns(g["dur"]), g) for g in self.t.gpu)
        gaps, end = 0, rows[0][1]
        for a, b, _ in rows[1:]:
            gaps += max(0, a - end)
            end = max(end, b)
        return rows, gaps

    def test_graph_launch_owns_its_kernels(self):
        kernels = [g for g in self.t.gpu if g["args"]["correlation"] == self.corr]
        self.assertEqual(len(kernels), 421)
        out = hta("launch", self.t.path)
        rows = [r for r in out["cuda_kernel_launch_stats"] if r["correlation"] == self.corr]
        self.assertEqual(len(rows), 421)
        self.assertEqual({r["cpu_duration"] for r in rows}, {us3(ns(self.graph["dur"]))})
        # one call longer than the 50 us cutoff: one runtime outlier, not one per kernel it started
        self.assertGreater(ns(self.graph["dur"]), 50000)
        self.assertEqual(sum(r["runtime_outlier"] for r in rows), 1)
        long_calls = {self.t.launch_of(g)["args"]["correlation"] for g in self.t.gpu
                      if ns(self.t.launch_of(g)["dur"]) > 50000}
        self.assertEqual(out["launch_summary"][0]["runtime_outliers"], len(long_calls))

    def test_critical_path_is_the_gpu(self):
        """The path runs through every GPU row, from the first start to the last end; its only
        non-kernel time is the gaps between them."""
        rows, gaps = self.gaps()
        cp = hta_graph(self.t.path)
        summary = {r["bound_by"]: r["duration"] for r in cp["summary"] if r["duration"]}
        self.assertEqual(set(summary), {"gpu_compute_bound", "gpu_kernel_kernel_overhead"})
        self.assertEqual(summary["gpu_kernel_kernel_overhead"], us3(gaps))
        stats = {r["name"]: r["value"] for r in cp["stats"]}
        self.assertEqual(stats["critical_path_total_weight"], us3(rows[-1][1] - rows[0][0]))
        on_path = {r["event_idx"] for r in cp["breakdown"] if r["type"] == "critical_path_operator"}
        self.assertEqual(on_path, {g["_index"] for g in self.t.gpu})

    def test_idle_is_not_host_wait(self):
        """The host enqueued everything before the GPU started: no gap waits for it."""
        rows, gaps = self.gaps()
        self.assertLess(max(ns(self.t.launch_of(g)["ts"]) for g in self.t.gpu), rows[0][0])
        idle = {r["idle_category"]: r["idle_time"] for r in hta("idle", self.t.path)["idle_time"]}
        self.assertEqual(idle.get("host_wait", 0), 0)
        self.assertAlmostEqual(sum(idle.values()), gaps / 1000.0, places=2)
        self.assertEqual(idle["kernel_wait"], round(gaps / 1000.0, 2))

    def test_idle_and_critical_path_agree(self):
        rep = hta("report", self.t.path)
        (rank,) = rep["ranks"]
        self.assertLess(rank["idle_pctg"], 1)
        cp = {r["bound_by"]: r["percentage"] for r in rep["critical_path"]}
        self.assertGreater(cp["gpu_compute_bound"], 99)
        self.assertNotIn("cpu_bound", cp)
        areas = {f["area"]: f["finding"] for f in rep["observations"] if f["rank"] == 0}
        self.assertIn("GPU idle only 0.2%", areas["idle"])
        self.assertIn("gpu_compute_bound", areas["critical path"])


class B200Eager(Common, unittest.TestCase):
    """CUDA on B200: cudaLaunchKernel, cudaLaunchKernelExC and the driver's cuLaunchKernelEx /
    cuLaunchKernel (cat cuda_driver), cudaMemcpyAsync."""
    TRACE = "b200_eager"

    def test_vendor_names(self):
        self.assertEqual(collections.Counter((self.t.launch_of(g)["cat"], self.t.launch_of(g)["name"])
                                             for g in self.t.gpu),
                         {("cuda_runtime", "cudaLaunchKernel"): 367, ("cuda_driver", "cuLaunchKernelEx"): 220,
                          ("cuda_runtime", "cudaLaunchKernelExC"): 180, ("cuda_runtime", "cudaMemcpyAsync"): 161,
                          ("cuda_driver", "cuLaunchKernel"): 1})


if __name__ == "__main__":
    unittest.main()
