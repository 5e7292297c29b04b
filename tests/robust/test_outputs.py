"""Output files (hta/outfile.h, docs/loading.md "Output files"): special files written through and
never replaced, outputs that are inputs refused before any work, temporary files created exclusively
and removed on errors and signals, concurrent writers, and errors that name the output and its cause.
Every kind of output is covered: the merged trace (-o), derived traces (--augment, --what-if-trace),
saved graphs (--save)."""
import json
import os
import pty
import resource
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tty
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from robust_common import HTA, gen, hta, nobody_setup, tmpdir  # noqa: E402


def references(cls, **gen_args):
    """In cls.base: a generated job (cls.d, gen's gen_args) and what the outputs are checked against: its
    merged trace (cls.merged, the bytes), rank 0's saved graph (cls.graph) and that graph's tables as JSON
    (cls.graph_tables)."""
    cls.d = os.path.join(cls.base, 'd')
    gen(cls.d, **gen_args)
    ref = os.path.join(cls.base, 'ref.json')
    p = hta('merge', cls.d, '-o', ref, '--quiet')
    assert p.returncode == 0, p.stderr
    with open(ref, 'rb') as f:
        cls.merged = f.read()
    g = os.path.join(cls.base, 'ref.cpg')
    p = hta('critical-path', cls.d, '--ranks', '0', '--save', g, '--quiet')
    assert p.returncode == 0, p.stderr
    with open(g, 'rb') as f:
        cls.graph = f.read()
    cls.graph_tables = hta('critical-path', '--graph', g, '--format', 'json', '--quiet').stdout


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix='hta-robust-out-')
        os.chmod(cls.base, 0o755)  # readable by nobody (Errors.test_read_only_folder)
        references(cls)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, True)

    def setUp(self):
        self.t = tmpdir(self, 'hta-robust-')

    def snapshot(self):
        """Names, kinds and contents of the input folder: to show that nothing was touched."""
        out = {}
        for n in sorted(os.listdir(self.d)):
            p = os.path.join(self.d, n)
            st = os.lstat(p)
            with open(p, 'rb') as f:
                out[n] = (st.st_ino, st.st_mtime_ns, f.read())
        return out


