"""PyTorch <= 1.9's trace schema (docs/loading.md, "PyTorch 1.9 and older"): categories Operator, Runtime,
Kernel, Memcpy, Memset, "external id" on runtime calls and kernels, "async" launch flows, "stream N" tids.
A hand-made old trace reads exactly as its twin in today's names; Kineto's 2021 ResNet-50 sample
(tests/data/real-diag, PyTorch 1.9, BSD-3 LICENSE-kineto) has its six steps, its DataLoader and its
launches in info, report and cpu-ops; --hta-compat reads the names as HTA does (as written)."""
import copy
import json
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
KINETO = os.path.join(ROOT, "tests", "data", "real-diag", "pytorch__kineto", "tb_plugin", "samples",
                      "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz")


def tables(*args):
    p = subprocess.run([HTA, *args, "--format", "json", "--quiet"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def old_trace():
    """Three steps of 1000 us on thread 100: a DataLoader range of 400 us, then an operator launching a
    kernel (and a copy and a set), written as PyTorch 1.9 did."""
    ev = []
    corr = 1
    for s in range(3):
        t0 = 10000 + 1000 * s
        ev.append({"ph": "X", "cat": "Operator", "name": "ProfilerStep#%d" % (s + 1), "pid": 100, "tid": "100",
                   "ts": t0, "dur": 1000, "args": {"External id": 10 * s + 1}})
        ev.append({"ph": "X", "cat": "Operator", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                   "pid": 100, "tid": "100", "ts": t0 + 10, "dur": 400, "args": {"External id": 10 * s + 2}})
        ev.append({"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 100, "tid": "100",
                   "ts": t0 + 450, "dur": 300, "args": {"External id": 10 * s + 3}})
        for k, (cat, name, launch) in enumerate([("Kernel", "volta_scudnn_128x64_relu", "cudaLaunchKernel"),
                                                  ("Memcpy", "Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync"),
                                                  ("Memset", "Memset (Device)", "cudaMemsetAsync")]):
            ts = t0 + 460 + 50 * k
            ev.append({"ph": "X", "cat": "Runtime", "name": launch, "pid": 100, "tid": 100, "ts": ts, "dur": 20,
                       "args": {"cbid": 211, "correlation": corr, "external id": 10 * s + 3, "external ts": t0 + 450}})
            ev.append({"ph": "s", "id": corr, "pid": 100, "tid": 100, "ts": ts, "cat": "async", "name": "launch"})
            ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": "stream 7", "ts": ts + 200, "dur": 100,
                       "args": {"device": 0, "stream": 7, "correlation": corr, "external id": 10 * s + 3}})
            ev.append({"ph": "f", "id": corr, "pid": 0, "tid": "stream 7", "ts": ts + 200, "cat": "async",
                       "name": "launch", "bp": "e"})
            corr += 1
    return {"schemaVersion": 1, "traceEvents": ev}


NEW = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel", "Memcpy": "gpu_memcpy",
       "Memset": "gpu_memset", "async": "ac2g"}


def new_trace():
    """The same events in today's names: categories, "External id", numeric tids, ac2g flows."""
    t = copy.deepcopy(old_trace())
    for e in t["traceEvents"]:
        e["cat"] = NEW[e["cat"]]
        if "external id" in e.get("args", {}):
            e["args"]["External id"] = e["args"].pop("external id")
        if e["tid"] == "stream 7":
            e["tid"] = 7
        elif isinstance(e["tid"], str):
            e["tid"] = int(e["tid"])
    return t


