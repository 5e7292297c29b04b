#!/usr/bin/env python3
"""The trace forms the loader takes besides Kineto's object (docs/loading.md): Chrome's JSON array form
(the real file PyTorch 1.13's legacy export_chrome_trace wrote), events without cat, string pids through
every command, displayTimeUnit, and a merged trace (hta merge) loaded back as its ranks.

Every expectation is computed here from the JSON with Python's json module, independently of hta.

Run: HTA=build/hta python3 -m unittest tests/loader/test_forms.py
"""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
LEGACY = os.path.join(ROOT, "tests", "data", "real", "torch113_cpu_legacy", "trace.json")
TWO_RANKS = os.path.join(ROOT, "tests", "data", "hta", "trace_filter")


run = testlib.hta
tables = testlib.tables
rows = testlib.rows


def infer(name):
    """docs/loading.md, "Events without cat", on a CPU-process event: what Kineto files such names under."""
    if name.startswith("ProfilerStep"):
        return "user_annotation"
    if "::" in name or re.search(r"Backward\d*$", name) or name in ("detach", "detach_", "record_param_comms"):
        return "cpu_op"
    return "user_annotation"


def is_row(e):
    """HTA's rule (dur and cat, cat not Trace), plus a category for a complete event with no cat key."""
    if e.get("dur") is None:
        return False
    if "cat" not in e:
        return e.get("ph") == "X"
    return e["cat"] is not None and e["cat"] != "Trace"


