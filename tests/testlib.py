"""Pieces that the tests of several folders share.  tests/run.py puts tests/ on the path; a test file run
alone puts it there itself."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, 'tools', 'gen_kineto_trace.py')
HTA = os.path.abspath(os.environ.get('HTA', os.path.join(ROOT, 'build', 'hta')))


class TempDirTest(unittest.TestCase):
    """A test with a scratch folder of its own, self.dir, removed after it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()


class ClassTempDir(unittest.TestCase):
    """Tests sharing inputs made once for the class: a scratch folder, cls.tmp, that the class's inputs(tmp)
    fills (a generated job: gen), removed after the class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.inputs(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def inputs(cls, tmp):
        pass


def gen(out, *args, target_mb='0.3'):
    """A job generated into folder out by tools/gen_kineto_trace.py with args (target_mb MB a rank unless they
    say --target-mb; None: the generator's own size); returns out."""
    if '--target-mb' not in args and target_mb is not None:
        args = ('--target-mb', target_mb) + args
    subprocess.run([sys.executable, GEN, '--out', out, '--quiet', *args], check=True)
    return out


def run_hta(args, whole=False, threads=None):
    """hta with args rank by rank (HTA_PER_RANK=1; --threads threads where given), or on the whole load
    (whole): (exit status, stdout, stderr)."""
    env = dict(os.environ)
    env['HTA_PER_RANK'] = '0' if whole else '1'
    extra = ['--threads', str(threads)] if threads else []
    p = subprocess.run([HTA] + args + extra, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def hta(*args, ok=True):
    """hta with args (numbers given as they are written): its completed run, text; with ok (the default) a
    non-zero exit fails the test, with hta's stderr."""
    args = [str(a) for a in args]
    p = subprocess.run([HTA, *args], capture_output=True, text=True)
    if ok and p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


def tables(*args):
    """`hta ARGS --format json --quiet`, which must succeed: its tables by name."""
    return json.loads(hta(*args, '--format', 'json', '--quiet').stdout)


PEAK_RSS = os.path.join(os.path.dirname(HTA), 'peak_rss')


def under_asan():
    """Whether the hta under test is built with AddressSanitizer (make SAN=1)."""
    return os.path.exists(HTA) and b"libasan" in subprocess.run(["ldd", HTA], capture_output=True).stdout


def peak_kb(args, whole=False):
    """hta's own peak memory in KB for args, rank by rank (or the whole load), through tests/scale/peak_rss.c
    (a child of this Python would inherit its peak); hta must succeed."""
    env = dict(os.environ, HTA_PER_RANK='0' if whole else '1')
    # under SAN=1, ASan's quarantine would keep every freed rank model: measure what is alive
    env['ASAN_OPTIONS'] = (env.get('ASAN_OPTIONS', '') + ':quarantine_size_mb=0').lstrip(':')
    with tempfile.NamedTemporaryFile('r') as f:
        p = subprocess.run([PEAK_RSS, f.name, HTA] + args, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode:
            raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
        return int(f.read())


def hta_json(*args):
    """`hta ARGS --format json`, which must succeed: (its tables, its stderr)."""
    p = subprocess.run([HTA, *args, '--format', 'json'], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout), p.stderr


def rows(t):
    """A table of hta's JSON output as dicts, one a row."""
    return [dict(zip(t['columns'], r)) for r in t['data']]


def fig(t):
    """A two-column table of hta's JSON output (figure, value) as a dict."""
    return dict(t['data'])


def write_trace(path, events):
    """A one-rank Kineto trace file (rank 0) with these traceEvents: a test's own hand-made trace."""
    with open(path, 'w') as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": events}, f)
