#!/usr/bin/env python3
"""Ranks slow on the host hold a tensor-parallel job back (docs/report.md, "Causes and savings"): a generated
8-rank job in which ranks 2 and 5 run their CPU operators, runtime calls and launches 4x slower, their GPUs as
the others'.  Their launch queues run dry and the six other ranks wait for them in every collective.  The first
finding is the straggling of those two ranks, named with their own cause, and its saving (the job's step with
that cause removed on those ranks) is within 20% of the saving measured on the same job generated again
without the slow hosts."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def report(path):
    p = subprocess.run([HTA, "report", path, "--format", "json", "--quiet"], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)


class HostSlowRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for name, knobs in (("slow", ["--host-slow", "2,5", "--host-slowdown", "4"]), ("clean", [])):
            subprocess.run([sys.executable, GEN, "--out", os.path.join(cls.tmp.name, name), "--ranks", "8",
                            "--layers", "2", "--steps", "4", "--seed", "1", "--quiet", *knobs], check=True)
        cls.slow = report(os.path.join(cls.tmp.name, "slow"))
        cls.clean = report(os.path.join(cls.tmp.name, "clean"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_first_finding_names_the_slow_ranks_and_their_cause(self):
        f = rows(self.slow["findings"])[0]
        self.assertEqual((f["cause"], f["ranks"]), ("straggler", "2,5"))
        self.assertIn("ranks 2,5 hold the others back", f["evidence"])
        self.assertIn("their own cause is cpu_overhead", f["evidence"])

    def test_saving_matches_the_job_without_slow_hosts(self):
        s1 = rows(self.slow["headline"])[0]["step_us"]
        s0 = rows(self.clean["headline"])[0]["step_us"]
        measured = 100 * (s1 - s0) / s1
        estimated = rows(self.slow["findings"])[0]["saving_pct"]
        print("\nhost-slow ranks 2,5 of 8: step %.1f us, without them %.1f us: measured %.1f%%, estimated %.1f%%"
              % (s1, s0, measured, estimated))
        self.assertGreater(measured, 30)
        self.assertLess(abs(estimated - measured), 0.2 * measured)


if __name__ == "__main__":
    unittest.main()