class TorchLegacy(unittest.TestCase):
    """tests/data/real/torch113_cpu_legacy/trace.json: a bare array of 868 complete events, pid "CPU
    functions", no cat (make.py beside it wrote it with torch 1.13's autograd profiler)."""

    @classmethod
    def setUpClass(cls):
        with open(LEGACY) as f:
            cls.events = json.load(f)
        cls.tmp = tempfile.mkdtemp(prefix="hta-forms-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_counts_equal_json(self):
        self.assertIsInstance(self.events, list)
        (r,) = rows(tables("info", LEGACY)["ranks"])
        self.assertEqual(r["events"], len(self.events))
        self.assertEqual(r["rows"], sum(map(is_row, self.events)))
        self.assertEqual(r["threads"], len({(e["pid"], e["tid"]) for e in self.events if is_row(e)}))
        # ProfilerStep#0..2 became user_annotations, so the steps are there
        self.assertEqual((r["profiler_steps"], r["first_step"], r["last_step"]), (3, 0, 2))

    def test_rows_have_inferred_categories(self):
        ev = rows(tables("events", LEGACY)["events"])
        self.assertEqual(len(ev), len(self.events))
        for row in ev:
            e = self.events[row["index"]]
            self.assertEqual((row["name"], row["dur_ns"]), (e["name"], e["dur"] * 1000))
            self.assertEqual(row["cat"], infer(e["name"]), e["name"])
        cats = {row["name"]: row["cat"] for row in ev}
        self.assertEqual(cats["ProfilerStep#1"], "user_annotation")
        self.assertEqual(cats["Optimizer.step#AdamW.step"], "user_annotation")
        self.assertEqual(cats["AddmmBackward0"], "cpu_op")
        self.assertEqual(cats["aten::addmm"], "cpu_op")
        # iterations come from the inferred ProfilerStep annotations
        self.assertEqual({row["iteration"] for row in ev if row["name"] == "aten::randn"}, {0, 1, 2})

    def test_string_pid_through_commands(self):
        """pid "CPU functions" is kept as text (hta_thread.pid_sym) with the id -1 that tables print for a
        text pid; every command runs on the file."""
        ev = rows(tables("events", LEGACY)["events"])
        self.assertEqual({(row["pid"], row["tid"]) for row in ev}, {(-1, 1)})
        for cmd in ("info", "report", "temporal", "idle", "kernels", "overlap", "launch", "annotations",
                    "stragglers", "ops", "counters", "cupti"):
            with self.subTest(cmd=cmd):
                run(cmd, LEGACY, "--quiet")
        run("patterns", LEGACY, "--op", "aten::linear", "--quiet")
        run("diff", LEGACY, LEGACY, "--quiet")
        cp = tables("critical-path", LEGACY)
        self.assertGreater(len(cp["breakdown"]["data"]), 0)
        # (edges have no thread: null)
        self.assertEqual({(r["pid"], r["tid"]) for r in rows(cp["breakdown"]) if r["pid"] is not None}, {(-1, 1)})

    def test_derived_trace_is_the_object_form(self):
        """A derived trace of an array-form input is written in the object form, every event in its place,
        the text pid as it was."""
        out = os.path.join(self.tmp, "overlay")
        run("critical-path", LEGACY, "--overlay", out, "--all-events", "--quiet")
        with open(os.path.join(out, "overlaid_critical_path_trace.json")) as f:
            d = json.load(f)
        self.assertIsInstance(d, dict)
        got = d["traceEvents"][: len(self.events)]
        self.assertEqual([(e["name"], e["ts"], e["pid"]) for e in got],
                         [(e["name"], e["ts"], e["pid"]) for e in self.events])
        # and it loads again, with the same rows
        (r,) = rows(tables("info", os.path.join(out, "overlaid_critical_path_trace.json"))["ranks"])
        self.assertEqual(r["rows"], len(self.events))


EVENTS = [
    {"name": "ProfilerStep#4", "ph": "X", "ts": 10, "dur": 50, "pid": "CPU functions", "tid": 1},
    {"name": "aten::mm", "ph": "X", "ts": 12, "dur": 5, "pid": "CPU functions", "tid": 1, "args": {}},
    {"name": "my_range", "ph": "X", "ts": 20, "dur": 5, "pid": "CPU functions", "tid": 1},
    {"name": "void at::native::k<float>", "ph": "X", "ts": 14, "dur": 2, "pid": "CUDA functions", "tid": 1},
    {"name": "null_cat", "cat": None, "ph": "X", "ts": 30, "dur": 1, "pid": 1, "tid": 1},
    {"name": "has_cat", "cat": "cpu_op", "ph": "X", "ts": 31, "dur": 1, "pid": 1, "tid": 1},
    {"name": "instant", "ph": "i", "ts": 32, "pid": 1, "tid": 1},
]


class ArrayForm(unittest.TestCase):
    """Synthetic array-form files: the open end Chrome accepts, truncation, categories, text pids."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hta-array-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, text):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def body(self):
        return "[" + ",\n".join(json.dumps(e) for e in EVENTS)

    def test_categories_and_threads(self):
        ev = rows(tables("events", self.write("a.json", self.body() + "]"))["events"])
        got = {r["name"]: r["cat"] for r in ev}
        # cat null stays HTA's "no category" (dropped); a written cat is kept; no instant becomes a row
        self.assertEqual(got, {"ProfilerStep#4": "user_annotation", "aten::mm": "cpu_op",
                               "my_range": "user_annotation", "void at::native::k<float>": "kernel",
                               "has_cat": "cpu_op"})
        self.assertEqual(sorted(r["index"] for r in ev), [0, 1, 2, 3, 5])
        # "CPU functions" and "CUDA functions" with the same tid are two threads
        (r,) = rows(tables("info", os.path.join(self.dir, "a.json"))["ranks"])
        self.assertEqual((r["events"], r["rows"], r["threads"]), (7, 5, 3))

    def test_missing_final_bracket(self):
        """Chrome's importer takes an array whose ']' is missing, after a trailing comma is dropped."""
        want = rows(tables("events", self.write("closed.json", self.body() + "]"))["events"])
        for name, tail in (("open.json", ""), ("open_nl.json", "\n"), ("open_comma.json", ",\n")):
            with self.subTest(tail=tail):
                self.assertEqual(rows(tables("events", self.write(name, self.body() + tail))["events"]), want)
        # a derived trace of such a file is whole JSON again
        p = os.path.join(self.dir, "open_comma.json")
        out = os.path.join(self.dir, "ov")
        run("critical-path", p, "--overlay", out, "--all-events", "--quiet")
        with open(os.path.join(out, "overlaid_critical_path_open_comma.json")) as f:
            self.assertGreaterEqual(len(json.load(f)["traceEvents"]), len(EVENTS))

    def test_truncated_array(self):
        text = self.body()
        cut = text[: text.rindex('"ph"')]  # inside the last event: the others load, with a warning
        p = run("info", self.write("cut.json", cut))
        self.assertIn("cut.json: truncated at byte %d" % len(cut.encode()), p.stderr)
        first = text[: text.index('"ph"') + 3]  # inside the first event: no trace
        p = run("info", self.write("cut1.json", first), ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cut1.json: byte %d: unexpected end of file" % len(first.encode()), p.stderr)
        for name, text in (("comma_bracket.json", self.body() + ",]"), ("two_commas.json", self.body() + ",,")):
            with self.subTest(name=name):
                p = run("info", self.write(name, text), ok=False)
                self.assertEqual(p.returncode, 1)
                self.assertIn(name + ": byte ", p.stderr)

    def test_array_of_other_json_is_skipped_in_a_folder(self):
        folder = os.path.join(self.dir, "f")
        os.mkdir(folder)
        shutil.copy(LEGACY, os.path.join(folder, "trace.json"))
        with open(os.path.join(folder, "list.json"), "w") as f:
            f.write("[1, 2, 3]")
        p = run("info", folder, "--format", "json")
        self.assertIn("list.json: skipped", p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["ranks"]["data"]), 1)


