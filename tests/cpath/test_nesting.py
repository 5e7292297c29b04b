"""How the simulation graph nests a thread's events that do not nest (docs/critical-path.md, "Threads"): the
shape of real traces (TraceLens' OWL-ViT on H100 and ResNet on MI300, tests/report/test_real_diag.py), where
`ProfilerStep#N` and `enumerate(DataLoader)#...` are opened from inside Python frames that return
microseconds later (profiler.step -> _record_function_enter_new, __enter__), while the range lasts the whole
step or the whole batch.  The range keeps its length (the short frames are cut at its start), so the steps are
the steps and removing data loading removes the frames under it; an operator that outlasts its parent by a
little is still cut at the parent's end."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import rows, tables  # noqa: E402
import testlib  # noqa: E402
from testlib import fig  # noqa: E402

B = 1_000_000
STEP = 10_000  # us
LOAD = 4_000   # us of data loading per step, the GPU idle under it
KERNEL = 5_000
# a kernel a step: over ten in the report's window (the last step left out), so that the report judges the
# trace (docs/report.md, "Too short to judge")
STEPS = 12


def X(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": B + ts, "dur": dur, "args": args}


def trace(path, steps=3):
    ev, corr = [], 1
    for n in range(steps):
        t = n * STEP
        # profiler.step() opens the step's range from inside its own frames, which return 45 us later
        ev += [X("torch/profiler/profiler.py(821): step", "python_function", t, 300),
               X("torch/autograd/profiler.py(751): __enter__", "python_function", t + 250, 50),
               X("<built-in method _record_function_enter_new>", "python_function", t + 252, 40),
               X(f"ProfilerStep#{n + 1}", "user_annotation", t + 260, STEP - 260)]
        # the loader's range opened inside __enter__; the loading's frames are under the range
        ev += [X("torch/utils/data/dataloader.py(703): __next__", "python_function", t + 400, LOAD + 100),
               X("torch/autograd/profiler.py(751): __enter__", "python_function", t + 405, 30),
               X("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation", t + 410, LOAD),
               X("torch/utils/data/dataloader.py(740): _next_data", "python_function", t + 450, LOAD - 100)]
        # the step's work: one operator that launches a kernel (its launch outlasts it by 2 us), then the host
        # waits for the kernel (loss.item())
        a = t + LOAD + 600
        ev += [X("aten::mm", "cpu_op", a, 100),
               X("cudaLaunchKernel", "cuda_runtime", a + 90, 12, correlation=corr),
               X("gemm", "kernel", a + 120, KERNEL, pid=0, tid=7, device=0, stream=7, correlation=corr),
               X("cudaStreamSynchronize", "cuda_runtime", a + 110, KERNEL + 15, correlation=corr + 1),
               X("Stream Sync", "cuda_sync", a + 111, KERNEL + 14, pid=0, tid=7, device=0, stream=7,
                 correlation=corr + 1)]
        corr += 2
    testlib.write_trace(path, ev)


class Nesting(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.tmp.name, "rank-0.json")
        trace(cls.trace, steps=STEPS)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_steps_keep_their_length(self):
        """the steps are the ProfilerStep ranges (9740 us), not the 32 us left inside the frames they open in"""
        out = tables("critical-path", self.trace)
        walls = {r["step"]: r["wall_us"] for r in rows(out["steps"])}
        self.assertEqual(sorted(walls), list(range(1, STEPS + 1)))
        for w in walls.values():
            self.assertAlmostEqual(w, STEP - 260, delta=1)

    def test_data_loading_removed_with_its_frames(self):
        """op:enumerate(DataLoader)*=0 takes the range and the frames under it: each step saves the loading
        (its 4000 us less what runs before the range's frames)"""
        out = tables("critical-path", self.trace, "--window", "annot:ProfilerStep#2",
                     "--what-if", "op:enumerate(DataLoader)*=0")
        w = fig(out["what_if"])
        self.assertAlmostEqual(w["baseline_path_us"], STEP - 260, delta=1)
        self.assertAlmostEqual(w["saving_us"], LOAD, delta=10)

    def test_report_saving_in_range(self):
        """the report's data_loading finding: the GPU idles under the loader 40% of the step; removing it saves
        the loading's share of the step"""
        out = tables("report", self.trace)
        (f, *_) = rows(out["findings"])
        self.assertEqual(f["cause"], "data_loading")
        self.assertAlmostEqual(f["saving_pct"], 100.0 * LOAD / (STEP - 260), delta=1.0)

    def test_redrawn_trace_nests(self):
        """the re-drawn trace (--what-if-trace) shows both cuts: __enter__ ends where the step's range starts,
        the range keeps its length; cudaLaunchKernel, 2 us past aten::mm's end, is cut there (not the operator)"""
        os.makedirs(os.path.join(self.tmp.name, "out"), exist_ok=True)
        out = os.path.join(self.tmp.name, "out", "redrawn.json")
        tables("critical-path", self.trace, "--what-if", "op:aten::mm=x1", "--what-if-trace", out)
        with open(out) as f:
            ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e["ts"] < B + STEP]
        dur = {}
        for e in ev:
            dur.setdefault(e["name"], []).append((e["ts"] - B, e["dur"]))
        self.assertEqual(dur["ProfilerStep#1"], [(260, STEP - 260)])
        self.assertEqual(dur["torch/autograd/profiler.py(751): __enter__"], [(250, 10), (405, 5)])
        self.assertEqual(dur["torch/profiler/profiler.py(821): step"], [(0, 260)])
        self.assertEqual(dur["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"], [(410, LOAD)])
        self.assertEqual(dur["aten::mm"], [(LOAD + 600, 100)])
        self.assertEqual(dur["cudaLaunchKernel"], [(LOAD + 690, 10)])

if __name__ == "__main__":
    unittest.main()
