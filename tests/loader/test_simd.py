#!/usr/bin/env python3
"""The lexer's SIMD structure walk (src/trace/json_scan.c, json_lex.c) gives the scalar path's model byte
for byte: build/dump_model's whole text (symbols, rows, args, flows, threads, streams, metadata), or its
error message and byte offset, is the same with HTA_SIMD=scalar, avx2 and avx512 (a path this CPU lacks
falls to the best below it, so every run is valid anywhere; on a CPU with both, all three are compared).

HTA_SIMD_WALK_AFTER=0 makes every skipped container go through the walk (by default only values past 256
bytes do), so the inputs below reach it everywhere: strings holding quotes, escaped quotes after runs of
1 to 70 backslashes, "},{", unicode escapes and raw UTF-8, each placed at every offset of a 64-byte block;
values that cross the loader's 1 MiB read buffer inside strings and escape runs; broken values of every
kind the grammar refuses; and random values, valid and mutated.  One thread and a split load (three
threads, HTA_SPLIT_MIN=1) both.

Run: HTA=build/hta python3 -m unittest tests/loader/test_simd.py
"""
import json
import os
import random
import subprocess
import sys
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

DUMP = os.path.join(os.path.dirname(testlib.HTA), "dump_model")
PATHS = ("avx2", "avx512")

# decoded text that looks like structure from inside a string
TRAPS = ['},{', '"},{"', '"', '\\', '\\"', '\\\\"', '[', ']', '{', '}', ':', ',', ' ', '\n',
         '\u00e9t\u00e9 \u4e2d \U0001F600']
# string bodies as written, escapes the encoder does not choose
ESCAPES = ['\\u0022', '\\u005c', '\\ud83d\\ude00', '\\n\\t\\r\\b\\f\\/', '\\\\\\"']


def body(rng, k):
    """A string body as written: a trap encoded (raw UTF-8 or \\u escapes by turns) and an escape."""
    return json.dumps("a" * (k % 7) + TRAPS[k % len(TRAPS)] + "b", ensure_ascii=k % 2 == 0)[1:-1] + \
        ESCAPES[k % len(ESCAPES)]


def dump(path, simd, threads=1, walk_after="0"):
    env = dict(os.environ, HTA_SIMD=simd, HTA_SIMD_WALK_AFTER=walk_after, HTA_SPLIT_MIN="1")
    p = subprocess.run([DUMP, path, str(threads)], capture_output=True, env=env)
    return p.returncode, p.stdout


def trace(values, pad=0):
    """A trace whose events carry the values in args that the model skips ("v") and keeps as JSON text
    ("Input Dims"); pad shifts every byte after it, so the values fall at other offsets of a block."""
    evs = []
    for i, v in enumerate(values):
        evs.append('{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 1, "tid": 1, "ts": %d, "dur": 1, '
                   '"args": {"External id": %d, "v": %s, "Input Dims": %s}, "extra": %s}' % (i, 10 * i, i, v, v, v))
    return '{"schemaVersion": 1, "pad": "%s", "traceEvents": [\n  %s\n]}\n' % ("x" * pad, ",\n  ".join(evs))


