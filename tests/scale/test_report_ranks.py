"""`hta report` rank by rank (docs/scaling.md, "report"): each rank's context gives its part (the analyses'
rows, the cross-rank summaries, the critical path's summary, a profile of steps, collectives and series),
the report is reduced from the parts, and its savings read the files once more one rank's graph at a
time.  It prints, and --html writes, byte for byte what the whole load gives (HTA_PER_RANK=0 forces it),
for 1, 2 and 3 threads, in every format, with few ranks (findings per rank) and many (findings for all);
a bad rank file is named, exits 1 and leaves no page; peak memory does not grow with the ranks.

Run: HTA=build/hta python3 -m unittest tests/scale/test_report_ranks.py
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402
from testlib import HTA, ROOT  # noqa: E402
PEAK_RSS = testlib.PEAK_RSS
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduced  # noqa: E402


def tables(out):
    """csv output -> {name: rows as dicts}"""
    res = {}
    for block in out.strip().split('\n\n'):
        head, body = block.split('\n', 1)
        res[head[2:]] = list(csv.DictReader(io.StringIO(body)))
    return res


class Report(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.g5 = testlib.gen(os.path.join(tmp, 'g5'), '--ranks', '5', '--straggler', '3', '--steps', '4')
        # more ranks than the report names one by one (RANKS_IN_FULL): its findings speak for all
        cls.g10 = testlib.gen(os.path.join(tmp, 'g10'), '--ranks', '10', '--straggler', '7', '--steps', '3',
                              '--gap-prob', '0.3')

    def run_report(self, args, whole=False, threads=None):
        """(status, stdout, stderr, the page's bytes or None); the page's name is the same in every run"""
        env = dict(os.environ, HTA_PER_RANK='0' if whole else '1')
        page = os.path.join(self.tmp, 'page.html')
        if os.path.exists(page):
            os.unlink(page)
        extra = ['--threads', str(threads)] if threads else []
        p = subprocess.run([HTA, 'report'] + args + ['--html', page] + extra, capture_output=True, text=True,
                           env=env)
        data = None
        if os.path.exists(page):
            with open(page, 'rb') as f:
                data = f.read()
        return p.returncode, p.stdout, p.stderr, data

    def check(self, path, extra=(), fmts=('table', 'csv', 'json')):
        for fmt in fmts:
            args = [path, '--format', fmt] + list(extra)
            w = self.run_report(args, whole=True)
            for th in (1, 2, 3):
                self.assertEqual(w, self.run_report(args, threads=th), (args, th))
        return w

    def test_few_ranks(self):
        rc, out, errt, page = self.check(self.g5)
        self.assertEqual(rc, 0, errt)
        self.assertIn(b'<svg', page)
        t = tables(self.run_report([self.g5, '--format', 'csv'])[1])
        # the straggler: the first cause, from the cross-rank lateness and the job engine's savings
        self.assertEqual((t['findings'][0]['cause'], t['findings'][0]['ranks']), ('straggler', '3'))
        obs = [(o['rank'], o['area']) for o in t['observations']]
        self.assertIn(('3', 'straggler'), obs)  # from the stragglers' summaries
        self.assertEqual([o['rank'] for o in t['observations'] if o['area'] == 'critical path'],
                         ['0', '1', '2', '3', '4'])  # each rank's own path
        self.assertEqual([r['rank'] for r in t['ranks']], ['0', '1', '2', '3', '4'])
        self.assertEqual(t['headline'][0]['ranks'], '5')

    def test_many_ranks(self):
        rc, out, errt, page = self.check(self.g10, fmts=('csv',))
        self.assertEqual(rc, 0, errt)
        t = tables(out)
        self.assertEqual([int(r['rank']) for r in t['ranks']], list(range(10)))
        self.assertEqual({r['rank'] for r in t['critical_path']}, {str(k) for k in range(10)})
        cp = [o for o in t['observations'] if o['area'] == 'critical path']
        self.assertEqual(len(cp), 1)  # one for all ranks
        self.assertIn('largest share of the critical path', cp[0]['finding'])

    def test_options(self):
        self.check(self.g10, ['--no-critical-path', '--top', '3'], fmts=('csv',))
        self.check(self.g10, ['--ranks', '1,3-4,7'], fmts=('csv',))
        self.check(self.g5, ['--window', '10ms:200ms'], fmts=('table',))

    def test_hta_traces(self):
        # CPU-only ranks get the CPU side (cpu_* tables, their critical-path finding); a rank without GPU
        for name in ('cpu_only', 'rank_non_gpu', 'trace_filter', 'mixed_files'):
            rc, out, errt, page = self.check(os.path.join(ROOT, 'tests', 'data', 'hta', name), fmts=('csv',))
            self.assertEqual(rc, 0, (name, errt))

    def test_bad_rank_named_no_page(self):
        d = reduced.cut_copy(self.g5, os.path.join(self.tmp, 'bad'), 'rank-2.json')
        rc, out, errt, page = self.check(d, fmts=('table',))
        self.assertEqual((rc, out, page), (1, '', None))
        self.assertIn('rank-2.json: byte', errt)
        self.assertEqual([n for n in os.listdir(self.tmp) if n.startswith('.')], [])  # no temp file


UNDER_ASAN = testlib.under_asan()


@unittest.skipUnless(os.path.exists(PEAK_RSS), 'build/peak_rss not built (make builds it)')
class Memory(unittest.TestCase):
    """Peak memory follows the largest rank, not the number of ranks: from 2 to 24 ranks on one thread it
    grows by the parts and the savings' labels (about 200 KB a rank here, whatever the rank's size),
    a fraction of what the whole load grows by (every rank's model and views, about 0.75 MB a rank of
    2 MB)."""

    def test_flat(self):
        tmp = tempfile.mkdtemp()
        try:
            src = testlib.gen(os.path.join(tmp, 'r24'), '--ranks', '24', '--target-mb', '1', '--straggler', '5')
            args = ['report', src, '--threads', '1']
            grow = testlib.peak_kb(args) - testlib.peak_kb(args + ['--ranks', '0-1'])
            grow_whole = testlib.peak_kb(args, True) - testlib.peak_kb(args + ['--ranks', '0-1'], True)
            # measured: 4.4-4.7 MB against 16.9-17.3 MB (2 MB ranks; with 1 MB ranks 3.8-4.1 against 11.9-12.1,
            # too near a third to hold on every run: the two-rank baseline alone varies by 250 KB).  ASan pads
            # every small allocation (the parts, the labels) and keeps the models' pages it has touched,
            # which narrows the gap it measures (4.2 MB against 9.0 MB on one run of 1 MB ranks)
            self.assertLess(grow, grow_whole / (1.5 if UNDER_ASAN else 2), (grow, grow_whole))
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    unittest.main()
