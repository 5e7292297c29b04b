"""Reduced commands (docs/scaling.md, "Reduce"): kernels, launch, annotations, ops, cpu-ops, counters, cupti,
efficiency and patterns run rank by rank, each rank's part reduced over the ranks, and print byte for byte what the whole
load prints (HTA_PER_RANK=0): tables, notes, warnings, errors, for 1, 2 and 3 threads, csv and json, with
--ranks and --window; on a job with a rank without GPU work, one without any GPU work (the notes about the
whole run), ranks with different CUPTI counters, and HTA's traces.  Peak memory follows one rank.

Run: HTA=build/hta python3 -m unittest tests/scale/test_reduce.py
"""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reduced  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

from testlib import HTA, ROOT  # noqa: E402
UNDER_ASAN = testlib.under_asan()
PEAK_RSS = testlib.PEAK_RSS


run = testlib.run_hta


class Inputs(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.dirs = reduced.make_inputs(tmp)

    def same(self, path, extra=(), threads=(1, 2, 3), fmts=('csv', 'json'), cmds=reduced.CMDS):
        for cmd in cmds:
            for fmt in fmts:
                args = cmd[:1] + [path] + cmd[1:] + ['--format', fmt] + list(extra)
                w = run(args, whole=True)
                self.assertEqual(w[0], 0, (args, w[2]))
                for th in threads:
                    self.assertEqual(w, run(args, threads=th), (args, th))


class SameAsWhole(Inputs):
    def test_generated(self):
        self.same(self.dirs['gen'])

    def test_rank_without_gpu_work(self):
        self.same(self.dirs['mixed'])
        # what the rank without GPU work gives: notes of its own, no rows
        rc, out, err = run(['kernels', self.dirs['mixed'], '--format', 'csv'])
        self.assertIn('rank 2 has no GPU kernels to break down (a CPU-only trace?)', err)
        self.assertNotIn('\n2,', out.split('all_kernels')[0])
        rc, out, err = run(['counters', self.dirs['mixed']])
        self.assertEqual(err, 'hta: note: rank 2: no kernel launches with device activity: no queue length\n')

    def test_no_gpu_work_at_all(self):
        d = self.dirs['cpu']
        self.same(d, threads=(1, 3))
        # notes about the whole run: given once, where every rank would give it
        for cmd, note in (('launch', 'no kernel launch call (CUDA, HIP or MTIA) in the trace: the table is empty'),
                          ('annotations', "no 'gpu_user_annotation' events in the trace: nothing to break down"),
                          ('counters', 'no memory copies or memsets on a GPU stream: no memory bandwidth'),
                          ('ops', 'no kernel launch (cuda*LaunchKernel*, cuLaunchKernel*, runFunction*) inside an '
                                  'aten:: op with its kernel in the trace (0 launches outside'),
                          ('cupti', 'no cuda_profiler_range events (CUPTI range profiler): nothing to attribute')):
            rc, out, err = run([cmd, d], threads=2)
            self.assertEqual(rc, 0)
            self.assertEqual(err.count('hta: note: ' + note), 1, (cmd, err))


class Selection(Inputs):
    def test_ranks_and_window(self):
        self.same(self.dirs['gen'], ['--ranks', '1,3', '--window', '20ms:150ms'], threads=(1, 3))

    def test_window_on_rank_without_gpu_work(self):
        self.same(self.dirs['mixed'], ['--ranks', '2-3', '--window', '0ms:80ms'], threads=(2,))


class Cupti(Inputs):
    def test_counter_columns_of_every_rank(self):
        self.same(self.dirs['cupti'], cmds=[['cupti'], ['kernels'], ['launch'], ['counters'], ['ops']])
        rc, out, err = run(['cupti', self.dirs['cupti'], '--format', 'csv'], threads=2)
        head, *rows = list(csv.reader(io.StringIO(out)))
        cols = head
        # the union of the ranks' keys by name; -1 where the rank's ranges lack one
        self.assertEqual(cols[cols.index('rank1_only.sum') + 1], 'smsp__sass_thread_inst_executed_op_dadd_pred_on.sum')
        k, h = cols.index('rank1_only.sum'), cols.index('smsp__sass_thread_inst_executed_op_hfma_pred_on.sum')
        by_rank = {}
        for c in rows:
            by_rank.setdefault(c[0], []).append((c[k], c[h]))
        self.assertEqual(sorted(by_rank), ['0', '1'])  # rank 2 has no ranges: no rows
        self.assertEqual({x[0] for x in by_rank['0']}, {'-1'})
        self.assertEqual({x[1] for x in by_rank['1']}, {'-1'})
        self.assertEqual([x[1] for x in by_rank['0']], [x[0] for x in by_rank['1']])
        self.assertNotIn('nothing to attribute', err)


class HtaTraces(Inputs):
    def test_trace_filter(self):
        self.same(os.path.join(ROOT, 'tests', 'data', 'hta', 'trace_filter'), threads=(1, 2))

    def test_derived_traces_written_alike(self):
        """--augment and --overlay write each rank's file rank by rank: the same files, the same rows."""
        out = os.path.join(self.tmp, 'derived')
        for args in (['counters', self.dirs['mixed'], '--augment', out],
                     ['patterns', self.dirs['mixed'], '--op', 'ProfilerStep', '--overlay', out]):
            w = run(args, whole=True)
            files = {}
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), 'rb') as f:
                    files[name] = f.read()
            shutil.rmtree(out)
            self.assertEqual(w, run(args, threads=2), args)
            self.assertEqual(sorted(os.listdir(out)), sorted(files))
            for name, data in files.items():
                with open(os.path.join(out, name), 'rb') as f:
                    self.assertEqual(f.read(), data, name)
            self.assertEqual(len(files), 4 if args[0] == 'counters' else 3)
            shutil.rmtree(out)

    def test_analysis_errors(self):
        for args in (['kernels', self.dirs['gen'], '--duration-ratio', '2'],
                     ['ops', self.dirs['gen'], '--sort-by', 'nope'],
                     ['counters', self.dirs['gen'], '--augment', self.dirs['gen']]):
            w = run(args, whole=True)
            self.assertEqual(w[:2], (1, ''))
            self.assertRegex(w[2], r'^hta (kernels|ops|counters): error: ')
            self.assertEqual(w, run(args, threads=2), args)

    def test_bad_rank_named(self):
        d = reduced.cut_copy(self.dirs['gen'], os.path.join(self.tmp, 'bad'), 'rank-2.json')
        for cmd in reduced.CMDS:
            args = cmd[:1] + [d] + cmd[1:]
            w = run(args, whole=True)
            self.assertEqual(w[:2], (1, ''))
            self.assertIn('rank-2.json: byte', w[2])
            self.assertEqual(w, run(args, threads=3), args)


class Memory(unittest.TestCase):
    """Peak memory follows the largest rank, not the number of ranks: 24 ranks on one thread need about
    what 2 ranks need; the whole load holds all 24."""

    def test_flat(self):
        tmp = tempfile.mkdtemp()
        try:
            testlib.gen(tmp, '--ranks', '24', '--target-mb', '1')
            for cmd in (['kernels'], ['counters']):
                many = testlib.peak_kb(cmd + [tmp, '--threads', '1'])
                two = testlib.peak_kb(cmd + [tmp, '--threads', '1', '--ranks', '0-1'])
                whole = testlib.peak_kb(cmd + [tmp, '--threads', '1'], whole=True)
                # the model of one 1 MB rank is about 0.35 MB: rank by rank, 22 more ranks add next to nothing;
                # the whole load holds them all: about 9 MB more, at least ten times what rank by rank adds
                # (under ASan, whose allocator keeps small models in pages it has already touched and pads
                # every allocation, 4 MB against 0.2-0.5 MB measured: there, twice)
                self.assertLess(many, two + 3000, (cmd, many, two))
                self.assertGreater(whole - two, (2 if UNDER_ASAN else 10) * max(many - two, 100),
                                   (cmd, whole, many, two))
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    unittest.main()
