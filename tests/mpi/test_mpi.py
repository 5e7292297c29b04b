"""hta-mpi (docs/scaling.md): under mpirun -np 1, 2 and 3 it prints exactly what hta prints, for the
commands that share ranks among processes and for those process 0 runs alone; a bad rank file makes
the run exit 1 with the file named and nothing on stdout.  Runs where mpirun is installed (CI installs
openmpi-bin and libopenmpi-dev; the build makes hta-mpi whenever mpicc works).

Run: HTA=build/hta BUILD=build python3 -m unittest tests/mpi/test_mpi.py
"""
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from testlib import HTA, ROOT  # noqa: E402
HTA_MPI = os.path.join(os.path.dirname(HTA), 'hta-mpi')
MPIRUN = shutil.which('mpirun')
sys.path.insert(0, os.path.join(ROOT, 'tests', 'scale'))
import reduced  # noqa: E402


def no_load_s(text):
    """info's load_s column is a measured time: the one cell two runs cannot share."""
    return re.sub(r',\s*[0-9.e-]+(?=\]|$)', '', text, flags=re.M)


def mpi(np, args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1',
               OMPI_MCA_rmaps_base_oversubscribe='1')
    # under SAN=1: OpenMPI's own allocations left at exit (ompi_op_base_op_select, ...) are not ours; hta's
    # code is leak-checked by every other test
    env['ASAN_OPTIONS'] = (env.get('ASAN_OPTIONS', '') + ':detect_leaks=0').lstrip(':')
    p = subprocess.run([MPIRUN, '--oversubscribe', '-np', str(np), HTA_MPI] + args, capture_output=True,
                       text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def hta(args):
    """hta with args, as mpi(np, args) runs hta-mpi: (exit status, stdout, stderr)."""
    p = subprocess.run([HTA] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(MPIRUN, 'no mpirun (CI installs openmpi-bin)')
class SameAsHta(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.gen = testlib.gen(os.path.join(tmp, 'g5'), '--ranks', '5', '--straggler', '1')

    def test_built(self):
        self.assertTrue(os.access(HTA_MPI, os.X_OK), 'mpirun is installed but hta-mpi was not built')

    def test_same_output(self):
        for args in (['info', self.gen, '--format', 'csv'], ['temporal', self.gen],
                     ['idle', self.gen, '--stats', '--format', 'json'], ['overlap', self.gen, '--ranks', '0,2-4'],
                     ['events', self.gen, '--limit', '20', '--format', 'csv'],
                     ['stragglers', self.gen], ['kernels', self.gen, '--format', 'csv'],
                     ['efficiency', self.gen, '--format', 'csv']):
            hrc, hout, herr = hta(args)
            for np in (1, 2, 3):
                rc, out, errt = mpi(np, args)
                mask = no_load_s if args[0] == 'info' else str
                self.assertEqual((hrc, mask(hout)), (rc, mask(out)), (np, args))
                self.assertEqual(herr, errt, (np, args))

    def test_bad_file_fails_named(self):
        d = reduced.cut_copy(self.gen, os.path.join(self.tmp, 'bad'), 'rank-3.json', 3)
        for np in (1, 3):
            rc, out, errt = mpi(np, ['temporal', d])
            self.assertNotEqual(rc, 0)
            self.assertEqual(out, '')
            self.assertIn('rank-3.json: byte', errt)


@unittest.skipUnless(MPIRUN, 'no mpirun (CI installs openmpi-bin)')
class ReducedSameAsHta(testlib.ClassTempDir):
    """The reduced commands (docs/scaling.md, "Reduce"): every process's parts gathered, reduced on process 0."""

    @classmethod
    def inputs(cls, tmp):
        cls.dirs = reduced.make_inputs(tmp)

    def same(self, args, nps=(1, 2, 3)):
        h = hta(args)
        self.assertEqual(h[0], 0, (args, h[2]))
        for np in nps:
            self.assertEqual(h, mpi(np, args), (np, args))

    def test_each_command(self):
        # a job with a rank without GPU work; cupti on ranks with different counters
        for cmd, fmt in (('kernels', 'csv'), ('launch', 'json'), ('annotations', 'csv'), ('ops', 'json'),
                         ('cpu-ops', 'csv'), ('counters', 'json'), ('patterns', 'csv')):
            extra = ['--op', 'ProfilerStep'] if cmd == 'patterns' else []
            self.same([cmd, self.dirs['mixed'], '--format', fmt] + extra)
        self.same(['cupti', self.dirs['cupti'], '--format', 'csv'])
        self.same(['kernels', self.dirs['mixed'], '--ranks', '1-3', '--window', '0ms:80ms'])

    def test_notes_about_the_whole_run(self):
        for cmd in ('kernels', 'launch', 'annotations', 'ops', 'counters', 'cupti'):
            self.same([cmd, self.dirs['cpu']], nps=(3,))


if __name__ == '__main__':
    unittest.main()
