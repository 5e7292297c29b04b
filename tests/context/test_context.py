"""The run context: --ranks reads only the selected files and never moves a
row's time; --hta-compat gives HTA's origin; one way to choose ranks; options
checked after parsing; diff honours the time mode (exact by default, HTA's whole us with --hta-compat)."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from decimal import Decimal

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HTA = os.environ.get("HTA", os.path.join(ROOT, "build", "hta"))
TF = os.path.join(ROOT, "tests", "data", "hta", "trace_filter")
SMALL = os.path.join(ROOT, "tests", "data", "breakdown", "small.json")


def run(*args):
    return subprocess.run([HTA, *args], capture_output=True, text=True)


def table(*args, name):
    p = run(*args, "--format", "json", "--quiet")
    assert p.returncode == 0, (args, p.stderr)
    t = json.loads(p.stdout)[name]
    return [dict(zip(t["columns"], r)) for r in t["data"]]


class Selection(unittest.TestCase):
    def test_selecting_ranks_never_moves_a_time(self):
        # every rank-1 row, as HTA's table: the same times with and without --ranks
        allr = [r for r in table("events", TF, "--hta-table", name="events") if r["rank"] == 1]
        one = table("events", TF, "--hta-table", "--ranks", "1", name="events")
        self.assertEqual(len(one), len(allr))
        self.assertGreater(len(one), 1000)
        self.assertEqual([(r["index"], r["ts_ns"], r["dur_ns"]) for r in one],
                         [(r["index"], r["ts_ns"], r["dur_ns"]) for r in allr])

    def test_default_times_are_the_trace_clock(self):
        # the first row of rank 1 keeps the nanoseconds written in its file
        with gzip.open(os.path.join(TF, "sampled_rank-1.json.gz"), "rt") as f:
            ev = json.load(f, parse_float=Decimal)["traceEvents"]
        one = table("events", TF, "--ranks", "1", "--limit", "50", name="events")
        for r in one:
            e = ev[r["index"]]
            self.assertEqual(r["ts_ns"], int(Decimal(e["ts"]) * 1000))

    def test_hta_compat_origin_is_the_earliest_loaded_event(self):
        rows = table("events", TF, "--hta-table", "--hta-compat", name="events")
        self.assertEqual(min(r["ts_ns"] for r in rows), 0)
        own = table("events", TF, "--hta-table", name="events")
        shift = {a["ts_ns"] - b["ts_ns"] for a, b in zip(own, rows)}
        self.assertEqual(len(shift), 1)
        self.assertGreater(shift.pop(), 10**15)  # Kineto writes epoch microseconds

    def test_ranks_reads_only_the_selected_files(self):
        # rank 1's file is broken after its head (a control character, which no JSON may hold): loading all
        # ranks fails on it, --ranks 0 never parses it (its head names rank 1)
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(os.path.join(TF, "sampled_rank-0.json.gz"), d)
            with gzip.open(os.path.join(TF, "sampled_rank-1.json.gz"), "rb") as f:
                raw = f.read()
            cut = raw.index(b'"traceEvents"') + 5000
            with open(os.path.join(d, "sampled_rank-1.json"), "wb") as f:
                f.write(raw[:cut] + b"\x01")
            bad = run("info", d, "--quiet")
            self.assertEqual(bad.returncode, 1)
            self.assertIn("sampled_rank-1.json", bad.stderr)
            ok = table("info", d, "--ranks", "0", name="ranks")
            self.assertEqual([r["rank"] for r in ok], [0])
            none = run("info", d, "--ranks", "7", "--quiet")
            self.assertEqual(none.returncode, 1)
            self.assertIn("none of the requested ranks", none.stderr)

    def test_same_answers_for_a_rank_alone(self):
        both = table("temporal", TF, name="temporal_breakdown")
        one = table("temporal", TF, "--ranks", "1", name="temporal_breakdown")
        self.assertEqual(one, [r for r in both if r["rank"] == 1])


class OneWayToChooseRanks(unittest.TestCase):
    def test_rank_option_is_gone(self):
        for cmd in ("critical-path", "patterns"):
            p = run(cmd, TF, "--rank", "0", "--op", "x") if cmd == "patterns" else run(cmd, TF, "--rank", "0")
            self.assertEqual(p.returncode, 2, cmd)
            self.assertIn("unknown option '--rank'", p.stderr)

    def test_critical_path_takes_ranks(self):
        s = table("critical-path", TF, "--ranks", "1", name="summary")
        self.assertTrue(s)
        p = run("critical-path", TF, "--ranks", "0,1")
        self.assertEqual(p.returncode, 2)

    def test_patterns_per_selected_rank(self):
        rows = table("patterns", TF, "--op", "ProfilerStep", name="frequent_cuda_kernel_sequences")
        self.assertEqual({r["rank"] for r in rows}, {0, 1})
        one = table("patterns", TF, "--op", "ProfilerStep", "--ranks", "1", name="frequent_cuda_kernel_sequences")
        self.assertEqual(one, [r for r in rows if r["rank"] == 1])


class OptionsChecked(unittest.TestCase):
    def test_negative_top_is_a_usage_error(self):
        p = run("kernels", SMALL, "--top", "-1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--top must be >= 0", p.stderr)

    def test_top_zero_folds_everything(self):
        rows = table("kernels", SMALL, "--top", "0", name="all_kernels")
        self.assertTrue(all(r["name"] == "others" for r in rows), rows)


class DiffHonoursTimeMode(unittest.TestCase):
    def test_compat_rounding_changes_durations_of_a_ns_trace(self):
        ns = os.path.join(ROOT, "tests", "data", "hta", "trace_filter")
        with tempfile.TemporaryDirectory() as d:
            # a ns-resolution copy: durations with a fraction of a microsecond
            with gzip.open(os.path.join(ns, "sampled_rank-0.json.gz"), "rt") as f:
                doc = json.load(f)
            for e in doc["traceEvents"]:
                if "dur" in e and isinstance(e["dur"], (int, float)) and e["dur"] > 2:
                    e["dur"] = e["dur"] - 0.4
                if "ts" in e and isinstance(e["ts"], (int, float)):
                    e["ts"] = e["ts"] + 0.3
            p = os.path.join(d, "ns.json")
            with open(p, "w") as f:
                json.dump(doc, f)
            hta_mode = table("diff", p, p, "--hta-compat", name="compare_traces")
            exact = table("diff", p, p, name="compare_traces")
            col = [c for c in hta_mode[0] if c.endswith("duration")][0]
            self.assertNotEqual([r[col] for r in hta_mode], [r[col] for r in exact])


if __name__ == "__main__":
    unittest.main()
