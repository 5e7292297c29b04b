#!/usr/bin/env python3
"""One rank file parsed by several threads (src/trace/split.c): the model one thread builds and the one
N threads build are the same bytes (build/dump_model prints all of it: symbols, rows, args, flows,
threads, streams, metadata), on files whose strings are made to fool a split (they hold "},{", whole
fake events, escaped quotes and backslashes), with metadata on both sides of the events, the array
form, and on broken files, whose error and byte offset must be one thread's too.

HTA_SPLIT_MIN=1 lets the loader split files of a few kilobytes (it leaves files under 16 MiB a thread
whole otherwise).

Run: HTA=build/hta python3 -m unittest tests/loader/test_split.py
"""
import json
import os
import random
import re
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DUMP = os.path.join(os.path.dirname(HTA), "dump_model")
THREADS = (2, 3, 4, 7, 16)

# strings that look like event boundaries, or like events, from inside a string
TRAPS = [
    '},{',
    '}, {',
    '},\n  {',
    '"},{"ph": "X", "cat": "kernel", "name": "fake", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"x": "',
    '\\"},{\\"',
    '\\\\"},{',
    'back\\\\slash },  { "ph": "X"',
    '\u00e9t\u00e9 },{ \u4e2d',
    '\\u0022},{\\u0022',
    '\\n  },\\n  {\\n',
]


