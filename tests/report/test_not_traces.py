#!/usr/bin/env python3
"""What is not a trace is said (issue 39): an archive is named as one (exit 1, "extract ARCHIVE first"), not read as
broken JSON; a folder of JSON files that are no traces is an error naming them (exit 1), while an empty trace is
one ("no events"); a trace too short to judge says so and gives no finding and no observation read from its
timings (a 0.13 us fixture got "GPU idle 76.9% of the 0 us window")."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import unittest
import zipfile
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
SMALL = os.path.join(ROOT, "tests", "data", "breakdown", "small.json")


def hta(*args):
    return subprocess.run([HTA, *args], capture_output=True, text=True)


def tiny(path):
    """One operator, its launch and a 30 ns kernel: a trace of 0.13 us."""
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0.0, "dur": 0.1,
           "args": {"External id": 1}},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0.01, "dur": 0.05,
           "args": {"correlation": 7, "External id": 1}},
          {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0.1, "dur": 0.03,
           "args": {"correlation": 7, "stream": 7, "device": 0}}]
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "distributedInfo": {"rank": 0}}, f)


class NotTraces(testlib.TempDirTest):
    def sub(self, name):
        d = os.path.join(self.dir, name)
        os.mkdir(d)
        return d

    def test_archives_are_named(self):
        d = self.sub("job")
        shutil.copy(SMALL, os.path.join(d, "rank-0.json"))
        tgz = os.path.join(d, "more.tar.gz")
        with tarfile.open(tgz, "w:gz") as t:
            t.add(SMALL, arcname="rank-1.json")
        for target in (d, tgz):
            for cmd in ("report", "info"):
                with self.subTest(target=os.path.basename(target), cmd=cmd):
                    p = hta(cmd, target)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    self.assertIn("%s: an archive (tar.gz): hta reads .json and .json.gz traces; extract %s first"
                                  % (tgz, tgz), p.stderr)
                    self.assertNotIn("JSON", p.stderr.replace(".json", ""))
        os.remove(tgz)
        for name, kind in (("t.tgz", "tgz"), ("t.zip", "zip"), ("t.tar", "tar")):
            path = os.path.join(d, name)
            if kind == "zip":
                with zipfile.ZipFile(path, "w") as z:
                    z.write(SMALL, "rank-1.json")
            else:
                with tarfile.open(path, "w:gz" if kind == "tgz" else "w") as t:
                    t.add(SMALL, arcname="rank-1.json")
            with self.subTest(kind=kind):
                p = hta("report", d)
                self.assertEqual(p.returncode, 1)
                self.assertIn("an archive (%s)" % kind, p.stderr)
                self.assertIn("extract %s first" % path, p.stderr)
            os.remove(path)
        self.assertEqual(hta("report", d).returncode, 0)

    def test_folder_of_json_that_is_no_trace(self):
        d = self.sub("configs")
        with open(os.path.join(d, "a.json"), "w") as f:
            json.dump([{"name": "config", "lr": 0.1}], f)
        with open(os.path.join(d, "b.json"), "w") as f:
            json.dump({"traceEvents": [{"foo": 1}]}, f)
        p = hta("report", d)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(p.stdout, "")
        self.assertIn("a.json, %s/b.json: JSON, but no trace" % d, p.stderr)

    def test_empty_trace_is_a_trace(self):
        f = os.path.join(self.dir, "empty.json")
        with open(f, "w") as fh:
            json.dump({"traceEvents": [], "distributedInfo": {"rank": 0}}, fh)
        p = hta("report", f)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("rank 0: no events", p.stderr)

    def test_too_short_gives_no_finding(self):
        f = os.path.join(self.dir, "tiny.json")
        tiny(f)
        p = hta("report", f, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout)
        self.assertEqual(out["findings"]["data"], [])
        obs = [dict(zip(out["observations"]["columns"], r)) for r in out["observations"]["data"]]
        self.assertEqual([o["area"] for o in obs], ["trace"])
        self.assertTrue(obs[0]["finding"].startswith("too short to judge"))
        self.assertIn("too short to judge", p.stderr)


if __name__ == "__main__":
    unittest.main()
