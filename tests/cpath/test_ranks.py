"""The critical path across ranks (hta critical-path DIR --all-ranks): ranks joined at their collectives, blame,
hops, rank rules, the merged overlay; checked against jobs generated again without the slow rank."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import GEN, HTADATA, hta, rows, step_times, tables  # noqa: E402


def gen(out, *knobs, ranks=8, mode="ddp", seed=1):
    subprocess.run([sys.executable, GEN, "--out", out, "--ranks", str(ranks), "--layers", "2", "--steps", "4",
                    "--mode", mode, "--seed", str(seed), "--quiet", *knobs], check=True)


class Straggler(unittest.TestCase):
    """8 ranks, rank 3 1.3x slower (--straggler 3 --straggler-slowdown 1.3), DDP and FSDP."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.jobs = {}
        for mode in ("ddp", "fsdp"):
            slow, fair = (os.path.join(cls.tmp.name, "%s-%s" % (mode, k)) for k in ("slow", "fair"))
            gen(slow, "--straggler", "3", "--straggler-slowdown", "1.3", mode=mode)
            gen(fair, mode=mode)
            cls.jobs[mode] = (slow, fair)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_blame_names_the_slow_rank(self):
        for mode, (slow, _) in self.jobs.items():
            with self.subTest(mode=mode):
                t = tables("critical-path", slow, "--all-ranks")
                first = {}
                for r in rows(t["blame"]):  # per step, most blamed first
                    first.setdefault(r["step"], r)
                self.assertEqual(len(first), 4)
                hits = sum(1 for r in first.values() if r["rank"] == 3)
                self.assertGreaterEqual(hits / len(first), 0.9, first)
                # rank 3 arrives last at most collectives; the others wait for it
                coll = rows(t["collectives"])
                self.assertGreater(sum(1 for c in coll if c["last_rank"] == 3), 0.8 * len(coll))
                self.assertTrue(all(c["ranks"] == 8 for c in coll))

    def test_median_rank_predicts_the_job_without_it(self):
        for mode, (slow, fair) in self.jobs.items():
            with self.subTest(mode=mode):
                t = tables("critical-path", slow, "--all-ranks", "--what-if", "rank:3=median")
                pred = {(r["rank"], r["step"]): r for r in rows(t["what_if_steps"])}
                self.assertEqual(len(pred), 32)
                for rank in range(8):
                    for step, act in step_times(os.path.join(fair, "rank-%d.json" % rank)).items():
                        p = pred[(rank, step)]
                        self.assertLess(abs(p["simulated_us"] - act) / act, 0.10, (rank, step))
                        self.assertGreater(p["saving_us"], 0)

    def test_rank_rules(self):
        slow = self.jobs["ddp"][0]
        # a rank's work: x1 changes nothing; a slower straggler makes every rank slower
        same = dict(tables("critical-path", slow, "--all-ranks", "--what-if", "rank:3=x1")["what_if"]["data"])
        self.assertAlmostEqual(same["saving_us"], 0, delta=0.01)
        worse = dict(tables("critical-path", slow, "--all-ranks", "--what-if", "rank:3=x1.5")["what_if"]["data"])
        self.assertLess(worse["saving_us"], 0)
        # another rank faster: nothing gained, everyone waits for rank 3
        other = dict(tables("critical-path", slow, "--all-ranks", "--what-if", "rank:5=x0.5")["what_if"]["data"])
        self.assertLess(abs(other["saving_percent"]), 1)
        p = hta("critical-path", slow, "--all-ranks", "--what-if", "rank:42=median", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no rank 42", p.stderr)
        p = hta("critical-path", slow, "--ranks", "3", "--what-if", "rank:3=median", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--all-ranks", p.stderr)

    def test_overlay(self):
        slow = self.jobs["fsdp"][0]
        with tempfile.TemporaryDirectory() as d:
            p = hta("critical-path", slow, "--all-ranks", "--overlay", d, "--quiet")
            f = os.path.join(d, "overlaid_critical_path_all_ranks.json")
            ev = json.load(open(f))["traceEvents"]
            procs = {e["args"]["name"] for e in ev if e.get("ph") == "M"}
            self.assertEqual(len(procs), 16)  # a CPU and a GPU process per rank
            self.assertIn("rank 3 GPU", procs)
            crit = [e for e in ev if e.get("ph") == "X" and e["args"].get("critical")]
            self.assertTrue(crit)
            flows = [e for e in ev if e.get("ph") in ("s", "f")]
            self.assertEqual(sum(1 for e in flows if e["ph"] == "s"), sum(1 for e in flows if e["ph"] == "f"))
            # hta reads it back: one merged run
            self.assertIn("rank", hta("info", f, "--quiet").stdout)
            self.assertEqual(p.returncode, 0)


class Hops(unittest.TestCase):
    def test_path_crosses_ranks(self):
        with tempfile.TemporaryDirectory() as d:
            gen(d, ranks=4, mode="fsdp", seed=2)
            t = tables("critical-path", d, "--all-ranks")
            hops = rows(t["hops"])
            self.assertGreater(len(hops), 0)
            for h in hops:
                self.assertNotEqual(h["from_rank"], h["to_rank"])
                self.assertTrue(h["kernel"].startswith("ncclDevKernel_"), h)
            self.assertEqual([h["time_us"] for h in hops], sorted(h["time_us"] for h in hops))


class Matching(unittest.TestCase):
    def test_comms_id_first(self):
        """Comms Id is the key where every collective kernel has one: here rank 1's Seq numbers are scrambled,
        which (process group, Seq) would match wrongly, and Comms Id still joins every instance."""
        with tempfile.TemporaryDirectory() as d:
            gen(d, ranks=2, mode="ddp", seed=1)
            n = None
            for rank in (0, 1):
                f = os.path.join(d, "rank-%d.json" % rank)
                doc = json.load(open(f))
                ks = [e for e in doc["traceEvents"] if e.get("cat") == "kernel" and "Seq" in e.get("args", {})]
                n = len(ks)
                for i, e in enumerate(ks):
                    e["args"]["Comms Id"] = 7000 + e["args"]["Seq"]
                    if rank == 1:
                        e["args"]["Seq"] = 100 + (i * 7) % n  # a different number for each instance
                json.dump(doc, open(f, "w"))
            p = hta("critical-path", d, "--all-ranks", "--format", "json")
            self.assertIn("%d collective instances joined across 2 ranks" % n, p.stderr)
            # without Comms Id the scrambled Seq numbers join nothing
            for rank in (0, 1):
                f = os.path.join(d, "rank-%d.json" % rank)
                doc = json.load(open(f))
                for e in doc["traceEvents"]:
                    e.get("args", {}).pop("Comms Id", None)
                json.dump(doc, open(f, "w"))
            p = hta("critical-path", d, "--all-ranks", "--format", "json")
            self.assertIn("0 collective instances joined across 2 ranks", p.stderr)


class HtaTwoRanks(unittest.TestCase):
    """HTA's trace_filter: 2 sampled ranks, P2P SendRecv kernels without process group or Seq (matched by order);
    docs/critical-path.md explains the result."""

    def test_trace_filter(self):
        p = hta("critical-path", os.path.join(HTADATA, "trace_filter"), "--all-ranks", "--format", "json")
        self.assertIn("10 collective instances joined across 2 ranks", p.stderr)
        t = json.loads(p.stdout)
        coll = rows(t["collectives"])
        self.assertEqual([c["last_rank"] for c in coll], [1, 1, 1, 1, 0, 0, 1, 0, 1, 1])
        b = rows(t["blame"])
        self.assertEqual([(r["step"], r["rank"], r["last_arrivals"]) for r in b],
                         [(551, 1, 4), (551, 0, 1), (552, 0, 2), (552, 1, 3)])
        self.assertAlmostEqual(b[0]["caused_wait_us"], 275787, delta=1)


if __name__ == "__main__":
    unittest.main()
