"""hta-mpi with the commands across ranks (docs/scaling.md): `stragglers`, `merge` and `report` make their
per-rank summaries in every process, gathered on process 0, which finishes (merge: every process writes the
ranks of its share to part files beside the output, which process 0 joins; report: the savings read the
files again, every process its share of every pass of the job engine, following the scenarios process 0
chose from the parts); under mpirun -np 1, 2 and 3 they print, and merge and report --html write, exactly
what hta does (report's stderr: hta's plus, with more than one process, the note of how the savings'
rank visits were shared), and no part file is left; a bad rank file, or a part that cannot be written,
makes the run exit non-zero with the file named, nothing on stdout and no output file.

Run: HTA=build/hta BUILD=build python3 -m unittest tests/mpi/test_mpi_cross.py
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from test_mpi import HTA_MPI, MPIRUN, ROOT, hta, mpi, reduced  # noqa: E402


SHARED = re.compile(r"hta: note: the job's (\d+) rank files shared among \d+ processes: rank visits per process "
                    r"([0-9, ]+)\n")


def no_times(text):
    """merge's notes say how long it took: the one line two runs cannot share."""
    return re.sub(r'load \+ align .*', 'load + align (time)', text)


@unittest.skipUnless(MPIRUN, 'no mpirun (CI installs openmpi-bin)')
class CrossRank(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'g5'), '--ranks', '5', '--straggler', '3', '--clock-skew-us', '500')

    def test_stragglers(self):
        for args in (['stragglers', self.gen, '--format', 'csv'],
                     ['stragglers', self.gen, '--ranks', '0,2-4', '--steps', '11-13', '--candidates', '1'],
                     ['stragglers', self.gen, '--steps', 'x']):
            h = hta(args)
            for np in (1, 2, 3):
                m = mpi(np, args)
                if h[0]:
                    # mpirun adds its own lines about a process that exited non-zero
                    self.assertEqual((h[1], h[2]), (m[1], m[2][:len(h[2])]), (np, args))
                    self.assertNotEqual(m[0], 0)
                else:
                    self.assertEqual(h, m, (np, args))

    def with_file(self, run, np, args, flag='-o'):
        """(status, stdout, stderr without times, the bytes of the file after flag or None)"""
        dst = args[args.index(flag) + 1]
        if os.path.exists(dst):
            os.unlink(dst)
        rc, out, errt = run(args) if np is None else run(np, args)
        data = None
        if os.path.exists(dst):
            with open(dst, 'rb') as f:
                data = f.read()
        return rc, out, no_times(errt), data

    def merged(self, run, np, args):
        return self.with_file(run, np, args)

    def test_merge(self):
        od = os.path.join(self.tmp, 'merged')
        os.mkdir(od)
        for name, extra in (('m.json', ['--align', 'collective']), ('m.json', ['--align', 'barrier', '--ranks', '1-4']),
                            ('m.json.gz', ['--align', 'none'])):
            args = ['merge', self.gen, '-o', os.path.join(od, name), '--format', 'csv'] + extra
            h = self.merged(hta, None, args)
            self.assertEqual(h[0], 0, h[2])
            for np in (1, 2, 3):
                self.assertEqual(h, self.merged(mpi, np, args), (np, args))
                self.assertEqual([n for n in os.listdir(od) if n.startswith('.')], [])  # the parts are gone

    def paged(self, run, np, args):
        return self.with_file(run, np, args, '--html')

    def test_report(self):
        od = os.path.join(self.tmp, 'pages')
        os.mkdir(od)
        page = os.path.join(od, 'r.html')
        for extra in (['--format', 'csv'], ['--ranks', '0,2-4', '--no-critical-path'], ['--format', 'json']):
            args = ['report', self.gen, '--html', page] + extra
            h = self.paged(hta, None, args)
            self.assertEqual(h[0], 0, h[2])
            for np in (1, 2, 3):
                rc, out, err, data = self.paged(mpi, np, args)
                m = SHARED.search(err)
                if np > 1:
                    # the savings' passes were shared: every process visited rank files, none all of them
                    self.assertIsNotNone(m, (np, args, err))
                    visits = [int(v) for v in m.group(2).split(', ')]
                    self.assertEqual(len(visits), np)
                    self.assertTrue(all(0 < v < sum(visits) for v in visits), visits)
                    err = err[:m.start()] + err[m.end():]
                else:
                    self.assertIsNone(m, err)
                self.assertEqual(h, (rc, out, err, data), (np, args))
        self.assertIn('straggler', h[1])

    def test_part_not_written(self):
        od = os.path.join(self.tmp, 'blocked')
        os.mkdir(od)
        # a folder where rank 2's part goes: that process's write fails
        os.mkdir(os.path.join(od, '.m.json.rank-2.part'))
        for np in (2, 3):
            rc, out, errt = mpi(np, ['merge', self.gen, '-o', os.path.join(od, 'm.json')])
            self.assertNotEqual(rc, 0)
            self.assertEqual(out, '')
            self.assertIn('.m.json.rank-2.part: is a folder', errt)
            self.assertEqual(os.listdir(od), ['.m.json.rank-2.part'])

    def test_bad_file_fails_named(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-3.json', 3)
        od = os.path.join(self.tmp, 'out')
        os.mkdir(od)
        for np in (1, 3):
            for args in (['stragglers', d], ['merge', d, '-o', os.path.join(od, 'm.json')],
                         ['report', d, '--html', os.path.join(od, 'r.html')]):
                rc, out, errt = mpi(np, args)
                self.assertNotEqual(rc, 0)
                self.assertEqual(out, '')
                self.assertIn('rank-3.json: byte', errt)
                self.assertEqual(os.listdir(od), [])


if __name__ == '__main__':
    unittest.main()
