"""One critical-path engine (docs/critical-path.md, "One engine"): a run's summary, breakdown, stats, steps and
what-if come from one path, every selection (--window, --annotation/--instance, --ranks) clips every table, a
rule means the same on a trace, a stored graph and the job, and --all-ranks --what-if-trace writes every rank."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import gen, hta, rows, tables  # noqa: E402
from testlib import fig  # noqa: E402


def total(summary):
    return sum(r["duration"] for r in rows(summary))


class OnePath(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.job = os.path.join(cls.tmp.name, "job")
        gen(cls.job, "--straggler", "1", ranks=2)
        cls.rank = os.path.join(cls.job, "rank-0.json")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def steps(self):
        return [r["step"] for r in rows(tables("critical-path", self.rank)["steps"])]

    def test_one_step_window_adds_up(self):
        """a one-step window: the summary's total = the what-if baseline = the step's wall time (within 1%)"""
        step = self.steps()[1]
        out = tables("critical-path", self.rank, "--window", f"annot:ProfilerStep#{step}", "--what-if", "cpu=x0.5")
        base = fig(out["what_if"])["baseline_path_us"]
        (st,) = rows(out["steps"])
        self.assertEqual(st["step"], step)
        self.assertAlmostEqual(total(out["summary"]), base, delta=0.01 * base)
        self.assertAlmostEqual(st["wall_us"], base, delta=0.01 * base)
        (ws,) = rows(out["what_if_steps"])
        self.assertAlmostEqual(ws["baseline_us"], base, delta=0.001)
        self.assertGreater(fig(out["what_if"])["saving_us"], 0)

    def test_whole_run_adds_up(self):
        out = tables("critical-path", self.rank, "--what-if", "gpu=x0.5")
        base = fig(out["what_if"])["baseline_path_us"]
        self.assertAlmostEqual(total(out["summary"]), base, delta=0.01 * base)
        walls = [r["wall_us"] for r in rows(out["steps"])]
        self.assertEqual(len(walls), len(self.steps()))

    def test_instance_clips_the_what_if(self):
        """--annotation/--instance: the what-if's baseline is that instance's step, not the whole run"""
        steps = rows(tables("critical-path", self.rank)["steps"])
        seen = set()
        for inst in (0, 2):
            out = tables("critical-path", self.rank, "--annotation", "ProfilerStep", "--instance", str(inst),
                         "--what-if", "cpu=x0.5")
            base = fig(out["what_if"])["baseline_path_us"]
            (st,) = rows(out["steps"])
            want = next(r["wall_us"] for r in steps if r["step"] == st["step"])
            self.assertAlmostEqual(base, want, delta=0.01 * want)
            self.assertAlmostEqual(total(out["summary"]), base, delta=0.01 * base)
            seen.add(st["step"])
        self.assertEqual(len(seen), 2)

    def test_breakdown_bounded_by_default(self):
        out = tables("critical-path", self.rank)
        self.assertEqual(len(out["breakdown"]["data"]), 20)
        durs = [r["duration"] for r in rows(out["breakdown"])]
        self.assertEqual(durs, sorted(durs, reverse=True))
        n = len(tables("critical-path", self.rank, "--all")["breakdown"]["data"])
        self.assertGreater(n, 20)
        self.assertEqual(len(tables("critical-path", self.rank, "--top", "5")["breakdown"]["data"]), 5)

    def test_hta_graph_only_where_asked(self):
        """--hta-compat prints HTA's graph (no steps table); the default is the simulation graph's path"""
        compat = tables("critical-path", self.rank, "--hta-compat")
        self.assertNotIn("steps", compat)
        dflt = tables("critical-path", self.rank)
        self.assertIn("steps", dflt)
        self.assertNotEqual(fig(compat["stats"])["graph_nodes"], fig(dflt["stats"])["graph_nodes"])

    def test_rule_matching_nothing_fails_everywhere(self):
        """one meaning of a rule: no match is an error on the trace, a stored graph and the job"""
        g = os.path.join(self.tmp.name, "g.cpg")
        hta("critical-path", self.rank, "--save", g, "--quiet")
        for args in ([self.rank], ["--graph", g], [self.job, "--all-ranks"]):
            p = hta("critical-path", *args, "--what-if", "kernel:zzz*=x2", ok=False)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("matches nothing", p.stderr, args)

    def test_overflow_refused_everywhere(self):
        g = os.path.join(self.tmp.name, "g2.cpg")
        hta("critical-path", self.rank, "--save", g, "--quiet")
        for args in ([self.rank], ["--graph", g], [self.job, "--all-ranks"]):
            p = hta("critical-path", *args, "--what-if", "gpu=x1e6", "--what-if", "gpu=x1e6", ok=False)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("beyond the times hta holds", p.stderr, args)


class JobTraces(unittest.TestCase):
    def test_all_ranks_what_if_trace(self):
        """every rank's simulated trace, loadable again; its steps are the what_if_steps of the run"""
        with tempfile.TemporaryDirectory() as d:
            job = os.path.join(d, "job")
            gen(job, ranks=3)
            out = os.path.join(d, "sim")
            res = tables("critical-path", job, "--all-ranks", "--what-if", "gpu=x0.5", "--what-if-trace", out)
            self.assertEqual(sorted(os.listdir(out)), ["rank-0.json", "rank-1.json", "rank-2.json"])
            pred = {(r["rank"], r["step"]): r["simulated_us"] for r in rows(res["what_if_steps"])}
            for k in range(3):
                again = rows(tables("critical-path", os.path.join(out, f"rank-{k}.json"))["steps"])
                for r in again:
                    want = pred[(k, r["step"])]
                    self.assertAlmostEqual(r["wall_us"], want, delta=0.005 * want, msg=(k, r["step"]))
            # --ranks picks one; the trace's own folder is refused
            one = os.path.join(d, "one")
            tables("critical-path", job, "--all-ranks", "--ranks", "1", "--what-if", "gpu=x0.5", "--what-if-trace", one)
            self.assertEqual(os.listdir(one), ["rank-1.json"])
            p = hta("critical-path", job, "--all-ranks", "--what-if", "gpu=x0.5", "--what-if-trace", job, ok=False)
            self.assertEqual(p.returncode, 1)
            self.assertRegex(p.stderr, "another folder|refusing to write over it")
            self.assertEqual(sorted(os.listdir(job)), ["rank-0.json", "rank-1.json", "rank-2.json"])

    def test_job_graph_reads_the_event_records(self):
        """the job builds a rank's graph giving the rank's rows back as it reads them (docs/scaling.md, "The
        rows released column by column"): on HTA's event-sync trace (cudaEventRecord, cudaStreamWaitEvent and
        Event Sync with their CUPTI records, which the graph reads by correlation before the rows' times go)
        its what-if is the rank's own, built with every row kept"""
        src = os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "data", "hta", "critical_path",
                           "cuda_event_sync_multi_stream", "event_sync_trace.json.gz")
        with tempfile.TemporaryDirectory() as d:
            with open(src, "rb") as f, open(os.path.join(d, "event_sync_trace.json.gz"), "wb") as g:
                g.write(f.read())
            for rule, saving in (("gpu=x0.7", 18), ("cpu=x0.5", 9896.5)):
                own = fig(tables("critical-path", src, "--what-if", rule)["what_if"])
                job = fig(tables("critical-path", d, "--all-ranks", "--what-if", rule)["what_if"])
                self.assertEqual(job, own, rule)
                self.assertEqual(own["baseline_path_us"], 19930, rule)
                self.assertAlmostEqual(own["saving_us"], saving, places=3, msg=rule)


class Linear(unittest.TestCase):
    """time per event does not grow with the collectives: a rank with 3x the layers (3x the collectives)
    costs at most ~3x (not 9x) the CPU time; measured in CPU seconds of the process"""

    def cpu(self, *args):
        import resource
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        hta(*args)
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before

    def test_collectives_do_not_make_it_quadratic(self):
        with tempfile.TemporaryDirectory() as d:
            small, big = os.path.join(d, "s"), os.path.join(d, "b")
            subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools", "gen_kineto_trace.py"), "--out",
                            small, "--ranks", "2", "--target-mb", "4", "--quiet", "--jobs", "1"], check=True)
            subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools", "gen_kineto_trace.py"), "--out",
                            big, "--ranks", "2", "--target-mb", "16", "--quiet", "--jobs", "1"], check=True)
            args = ("--all-ranks", "--what-if", "cpu=x0.5", "--quiet")
            a = min(self.cpu("critical-path", small, *args) for _ in range(2))
            b = min(self.cpu("critical-path", big, *args) for _ in range(2))
            # 4x the events: linear is ~4x; before the pruning it was ~40x
            self.assertLess(b, 10 * max(a, 0.02), (a, b))


if __name__ == "__main__":
    unittest.main()
