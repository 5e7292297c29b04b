"""The commands across ranks rank by rank (docs/scaling.md): `stragglers` and `merge` make a summary of
each rank (at most one rank model per thread) and finish on the summaries; they print, and merge writes,
byte for byte what the whole load gives (HTA_PER_RANK=0 forces it), for 1, 2 and 3 threads; a bad rank
file is named, exits 1 and leaves no output file.

Run: HTA=build/hta python3 -m unittest tests/scale/test_cross_rank.py
"""
import csv
import io
import os
import re
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from testlib import HTA, ROOT  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduced  # noqa: E402


run = testlib.run_hta


def no_times(text):
    """merge's notes say how long it took: the one line two runs cannot share."""
    return re.sub(r'load \+ align .*', 'load + align (time)', text)


class Stragglers(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'g5'), '--ranks', '5', '--straggler', '3')

    def check(self, path, extra=()):
        for fmt in ('table', 'csv', 'json'):
            args = ['stragglers', path, '--format', fmt] + list(extra)
            w = run(args, whole=True)
            for th in (1, 2, 3):
                self.assertEqual(w, run(args, threads=th), (args, th))
        return w

    def test_generated(self):
        rc, out, errt = self.check(self.gen, ['--format', 'csv'])
        self.assertEqual(rc, 0)
        # the straggler starts its collectives last in every step: flagged in all 4 steps
        rows = list(csv.reader(io.StringIO(out.split('\n\n')[0].split('\n', 1)[1])))
        self.assertEqual(rows[0], ['rank', 'flagged_steps', 'steps', 'mean_normalized_start'])
        flagged = {int(r[0]): int(r[1]) for r in rows[1:]}
        self.assertEqual(flagged.get(3), 4, out)
        self.assertIn('steps 10..13 (4)', errt)

    def test_options(self):
        self.check(self.gen, ['--steps', '11,13', '--candidates', '1'])
        self.check(self.gen, ['--steps', '3-4'])  # none of them exists: a note
        self.check(self.gen, ['--ranks', '1,3-4', '--window', '10ms:200ms'])
        self.check(self.gen, ['--ranks', '2'])  # one rank: a note
        self.check(self.gen, ['--hta-compat'])  # the whole load either way

    def test_bad_step_list(self):
        rc, out, errt = self.check(self.gen, ['--steps', 'x'])
        self.assertEqual((rc, out), (1, ''))
        self.assertIn("bad step list 'x'", errt)

    def test_hta_traces(self):
        self.check(os.path.join(ROOT, 'tests', 'data', 'hta', 'trace_filter'))

    def test_bad_rank_named(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-2.json')
        rc, out, errt = self.check(d)
        self.assertEqual((rc, out), (1, ''))
        self.assertIn('rank-2.json: byte', errt)


class Merge(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'skew'), '--ranks', '4', '--straggler', '2', '--clock-skew-us', '500')
        cls.out = os.path.join(tmp, 'out')
        os.mkdir(cls.out)

    def merged(self, args, whole=False, threads=None):
        """(status, stdout, stderr without times, the merged file's bytes or None)"""
        dst = args[args.index('-o') + 1]
        if os.path.exists(dst):
            os.unlink(dst)
        rc, out, errt = run(args, whole, threads)
        data = None
        if os.path.exists(dst):
            with open(dst, 'rb') as f:
                data = f.read()
        return rc, out, no_times(errt), data

    def check(self, src, extra=(), name='m.json'):
        args = ['merge', src, '-o', os.path.join(self.out, name)] + list(extra)
        w = self.merged(args, whole=True)
        for th in (1, 2, 3):
            self.assertEqual(w, self.merged(args, threads=th), (args, th))
        return w

    def test_alignments(self):
        for align in ('none', 'barrier', 'collective'):
            rc, out, errt, data = self.check(self.gen, ['--align', align, '--format', 'csv'])
            self.assertEqual(rc, 0, errt)
            self.assertIn(b'"htaMerge"', data)
            rows = list(csv.reader(io.StringIO(out)))
            self.assertEqual([r[0] for r in rows[1:]], ['0', '1', '2', '3'])
            self.assertEqual(rows[1][3], 'none' if align == 'none' else 'reference')
            if align == 'collective':
                self.assertEqual({r[3] for r in rows[2:]}, {'collective'})
                self.assertTrue(all(int(r[5]) > 0 for r in rows[1:]), out)

    def test_options(self):
        self.check(self.gen, ['--align', 'collective', '--drift', 'on', '--ranks', '1-3'])
        self.check(self.gen, ['--align', 'barrier', '--barrier-edge', 'end'])
        self.check(self.gen, ['--align', 'barrier', '--barrier', 'ProfilerStep#11'])
        rc, _, _, data = self.check(self.gen, ['--align', 'collective'], name='m.json.gz')
        self.assertEqual((rc, data[:2]), (0, b'\x1f\x8b'))

    def test_bad_rank_named_nothing_written(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-1.json')
        rc, out, errt, data = self.check(d, ['--align', 'collective'], name='bad.json')
        self.assertEqual((rc, out, data), (1, '', None))
        self.assertIn('rank-1.json: byte', errt)
        self.assertEqual([n for n in os.listdir(self.out) if n.startswith('.') or 'bad' in n], [])  # no temp file


class Memory(unittest.TestCase):
    """Peak memory follows the largest rank, not the number of ranks: 24 ranks on one thread need about
    what 2 ranks need, for both commands."""

    def peak_kb(self, args):
        pid = os.fork()
        if pid == 0:
            os.environ['HTA_PER_RANK'] = '1'
            # under SAN=1, ASan's quarantine would keep every freed rank model: measure what is alive
            os.environ['ASAN_OPTIONS'] = (os.environ.get('ASAN_OPTIONS', '') + ':quarantine_size_mb=0').lstrip(':')
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execv(HTA, [HTA] + args)
        _, status, ru = os.wait4(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        return ru.ru_maxrss

    def test_flat(self):
        tmp = tempfile.mkdtemp()
        try:
            src = testlib.gen(os.path.join(tmp, 'r24'), '--ranks', '24', '--target-mb', '1', '--straggler', '5')
            out = os.path.join(tmp, 'm.json')
            for cmd in (['stragglers', src], ['merge', src, '-o', out, '--align', 'collective']):
                many = self.peak_kb(cmd + ['--threads', '1'])
                two = self.peak_kb(cmd + ['--threads', '1', '--ranks', '0-1'])
                # the model of one 1 MB rank is about 0.35 MB; 24 of them would add 8 MB
                self.assertLess(many, two + 3000, (cmd[0], many, two))
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    unittest.main()
