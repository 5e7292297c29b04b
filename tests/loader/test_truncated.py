"""A trace cut short (a crashed job's): what is complete loads, with one warning naming the file and the
byte offsets (docs/loading.md, "Truncated traces"); a cut inside the header, before the first complete
event, or in a file that is no trace stays an error naming the file and byte."""
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))


def event(i):
    return {"ph": "X", "cat": "kernel", "name": "k%d" % i, "pid": 0, "tid": 7, "ts": 10 * i, "dur": 2,
            "args": {"stream": 7, "correlation": i}}


HEAD = '{"distributedInfo": {"rank": 3}, "traceEvents": [\n'
EVENTS = [json.dumps(event(i)) for i in range(5)]
TEXT = HEAD + ",\n".join(EVENTS) + '\n], "baseTimeNanoseconds": 0}\n'


def run(*args):
    return subprocess.run([HTA, *args], capture_output=True, text=True)


class Truncated(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hta-cut-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, name, data):
        p = os.path.join(self.dir, name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return p

    def loads(self, path, n, warn_bytes):
        """path loads with exit 0, its first n events as rows, rank 3, and one warning naming it with
        warn_bytes (the byte where the data ends, the byte where the complete part ends)."""
        p = run("events", path, "--format", "json")
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
        p = run("info", path)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(path + ": byte ", p.stderr)
        self.assertIn(needle, p.stderr)

    def test_cut_inside_an_event(self):
        end3 = len(HEAD) + len(",\n".join(EVENTS[:3]))
        cut = TEXT[: end3 + 20]  # inside the 4th event
        self.loads(self.write("cut.json", cut), 3, (len(cut), end3))

    def test_cut_between_events(self):
        end2 = len(HEAD) + len(",\n".join(EVENTS[:2]))
        cut = TEXT[: end2 + 1]  # just after the comma
        self.loads(self.write("cut.json", cut), 2, (len(cut), end2))

    def test_cut_in_the_metadata_after_the_events(self):
        cut = TEXT[: TEXT.index('"baseTimeNanoseconds"') + 5]
        self.loads(self.write("cut.json", cut), 5, (len(cut), TEXT.index("\n], ") + 2))

    def test_gzip_cut(self):
        # the gzip stream itself ends early: the warning gives the compressed byte and the JSON byte
        body = (HEAD + ",\n".join(json.dumps(event(i)) for i in range(2000)) + "\n]}\n").encode()
        gz = gzip.compress(body, mtime=0)
        path = self.write("cut.json.gz", gz[: len(gz) // 2])
        p = run("info", path, "--table", "ranks", "--format", "csv")
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
        p = run("info", path, "--table", "ranks", "--format", "json", "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = dict(zip(*(lambda t: (t["columns"], t["data"][0]))(json.loads(p.stdout)["ranks"])))
        self.assertEqual((r["events"], r["profiler_steps"]), (38691, 6))
        p = run("report", path, "--table", "headline", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("worker0.json.gz: truncated at byte 600000 (a crashed job's trace?): loaded the 38691 complete "
                      "events before JSON byte 24369104; the rest is lost", p.stderr)

    def test_a_folder_with_one_cut_rank(self):
        folder = os.path.join(self.dir, "job")
        os.mkdir(folder)
        with open(os.path.join(folder, "rank0.json"), "w") as f:
            f.write(TEXT.replace('"rank": 3', '"rank": 0'))
        with open(os.path.join(folder, "rank1.json"), "w") as f:
            f.write(TEXT.replace('"rank": 3', '"rank": 1')[:-60])
        p = run("info", folder, "--table", "ranks", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([r.split(",")[0] for r in p.stdout.splitlines()[1:]], ["0", "1"])
        self.assertIn("rank1.json: truncated at byte", p.stderr)
        self.assertNotIn("rank0.json", p.stderr)

    def test_errors_stay_errors(self):
        self.fails(self.write("head.json", TEXT[:20]), "unexpected end of file")  # inside the header
        self.fails(self.write("first.json", TEXT[: len(HEAD) + 15]), "unexpected end of file")  # no event whole
        self.fails(self.write("other.json", '{"config": [1, 2, 3'), "unexpected end of file")  # no trace
        gz = gzip.compress(TEXT.encode(), mtime=0)
        self.fails(self.write("head.json.gz", gz[:12]), "truncated gzip data")
        # a rewrite (merge) copies the file's events: refused with its offset
        p = run("merge", self.write("cut.json", TEXT[:-70]), "-o", os.path.join(self.dir, "m.json"), "--quiet")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cut.json: byte %d: unexpected end of file" % (len(TEXT) - 70), p.stderr)


if __name__ == "__main__":
    unittest.main()