class SpecialFiles(Base):
    """A FIFO, a character device or stdout at the output is written through: open O_WRONLY and
    stream, never a temporary file renamed over it."""

    def test_fifo_is_written_through(self):
        fifo = os.path.join(self.t, 'out.fifo')
        os.mkfifo(fifo)
        got = []
        th = threading.Thread(target=lambda: got.append(open(fifo, 'rb').read()), daemon=True)
        th.start()
        p = hta('merge', self.d, '-o', fifo, '--quiet')
        th.join(60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(got, [self.merged])
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(sorted(os.listdir(self.t)), ['out.fifo'])

    def test_character_device_stays(self):
        """A null device made in the temporary folder (the /dev/null that `hta merge -o /dev/null` run
        as root used to replace with a regular file); without root, a pseudo-terminal reached through a
        link."""
        if os.geteuid() == 0:
            null = os.path.join(self.t, 'null')
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            p = hta('merge', self.d, '-o', null, '--quiet')
            self.assertEqual(p.returncode, 0, p.stderr)
            st = os.lstat(null)
            self.assertTrue(stat.S_ISCHR(st.st_mode))
            self.assertEqual(st.st_rdev, os.makedev(1, 3))
            p = hta('critical-path', self.d, '--ranks', '0', '--save', null, '--quiet')
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode))
            self.assertEqual(sorted(os.listdir(self.t)), ['null'])
        master, slave = pty.openpty()
        tty.setraw(slave)
        link = os.path.join(self.t, 'tty.json')
        os.symlink(os.ttyname(slave), link)
        buf = bytearray()
        proc = subprocess.Popen([HTA, 'critical-path', self.d, '--ranks', '0', '--save', link, '--quiet'],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while True:
            r, _, _ = select.select([master], [], [], 0.05)
            if r:
                buf += os.read(master, 1 << 16)
            elif proc.poll() is not None:
                break
        err = proc.stderr.read().decode()
        os.close(master)
        os.close(slave)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(bytes(buf), self.graph)
        self.assertTrue(os.path.islink(link))

    def test_stdout(self):
        """-o /dev/stdout into a pipe: stdout holds the trace alone (the tables go to stderr).  Named
        /proc/self/fd/1 here, the link /dev/stdout leads to, so that a broken hta could never replace
        /dev/stdout itself (as one that renamed over its output did, run as root)."""
        p = subprocess.run([HTA, 'merge', self.d, '-o', '/proc/self/fd/1', '--format', 'csv'], capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.merged)
        self.assertIn(b'rank,file,clock', p.stderr)
        # and into a file the shell opened for appending: appended, not replaced
        out = os.path.join(self.t, 'log.json')
        with open(out, 'wb') as f:
            f.write(b'head\n')
        with open(out, 'ab') as f:
            p = subprocess.run([HTA, 'merge', self.d, '-o', '/proc/self/fd/1', '--quiet'], stdout=f,
                               stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, 'rb') as f:
            self.assertEqual(f.read(), b'head\n' + self.merged)

    def test_link_to_a_file_replaces_the_file(self):
        real = os.path.join(self.t, 'real.json')
        with open(real, 'w') as f:
            f.write('old')
        link = os.path.join(self.t, 'link.json')
        os.symlink('real.json', link)
        p = hta('merge', self.d, '-o', link, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.readlink(link), 'real.json')
        with open(real, 'rb') as f:
            self.assertEqual(f.read(), self.merged)
        self.assertEqual(sorted(os.listdir(self.t)), ['link.json', 'real.json'])

    def test_folder_and_socket_refused(self):
        s = socket.socket(socket.AF_UNIX)
        self.addCleanup(s.close)
        sock = os.path.join(self.t, 'sock')
        s.bind(sock)
        for out, what in ((self.t, 'is a folder'), (sock, 'a socket')):
            p = hta('merge', self.d, '-o', out, '--quiet')
            self.assertEqual(p.returncode, 1)
            self.assertIn('%s: %s' % (out, what), p.stderr)
        self.assertTrue(stat.S_ISSOCK(os.lstat(sock).st_mode))


class OutputIsInput(Base):
    """Refused before any work: exit 1, both paths named, nothing written or changed."""

    def refused(self, args, out, inp, say='refusing to write over it'):
        before = self.snapshot()
        t0 = time.monotonic()
        p = hta(*args)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(out, p.stderr)
        self.assertIn(inp, p.stderr)
        self.assertIn(say, p.stderr)
        self.assertNotIn('note:', p.stderr)  # nothing was loaded or written
        self.assertEqual(self.snapshot(), before)
        self.assertLess(time.monotonic() - t0, 5)

    def test_merge_into_a_rank_file(self):
        r0 = os.path.join(self.d, 'rank-0.json')
        self.refused(['merge', self.d, '-o', r0], r0, self.d, 'is one of the input files of the folder')
        self.refused(['merge', r0, '-o', r0], r0, r0)

    def test_merge_into_the_input_folder(self):
        """A new file there would be read as one more rank the next time the folder is loaded."""
        for name in ('merged.json', 'merged.json.gz'):
            out = os.path.join(self.d, name)
            self.refused(['merge', self.d, '-o', out], out, self.d, 'would read it as one more rank')
            self.assertFalse(os.path.exists(out))
        # through a link from elsewhere into the folder: the same
        link = os.path.join(self.t, 'via.json')
        os.symlink(os.path.join(self.d, 'new.json'), link)
        self.refused(['merge', self.d, '-o', link], link, self.d, 'would read it as one more rank')
        # names the loader does not read are fine there
        out = os.path.join(self.d, '.merged.json')
        self.addCleanup(lambda: os.path.exists(out) and os.unlink(out))
        p = hta('merge', self.d, '-o', out, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        os.unlink(out)

    def test_what_if_trace_and_save_over_the_input(self):
        r0 = os.path.join(self.d, 'rank-0.json')
        self.refused(['critical-path', r0, '--what-if', 'cpu=x0.5', '--what-if-trace', r0], r0, r0)
        self.refused(['critical-path', r0, '--save', r0], r0, r0)
        self.refused(['critical-path', self.d, '--ranks', '0', '--save', r0], r0, self.d)
        # a link to the input is the input
        link = os.path.join(self.t, 'link.json')
        os.symlink(r0, link)
        self.refused(['critical-path', r0, '--save', link], link, r0)
        g = os.path.join(self.t, 'g.cpg')
        with open(g, 'wb') as f:
            f.write(self.graph)
        p = hta('critical-path', '--graph', g, '--save', g)
        self.assertEqual(p.returncode, 1)
        self.assertIn('%s is the input %s' % (g, g), p.stderr)

    def test_augment_into_the_input_folder(self):
        self.refused(['counters', self.d, '--augment', self.d], self.d, self.d,
                     'would be read as more ranks')

    def test_next_to_a_single_input(self):
        """Only a folder input reserves its folder, and a rank file that names its rank the derived traces'
        names beside it: a what-if trace beside the one file it came from is written when that file has no
        distributedInfo.rank (the folder then loads, the two files ranked by file order), refused when it
        has one (the folder would hold two files of that rank; tests/robust/test_residuals.py)."""
        with open(os.path.join(self.d, 'rank-0.json')) as f:
            doc = json.load(f)
        self.assertIn('rank', doc.get('distributedInfo', {}))
        doc.pop('distributedInfo')
        src = os.path.join(self.t, 'in.json')
        with open(src, 'w') as o:
            json.dump(doc, o)
        sim = os.path.join(self.t, 'sim.json')
        p = hta('critical-path', src, '--what-if', 'cpu=x0.5', '--what-if-trace', sim, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(sim) as f:
            self.assertEqual(len(json.load(f)['traceEvents']), 4568)
        os.unlink(sim)


class TempFiles(Base):
    def test_planted_link_at_the_old_names(self):
        """--save G used to write G.tmp with fopen, following a link planted there; merge wrote
        OUT.tmp<pid>.  The links and their target stay untouched."""
        victim = os.path.join(self.t, 'victim')
        with open(victim, 'w') as f:
            f.write('precious')
        g = os.path.join(self.t, 'g.cpg')
        m = os.path.join(self.t, 'm.json')
        planted = [g + '.tmp', m + '.tmp'] + ['%s.tmp%d' % (m, os.getpid() + k) for k in range(1, 50)]
        for p in planted:
            os.symlink(victim, p)
        p = hta('critical-path', self.d, '--ranks', '0', '--save', g, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        p = hta('merge', self.d, '-o', m, '--quiet')
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), 'precious')
        for p in planted:
            self.assertEqual(os.readlink(p), victim)
        with open(g, 'rb') as f:
            self.assertEqual(f.read(), self.graph)
        with open(m, 'rb') as f:
            self.assertEqual(f.read(), self.merged)
        self.assertEqual(sorted(set(os.listdir(self.t)) - {os.path.basename(p) for p in planted}),
                         ['g.cpg', 'm.json', 'victim'])

    def test_mode_follows_the_umask(self):
        """0666 & ~umask, as a file the shell creates (mkstemp's would be 0600)."""
        for umask, want in ((0o027, 0o640), (0o002, 0o664)):
            out = os.path.join(self.t, 'm%o.json' % umask)
            p = subprocess.run([HTA, 'merge', self.d, '-o', out, '--quiet'], capture_output=True,
                               preexec_fn=lambda u=umask: os.umask(u))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), want)

