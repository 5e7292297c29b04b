"""Inputs (docs/loading.md, "What is read"): a FIFO or a device given as the trace is refused at once,
never waited on; every file a folder load skips is named on stderr; a merged trace (hta merge) lying
beside the per-rank files it came from is skipped, named, instead of being read as more ranks."""
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from robust_common import gen, hta, nobody_setup, tmpdir  # noqa: E402


def ranks(p):
    """The ranks `hta info --format json` loaded: rank -> file."""
    t = json.loads(p.stdout)['ranks']
    c = t['columns']
    return {r[c.index('rank')]: r[c.index('file')] for r in t['data']}


def warnings(p):
    return [line for line in p.stderr.splitlines() if line.startswith('hta: warning: ')]


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix='hta-robust-in-')
        os.chmod(cls.base, 0o755)  # readable by nobody (test_unreadable_file as root)
        cls.src = os.path.join(cls.base, 'src')
        gen(cls.src, layers=1, steps=2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, True)

    def setUp(self):
        self.t = tmpdir(self, 'hta-robust-in-')
        os.chmod(self.t, 0o755)
        self.d = os.path.join(self.t, 'd')
        shutil.copytree(self.src, self.d)


class NotRegular(Base):
    def test_fifo_as_the_trace(self):
        """Nobody writes the FIFO: open() would block for ever; it is refused at once."""
        fifo = os.path.join(self.t, 'trace.json')
        os.mkfifo(fifo)
        for cmd in (['info', fifo], ['report', fifo], ['merge', fifo, '-o', os.path.join(self.t, 'm.json')],
                    ['critical-path', fifo]):
            p = hta(*cmd, timeout=20)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn('%s: not a regular file (a FIFO)' % fifo, p.stderr)
        self.assertEqual(sorted(os.listdir(self.t)), ['d', 'trace.json'])

    def test_fifo_with_a_writer_waiting(self):
        """Even with a writer on the other end (| hta info /dev/stdin): refused, named, the writer not
        waited for."""
        fifo = os.path.join(self.t, 'trace.json')
        os.mkfifo(fifo)
        w = subprocess.Popen(['sh', '-c', 'cat "$1" > "$2"', 'sh', os.path.join(self.d, 'rank-0.json'), fifo])
        self.addCleanup(w.kill)
        p = hta('info', fifo, timeout=20)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('not a regular file (a FIFO)', p.stderr)

    def test_devices_and_sockets(self):
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        sock = os.path.join(self.t, 'sock.json')
        s.bind(sock)
        p = hta('info', sock, timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertIn(sock, p.stderr)
        if os.geteuid() == 0:
            zero = os.path.join(self.t, 'zero.json')
            os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # endless zeros
            p = hta('info', zero, timeout=20)
            self.assertEqual(p.returncode, 1)
            self.assertIn('%s: not a regular file (a character device)' % zero, p.stderr)


class FolderSkips(Base):
    def test_every_skipped_file_is_named(self):
        os.mkfifo(os.path.join(self.d, 'rank-2.json'))
        os.symlink('gone.json', os.path.join(self.d, 'rank-3.json'))
        os.mkdir(os.path.join(self.d, 'rank-4.json'))
        os.mkdir(os.path.join(self.d, 'logs'))             # a folder not named like a trace: not a file
        with open(os.path.join(self.d, 'notes.txt'), 'w') as f:
            f.write('x')
        with open(os.path.join(self.d, '.hidden.json'), 'w') as f:  # hidden: not listed, as ls does
            f.write('x')
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        s.bind(os.path.join(self.d, 'rank-5.gz'))
        p = hta('info', self.d, '--format', 'json', timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ranks(p)), [0, 1])
        j = lambda n: os.path.join(self.d, n)  # noqa: E731
        self.assertEqual(sorted(warnings(p)), sorted([
            'hta: warning: %s: skipped (a FIFO, not a regular file)' % j('rank-2.json'),
            'hta: warning: %s: skipped (a symbolic link to nothing)' % j('rank-3.json'),
            'hta: warning: %s: skipped (a folder)' % j('rank-4.json'),
            'hta: warning: %s: skipped (a socket, not a regular file)' % j('rank-5.gz'),
            'hta: warning: %s: skipped (not a .json or .gz trace file)' % j('notes.txt'),
        ]))

    def test_unreadable_file(self):
        """As root every file is readable: hta runs as nobody."""
        exe, drop = nobody_setup(self.t)
        os.chmod(self.d, 0o755)
        extra = os.path.join(self.d, 'rank-7.json')
        shutil.copy(os.path.join(self.d, 'rank-1.json'), extra)
        os.chmod(extra, 0)
        p = subprocess.run([exe, 'info', self.d, '--format', 'json'], capture_output=True, text=True,
                           preexec_fn=drop, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ranks(p)), [0, 1])
        self.assertEqual(warnings(p), ['hta: warning: %s: skipped (cannot open: Permission denied)' % extra])


class MergedBeside(Base):
    """A merged trace put in the folder it was merged from (hta merge refuses to write it there, but
    cp does not)."""

    def merged_into(self, folder):
        m = os.path.join(self.t, 'merged.json')
        p = hta('merge', self.d, '-o', m, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        shutil.move(m, os.path.join(folder, 'merged.json'))
        return os.path.join(folder, 'merged.json')

    def test_skipped_and_named(self):
        m = self.merged_into(self.d)
        before = hta('report', self.src, '--format', 'json', '--quiet').stdout
        p = hta('info', self.d, '--format', 'json')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(ranks(p), {0: os.path.join(self.d, 'rank-0.json'), 1: os.path.join(self.d, 'rank-1.json')})
        self.assertIn('hta: warning: %s: skipped (a merged trace (hta merge) beside per-rank traces; load it '
                      'on its own)' % m, warnings(p))
        self.assertEqual(hta('report', self.d, '--format', 'json', '--quiet').stdout, before.replace(
            self.src, self.d))
        # on its own it is the ranks it holds
        p = hta('info', m, '--format', 'json', '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ranks(p)), [0, 1])

    def test_files_without_ranks_are_not_doubled(self):
        """Files that name no rank take the first free ones: before, a merged trace beside them made
        four ranks out of two, silently."""
        for n in ('rank-0.json', 'rank-1.json'):
            with open(os.path.join(self.d, n)) as f:
                t = json.load(f)
            del t['distributedInfo']
            os.unlink(os.path.join(self.d, n))
            with open(os.path.join(self.d, n.replace('rank-', 'part')), 'w') as f:
                json.dump(t, f)
        m = self.merged_into(self.d)
        p = hta('info', self.d, '--format', 'json')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ranks(p).values()), [os.path.join(self.d, 'part0.json'),
                                                     os.path.join(self.d, 'part1.json')])
        self.assertTrue(any(m in w and 'merged trace' in w for w in warnings(p)))

    def test_with_rank_selection(self):
        self.merged_into(self.d)
        p = hta('info', self.d, '--ranks', '1', '--format', 'json')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(ranks(p), {1: os.path.join(self.d, 'rank-1.json')})

    def test_a_folder_of_merged_traces_alone_loads(self):
        """Only a merged trace beside per-rank files is skipped: alone in a folder it loads as before."""
        only = os.path.join(self.t, 'only')
        os.mkdir(only)
        self.merged_into(only)
        p = hta('info', only, '--format', 'json')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(ranks(p)), [0, 1])
        self.assertEqual(warnings(p), [])


if __name__ == '__main__':
    unittest.main()
