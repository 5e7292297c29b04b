#!/usr/bin/env python3
"""Loader tests: hta's tables against independent counts, HTA's goldens and bad input.

Run: HTA=build/hta python3 -m unittest tests/loader/test_loader.py
"""
import gzip
import json
import os
import shutil
import sys
import tempfile
import unittest
from decimal import Decimal
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
TRACES = os.path.join(ROOT, "tests", "data", "hta")
GOLDEN = os.path.join(ROOT, "tests", "golden", "hta")
DATA = os.path.join(ROOT, "tests", "data")


run = testlib.hta
tables = testlib.tables
rows = testlib.rows


def trace_folders():
    out = []
    for root, _, files in sorted(os.walk(GOLDEN)):
        if "trace_summary.json" in files:
            out.append(os.path.relpath(root, GOLDEN))
    return out


def read_trace(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def kept(e):
    return e.get("dur") is not None and e.get("cat") is not None and e.get("cat") != "Trace"


class AgainstGolden(unittest.TestCase):
    def test_ranks_and_rows_per_category(self):
        """Rows per category in HTA's table (after its profiler-step filter) equal the golden trace_summary."""
        n = 0
        for rel in trace_folders():
            with self.subTest(folder=rel):
                with open(os.path.join(GOLDEN, rel, "trace_summary.json")) as f:
                    g = json.load(f)["parts"]
                # (--hta-compat: HTA's names, PyTorch 1.9's categories as written: trace_file_list)
                out = tables("info", os.path.join(TRACES, rel), "--hta-compat")
                self.assertEqual(sorted(r["rank"] for r in rows(out["ranks"])), sorted(g["ranks"]))
                ours = {}
                for r in rows(out["categories"]):
                    if r["rows"]:
                        ours.setdefault(str(r["rank"]), {})[r["cat"]] = r["rows"]
                self.assertEqual(ours, {k: v["rows_per_cat"] for k, v in g["per_rank"].items()})
                n += 1
        self.assertGreaterEqual(n, 25)

    def test_iterations_of_hta_table(self):
        """Rows per iteration of HTA's table equal the golden (iteration -1 = outside every step)."""
        for rel in ["trace_filter", "ns_resolution_trace", "critical_path/alexnet", "call_stack"]:
            with self.subTest(folder=rel):
                with open(os.path.join(GOLDEN, rel, "trace_summary.json")) as f:
                    g = json.load(f)["parts"]
                ev = rows(tables("events", os.path.join(TRACES, rel), "--hta-table")["events"])
                for rank, v in g["per_rank"].items():
                    cnt = {}
                    for e in ev:
                        if str(e["rank"]) == rank:
                            k = str(e["iteration"]) if e["iteration"] is not None else "nan"
                            cnt[k] = cnt.get(k, 0) + 1
                    self.assertEqual(cnt, v["rows_per_iteration"])


class AgainstIndependentCount(unittest.TestCase):
    def counts(self, folder):
        """Each file of folder: events and kept rows per category equal a count made with Python's json
        (categories as written: --hta-compat, where PyTorch 1.9's are not renamed)."""
        out = tables("info", folder, "--hta-compat")
        self.assertTrue(out["ranks"]["data"])
        for r in rows(out["ranks"]):
            with self.subTest(file=r["file"]):
                ev = read_trace(r["file"])["traceEvents"]
                self.assertEqual(r["events"], len(ev))
                cats = {}
                for e in ev:
                    if kept(e):
                        cats[e["cat"]] = cats.get(e["cat"], 0) + 1
                ours = {c["cat"]: c["events"] for c in rows(out["categories"]) if c["rank"] == r["rank"]}
                self.assertEqual(ours, cats)
                flows = sum(1 for e in ev if e.get("ph") in ("s", "f", "t") and "id" in e and not kept(e))
                self.assertEqual(r["flows"], flows)
        return len(out["ranks"]["data"])

    def test_events_per_category(self):
        """Every file of HTA's traces."""
        self.assertGreaterEqual(sum(self.counts(os.path.join(TRACES, rel)) for rel in trace_folders()), 28)

    def test_real_traces(self):
        """TraceLens's real traces (tests/data/real): ROCm MI300, vLLM CUDA graph, B200 cuLaunchKernelEx."""
        for rel in ["mi300_falconsai", "vllm_decode_graph", "b200_eager"]:
            self.assertEqual(self.counts(os.path.join(ROOT, "tests", "data", "real", rel)), 1)

    def test_exact_nanoseconds(self):
        """ns-resolution trace: every row's ts and dur equal the decimal text times 1000, exactly."""
        folder = os.path.join(TRACES, "ns_resolution_trace")
        path = [os.path.join(folder, f) for f in os.listdir(folder)][0]
        d = read_trace(path)
        expect = {}
        for i, e in enumerate(d["traceEvents"]):
            if kept(e):
                expect[i] = (int(Decimal(e["ts"]) * 1000), int(Decimal(e["dur"]) * 1000))
        ev = rows(tables("events", folder)["events"])
        self.assertEqual(len(ev), len(expect))
        bad = [(e["index"], e["ts_ns"], e["dur_ns"], expect[e["index"]]) for e in ev
               if (e["ts_ns"], e["dur_ns"]) != expect[e["index"]]]
        self.assertEqual(bad[:5], [])
        # 1712195495519689.047 us is beyond a double's precision: HTA's float64 cannot hold it
        self.assertIn(1712195495519689047, {e["ts_ns"] for e in ev})

    def test_hta_rounding_keeps_q6_only_in_compat(self):
        """--hta-compat rounds like HTA (whole us), a sub-us event included (HTA's -1 us, Q6); by default the
        table view keeps the exact ns and never a negative duration."""
        p = os.path.join(TRACES, "ns_resolution_trace")
        ev = rows(tables("events", p, "--hta-table", "--hta-compat")["events"])
        self.assertTrue(all(e["dur_ns"] >= -1000 and e["dur_ns"] % 1000 == 0 for e in ev))
        self.assertTrue(all(e["ts_ns"] % 1000 == 0 for e in ev))
        self.assertGreater(sum(1 for e in ev if e["dur_ns"] == -1000), 100)
        ex = rows(tables("events", p, "--hta-table")["events"])
        self.assertEqual(len(ex), len(ev))
        self.assertTrue(all(e["dur_ns"] >= 0 for e in ex))
        self.assertGreater(sum(1 for e in ex if e["ts_ns"] % 1000), 4000)

    def test_partner_links(self):
        """CPU launch <-> GPU activity links equal an independent join on correlation (TF§7)."""
        for rel in ["critical_path/simple_add", "trace_filter", "amd_trace", "triton_example"]:
            folder = os.path.join(TRACES, rel)
            ev = rows(tables("events", folder)["events"])
            by_rank = {}
            for e in ev:
                by_rank.setdefault(e["rank"], []).append(e)
            for rank, es in by_rank.items():
                with self.subTest(folder=rel, rank=rank):
                    def gpu(e):
                        return (e["stream"] >= 0 and e["correlation"] >= 0) or e["name"] in ("Event Sync", "Context Sync")
                    last_cpu, last_gpu = {}, {}
                    for e in es:
                        if e["correlation"] != -1:
                            (last_gpu if gpu(e) else last_cpu)[e["correlation"]] = e["index"]
                    for e in es:
                        want = None
                        if e["correlation"] != -1:
                            want = (last_cpu if gpu(e) else last_gpu).get(e["correlation"])
                        self.assertEqual(e["partner"], want, e)

    def test_call_stack_depth(self):
        """call_stack/backward_thread: depth and parent follow time containment per thread."""
        ev = rows(tables("events", os.path.join(TRACES, "call_stack"))["events"])
        by_idx = {e["index"]: e for e in ev}
        cpu = [e for e in ev if e["stream"] == -1]
        self.assertTrue(cpu)
        for e in cpu:
            p = e["parent"]
            if p is None:
                self.assertEqual(e["depth"], 0)
            else:
                pe = by_idx[p]
                self.assertEqual((pe["pid"], pe["tid"]), (e["pid"], e["tid"]))
                self.assertLessEqual(pe["ts_ns"], e["ts_ns"])
                self.assertGreaterEqual(pe["ts_ns"] + pe["dur_ns"], e["ts_ns"] + max(e["dur_ns"], 0))
                self.assertEqual(e["depth"], pe["depth"] + 1)


EVENT = '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2, "args": {"stream": 7, "correlation": 1}}'
GOOD = '{"distributedInfo": {"rank": %d}, "traceEvents": [' + EVENT + ']}'


class TempFiles(unittest.TestCase):
    """A temporary folder per test, and files written into it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hta-bad-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, data):
        p = os.path.join(self.dir, name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return p


class BadInput(TempFiles):

    def assertFails(self, path, *needles):
        p = run("info", path, ok=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(os.path.basename(path), p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        return p.stderr

    def test_malformed(self):
        cases = {
            "missing_comma.json": ('{"traceEvents": [{"ph": "X" "cat": "k"}]}', "byte 28"),
            "trailing.json": (GOOD % 0 + " x", "trailing characters"),
            "bad_literal.json": ('{"traceEvents": [], "x": tru}', "invalid literal"),
            "not_object.json": ('"x"', "JSON object or array"),
            "array_of_numbers.json": ('[1, 2]', "not a trace"),
            "event_not_object.json": ('{"traceEvents": [1]}', "not an object"),
            "no_events.json": ('{"schemaVersion": 1}', 'no "traceEvents"'),
            "events_not_array.json": ('{"traceEvents": {}}', "not an array"),
            "ts_string.json": ('{"traceEvents": [{"ph": "X", "cat": "c", "ts": "5", "dur": 1}]}', "timestamp is a string"),
            "huge_id.json": ('{"traceEvents": [{"ph": "X", "cat": "c", "ts": 1, "dur": 1, "args": {"correlation": 99999999999999999999}}]}', "out of int64 range"),
            "huge_ts.json": ('{"traceEvents": [{"ph": "X", "cat": "c", "ts": 1e30, "dur": 1}]}', "out of range"),
            "control_char.json": ('{"traceEvents": [{"ph": "X", "cat": "c\x01", "ts": 1, "dur": 1}]}', "control character"),
            "bad_escape.json": ('{"traceEvents": [{"ph": "X", "cat": "c\\q", "ts": 1, "dur": 1}]}', "invalid escape"),
            "no_ts.json": ('{"traceEvents": [{"ph": "X", "cat": "c", "dur": 1}]}', "no ts"),
            "deep.json": ('{"traceEvents": [], "x": ' + "[" * 1000 + "]" * 1000 + "}", "nested too deeply"),
            "empty.json": ("", "empty file"),
            "spaces.json": ("   \n", "end of file"),
        }
        for name, (text, needle) in cases.items():
            with self.subTest(name=name):
                self.assertFails(self.write(name, text), needle)

    def test_invalid_utf8(self):
        p = self.write("utf8.json", b'{"traceEvents": [{"ph": "X", "cat": "c", "name": "a\xff", "ts": 1, "dur": 1}]}')
        self.assertFails(p, "invalid UTF-8", "byte 51")

    def test_truncated_json_and_gzip(self):
        text = (GOOD % 0).encode()
        self.assertFails(self.write("cut.json", text[:-10]), "truncated JSON")
        gz = gzip.compress(text * 1)
        self.assertFails(self.write("cut.json.gz", gz[: len(gz) // 2]), "truncated gzip")
        bad = bytearray(gz)
        bad[len(bad) // 2] ^= 0xFF
        self.assertFails(self.write("corrupt.json.gz", bytes(bad)), "gzip")
        self.assertFails(self.write("garbage.json.gz", gz + b"junk"), "trailing garbage")

    def test_multi_member_gzip(self):
        text = (GOOD % 0).encode()
        half = len(text) // 2
        p = self.write("multi.json.gz", gzip.compress(text[:half]) + gzip.compress(text[half:]))
        ev = rows(tables("events", p)["events"])
        self.assertEqual([(e["ts_ns"], e["dur_ns"], e["stream"]) for e in ev], [(10500, 2000, 7)])

    def test_empty_folder_and_mixed_files(self):
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        p = run("info", empty, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no trace files", p.stderr)
        mixed = os.path.join(self.dir, "mixed")
        os.mkdir(mixed)
        for name, text in [("notes.txt", "hello"), ("config.json", '{"lr": 0.1}'), ("r0.json", GOOD % 0)]:
            with open(os.path.join(mixed, name), "w") as f:
                f.write(text)
        p = run("info", mixed, "--format", "json")
        self.assertIn("notes.txt: skipped", p.stderr)
        self.assertIn("config.json: skipped", p.stderr)
        self.assertEqual([r["rank"] for r in rows(json.loads(p.stdout)["ranks"])], [0])

    def test_rank_fallbacks_and_duplicates(self):
        d = os.path.join(self.dir, "ranks")
        os.mkdir(d)
        nodist = '{"traceEvents": [' + EVENT + ']}'
        for name, text in [("a.json", GOOD % 5), ("worker3.json", nodist), ("trace-rank-7.pt.trace.json", nodist),
                           ("zzz.json", nodist)]:
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        p = run("info", d, "--format", "json")
        got = {os.path.basename(r["file"]): (r["rank"], r["rank_source"]) for r in rows(json.loads(p.stdout)["ranks"])}
        self.assertEqual(got, {"a.json": (5, "distributedInfo"), "worker3.json": (3, "file name"),
                               "trace-rank-7.pt.trace.json": (7, "file name"), "zzz.json": (0, "file order")})
        self.assertIn("rank 3 taken from the file name", p.stderr)
        self.assertIn("using rank 0 (file order)", p.stderr)
        with open(os.path.join(d, "b.json"), "w") as f:
            f.write(GOOD % 5)
        p = run("info", d, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("a.json and", p.stderr)
        self.assertIn("b.json both claim rank 5", p.stderr)

    def test_minified_rank_and_string_pids(self):
        """A minified "rank":2 is found (HTA's regex needs a space); string pids are kept."""
        text = ('{"distributedInfo":{"rank":2},"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op",'
                '"pid":"Spans","tid":"12","ts":1,"dur":3}]}')
        out = tables("events", self.write("min.json", text))
        e = rows(out["events"])[0]
        self.assertEqual((e["rank"], e["tid"], e["dur_ns"]), (2, 12, 3000))

    def test_usage_errors(self):
        p = run("info", ok=False)
        self.assertEqual(p.returncode, 2)
        p = run("info", "x", "--format", "yaml", ok=False)
        self.assertEqual(p.returncode, 2)
        p = run("nosuch", ok=False)
        self.assertEqual(p.returncode, 2)
        p = run("--version")
        self.assertTrue(p.stdout.startswith("hta "))



def cut_event(i):
    return {"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7, "ts": 10 * i, "dur": 2,
            "args": {"stream": 7, "correlation": i}}


CUT_HEAD = '{"distributedInfo": {"rank": 3}, "traceEvents": [\n'
CUT_EVENTS = [json.dumps(cut_event(i)) for i in range(5)]
CUT_TEXT = CUT_HEAD + ",\n".join(CUT_EVENTS) + '\n], "baseTimeNanoseconds": 0}\n'


class Truncated(TempFiles):
    """A trace cut short (a crashed job's): what is complete loads, with one warning naming the file and the
    byte offsets (docs/loading.md, "Truncated traces"); a cut inside the header, before the first complete
    event, or in a file that is no trace stays an error naming the file and byte."""

    def loads(self, path, n, warn_bytes):
        """path loads with exit 0, its first n events as rows, rank 3, and one warning naming it with
        warn_bytes (the byte where the data ends, the byte where the complete part ends)."""
        p = run("events", path, "--format", "json", ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        ev = json.loads(p.stdout)["events"]
        names = [r[ev["columns"].index("name")] for r in ev["data"]]
        self.assertEqual(names, ["k%d" % i for i in range(n)])
        self.assertEqual({r[ev["columns"].index("rank")] for r in ev["data"]}, {3})
        warn = [line for line in p.stderr.splitlines() if "truncated" in line]
        self.assertEqual(len(warn), 1, p.stderr)
        self.assertIn(path + ": truncated at byte %d" % warn_bytes[0], warn[0])
        self.assertIn("loaded the %d complete events before" % n, warn[0])
        self.assertIn("byte %d;" % warn_bytes[1], warn[0])
        return p

    def fails(self, path, needle):
        p = run("info", path, ok=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(path + ": byte ", p.stderr)
        self.assertIn(needle, p.stderr)

    def test_cut_inside_an_event(self):
        end3 = len(CUT_HEAD) + len(",\n".join(CUT_EVENTS[:3]))
        cut = CUT_TEXT[: end3 + 20]  # inside the 4th event
        self.loads(self.write("cut.json", cut), 3, (len(cut), end3))

    def test_cut_between_events(self):
        end2 = len(CUT_HEAD) + len(",\n".join(CUT_EVENTS[:2]))
        cut = CUT_TEXT[: end2 + 1]  # just after the comma
        self.loads(self.write("cut.json", cut), 2, (len(cut), end2))

    def test_cut_in_the_metadata_after_the_events(self):
        cut = CUT_TEXT[: CUT_TEXT.index('"baseTimeNanoseconds"') + 5]
        self.loads(self.write("cut.json", cut), 5, (len(cut), CUT_TEXT.index("\n], ") + 2))

    def test_gzip_cut(self):
        # the gzip stream itself ends early: the warning gives the compressed byte and the JSON byte
        body = (CUT_HEAD + ",\n".join(json.dumps(cut_event(i)) for i in range(2000)) + "\n]}\n").encode()
        gz = gzip.compress(body, mtime=0)
        path = self.write("cut.json.gz", gz[: len(gz) // 2])
        p = run("info", path, "--table", "ranks", "--format", "csv", ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        events = int(p.stdout.splitlines()[1].split(",")[4])
        self.assertTrue(0 < events < 2000, p.stdout)
        self.assertIn("%s: truncated at byte %d " % (path, len(gz) // 2), p.stderr)
        self.assertIn("loaded the %d complete events before JSON byte " % events, p.stderr)

    def test_real_trace_cut(self):
        # Kineto's 2021 ResNet-50 sample (tests/data/real-diag, BSD-3) cut at half its gzip bytes, as a crash
        # while copying leaves it: its six steps (written first) load, and the report runs on them
        src = os.path.join(ROOT, "tests", "data", "real-diag", "pytorch__kineto", "tb_plugin", "samples",
                           "resnet50_num_workers_0", "worker0.1623143089861.pt.trace.json.gz")
        with open(src, "rb") as f:
            gz = f.read()
        path = self.write("worker0.json.gz", gz[:600000])
        p = run("info", path, "--table", "ranks", "--format", "json", "--quiet", ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = dict(zip(*(lambda t: (t["columns"], t["data"][0]))(json.loads(p.stdout)["ranks"])))
        self.assertEqual((r["events"], r["profiler_steps"]), (38691, 6))
        p = run("report", path, "--table", "headline", "--format", "csv", ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("worker0.json.gz: truncated at byte 600000 (a crashed job's trace?): loaded the 38691 complete "
                      "events before JSON byte 24369104; the rest is lost", p.stderr)

    def test_a_folder_with_one_cut_rank(self):
        folder = os.path.join(self.dir, "job")
        os.mkdir(folder)
        with open(os.path.join(folder, "rank0.json"), "w") as f:
            f.write(CUT_TEXT.replace('"rank": 3', '"rank": 0'))
        with open(os.path.join(folder, "rank1.json"), "w") as f:
            f.write(CUT_TEXT.replace('"rank": 3', '"rank": 1')[:-60])
        p = run("info", folder, "--table", "ranks", "--format", "csv", ok=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([r.split(",")[0] for r in p.stdout.splitlines()[1:]], ["0", "1"])
        self.assertIn("rank1.json: truncated at byte", p.stderr)
        self.assertNotIn("rank0.json", p.stderr)

    def test_errors_stay_errors(self):
        self.fails(self.write("head.json", CUT_TEXT[:20]), "unexpected end of file")  # inside the header
        self.fails(self.write("first.json", CUT_TEXT[: len(CUT_HEAD) + 15]), "unexpected end of file")  # no event
        self.fails(self.write("other.json", '{"config": [1, 2, 3'), "unexpected end of file")  # no trace
        gz = gzip.compress(CUT_TEXT.encode(), mtime=0)
        self.fails(self.write("head.json.gz", gz[:12]), "truncated gzip data")
        # a rewrite (merge) copies the file's events: refused with its offset (its output in a folder of its
        # own: beside a rank file that names its rank it would be refused first, issue 27)
        os.makedirs(os.path.join(self.dir, "out"), exist_ok=True)
        p = run("merge", self.write("cut.json", CUT_TEXT[:-70]), "-o", os.path.join(self.dir, "out", "m.json"),
                "--quiet", ok=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cut.json: byte %d: unexpected end of file" % (len(CUT_TEXT) - 70), p.stderr)

if __name__ == "__main__":
    unittest.main()
