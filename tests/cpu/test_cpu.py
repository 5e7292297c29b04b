"""CPU-only traces: `hta cpu-ops` (operator, step and arg tables) and `hta critical-path` over the CPU
threads, on the hand-computed trace of cpu_trace.py and on HTA's cpu_only test trace."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_trace  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
CPU_ONLY = os.path.join(ROOT, "tests", "data", "hta", "cpu_only")


tables = testlib.hta_json
rows = testlib.rows


class Small(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.path = os.path.join(tmp, "cpu.json")
        cpu_trace.write(cls.path)


class CpuOps(Small):
    def test_op_time(self):
        out, _ = tables("cpu-ops", self.path)
        got = [(r["name"], r["cat"], r["count"], r["total_time (us)"], r["self_time (us)"], r["mean_time (us)"],
                r["max_time (us)"]) for r in rows(out["cpu_op_time"])]
        # most self time first; ProfilerSteps are not operators (cpu_steps has them); step 3 is filtered out
        self.assertEqual(got, [
            ("aten::addmm", "cpu_op", 2, 650, 650, 325, 400),
            ("dataloader", "user_annotation", 2, 600, 600, 300, 400),
            ("aten::relu", "cpu_op", 2, 150, 150, 75, 100),
            ("aten::linear", "cpu_op", 2, 800, 110, 400, 500),
            ("aten::t", "cpu_op", 1, 40, 40, 40, 40),
        ])
        r = rows(out["cpu_op_time"])
        # span: 100 .. 2300 (the loader's last call) = 2200 us
        self.assertEqual(r[0]["self_pctg"], 29.55)
        self.assertEqual(r[3]["total_pctg"], 36.36)
        self.assertEqual({x["rank"] for x in r}, {0})

    def test_top(self):
        out, _ = tables("cpu-ops", self.path, "--top", "2")
        self.assertEqual([r["name"] for r in rows(out["cpu_op_time"])], ["aten::addmm", "dataloader"])

    def test_steps(self):
        out, _ = tables("cpu-ops", self.path)
        st = [(r["step"], r["duration (us)"], r["ops"], r["outside_ops (us)"], r["top_op"], r["top_op_self (us)"],
               r["top_op_pctg"]) for r in rows(out["cpu_steps"])]
        self.assertEqual(st, [(1, 1000, 5, 400, "aten::addmm", 400, 40.0),
                              (2, 800, 4, 450, "aten::addmm", 250, 31.25)])

    def test_step_ops(self):
        out, _ = tables("cpu-ops", self.path, "--step-top", "0")
        so = [(r["step"], r["name"], r["count"], r["self_time (us)"], r["total_time (us)"], r["step_pctg"])
              for r in rows(out["cpu_step_ops"])]
        self.assertEqual(so, [
            (1, "aten::addmm", 1, 400, 400, 40.0), (1, "dataloader", 1, 200, 200, 20.0),
            (1, "aten::relu", 1, 100, 100, 10.0), (1, "aten::linear", 1, 60, 500, 6.0), (1, "aten::t", 1, 40, 40, 4.0),
            # the loader's call runs 300 us past step 2's end: its 100 us inside count
            (2, "aten::addmm", 1, 250, 250, 31.25), (2, "dataloader", 1, 100, 100, 12.5),
            (2, "aten::linear", 1, 50, 300, 6.25), (2, "aten::relu", 1, 50, 50, 6.25),
        ])
        out, _ = tables("cpu-ops", self.path)  # default: 5 per step
        self.assertEqual([r["step"] for r in rows(out["cpu_step_ops"])], [1] * 5 + [2] * 4)

    def test_last_step_kept_on_request(self):
        out, _ = tables("cpu-ops", self.path, "--include-last-step")
        self.assertEqual([(r["step"], r["ops"], r["top_op"]) for r in rows(out["cpu_steps"])],
                         [(1, 5, "aten::addmm"), (2, 4, "aten::addmm"), (3, 0, None)])

    def test_args(self):
        out, _ = tables("cpu-ops", self.path)
        self.assertEqual(rows(out["scope_args"]), [])  # not a libhtatrace file: no args unless asked
        out, _ = tables("cpu-ops", self.path, "--args")
        a = {(r["name"], r["arg"]): (r["count"], r["sum"], r["mean"], r["min"], r["max"])
             for r in rows(out["scope_args"])}
        self.assertEqual(a[("dataloader", "batch")], (2, 96, 48, 32, 64))
        self.assertEqual(a[("aten::addmm", "External id")], (2, 9, 4.5, 3, 6))
        self.assertNotIn(("dataloader", "source"), a)  # text values have no statistics


class CpuCriticalPath(Small):
    def test_path_over_the_main_thread(self):
        # HTA's graph (--hta-compat), with hta's CPU-only extension; the default answer is the simulation
        # graph's (tests/cpath/test_engine.py)
        out, err = tables("critical-path", self.path, "--hta-compat")
        self.assertIn("CPU-only rank", err)
        bd = rows(out["breakdown"])
        ops = [(r["s_name"], r["duration"]) for r in bd if r["type"] == "critical_path_operator"]
        # steps 1 and 2 end to end on the main thread; nesting: each call's time before, between and after
        # its children is its own (the steps' time outside ops included), children in start order
        self.assertEqual(ops, [
            ("ProfilerStep#1", 50), ("aten::linear", 10), ("aten::t", 40), ("aten::linear", 10),
            ("aten::addmm", 400), ("aten::linear", 40), ("ProfilerStep#1", 50), ("aten::relu", 100),
            ("ProfilerStep#1", 300),
            ("ProfilerStep#2", 50), ("aten::linear", 10), ("aten::addmm", 250), ("aten::linear", 40),
            ("ProfilerStep#2", 50), ("aten::relu", 50), ("ProfilerStep#2", 350)])
        self.assertEqual({r["tid"] for r in bd if r["tid"] is not None}, {1})
        # the two steps are joined by the thread's order (a dependency edge, no time)
        self.assertEqual([r["type"] for r in bd].count("critical_path_dependency"), 1)
        summ = {r["bound_by"]: r["duration"] for r in rows(out["summary"])}
        self.assertEqual(summ["cpu_bound"], 1800)
        stats = {n: v for n, v in out["stats"]["data"]}
        self.assertEqual(stats["critical_path_total_weight"], 1800)

    def test_longest_thread_wins(self):
        # HTA's cpu_only trace: the gloo threads' all_reduce annotations (about 1.07 s each) outweigh the
        # main thread's step; the path is thread 3553's five calls, 1074798.655 us in the file's own times
        # HTA's graph in exact ns: stored by --save, read back with --graph
        with tempfile.TemporaryDirectory() as d:
            g = os.path.join(d, "g.cpg")
            tables("critical-path", CPU_ONLY, "--save", g)
            out, _ = tables("critical-path", "--graph", g)
        bd = [r for r in rows(out["breakdown"]) if r["type"] == "critical_path_operator"]
        self.assertEqual({(r["s_name"], r["tid"]) for r in bd}, {("gloo:all_reduce", 3553)})
        self.assertEqual(len(bd), 5)
        self.assertAlmostEqual(sum(r["duration"] for r in bd), 1074798.655, places=6)


class CpuReport(Small):
    def test_findings(self):
        rep, err = tables("report", self.path)
        f = {x["area"]: x for x in rows(rep["observations"])}
        self.assertEqual(sorted(f), ["cpu", "critical path", "gpu"])
        # steps 1 (1000 us) and 2 (800 us): addmm 650, loader 300 (200 + the 100 us inside step 2), relu 150 of
        # 1800 us; 850 us of the main thread's steps run no operator
        self.assertEqual(f["cpu"]["finding"],
                         "2 steps, mean 900 us (shortest 800 us: step 2; longest 1.00 ms: step 1); operators by "
                         "self time in them (summed over threads, of the steps' duration): aten::addmm 36.1%, "
                         "dataloader 16.7%, aten::relu 8.3%; on the step's own thread 47.2% is outside any operator")
        # the one engine's path (what `critical-path` prints) inside the report's window, steps 1 and 2 (the
        # last dropped, as HTA does): 1.8 ms, the steps' 900 us mean beside it (issue 39: the path of
        # steps 1 to 3, 2.40 ms, stood beside these two steps)
        self.assertEqual(f["critical path"]["finding"],
                         "critical path of the window's 2 steps 1.80 ms, CPU-bound (100.0% operator "
                         "time) on thread 1 (pid 7): ProfilerStep (outside operators) 47.2%, aten::addmm 36.1%, "
                         "aten::relu 8.3%")
        self.assertIn("--what-if 'op:aten::addmm=x0.5'", f["critical path"]["what_to_do"])
        self.assertIn("no GPU activity", err)

    def test_tables_are_cpu_ops(self):
        rep, _ = tables("report", self.path, "--top", "2")
        ops, _ = tables("cpu-ops", self.path, "--top", "2")
        for t in ("cpu_ranks", "cpu_op_time", "cpu_steps", "cpu_step_ops"):
            self.assertEqual(rep[t], ops[t], t)
        self.assertEqual([r["name"] for r in rows(rep["cpu_op_time"])], ["aten::addmm", "dataloader"])
        r, = rows(rep["cpu_ranks"])
        self.assertEqual((r["span (us)"], r["threads"], r["calls"], r["steps"], r["mean_step (us)"], r["tracer"]),
                         (2200, 2, 9, 2, 900, 0))

    def test_gpu_and_cpu_ranks(self):
        # rank 0 a generated GPU trace, rank 1 the CPU trace: GPU findings and kernel tables for rank 0, the CPU
        # part for rank 1 only
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_kineto_trace.py"), "--out", d,
                            "--ranks", "1", "--layers", "1", "--steps", "3", "--quiet"], check=True)
            cpu_trace.write(os.path.join(d, "cpu_rank1.json"), rank=1)
            rep, _ = tables("report", d)
        self.assertEqual({r["rank"] for r in rows(rep["cpu_ranks"])}, {1})
        self.assertEqual({r["rank"] for r in rows(rep["cpu_op_time"])}, {1})
        self.assertTrue(rows(rep["top_kernels"]))
        areas = {(x["rank"], x["area"]) for x in rows(rep["observations"])}
        self.assertIn((1, "cpu"), areas)
        self.assertIn((0, "idle"), areas)
        self.assertNotIn((0, "cpu"), areas)

    def test_many_ranks(self):
        with tempfile.TemporaryDirectory() as d:
            for k in range(10):
                cpu_trace.write(os.path.join(d, "rank%d.json" % k), rank=k)
            rep, _ = tables("report", d, "--no-critical-path")
        f = rows(rep["observations"])
        self.assertEqual([(x["rank"], x["area"]) for x in f], [(None, "gpu"), (None, "cpu")])
        self.assertEqual(f[1]["finding"],
                         "mean step time: median 900 us over 10 ranks (least 900 us on rank 0, most 900 us on rank 0); "
                         "most self time over all of them: aten::addmm 29.5%, dataloader 27.3%, aten::relu 6.8% of "
                         "the summed span")
        self.assertEqual(len(rows(rep["cpu_op_time"])), 50)


if __name__ == "__main__":
    unittest.main()


class TorchLegacyReport(unittest.TestCase):
    """The real PyTorch 1.13 autograd-profiler file (Chrome's array form, no cat): the report says what
    dominates its steps; figures recomputed here from the file's own events."""
    PATH = os.path.join(ROOT, "tests", "data", "real", "torch113_cpu_legacy", "trace.json")

    def test_report_names_the_dominant_operators(self):
        with open(self.PATH) as f:
            ev = json.load(f)
        # HTA's window: events starting before the last ProfilerStep starts (TF§10.2)
        last = max(e["ts"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#"))
        mm = [e for e in ev if e.get("name") == "aten::mm" and e.get("ph") == "X" and e["ts"] < last]
        self.assertEqual(len(mm), 6)
        out, _ = tables("report", self.PATH, "--quiet")
        ops = rows(out["cpu_op_time"])
        self.assertEqual(ops[0]["name"], "aten::mm")
        self.assertEqual(ops[0]["count"], 6)
        self.assertEqual(ops[0]["total_time (us)"], sum(e["dur"] for e in mm))
        steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
        self.assertEqual(len(steps), 3)  # the last step is dropped, as HTA does
        f = [r for r in rows(out["observations"]) if r["area"] == "cpu"]
        self.assertEqual(len(f), 1)
        self.assertIn("2 steps", f[0]["finding"])
        self.assertIn("aten::mm 24.6%", f[0]["finding"])
        cp = [r for r in rows(out["observations"]) if r["area"] == "critical path"]
        self.assertIn("CPU-bound", cp[0]["finding"])