class BigTrace(unittest.TestCase):
    """Outputs that take a while to write (2 ranks x 8 MB): writers that overlap, signals that come
    while the output is written."""

    @classmethod
    def setUpClass(cls):
        cls.base = tempfile.mkdtemp(prefix='hta-robust-big-')
        references(cls, target_mb=8)  # the gzip merge takes a good fraction of a second

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, True)

    def test_concurrent_writers(self):
        """Several --save (and merges) of one file at once: each has its own temporary file and the
        last rename wins, so the file is always one whole, valid result.  (Before, --save wrote G.tmp:
        writers truncated each other's bytes, and all but the first rename failed.)"""
        t = tmpdir(self, 'hta-robust-conc-')
        g = os.path.join(t, 'g.cpg')
        m = os.path.join(t, 'm.json')
        for _ in range(3):
            procs = [subprocess.Popen([HTA, 'critical-path', self.d, '--ranks', '0', '--save', g, '--quiet'],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(4)]
            procs += [subprocess.Popen([HTA, 'merge', self.d, '-o', m, '--quiet'],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(3)]
            for p in procs:
                self.assertEqual(p.wait(), 0, p.stderr.read())
            with open(g, 'rb') as f:
                self.assertEqual(f.read(), self.graph)
            with open(m, 'rb') as f:
                self.assertEqual(f.read(), self.merged)
            self.assertEqual(hta('critical-path', '--graph', g, '--format', 'json', '--quiet').stdout,
                             self.graph_tables)
            self.assertEqual(sorted(os.listdir(t)), ['g.cpg', 'm.json'])

    def interrupt(self, sig, args, name):
        """SIGTERM or SIGINT while the output is written: the handler removes the temporary file, then
        the signal ends hta as it would have (status -SIG).  Runs hta until its temporary file appears
        in the output folder, stops it there (SIGSTOP), checks the file, and sends sig.  Returns the
        temporary file's name."""
        out = tmpdir(self, 'hta-robust-sig-out-')
        for _ in range(5):
            # the signal's default disposition in hta, whatever ours is (a background shell job, as `make test
            # &` runs it, ignores SIGINT, which hta then keeps ignoring, as nohup wants)
            p = subprocess.Popen([HTA] + args(os.path.join(out, name)), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))
            seen = []
            while p.poll() is None and not seen:
                seen = os.listdir(out)
            if seen and p.poll() is None:
                os.kill(p.pid, signal.SIGSTOP)
                break
            p.wait()
            for n in os.listdir(out):
                os.unlink(os.path.join(out, n))
        else:
            self.fail('the temporary file was never seen while hta ran')
        seen = os.listdir(out)
        self.assertEqual(len(seen), 1, seen)
        self.assertRegex(seen[0], r'^\.%s\.tmp-[0-9A-Za-z]{10}$' % name.replace('.', r'\.'))
        os.kill(p.pid, sig)
        os.kill(p.pid, signal.SIGCONT)
        self.assertEqual(p.wait(60), -sig, p.stderr.read())
        self.assertEqual(os.listdir(out), [])
        return seen[0]

    def test_sigterm_merge(self):
        a = self.interrupt(signal.SIGTERM, lambda o: ['merge', self.d, '-o', o, '--quiet'], 'm.json.gz')
        b = self.interrupt(signal.SIGTERM, lambda o: ['merge', self.d, '-o', o, '--quiet'], 'm.json.gz')
        self.assertNotEqual(a, b)  # unpredictable names

    def test_sigint_augment(self):
        self.interrupt(signal.SIGINT, lambda o: ['counters', self.d, '--ranks', '0', '--augment',
                                                 os.path.dirname(o), '--quiet'], 'rank-0_with_counters.json')


class Errors(Base):
    """What really happened, with the output's path; no file or temporary file left."""

    def check_failed(self, p, out, cause):
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('%s: write error: %s' % (out, cause), p.stderr)
        self.assertNotIn('stopped by', p.stderr)
        self.assertNotIn('.tmp', p.stderr)  # the output is named, not the temporary file

    def test_file_too_large(self):
        """ulimit -f: EFBIG (SIGXFSZ is ignored so that the error is reported)."""
        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
        cases = [(['merge', self.d, '-o'], 'm.json'), (['merge', self.d, '-o'], 'm.json.gz'),
                 (['critical-path', self.d, '--ranks', '0', '--save'], 'g.cpg'),
                 (['critical-path', self.d, '--ranks', '0', '--what-if', 'cpu=x0.5', '--what-if-trace'],
                  'sim.json')]
        for args, name in cases:
            out = os.path.join(self.t, name)
            p = subprocess.run([HTA] + args + [out, '--quiet'], capture_output=True, text=True, preexec_fn=limit)
            self.check_failed(p, out, 'File too large')
        p = subprocess.run([HTA, 'counters', self.d, '--augment', self.t, '--quiet'], capture_output=True,
                           text=True, preexec_fn=limit)
        self.check_failed(p, os.path.join(self.t, 'rank-0_with_counters.json'), 'File too large')
        self.assertEqual(os.listdir(self.t), [])

    def test_broken_pipe(self):
        """A FIFO whose reader goes away: EPIPE, named (SIGPIPE is ignored)."""
        fifo = os.path.join(self.t, 'out.fifo')
        os.mkfifo(fifo)

        def reader():
            with open(fifo, 'rb') as f:
                f.read(10)
        th = threading.Thread(target=reader, daemon=True)
        th.start()
        p = hta('merge', self.d, '-o', fifo, '--quiet')
        th.join(60)
        self.check_failed(p, fifo, 'Broken pipe')

    def test_no_space_left(self):
        """A full file system: a 64 KiB tmpfs mounted in a user and mount namespace of its own
        (unshare -rm, no root needed), or, where namespaces are not allowed, a full device made as
        root."""
        script = ('mount -t tmpfs -o size=64k none "$1" || exit 99; shift; "$@"; rc=$?; '
                  'echo "left: $(ls -A "$OUT")" >&2; exit $rc')
        mnt = os.path.join(self.t, 'mnt')
        os.mkdir(mnt)
        probe = subprocess.run(['unshare', '-rm', 'sh', '-c', script, 'sh', mnt, 'true'],
                               capture_output=True, env=dict(os.environ, OUT=mnt))
        if probe.returncode == 0:
            cases = [(['merge', self.d, '-o'], 'm.json'), (['merge', self.d, '-o'], 'm.json.gz'),
                     (['critical-path', self.d, '--ranks', '0', '--save'], 'g.cpg')]
            for args, name in cases:
                out = os.path.join(mnt, name)
                p = subprocess.run(['unshare', '-rm', 'sh', '-c', script, 'sh', mnt, HTA] + args + [out, '--quiet'],
                                   capture_output=True, text=True, env=dict(os.environ, OUT=mnt))
                self.check_failed(p, out, 'No space left on device')
                # what the full file system holds after hta: nothing
                self.assertEqual(p.stderr.splitlines()[-1], 'left: ')
        elif os.geteuid() == 0:
            full = os.path.join(self.t, 'full')
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            p = hta('merge', self.d, '-o', full, '--quiet')
            self.check_failed(p, full, 'No space left on device')
        else:
            self.skipTest('no user namespaces and not root: no full file system can be made here')

    def test_read_only_folder(self):
        """EACCES: the folder cannot take the temporary file.  As root hta runs as nobody."""
        exe, drop = nobody_setup(self.t)
        ro = os.path.join(self.t, 'ro')
        os.mkdir(ro)
        os.chmod(ro, 0o555)
        out = os.path.join(ro, 'm.json')
        p = subprocess.run([exe, 'merge', self.d, '-o', out, '--quiet'], capture_output=True, text=True,
                           preexec_fn=drop)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn('%s: cannot create a file in %s: Permission denied' % (out, ro), p.stderr)
        self.assertEqual(os.listdir(ro), [])


if __name__ == '__main__':
    unittest.main()