class Legacy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hta-legacy-")
        cls.old, cls.new = os.path.join(cls.dir, "old.json"), os.path.join(cls.dir, "new.json")
        for path, t in ((cls.old, old_trace()), (cls.new, new_trace())):
            with open(path, "w") as f:
                json.dump(t, f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def same(self, *args):
        a, b = tables(*args[:1], self.old, *args[1:]), tables(*args[:1], self.new, *args[1:])
        for t in (a, b):
            t.get("ranks", {}).get("data", [[None] * 2])[0][1:2] = [None]  # the file name
        self.assertEqual(a, b, args)
        return a

    def test_reads_as_todays_names(self):
        for cmd in (["report"], ["cpu-ops"], ["launch"], ["kernels"], ["temporal"], ["idle"], ["ops"],
                    ["critical-path"], ["report", "--include-last-step"]):
            with self.subTest(cmd=cmd):
                self.same(*cmd)

    def test_steps_dataloader_launches(self):
        h = rows(tables("report", self.old)["headline"])[0]
        self.assertEqual(h["steps"], 2)  # the last of 3 dropped, HTA's filter, as for any trace
        # the DataLoader range is data loading: 400 of the steps' 1000 us.  Two steps with a kernel each are too
        # short to draw a finding from (docs/report.md, "Too short to judge"); the idle split says it
        obs = rows(tables("report", self.old)["observations"])
        idle = [r["finding"] for r in obs if r["area"] == "idle"]
        self.assertEqual(len(idle), 1)
        self.assertIn("data loading 40.0%", " ".join(idle[0].split()))
        self.assertIn("trace", {r["area"] for r in obs})
        self.assertEqual(len(rows(tables("launch", self.old)["cuda_kernel_launch_stats"])), 6)  # 2 steps x 3
        ev = rows(tables("events", self.old, "--cat", "cuda_runtime")["events"])
        self.assertEqual([(e["external_id"], e["partner"] is not None) for e in ev[:3]], [(3, True)] * 3)

    def test_hta_compat_reads_as_written(self):
        cats = {r["cat"] for r in rows(tables("info", self.old, "--hta-compat")["categories"])}
        self.assertEqual(cats, {"Operator", "Runtime", "Kernel", "Memcpy", "Memset"})
        cats = {r["cat"] for r in rows(tables("info", self.old)["categories"])}
        self.assertEqual(cats, {"cpu_op", "cuda_runtime", "kernel", "gpu_memcpy", "gpu_memset"})
        # info says why the categories differ from the file's; not for a trace in today's names
        note = subprocess.run([HTA, "info", self.old], capture_output=True, text=True).stderr
        self.assertIn("old.json: written by PyTorch <= 1.9", note)
        note = subprocess.run([HTA, "info", self.new], capture_output=True, text=True).stderr
        self.assertNotIn("PyTorch <= 1.9", note)


class Kineto2021(unittest.TestCase):
    """ResNet-50, num_workers=0, PyTorch 1.9 on a V100: ProfilerStep#5..#10, each starting with an
    enumerate(DataLoader) of 63-73 ms (labels.json: data_loading first, 40% of the step)."""

    def test_info_report_cpu_ops_agree_on_steps(self):
        r = rows(tables("info", KINETO)["ranks"])[0]
        self.assertEqual((r["profiler_steps"], r["first_step"], r["last_step"]), (6, 5, 10))
        h = rows(tables("report", KINETO, "--include-last-step")["headline"])[0]
        self.assertEqual(h["steps"], 6)
        h = rows(tables("report", KINETO)["headline"])[0]
        self.assertEqual(h["steps"], 5)  # HTA's filter drops the last step, as everywhere
        c = rows(tables("cpu-ops", KINETO)["cpu_ranks"])[0]
        self.assertEqual(c["steps"], 5)

    def test_dataloader_and_launches(self):
        f = {r["cause"]: r for r in rows(tables("report", KINETO)["findings"])}
        # the DataLoader's time as the idle beside it is counted: its share of the window times the step (70.4
        # ms; the median step's 70.8 ms before, which could stand below the idle time under it: issue 39)
        self.assertIn("while enumerate(DataLoader) runs (70.4 ms per step in all)", f["data_loading"]["evidence"])
        ops = {r["name"]: r for r in rows(tables("cpu-ops", KINETO)["cpu_op_time"])}
        self.assertEqual(ops["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"]["count"], 5)
        launches = rows(tables("launch", KINETO)["cuda_kernel_launch_stats"])
        self.assertEqual(len(launches), 7580)
        ev = rows(tables("events", KINETO, "--name", "cudaMemcpyAsync", "--limit", "1")["events"])[0]
        self.assertEqual((ev["cat"], ev["correlation"], ev["external_id"], ev["iteration"]),
                         ("cuda_runtime", 34417, 537, 5))


if __name__ == "__main__":
    unittest.main()