class SimdSameRows(testlib.TempDirTest):
    n = 0

    def write(self, text):
        self.n += 1
        path = os.path.join(self.dir, "t%d.json" % self.n)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def same(self, text, expect_ok=True, threads=(1, 3), walk_after="0"):
        path = self.write(text)
        for t in threads:
            rc, ref = dump(path, "scalar", t, walk_after)
            self.assertEqual(rc == 0, expect_ok, ref[-300:])
            for simd in PATHS:
                rc2, out = dump(path, simd, t, walk_after)
                self.assertEqual((rc2, out), (rc, ref), "HTA_SIMD=%s threads=%d differs on %s" % (simd, t, text[:200]))
        return ref

    def test_adversarial_strings_at_every_block_offset(self):
        vals = []
        for k in range(3 * len(TRAPS)):
            b = body(None, k)
            vals.append('["%s", {"k%s": ["%s", [1, -2, 3.5e1, true, false, null]]}, "%s"]' % (b, b, b, b))
        for pad in range(0, 66, 5):
            ref = self.same(trace(vals, pad))
            self.assertIn(b"rows=%d" % len(vals), ref)

    def test_backslash_runs_before_quotes(self):
        # n backslashes as written, then a quote (escaped when n is odd), the run starting at every offset of
        # the walk's 64-byte blocks (which count from the value's first element), so runs cross blocks
        for n in range(1, 71):
            run = "\\" * n + ('"' if n % 2 else "")
            vals = ['["%s", "%s]", {"%s": "%s"}]' % ("x" * k, run, run, "y" * (k % 5) + run) for k in range(0, 66)]
            self.same(trace(vals), threads=(1,))

    def test_long_values_across_read_buffers(self):
        # a few values of 0.4-1.3 MB: the 1 MiB read buffer ends inside them, in strings and in escape runs
        rng = random.Random(7)
        vals = []
        for i in range(4):
            parts = []
            size = 0
            while size < 400000 + 300000 * i:
                p = rng.choice(['"%s"' % ("\\\\" * rng.randint(0, 40) + body(rng, rng.randrange(99))),
                                str(rng.randint(-10 ** 12, 10 ** 12)), "[[], [1, 2], {}]",
                                '{"a": "%s"}' % ("z" * rng.randint(0, 90))])
                parts.append(p)
                size += len(p) + 2
            vals.append("[" + ", ".join(parts) + "]")
        for walk_after in ("0", "256"):
            self.same(trace(vals, 3), walk_after=walk_after)

    def test_broken_values_same_error(self):
        bad = ['[1,]', '[01]', '["a\\x"]', '{"a" 1}', '[1 2]', '[tru]', '["a\tb"]', '[-]', '[1.]', '[1e]',
               '["a": 1]', '{"a", 1}', '[}', '{"a": 1,}', '[,1]', '{,}', '[1}', '{"a": 1]', '["\\u12g4"]',
               '[nullx]', '[1x]', '["a"b]', '[1, "a\\"]', '[' * 300 + ']' * 300, '{"a": [1, {"b": }]}',
               '[\x00]', '["\x01"]', '[+1]', '[.5]', '[1 , , 2]', '{"a":1 "b":2}', '[[[]]', '[[]]]']
        # and each inside a walk already going (the walk takes over at a container's first element)
        for v in bad + ["[0, %s]" % b for b in bad] + ['{"k": [%s]}' % b for b in bad]:
            for pad in (0,):
                # one good event first, the broken value in the next
                out = self.same(trace(["[1]", v], pad), expect_ok=False, threads=(1,))
                self.assertTrue(out.startswith(b"error"), out[:200])
        # raw bytes the text may not hold: invalid UTF-8 in a string, a value cut by the end of the file
        for raw in (b'["\xc3\x28"]', b'["\xed\xa0\x80"]'):
            path = self.write("")
            with open(path, "wb") as f:
                f.write(trace(["[1]", "RAW"]).encode().replace(b"RAW", raw))
            rc, ref = dump(path, "scalar")
            self.assertEqual(rc, 1)
            for simd in PATHS:
                self.assertEqual(dump(path, simd), (rc, ref))
        self.same(trace(["[1]", "[1, 2"])[:-20], expect_ok=False, threads=(1,))

    def test_random_values(self):
        rng = random.Random(36)
        alphabet = 'ab"\\{}[],: \n\t/\u00e9\u4e2d'

        def string():
            out = []
            for _ in range(rng.randint(0, 12)):
                c = rng.choice(alphabet)
                out.append({'"': '\\"', '\\': "\\\\" * rng.randint(1, 3), "\n": "\\n", "\t": "\\t"}.get(c, c))
            return '"' + "".join(out) + '"'

        def value(d):
            r = rng.random()
            ws = rng.choice(["", " ", "\n    ", "\t"])
            if d > 4 or r < 0.3:
                return rng.choice([string(), str(rng.randint(-99999, 99999)), "0", "-0", "1.25", "-3e-7", "true",
                                   "false", "null"])
            if r < 0.65:
                return "[" + ws + ("," + ws).join(value(d + 1) for _ in range(rng.randint(0, 5))) + ws + "]"
            return "{" + ws + ("," + ws).join(string() + ws + ":" + ws + value(d + 1)
                                              for _ in range(rng.randint(0, 5))) + ws + "}"

        for case in range(12):
            vals = ["[" + value(0) + "]" for _ in range(40)]
            self.same(trace(vals, case * 5))
        # mutations: one byte of a valid file changed, inserted or removed, inside the values
        for case in range(40):
            vals = ["[" + value(1) + "]" for _ in range(3)]
            text = trace(vals)
            start = text.index('"traceEvents"')
            i = rng.randrange(start + 20, len(text) - 5)
            op = rng.choice(["set", "ins", "del"])
            c = rng.choice('"\\{}[],:x0 -.e')
            text = text[:i] + (c if op != "del" else "") + text[i + (op != "ins"):]
            path = self.write(text)
            ref = dump(path, "scalar")
            for simd in PATHS:
                self.assertEqual(dump(path, simd), ref, "HTA_SIMD=%s differs on mutated %r" % (simd, text[start:]))


if __name__ == "__main__":
    unittest.main()
