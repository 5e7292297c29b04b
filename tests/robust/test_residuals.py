"""The residuals of issue 27, item 6: a derived trace (what-if trace, overlay, augment) is never written
into the folder of the rank file it comes from, where the folder would then hold two files of one rank;
an empty trace reports "no events", not a step of 0.001 us; a step number is one number in every
command (the largest that fits, 2147483647, shown alike by info, report and cpu-ops; beyond it the file
is refused, never cut); a distributedInfo.rank that no rank can be (-1, 2^31, 99999999999) is refused
with its file and byte offset instead of being read as "no rank"."""
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from robust_common import gen, hta  # noqa: E402


def write(path, events, rank=None):
    doc = {"schemaVersion": 1, "traceEvents": events}
    if rank is not None:
        doc["distributedInfo"] = {"rank": rank}
    with open(path, "w") as f:
        f.write(json.dumps(doc))


def steps(name):
    return [{"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": 10, "dur": 100},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 50}]


class Residuals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hta-residuals-")

    def tearDown(self):
        shutil.rmtree(self.tmp, True)

    def test_derived_trace_beside_its_rank_file(self):
        run = os.path.join(self.tmp, "run")
        gen(run, ranks=1, layers=1, steps=2)
        f = os.path.join(run, "rank-0.json")
        for args in (("--what-if", "kernel:*=0.5", "--what-if-trace", os.path.join(run, "wi.json")),
                     ("--overlay", run)):
            p = hta("critical-path", f, *args)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(f"is in the folder of its input {f}, where a trace written would be a second file of "
                          "its rank", p.stderr)
        p = hta("counters", f, "--augment", run)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("second file of its rank", p.stderr)
        self.assertEqual(sorted(os.listdir(run)), ["rank-0.json"])
        self.assertEqual(hta("info", run).returncode, 0)
        # elsewhere, and under a name the loader does not read, it is written
        other = os.path.join(self.tmp, "wi.json")
        p = hta("critical-path", f, "--what-if", "kernel:*=0.5", "--what-if-trace", other)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(other))

    def test_empty_trace_reports_no_events(self):
        f = os.path.join(self.tmp, "empty.json")
        write(f, [], rank=0)
        p = hta("report", f, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        head = json.loads(p.stdout)["headline"]
        row = dict(zip(head["columns"], head["data"][0]))
        self.assertEqual(row["steps"], 0)
        self.assertIsNone(row["step_us"])
        self.assertIn("hta: note: rank 0: no events", p.stderr)

    def test_one_step_number_everywhere(self):
        f = os.path.join(self.tmp, "max.json")
        write(f, steps("ProfilerStep#2147483647"), rank=0)
        info = json.loads(hta("info", f, "--format", "json").stdout)["ranks"]
        row = dict(zip(info["columns"], info["data"][0]))
        self.assertEqual((row["first_step"], row["last_step"]), (2147483647, 2147483647))
        cpu = json.loads(hta("cpu-ops", f, "--format", "json").stdout)["cpu_steps"]
        self.assertEqual(dict(zip(cpu["columns"], cpu["data"][0]))["step"], 2147483647)
        self.assertIn("step 2147483647 takes", hta("report", f).stdout)
        for n in ("2147483648", "99999999999999999999999"):
            write(f, steps(f"ProfilerStep#{n}"), rank=0)
            for cmd in ("info", "report", "cpu-ops", "kernels"):
                p = hta(cmd, f)
                self.assertEqual(p.returncode, 1, (cmd, p.stdout))
                self.assertIn(f"{f}: event 'ProfilerStep#{n}': a step number beyond 2147483647", p.stderr)

    def test_rank_that_is_no_rank(self):
        f = os.path.join(self.tmp, "r.json")
        for v in ("-1", "2147483648", "99999999999", '"-1"'):
            write(f, steps("ProfilerStep#1"), rank="@RANK@")
            with open(f) as fh:
                text = fh.read().replace('"@RANK@"', v)
            with open(f, "w") as fh:
                fh.write(text)
            p = hta("info", f)
            self.assertEqual(p.returncode, 1, (v, p.stdout))
            at = text.index('"rank": ') + len('"rank": ')
            self.assertIn(f"{f}: byte {at}: distributedInfo.rank is not in 0..2147483647", p.stderr)
        # in a folder too: never loaded as rank 0
        d = os.path.join(self.tmp, "d")
        os.makedirs(d)
        shutil.copy(f, os.path.join(d, "a.json"))
        p = hta("info", d)
        self.assertEqual(p.returncode, 1)
        self.assertIn("distributedInfo.rank is not in 0..2147483647", p.stderr)


if __name__ == "__main__":
    unittest.main()