class DisplayTimeUnit(unittest.TestCase):
    """displayTimeUnit only sets Chrome's display unit: ts/dur stay microseconds (Trace Event Format; catapult's
    own test data tracing/test_data/nanoseconds.json writes ts 3.011 with "ns"); info notes the unit."""

    def test_ns_is_display_only(self):
        with tempfile.TemporaryDirectory() as d:
            for unit in ("ns", "ms"):
                p = os.path.join(d, unit + ".json")
                with open(p, "w") as f:
                    json.dump({"displayTimeUnit": unit, "traceEvents": [
                        {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 3.011, "dur": 0.002}]}, f)
                (r,) = rows(tables("events", p)["events"])
                self.assertEqual((r["ts_ns"], r["dur_ns"]), (3011, 2))
                note = run("info", p).stderr
                self.assertEqual('displayTimeUnit "ns"' in note, unit == "ns", note)


class MergedTrace(unittest.TestCase):
    """hta merge of tests/data/hta/trace_filter (2 ranks) loads back as its 2 ranks.  The merge uses
    --align none: each rank's times then move by one constant (its base minus the merged origin), so every
    duration, gap and share is the folder's; an alignment with drift rescales durations, by design."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hta-merged-")
        cls.merged = os.path.join(cls.tmp, "merged.json")
        run("merge", TWO_RANKS, "-o", cls.merged, "--align", "none", "--quiet")
        with open(cls.merged) as f:
            cls.doc = json.load(f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_ranks_and_rows_per_rank(self):
        got, want = rows(tables("info", self.merged)["ranks"]), rows(tables("info", TWO_RANKS)["ranks"])
        self.assertEqual([r["rank"] for r in got], [0, 1])
        for g, w in zip(got, want):
            self.assertEqual(g["rank_source"], "htaMerge")
            self.assertEqual(g["events"], len(self.doc["traceEvents"]))  # the file's: index < events
            for k in ("rows", "flows", "threads", "gpu_streams", "devices", "profiler_steps", "first_step",
                      "last_step", "world_size", "span_us"):
                self.assertEqual(g[k], w[k], (g["rank"], k))
        cats = lambda p: sorted((r["rank"], r["cat"], r["events"], r["rows"]) for r in rows(tables("info", p)["categories"]))
        self.assertEqual(cats(self.merged), cats(TWO_RANKS))

    def test_rows_are_the_folders(self):
        """Same rows in the same order with the original pids; index is the position in the merged file."""
        ours = rows(tables("events", self.merged)["events"])
        theirs = rows(tables("events", TWO_RANKS)["events"])
        key = ("rank", "cat", "name", "pid", "tid", "dur_ns", "stream", "correlation", "depth", "iteration")
        self.assertEqual([tuple(r[k] for k in key) for r in ours], [tuple(r[k] for k in key) for r in theirs])
        ev = self.doc["traceEvents"]
        first1 = self.doc["htaMerge"]["ranks"][0]["events"]
        for r in ours:
            e = ev[r["index"]]
            self.assertEqual((e["name"], r["rank"]), (r["name"], 0 if r["index"] < first1 else 1))
        for rank in (0, 1):
            shift = {o["ts_ns"] - t["ts_ns"] for o, t in zip(ours, theirs) if o["rank"] == rank}
            self.assertEqual(len(shift), 1, rank)  # one constant per rank

    def test_report_equals_the_folders(self):
        self.assertEqual(run("report", self.merged, "--format", "json", "--quiet").stdout,
                         run("report", TWO_RANKS, "--format", "json", "--quiet").stdout)

    def test_rank_selection(self):
        (r,) = rows(tables("info", self.merged, "--ranks", "1")["ranks"])
        (w,) = rows(tables("info", TWO_RANKS, "--ranks", "1")["ranks"])
        self.assertEqual((r["rank"], r["rows"], r["threads"]), (1, w["rows"], w["threads"]))

    def test_derived_traces_are_refused(self):
        out = os.path.join(self.tmp, "derived")
        for args in (("critical-path", "--ranks", "1", "--overlay", out), ("counters", "--augment", out),
                     ("patterns", "--op", "aten", "--overlay", out), ("merge", "-o", os.path.join(out, "m.json"))):
            with self.subTest(cmd=args[0]):
                p = run(args[0], self.merged, *args[1:], ok=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("merged trace", p.stderr)
                self.assertFalse(os.path.exists(out) and os.listdir(out), out)

    def test_older_merged_file_without_counts(self):
        """A merged file written before htaMerge kept per-rank event counts and pids: the ranks are found by
        their pid ranges; pids stay the merged numbers (rank * 1000 + n)."""
        doc = json.loads(json.dumps(self.doc))
        for r in doc["htaMerge"]["ranks"]:
            del r["events"], r["pids"]
        p = os.path.join(self.tmp, "old.json")
        with open(p, "w") as f:
            json.dump(doc, f)
        got, want = rows(tables("info", p)["ranks"]), rows(tables("info", TWO_RANKS)["ranks"])
        self.assertEqual([(r["rank"], r["rows"], r["threads"]) for r in got],
                         [(r["rank"], r["rows"], r["threads"]) for r in want])
        pids = {(r["rank"], r["pid"] // 1000) for r in rows(tables("events", p)["events"])}
        self.assertEqual(pids, {(0, 0), (1, 1)})

    def test_text_pid_restored(self):
        """The legacy file merged and loaded back: its pid "CPU functions" is text again."""
        folder = os.path.join(self.tmp, "legacy")
        os.makedirs(folder, exist_ok=True)
        shutil.copy(LEGACY, folder)
        m = os.path.join(self.tmp, "legacy_merged.json")
        run("merge", folder, "-o", m, "--quiet")
        a, b = rows(tables("events", m)["events"]), rows(tables("events", LEGACY)["events"])
        key = ("index", "cat", "name", "pid", "tid", "dur_ns", "parent", "iteration")
        self.assertEqual([tuple(r[k] for k in key) for r in a], [tuple(r[k] for k in key) for r in b])


if __name__ == "__main__":
    unittest.main()
