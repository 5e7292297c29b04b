"""critical-path --all-ranks in bounded memory (hta_job_*: rank skeletons, barrier replay, paths summed rank by
rank), file by file against the whole load (HTA_PER_RANK=0: every rank loaded, visited one after the other): the
same bytes for every table and note, under what-if rules of every kind, with 1 or 2 threads, with --ranks; and
the report's savings.  What the engine answers is checked against ground truth (jobs generated again with the
change) in test_sim.Accuracy and bench/whatif_accuracy.py."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import GEN, HTA  # noqa: E402

RULES = [
    [],
    ["--what-if", "rank:3=median"],
    ["--what-if", "rank:2=x0.5"],
    ["--what-if", "kernel:nccl*=x0.5", "--what-if", "cpu=x0.8"],
    ["--what-if", "rank:1=median", "--what-if", "gpu=x0.9"],
    ["--what-if", "edge:launch=0"],
    ["--what-if", "op:aten::mm*=x0.5"],
]


def run(path, *args, joined=False, threads=None):
    env = dict(os.environ)
    env["HTA_PER_RANK"] = "0" if joined else "1"
    extra = ["--threads", str(threads)] if threads else []
    p = subprocess.run([HTA, "critical-path", path, "--all-ranks", "--format", "csv", *extra, *args],
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


class SameAsJoined(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.jobs = {}
        for name, knobs in (("ddp", ["--mode", "ddp", "--straggler", "3", "--straggler-slowdown", "1.3"]),
                            ("fsdp", ["--mode", "fsdp", "--straggler", "2", "--seed", "4"])):
            out = os.path.join(cls.tmp.name, name)
            subprocess.run([sys.executable, GEN, "--out", out, "--ranks", "4", "--layers", "2", "--steps", "3",
                            "--quiet", *knobs], check=True)
            cls.jobs[name] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_rule_gives_the_joined_graphs_bytes(self):
        for name, path in self.jobs.items():
            for rules in RULES:
                with self.subTest(job=name, rules=rules):
                    rc, out, err = run(path, *rules)
                    self.assertEqual(rc, 0, err)
                    self.assertEqual((rc, out, err), run(path, *rules, joined=True))
                    self.assertIn("collective instances joined across 4 ranks", err)
                    for t in ("what_if_steps", "summary", "hops", "blame", "collectives", "steps"):
                        if t.startswith("what_if") and not rules:
                            continue
                        self.assertIn(t, out)

    def test_threads_and_rank_selection(self):
        path = self.jobs["ddp"]
        one = run(path, "--what-if", "rank:3=median", threads=1)
        self.assertEqual(one, run(path, "--what-if", "rank:3=median", threads=2))
        self.assertEqual(one, run(path, "--what-if", "rank:3=median", joined=True))
        sub = run(path, "--ranks", "0,1,3", "--what-if", "cpu=x0.5")
        self.assertEqual(sub[0], 0, sub[2])
        self.assertIn("joined across 3 ranks", sub[2])
        self.assertEqual(sub, run(path, "--ranks", "0,1,3", "--what-if", "cpu=x0.5", joined=True))

    def test_overlay_rank_by_rank_is_the_joined_graphs(self):
        for name, path in self.jobs.items():
            with self.subTest(job=name), tempfile.TemporaryDirectory() as d:
                files = []
                for joined in (False, True):
                    out = os.path.join(d, "j" if joined else "b")
                    rc, _, err = run(path, "--overlay", out, joined=joined)
                    self.assertEqual(rc, 0, err)
                    self.assertIn("overlay written to " + out, err)
                    with open(os.path.join(out, "overlaid_critical_path_all_ranks.json"), "rb") as f:
                        files.append(f.read())
                self.assertEqual(files[0], files[1])
                self.assertTrue(b'"critical": 1' in files[0])
                self.assertTrue(b'"ph": "s", "cat": "critical_path"' in files[0])

    def test_rule_errors_as_the_joined_graph_gives_them(self):
        path = self.jobs["fsdp"]
        for rules in (["--what-if", "nothing*=x2"], ["--what-if", "rank:99=median"],
                      ["--what-if", "kernel:nomatch*=x0.5"]):
            with self.subTest(rules=rules):
                got = run(path, *rules)
                self.assertNotEqual(got[0], 0)
                self.assertEqual(got, run(path, *rules, joined=True))

    def copy_ddp(self, d, i):
        """The ddp job copied into d; the path of its i-th file (by name), to be spoilt."""
        for f in os.listdir(self.jobs["ddp"]):
            shutil.copy(os.path.join(self.jobs["ddp"], f), d)
        return os.path.join(d, sorted(os.listdir(d))[i])

    def test_a_bad_rank_file_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            victim = self.copy_ddp(d, 2)
            with open(victim, "rb") as f:
                head = f.read(4096)
            with open(victim, "wb") as f:
                f.write(head + b"\x01")  # the head names the rank; the body is broken (a cut alone loads)
            rc, out, err = run(d)
            self.assertEqual(rc, 1)
            self.assertEqual(out, "")
            self.assertIn(os.path.basename(victim), err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_a_cut_rank_file_warns_once(self):
        # a file cut inside its last event loads the events before it, with the loader's warning: once, from
        # the job's first pass (the others read it again, or its kept graph), as the whole load gives it
        with tempfile.TemporaryDirectory() as d:
            victim = self.copy_ddp(d, 1)
            with open(victim, "rb") as f:
                text = f.read()
            cut = text[: text.rindex(b'"ph"')]
            with open(victim, "wb") as f:
                f.write(cut)
            want = "%s: truncated at byte %d" % (os.path.basename(victim), len(cut))
            whole = run(d, "--what-if", "cpu=x0.5", joined=True)
            self.assertEqual(whole[0], 0, whole[2])
            for threads in (1, 4):  # each pass loads the files; the files read once and their graphs kept
                with self.subTest(threads=threads):
                    got = run(d, "--what-if", "cpu=x0.5", threads=threads)
                    self.assertEqual(got[0], 0, got[2])
                    self.assertEqual(got[2].count("truncated at byte"), 1, got[2])
                    self.assertIn(want, got[2])
                    self.assertEqual(got, whole)
            quiet = run(d, "--what-if", "cpu=x0.5", "--quiet")
            self.assertNotIn("truncated", quiet[2])


if __name__ == "__main__":
    unittest.main()
