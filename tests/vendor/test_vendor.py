#!/usr/bin/env python3
"""One job, two vendors: the generator writes the same training job as PyTorch writes it on CUDA and
as it writes it on ROCm (--vendor hip: HIP calls, RCCL and Tensile kernels, no cuda_sync records, the
same times), and hta must give the same answers on both wherever the trace holds the same facts.

Where ROCm's trace holds other facts, the expected difference is computed from the files:
- a memset is a kernel of the HIP runtime on ROCm (__amd_rocclr_fillBufferAligned), so its time is
  kernel time of type COMPUTATION instead of MEMORY;
- ROCm writes no sync records: which event a hipStreamWaitEvent or hipEventSynchronize waits for is
  not in the trace.  The critical path is compared with the CUDA trace with its cuda_sync records taken
  out (what Kineto wrote before it recorded them), where hta must reason from the calls alone on both;
- .item() is one hipMemcpyWithStream on ROCm (PyTorch's memcpy_and_sync), a cudaMemcpyAsync and a
  cudaStreamSynchronize on CUDA.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")
# 2 ranks, 4 steps (3 analysed: HTA drops the last), an MoE layer (all_to_all, a memset)
JOB = ["--ranks", "2", "--layers", "2", "--steps", "4", "--moe-every", "2", "--seed", "11", "--jobs", "1",
       "--quiet"]
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
CP_GPU = ("gpu_compute_bound", "gpu_communication_bound", "gpu_kernel_kernel_overhead",
          "gpu_kernel_launch_overhead")


def hta(*args):
    """The JSON tables of an hta command, as lists of dicts."""
    p = subprocess.run([HTA, *args, "--format", "json", "--quiet"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return {k: [dict(zip(t["columns"], r)) for r in t["data"]] for k, t in json.loads(p.stdout).items()}


def hta_graph(folder, *args):
    """The tables of HTA's graph with every vendor's corrections (what --save stores; the default answer is
    the simulation graph's, docs/critical-path.md "One engine, one path"): saved, then read back."""
    fd, g = tempfile.mkstemp(suffix=".cpg")
    os.close(fd)
    try:
        hta("critical-path", folder, *args, "--save", g)
        return hta("critical-path", "--graph", g)
    finally:
        os.unlink(g)


def ns(us):
    """Exact ns of a time the generator wrote with 3 decimals (a float from json: round, never floor)."""
    return round(us * 1000)


def read(folder):
    out = {}
    for r in (0, 1):
        with open(os.path.join(folder, f"rank-{r}.json")) as f:
            out[r] = json.load(f)
    return out


class CudaAndHip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hta_vendor_")
        cls.cuda, cls.hip, cls.nosync = (os.path.join(cls.tmp, d) for d in ("cuda", "hip", "cuda_nosync"))
        for vendor, out in (("cuda", cls.cuda), ("hip", cls.hip)):
            subprocess.run([sys.executable, GEN, "--out", out, "--vendor", vendor, *JOB], check=True)
        cls.c, cls.h = read(cls.cuda), read(cls.hip)
        # the CUDA trace as Kineto wrote it before it recorded syncs: no cuda_sync rows
        os.mkdir(cls.nosync)
        for r, t in cls.c.items():
            t = dict(t, traceEvents=[e for e in t["traceEvents"] if e.get("cat") != "cuda_sync"])
            with open(os.path.join(cls.nosync, f"rank-{r}.json"), "w") as f:
                json.dump(t, f)
        # facts from the files: the last step's start (HTA drops it), ROCm's memsets, the stream map
        cls.last_step, cls.memset_ns, cls.smap = {}, {}, {}
        for r, t in cls.h.items():
            ev = t["traceEvents"]
            cls.last_step[r] = max(ns(e["ts"]) for e in ev if e.get("name", "").startswith("ProfilerStep#"))
            cls.memset_ns[r] = sum(ns(e["dur"]) for e in ev if e.get("name") == "__amd_rocclr_fillBufferAligned"
                                   and ns(e["ts"]) < cls.last_step[r])
        for r in (0, 1):
            hs = {e["args"]["correlation"]: e["args"]["stream"] for e in cls.h[r]["traceEvents"]
                  if e.get("cat") in GPU_CATS}
            for e in cls.c[r]["traceEvents"]:
                if e.get("cat") in GPU_CATS:
                    cls.smap[e["args"]["stream"]] = hs[e["args"]["correlation"]]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- the generator ----

    def test_hip_trace_is_what_rocm_writes(self):
        for r in (0, 1):
            ev = self.h[r]["traceEvents"]
            calls = collections.Counter(e["name"] for e in ev if e.get("cat") == "cuda_runtime")
            self.assertFalse([n for n in calls if not n.startswith("hip")])
            for n in ("hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel", "hipExtLaunchKernel",
                      "hipMemcpyAsync", "hipMemcpyWithStream", "hipMemsetAsync", "hipEventRecord",
                      "hipStreamWaitEvent", "hipEventSynchronize", "hipDeviceSynchronize", "hipHostMalloc"):
                self.assertIn(n, calls)
            self.assertFalse([e for e in ev if e.get("cat") == "cuda_sync"])
            # launches and stream-ordered copies name their stream's handle, as ROCm's roctracer rows do
            for e in ev:
                if e.get("cat") == "cuda_runtime" and "Launch" in e["name"] or e.get("name") in (
                        "hipMemcpyAsync", "hipMemcpyWithStream"):
                    self.assertRegex(e["args"]["stream"], r"^0x[0-9a-f]+$")
            kernels = collections.Counter(e["name"] for e in ev if e.get("cat") == "kernel")
            self.assertIn("ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", kernels)
            self.assertIn("__amd_rocclr_fillBufferAligned", kernels)
            self.assertIn("attn_fwd", kernels)
            self.assertTrue([k for k in kernels if k.startswith("Cijk_")])
            self.assertFalse([e for e in ev if e.get("cat") == "gpu_memset"])
            self.assertEqual(self.h[r]["deviceProperties"][0]["name"], "AMD Instinct MI300X")
        self.assertEqual(self.smap, {7: 0, 24: 1, 20: 2})

    def test_same_times(self):
        """Every GPU row and every call the two traces share has the same start and duration."""
        for r in (0, 1):
            def rows(t):
                return {(e["args"]["correlation"], e["cat"] == "cuda_runtime"): (e["ts"], e["dur"])
                        for e in t["traceEvents"] if e.get("cat") in GPU_CATS + ("cuda_runtime",)}
            c, h = rows(self.c[r]), rows(self.h[r])
            # the one call ROCm does not make: the cudaStreamSynchronize of .item()
            self.assertEqual(set(c) - set(h), {(e["args"]["correlation"], True) for e in self.c[r]["traceEvents"]
                                               if e.get("name") == "cudaStreamSynchronize"})
            self.assertEqual(set(h) - set(c), set())
            self.assertEqual({k: c[k] for k in h}, h)

    # ---- the analyses ----

    def test_launch(self):
        c, h = hta("launch", self.cuda), hta("launch", self.hip)
        self.assertEqual(h, c)
        self.assertEqual([s["launches"] for s in h["launch_summary"]], [471, 471])

    def test_launch_hta_compat(self):
        """HTA knows no HIP launch: its statistics of the hip trace are empty; hta's find every GPU row
        launched before the last step."""
        compat = hta("launch", self.hip, "--hta-compat")
        self.assertEqual(compat["cuda_kernel_launch_stats"], [])
        self.assertEqual([s["launches"] for s in compat["launch_summary"]], [0, 0])
        rows = hta("launch", self.hip)["cuda_kernel_launch_stats"]
        for r in (0, 1):
            ev = self.h[r]["traceEvents"]
            calls = {e["args"]["correlation"]: e for e in ev if e.get("cat") == "cuda_runtime"}
            want = sorted(e["args"]["correlation"] for e in ev if e.get("cat") in GPU_CATS
                          and ns(calls[e["args"]["correlation"]]["ts"]) < self.last_step[r])
            self.assertEqual(sorted(x["correlation"] for x in rows if x["rank"] == r), want)

    def test_temporal(self):
        """Same idle time, span and compute time: ROCm's memsets (its fill kernels) are memory work, as
        CUDA's are."""
        c = {t["rank"]: t for t in hta("temporal", self.cuda)["temporal_breakdown"]}
        h = {t["rank"]: t for t in hta("temporal", self.hip)["temporal_breakdown"]}
        for r in (0, 1):
            self.assertGreater(self.memset_ns[r], 0)
            self.assertEqual(h[r]["idle_time(us)"], c[r]["idle_time(us)"])
            self.assertEqual(h[r]["kernel_time(us)"], c[r]["kernel_time(us)"])
            # two printed 3-decimal figures: within 1 ns of each other's sum
            self.assertEqual(h[r]["compute_time(us)"], c[r]["compute_time(us)"])
            self.assertEqual(h[r]["non_compute_time(us)"], c[r]["non_compute_time(us)"])

    def test_idle(self):
        c = hta("idle", self.cuda)["idle_time"]
        h = hta("idle", self.hip)["idle_time"]
        self.assertEqual(sorted(h, key=lambda x: (x["rank"], x["stream"], x["idle_category"])),
                         sorted((dict(x, stream=self.smap[x["stream"]]) for x in c),
                                key=lambda x: (x["rank"], x["stream"], x["idle_category"])))

    def test_kernel_types(self):
        c = {k["kernel_type"]: k["sum"] for k in hta("kernels", self.cuda)["kernel_type"]}
        h = {k["kernel_type"]: k["sum"] for k in hta("kernels", self.hip)["kernel_type"]}
        self.assertEqual(h["COMMUNICATION"], c["COMMUNICATION"])
        self.assertEqual(h["COMPUTATION overlapping COMMUNICATION"], c["COMPUTATION overlapping COMMUNICATION"])
        self.assertEqual(h["COMPUTATION"], c["COMPUTATION"])
        self.assertEqual(h["MEMORY"], c["MEMORY"])

    # Bug (src/core/vocab.c, hta_kernel_type_of / hta_is_memset_name): ROCm's memset is the HIP
    # runtime's fill kernel __amd_rocclr_fillBufferAligned (launched by hipMemsetAsync, cat "kernel"),
    # which hta calls COMPUTATION; it is MEMORY (Memset) work, as CUDA's "Memset (Device)" is.
    def test_rocm_memset_is_memory(self):
        c = {k["kernel_type"]: k["sum"] for k in hta("kernels", self.cuda)["kernel_type"]}
        h = {k["kernel_type"]: k["sum"] for k in hta("kernels", self.hip)["kernel_type"]}
        self.assertEqual((h["COMPUTATION"], h["MEMORY"]), (c["COMPUTATION"], c["MEMORY"]))

    def test_counters(self):
        """Same launch-queue statistics per stream (under ROCm's queue numbers) and copy bandwidths;
        ROCm's memsets are kernels, with no bytes: no Memset bandwidth."""
        c, h = hta("counters", self.cuda), hta("counters", self.hip)
        key = lambda x: (x["rank"], x["stream"])  # noqa: E731
        self.assertEqual(sorted(h["queue_length_summary"], key=key),
                         sorted((dict(x, stream=self.smap[x["stream"]]) for x in c["queue_length_summary"]), key=key))
        self.assertEqual(h["time_spent_blocked_on_full_queue"], c["time_spent_blocked_on_full_queue"])
        self.assertEqual(h["memory_bw_summary"], [x for x in c["memory_bw_summary"] if x["name"] != "Memset"])
        self.assertEqual({x["name"] for x in c["memory_bw_summary"]}, {"Memcpy DtoH", "Memcpy HtoD", "Memset"})

    def item_tails(self, r):
        """Per step of rank r: the CPU time from the end of .item()'s copy call to the end of aten::item
        (ns), in the CUDA trace.  There CUDA has a cudaStreamSynchronize whose sync edge brings the path
        back to the CPU, and ROCm none: the only place where the two paths may differ."""
        ev = self.c[r]["traceEvents"]
        steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                       if e.get("name", "").startswith("ProfilerStep#"))
        items = [e for e in ev if e.get("name") == "aten::item"]
        copies = [e for e in ev if e.get("name") == "cudaMemcpyAsync"]
        tails = []
        for a, b in steps[:-1]:
            (item,) = [e for e in items if a <= ns(e["ts"]) < b]
            i0, i1 = ns(item["ts"]), ns(item["ts"]) + ns(item["dur"])
            (copy,) = [e for e in copies if i0 <= ns(e["ts"]) < i1]
            tails.append(i1 - ns(copy["ts"]) - ns(copy["dur"]))
        return tails

    def test_critical_path_per_step(self):
        """Per rank and step: the same GPU part of the critical path (kernels, gaps, launch delays) as the
        CUDA trace without sync records, to the ns; the CPU part within the .item() tail."""
        for r in (0, 1):
            for i, tail in enumerate(self.item_tails(r)):
                args = ("--ranks", str(r), "--annotation", "ProfilerStep#", "--instance", str(i))
                c, h = hta_graph(self.nosync, *args), hta_graph(self.hip, *args)
                cs = {x["bound_by"]: x["duration"] for x in c["summary"]}
                hs = {x["bound_by"]: x["duration"] for x in h["summary"]}
                for k in CP_GPU:
                    self.assertEqual(hs.get(k, 0), cs.get(k, 0), (r, i, k))
                self.assertLessEqual(abs(hs.get("cpu_bound", 0) - cs.get("cpu_bound", 0)), tail / 1000, (r, i))
                cw = {x["name"]: x["value"] for x in c["stats"]}["critical_path_total_weight"]
                hw = {x["name"]: x["value"] for x in h["stats"]}["critical_path_total_weight"]
                self.assertLessEqual(abs(hw - cw), tail / 1000, (r, i))
                self.assertGreater(cw, 20000)

    def copy_edges(self, folder, r, name):
        """The weights of the critical-path operator edges of the calls named name, rank r."""
        path = hta_graph(folder, "--ranks", str(r))["breakdown"]
        return [x["duration"] for x in path if x["s_name"] == name and x["type"] == "critical_path_operator"]

    def test_blocking_copy_weighs_nothing(self):
        """A call in which the host waits for the device (hipMemcpy, a sync) is no CPU work: its edge on
        the path weighs 0, and the path reaches its end from the copy (the hip trace, .item()'s copy
        called hipMemcpy)."""
        folder = os.path.join(self.tmp, "hip_hipMemcpy")
        os.makedirs(folder, exist_ok=True)
        for r in (0, 1):
            with open(os.path.join(self.hip, f"rank-{r}.json")) as f:
                text = f.read()
            with open(os.path.join(folder, f"rank-{r}.json"), "w") as f:
                f.write(text.replace('"hipMemcpyWithStream"', '"hipMemcpy"'))
        for r in (0, 1):
            w = self.copy_edges(folder, r, "hipMemcpy")
            self.assertTrue(w)
            self.assertEqual(set(w), {0})

    # Bug (src/core/vocab.c, hta_api_of): hipMemcpyWithStream is taken for a stream-ordered copy that
    # returns at once (HTA_API_MEMCPY | HTA_API_ASYNC: "WithStream" read like "Async"), so
    # hta_api_blocks() is false and the critical path counts the host's wait inside it as cpu_bound
    # operator time (rank 1: one edge of 12921.808 us, the whole call), with no edge from the copy to the
    # call's end.  It blocks: PyTorch's memcpy_and_sync calls it on ROCm in place of cudaMemcpyAsync +
    # cudaStreamSynchronize, and it returns once the copy is done (here 9-13 ms, queued behind the step's
    # kernels).  It is stream-ordered too (it enqueues the copy), so it must stay in the queue lengths.
    # Expected: its edges weigh 0, as hipMemcpy's do (test_blocking_copy_weighs_nothing).
    # Still open: hipMemcpyWithStream is now a blocking call (vocab.h HTA_API_WAITS) and gets sync edges,
    # but its operator edge keeps its weight (probably through the runtime-lock edges of §4, which it
    # takes as a stream-ordered copy).
    @unittest.expectedFailure
    def test_hipMemcpyWithStream_blocks(self):
        for r in (0, 1):
            calls = [e for e in self.h[r]["traceEvents"] if e.get("name") == "hipMemcpyWithStream"]
            self.assertGreater(max(ns(c["dur"]) for c in calls), 5_000_000)
            w = self.copy_edges(self.hip, r, "hipMemcpyWithStream")
            self.assertTrue(w)
            self.assertEqual(set(w), {0}, r)

    # The same bug seen from the whole trace: rank 0's path through .item() counts ~9.4 ms of
    # hipMemcpyWithStream as cpu_bound (66737 us, 43.5% cpu_bound, against 69210 us, 18.4% on the CUDA
    # trace without sync records).  Expected: within the .item() tails, as per step.
    # Still open: hipMemcpyWithStream is now a blocking call (vocab.h HTA_API_WAITS) and gets sync edges,
    # but its operator edge keeps its weight (probably through the runtime-lock edges of §4, which it
    # takes as a stream-ordered copy).
    @unittest.expectedFailure
    def test_critical_path_whole_trace(self):
        for r in (0, 1):
            c = {x["name"]: x["value"] for x in hta_graph(self.nosync, "--ranks", str(r))["stats"]}
            h = {x["name"]: x["value"] for x in hta_graph(self.hip, "--ranks", str(r))["stats"]}
            self.assertLessEqual(abs(h["critical_path_total_weight"] - c["critical_path_total_weight"]),
                                 sum(self.item_tails(r)) / 1000, r)

    def test_one_engine_whole_trace(self):
        """The default answer (the simulation graph) has no such bug: rank by rank, the HIP trace's path is the
        CUDA trace's (without sync records) within the .item() tails."""
        for r in (0, 1):
            c = {x["name"]: x["value"] for x in hta("critical-path", self.nosync, "--ranks", str(r))["stats"]}
            h = {x["name"]: x["value"] for x in hta("critical-path", self.hip, "--ranks", str(r))["stats"]}
            self.assertLessEqual(abs(h["critical_path_total_weight"] - c["critical_path_total_weight"]),
                                 sum(self.item_tails(r)) / 1000, r)

    def test_report(self):
        """The same findings on idle time, communication and launches, with the same figures; the ranks'
        figures equal but for the memsets' share of compute."""
        c, h = hta("report", self.cuda), hta("report", self.hip)
        pick = lambda rep: sorted((f["rank"], f["area"], f["finding"]) for f in rep["observations"]  # noqa: E731
                                  if f["area"] in ("idle", "communication", "launch"))
        self.assertEqual(pick(h), pick(c))
        self.assertEqual(len(pick(c)), 6)
        for rc, rh in zip(c["ranks"], h["ranks"]):
            share = 100.0 * self.memset_ns[rc["rank"]] / 1000 / rc["span_us"]
            for k in rc:
                if k in ("compute_pctg", "non_compute_pctg"):
                    self.assertAlmostEqual(abs(rh[k] - rc[k]), share, delta=0.01)
                else:
                    self.assertEqual(rh[k], rc[k], k)
        # the top kernel differs by name only: RCCL runs every collective as one generic kernel
        top = [f["finding"] for f in h["observations"] if f["area"] == "kernels"]
        self.assertTrue(top and "ncclDevKernel_Generic_1 (COMMUNICATION)" in top[0], top)

    def test_numeric_host_streams(self):
        """Some writers give a host call's args.stream as the stream's number.  hta drops a host call's
        stream at load, so the numbers change nothing (HTA's stream != -1 rule would make these calls
        GPU work)."""
        num = os.path.join(self.tmp, "hip_numeric")
        os.makedirs(num, exist_ok=True)
        handle = {}
        for r, t in self.h.items():
            ev = t["traceEvents"]
            for e in ev:
                if e.get("cat") in GPU_CATS:
                    handle[e["args"]["correlation"]] = e["args"]["stream"]
            evs = []
            for e in ev:
                if e.get("cat") == "cuda_runtime" and "stream" in e.get("args", {}):
                    e = dict(e, args=dict(e["args"], stream=handle[e["args"]["correlation"]]))
                evs.append(e)
            with open(os.path.join(num, f"rank-{r}.json"), "w") as f:
                json.dump(dict(t, traceEvents=evs), f)
        n = sum(1 for t in read(num).values() for e in t["traceEvents"]
                if e.get("cat") == "cuda_runtime" and isinstance(e["args"].get("stream"), int))
        self.assertGreater(n, 900)
        for cmd in (("launch",), ("counters",), ("idle",), ("temporal",), ("critical-path", "--ranks", "1")):
            self.assertEqual(hta(cmd[0], num, *cmd[1:]), hta(cmd[0], self.hip, *cmd[1:]), cmd)


if __name__ == "__main__":
    unittest.main()
