"""hta-mpi with critical-path --all-ranks (docs/scaling.md, "The critical path across ranks"): every process
runs the job engine, visiting only its share of the ranks in every pass and exchanging what the pass produced
(hta_job_dist, src/job/wire.c).  Under mpirun -np 1, 2 and 3 stdout is byte for byte hta's, with and
without what-if rules (rank:R=median's second visit included); stderr is hta's plus, with more than one
process, the note of how the rank visits were shared, which shows that every process visited ranks and none
visited them all.  A bad rank file gives hta's error (the first in rank order, whichever process read it)
and exit status.  --what-if-trace is written by the processes that own the ranks, --overlay by process 0:
both files are hta's.

Run: HTA=build/hta BUILD=build python3 -m unittest tests/mpi/test_mpi_cpath.py
"""
import filecmp
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from test_mpi import HTA_MPI, MPIRUN, hta, mpi, reduced  # noqa: E402

NOTE = re.compile(r"hta: note: the job's (\d+) rank files shared among (\d+) processes: rank visits per process "
                  r"([0-9, ]+)\n")


@unittest.skipUnless(MPIRUN, 'no mpirun (CI installs openmpi-bin)')
class JobShared(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'g4'), '--ranks', '4', '--target-mb', '2')

    def shared(self, np, args, hta_err, err):
        """stderr under np processes: hta's, and (np > 1) the note of the shares; their rank visits."""
        if np == 1:
            self.assertEqual(hta_err, err, args)
            return [None]
        m = NOTE.search(err)
        self.assertIsNotNone(m, err)
        self.assertEqual(hta_err, err[:m.start()] + err[m.end():], args)
        self.assertEqual((m.group(1), m.group(2)), ('4', str(np)))
        return [int(v) for v in m.group(3).split(', ')]

    def test_same_output(self):
        for extra in ([], ['--what-if', 'cpu=x0.5'], ['--what-if', 'rank:1=median']):
            args = ['critical-path', self.gen, '--all-ranks'] + extra
            h = hta(args)
            self.assertEqual(h[0], 0, h[2])
            if extra:
                self.assertIn('what_if', h[1])
            for np in (1, 2, 3):
                rc, out, err = mpi(np, args)
                self.assertEqual((h[0], h[1]), (rc, out), (np, args))
                visits = self.shared(np, args, h[2], err)
                if np > 1:
                    # every process visited ranks, none all of them: each pass was shared
                    self.assertEqual(len(visits), np)
                    self.assertTrue(all(v > 0 for v in visits), visits)
                    self.assertTrue(all(v < sum(visits) for v in visits), visits)

    def test_bad_file_fails_as_hta(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-3.json', 3)
        p = os.path.join(d, 'rank-1.json')
        with open(p) as f:
            s = f.read()
        with open(p, 'w') as f:
            f.write(s[:len(s) // 2] + '\x01')
        h = hta(['critical-path', d, '--all-ranks'])
        self.assertEqual(h[0], 1)
        self.assertIn('rank-1.json: byte', h[2])
        for np in (1, 2, 3, 4):
            rc, out, err = mpi(np, ['critical-path', d, '--all-ranks'])
            self.assertEqual((rc, out), (h[0], ''), np)
            # the first failing rank's error, whichever process read it (mpirun adds its own lines)
            self.assertTrue(err.startswith(h[2]), (np, err))

    def test_derived_files(self):
        base = os.path.join(self.tmp, 'hta_out')
        os.mkdir(base)
        args = ['critical-path', self.gen, '--all-ranks', '--what-if', 'cpu=x0.5']
        h = hta(args + ['--what-if-trace', os.path.join(base, 'sim'), '--overlay', os.path.join(base, 'ovl')])
        self.assertEqual(h[0], 0, h[2])
        for np in (2, 3):
            o = os.path.join(self.tmp, 'mpi_out%d' % np)
            os.mkdir(o)
            rc, out, err = mpi(np, args + ['--what-if-trace', os.path.join(o, 'sim'), '--overlay',
                                           os.path.join(o, 'ovl')])
            self.assertEqual(rc, 0, err)
            self.assertEqual(out, h[1])
            for sub in ('sim', 'ovl'):
                names = sorted(os.listdir(os.path.join(base, sub)))
                self.assertEqual(names, sorted(os.listdir(os.path.join(o, sub))), sub)
                for n in names:
                    self.assertTrue(filecmp.cmp(os.path.join(base, sub, n), os.path.join(o, sub, n), shallow=False),
                                    (np, sub, n))


if __name__ == '__main__':
    unittest.main()
