"""The per-rank iteration (docs/scaling.md): commands that run rank by rank print exactly what the whole
run prints (HTA_PER_RANK=0 forces the whole load), hold one rank model per thread, and fall back to the
whole load where the plan cannot go file by file.

Run: HTA=build/hta python3 -m unittest tests/scale/test_per_rank.py
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from testlib import HTA, ROOT  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduced  # noqa: E402
CMDS = [['info'], ['temporal'], ['idle', '--stats'], ['overlap'], ['events', '--limit', '50']]


run = testlib.run_hta


def no_load_s(text):
    """info's load_s column is a measured time: the one cell two runs cannot share."""
    return re.sub(r',\s*[0-9.e-]+(?=\]|$)', '', text, flags=re.M)


class SameAsWhole(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'g5'), '--ranks', '5', '--straggler', '3')

    def check(self, path, extra=()):
        for cmd in CMDS:
            for fmt in ('csv', 'json'):
                args = cmd[:1] + [path] + cmd[1:] + ['--format', fmt] + list(extra)
                w = run(args, whole=True)
                for th in (1, 2, 3):
                    p = run(args, threads=th)
                    self.assertEqual(w[0], p[0], args)
                    mask = no_load_s if cmd[0] == 'info' else str
                    self.assertEqual(mask(w[1]), mask(p[1]), args)
                    self.assertEqual(w[2], p[2], args)

    def test_generated(self):
        self.check(self.gen)

    def test_rank_selection_and_window(self):
        self.check(self.gen, ['--ranks', '1,3-4', '--window', '10ms:200ms'])

    def test_hta_traces(self):
        self.check(os.path.join(ROOT, 'tests', 'data', 'hta', 'trace_filter'))

    def test_skipped_files_named_once(self):
        d = os.path.join(self.tmp, 'mixed')
        shutil.copytree(self.gen, d)
        with open(os.path.join(d, 'notes.txt'), 'w') as f:
            f.write('x')
        w, p = run(['temporal', d], whole=True), run(['temporal', d])
        self.assertEqual(w, p)
        self.assertEqual(p[2].count('notes.txt: skipped'), 1)

    def test_bad_rank_named(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-2.json')
        rc, out, errt = run(['temporal', d])
        self.assertEqual(rc, 1)
        self.assertEqual(out, '')
        self.assertIn('rank-2.json: byte', errt)
        self.assertEqual((rc, out, errt), run(['temporal', d], whole=True))


class Memory(unittest.TestCase):
    """Peak memory follows the largest rank, not the number of ranks: 24 ranks on one thread need about
    what 2 ranks need (the whole load holds all 24)."""

    def test_flat(self):
        tmp = tempfile.mkdtemp()
        try:
            testlib.gen(tmp, '--ranks', '24', '--target-mb', '1')
            many = testlib.peak_kb(['temporal', tmp, '--threads', '1'])
            two = testlib.peak_kb(['temporal', tmp, '--threads', '1', '--ranks', '0-1'])
            # the model of one 1 MB rank is about 0.35 MB; 24 of them would add 8 MB
            self.assertLess(many, two + 3000, (many, two))
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    unittest.main()