def dump(path, threads, split_min="1"):
    env = dict(os.environ, HTA_SPLIT_MIN=split_min)
    p = subprocess.run([DUMP, path, str(threads)], capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr


def event(rng, i):
    """One Kineto-like event; a few of each kind the parser treats apart."""
    trap = rng.choice(TRAPS)
    k = i % 9
    tid = rng.choice([1, 2, "7", "Spans"])
    if k == 0:
        return {"ph": "s", "id": i, "pid": 1, "tid": tid, "ts": i, "cat": "ac2g", "name": "flow"}
    if k == 1:  # a flow without cat: its category is the file's first symbol
        return {"ph": "f", "id": i - 1, "pid": 1, "tid": tid, "ts": i + 1, "bp": "e", "name": "flow"}
    if k == 2:
        return {"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": "th " + trap}}
    if k == 3:
        return {"ph": "i", "name": trap, "pid": 1, "tid": tid, "ts": i, "s": "t"}
    if k == 4:
        return {"ph": "X", "cat": "kernel", "name": "k" + trap, "pid": 0, "tid": 7 + i % 3, "ts": 10 * i + 0.5,
                "dur": 3.25, "args": {"stream": 7 + i % 3, "correlation": i, "device": 0,
                                      "grid": [i, 1, 1], "note": trap, "External id": i}}
    return {"ph": "X", "cat": rng.choice(["cpu_op", "user_annotation", "cuda_runtime"]),
            "name": rng.choice(["aten::mm", "aten::add", "cudaLaunchKernel", "ProfilerStep#%d" % (i // 50)]) + trap,
            "pid": rng.choice([1, "1", "host " + trap]), "tid": tid, "ts": 10 * i, "dur": rng.randint(0, 9),
            "args": {"External id": i, "correlation": i if k == 6 else None, "Input Dims": [[i, 2], []],
                     "Input type": ["float", trap], "Concrete Inputs": ["", str(i)], "Seq": 1.5,
                     "Python id": i, trap: trap, "n\\u0061me": 1}}


def write(path, n, seed, array_form=False, after=True):
    rng = random.Random(seed)
    evs = [event(rng, i) for i in range(n)]
    # Kineto's layout: one event a few lines, keys in its order; ensure_ascii off so UTF-8 stays raw
    body = ",\n  ".join(json.dumps(e, ensure_ascii=seed % 2 == 0) for e in evs)
    if array_form:
        text = "[\n  " + body + "\n]\n"
    else:
        head = '{\n  "schemaVersion": 1, "deviceProperties": [{"id": 0}, {"id": 1, "s": "},{"}],\n' \
               '  "distributedInfo": {"rank": 3, "world_size": 4},\n  "traceEvents": [\n  '
        tail = '\n  ],\n  "traceName": "t },{ x", "baseTimeNanoseconds": 1700000000000000000' if after else "\n  ]"
        text = head + body + tail + "\n}\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return text


class SameRows(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hta-split-")

    def tearDown(self):
        for f in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, f))
        os.rmdir(self.dir)

    def same(self, path, expect_ok=True):
        rc1, one, err1 = dump(path, 1)
        self.assertEqual(rc1 == 0, expect_ok, (one[-300:], err1))
        self.assertGreater(len(one), 0)
        for t in THREADS:
            rc, out, err = dump(path, t)
            self.assertEqual(rc, rc1, err)
            self.assertTrue(out == one, f"{t} threads: the model differs from one thread's ({path})")
        return one

    def test_adversarial_strings(self):
        for seed in range(6):
            p = os.path.join(self.dir, "rank-%d.json" % seed)
            write(p, 400, seed)
            one = self.same(p)
            self.assertIn(b"rank 3 distributedInfo", one)
            self.assertIn(b"meta traceName", one)

    def test_array_form(self):
        p = os.path.join(self.dir, "arr.json")
        write(p, 300, 7, array_form=True)
        self.same(p)

    def test_metadata_only_before(self):
        p = os.path.join(self.dir, "before.json")
        write(p, 300, 8, after=False)
        self.same(p)

    def test_one_long_string(self):
        """Every cut falls inside one string of fake events: every guess is wrong, one thread does it all."""
        fake = ",\n  ".join(['{"ph": "X", "cat": "k", "name": "n", "ts": %d, "dur": 1}' % i for i in range(2000)])
        evs = [{"ph": "X", "cat": "k", "name": "a", "ts": 1, "dur": 1, "args": {"s": fake}},
               {"ph": "X", "cat": "k", "name": "b", "ts": 2, "dur": 1}]
        p = os.path.join(self.dir, "long.json")
        with open(p, "w") as f:
            f.write('{"traceEvents": [\n  ' + ",\n  ".join(json.dumps(e) for e in evs) + "\n]}\n")
        one = self.same(p)
        self.assertIn(b"rows=2 ", one)

    def test_errors_are_one_threads(self):
        base = write(os.path.join(self.dir, "ok.json"), 400, 3)
        cases = {
            "syntax": base[: len(base) * 3 // 4] + "@" + base[len(base) * 3 // 4 + 1:],
            "truncated": base[: len(base) * 2 // 3],
            "late_dup_key": base.replace('"traceName"', '"distributedInfo": {"rank": 5}, "traceName"'),
            "no_ts": base.replace('"ts": 3990, ', '', 1),
        }
        for name, text in cases.items():
            p = os.path.join(self.dir, name + ".json")
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            rc1, one, _ = dump(p, 1)
            for t in THREADS:
                rc, out, _ = dump(p, t)
                self.assertEqual((rc, out), (rc1, one), f"{name}, {t} threads")

    def test_hta_info_same(self):
        """The CLI's --threads: info's output is the same with 1 and 4 threads."""
        p = os.path.join(self.dir, "rank-0.json")
        write(p, 600, 11)
        env = dict(os.environ, HTA_SPLIT_MIN="1")
        # load_s (the load's seconds) is the one figure that may differ
        outs = [subprocess.run([HTA, "info", p, "--threads", str(t), "--format", "csv"], capture_output=True,
                               env=env).stdout.decode() for t in (1, 4)]
        outs = [re.sub(r"(?m)^(3,/.*),[0-9.e-]+$", r"\1,LOAD_S", o) for o in outs]
        self.assertEqual(outs[0], outs[1])
        self.assertIn("LOAD_S", outs[0])


if __name__ == "__main__":
    unittest.main()
