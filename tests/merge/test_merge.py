"""hta merge: recovered clock offsets, every event kept and placed exactly,
pids and flow ids per rank, gzip, our own loader on the result, and files
from libhtatrace lined up through htaClockAnchor.

Run: HTA=build/hta BUILD=build python3 -m unittest tests/merge/test_merge.py
"""
import gzip
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from decimal import Decimal
from statistics import median

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HTA = os.path.abspath(os.environ.get('HTA', os.path.join(ROOT, 'build', 'hta')))
BUILD = os.environ.get('BUILD', 'build')
GEN = os.path.join(ROOT, 'tools', 'gen_kineto_trace.py')
SKEW_US = 5000
# Collective ends in the generator coincide within ~1 us (max arrival plus a
# transfer time the same on every rank); with 27 collectives per rank the
# fitted offset is good to well under a microsecond.
OFFSET_TOL_US = 2.0


def ns(v):
    """Exact ns from a Decimal/int microsecond value."""
    return int(Decimal(v) * 1000)


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return json.load(f, parse_float=Decimal)


def run_hta(*args, check=True):
    p = subprocess.run([HTA] + [str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError('hta %s failed (%d): %s' % (' '.join(map(str, args)), p.returncode, p.stderr))
    return p


def merge(src, out, *opts):
    p = run_hta('merge', src, '-o', out, '--format', 'json', '--quiet', *opts)
    t = json.loads(p.stdout)['merge_alignment']
    cols = t['columns']
    return {row[0]: dict(zip(cols, row)) for row in t['data']}


def gen(out, skew):
    args = [sys.executable, GEN, '--out', out, '--ranks', '16', '--layers', '2', '--steps', '3', '--quiet']
    if skew:
        args += ['--clock-skew-us', str(skew)]
    subprocess.run(args, check=True)


class KinetoMerge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='hta-merge-')
        cls.skew = os.path.join(cls.tmp, 'skew')
        cls.noskew = os.path.join(cls.tmp, 'noskew')
        gen(cls.skew, SKEW_US)
        gen(cls.noskew, 0)
        # The generator's clock skew only shifts a node's output timestamps:
        # the true offset of rank r is its first timestamp without skew minus
        # the one with skew (same seed, same simulation).
        cls.true_us = {}
        for r in range(16):
            a = load(os.path.join(cls.skew, 'rank-%d.json' % r))
            b = load(os.path.join(cls.noskew, 'rank-%d.json' % r))
            ea = next(e for e in a['traceEvents'] if e.get('ph') == 'X')
            eb = next(e for e in b['traceEvents'] if e.get('ph') == 'X')
            cls.true_us[r] = (ns(eb['ts']) - ns(ea['ts'])) / 1000.0
        cls.out = os.path.join(cls.tmp, 'merged.json')
        cls.table = merge(cls.skew, cls.out, '--align', 'collective')
        cls.merged = load(cls.out)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_generator_skew_is_per_node(self):
        t = self.true_us
        self.assertTrue(all(t[r] == 0 for r in range(8)))
        self.assertTrue(all(t[r] == t[8] for r in range(8, 16)))
        self.assertGreater(abs(t[8]), 100)  # uniformly in +-5000 us; seed 0 gives -3931.714 shift

    def test_collective_offsets(self):
        tb = self.table
        self.assertEqual(sorted(tb), list(range(16)))
        for r in range(16):
            row = tb[r]
            self.assertEqual(row['anchors'], 27, r)
            self.assertAlmostEqual(row['offset_us'], self.true_us[r], delta=OFFSET_TOL_US, msg='rank %d' % r)
            self.assertLess(row['rms_us'], 2.0)
            self.assertLess(row['max_us'], 5.0)
            self.assertEqual(row['drift_ppm'], 0)
        self.assertEqual(tb[0]['method'], 'reference')
        self.assertEqual(tb[0]['offset_us'], 0)
        node1 = [tb[r]['offset_us'] for r in range(8, 16)]
        self.assertLess(max(node1) - min(node1), OFFSET_TOL_US)
        for r in range(8):
            self.assertLess(abs(tb[r]['offset_us']), OFFSET_TOL_US)

    def test_offsets_differ_by_exactly_the_skew(self):
        # Same simulation without skew: every anchor moves by the skew, so the
        # fitted offsets must move by exactly that much (to the printed ns).
        for method in (('--align', 'collective'), ('--align', 'barrier')):
            a = merge(self.skew, os.path.join(self.tmp, 'a.json'), *method)
            b = merge(self.noskew, os.path.join(self.tmp, 'b.json'), *method)
            for r in range(16):
                self.assertAlmostEqual(a[r]['offset_us'] - b[r]['offset_us'], self.true_us[r], delta=0.0015,
                                       msg='%s rank %d' % (method, r))
                self.assertEqual(a[r]['anchors'], b[r]['anchors'])
            self.assertEqual(a[5]['anchors'], 3 if method[1] == 'barrier' else 27)

    def test_every_event_kept_and_placed_exactly(self):
        m = self.merged
        info = {x['rank']: x for x in m['htaMerge']['ranks']}
        origin = m['htaMerge']['origin_ns']
        self.assertEqual(m['baseTimeNanoseconds'], origin)
        stride = m['htaMerge']['id_stride']
        self.assertEqual(stride, 100)
        by_rank = {}
        for e in m['traceEvents']:
            by_rank.setdefault(e['pid'] // 1000, []).append(e)
        self.assertEqual(sorted(by_rank), list(range(16)))
        total = 0
        for r in range(16):
            orig = load(os.path.join(self.skew, 'rank-%d.json' % r))['traceEvents']
            got = by_rank[r]
            total += len(orig)
            shift = info[r]['base_ns'] + round(info[r]['offset_ns']) - origin
            self.assertEqual(info[r]['drift'], 0)
            pidmap = {}
            for o, g in zip(orig, got):
                self.assertEqual(set(o), set(g))
                for k in o:
                    if k == 'ts':
                        self.assertEqual(ns(g['ts']), ns(o['ts']) + shift)
                        self.assertRegex(str(g['ts']), r'^-?\d+\.\d{3}$')
                    elif k == 'pid':
                        self.assertEqual(pidmap.setdefault(json.dumps(o['pid']), g['pid']), g['pid'])
                    elif k == 'id':
                        self.assertEqual(g['id'], o['id'] * stride + r)
                    elif k == 'args' and o.get('ph') == 'M' and o['name'] in ('process_name', 'process_sort_index'):
                        if o['name'] == 'process_name':
                            self.assertTrue(g['args']['name'].startswith('rank %d' % r))
                            self.assertTrue(g['args']['name'].endswith(o['args']['name']))
                        else:
                            self.assertEqual(g['args']['sort_index'], g['pid'])
                    else:
                        self.assertEqual(o[k], g[k], k)
            # distinct original pids -> distinct merged pids, all in this rank's block
            self.assertEqual(len(set(pidmap.values())), len(pidmap))
            self.assertTrue(all(r * 1000 <= p < r * 1000 + 1000 for p in pidmap.values()))
            # what is added after the rank's events: names/sort for pids that had none
            extra = got[len(orig):]
            for e in extra:
                self.assertEqual(e['ph'], 'M')
                self.assertIn(e['name'], ('process_name', 'process_sort_index'))
            named = {e['pid'] for e in got if e.get('ph') == 'M' and e['name'] == 'process_name'}
            self.assertEqual(named, set(pidmap.values()))
        added = len(m['traceEvents']) - total
        self.assertGreater(added, 0)
        # flow ids unique per rank: no id shared by two ranks
        owner = {}
        for e in m['traceEvents']:
            if 'id' in e:
                self.assertEqual(owner.setdefault((e.get('cat'), e['id']), e['pid'] // 1000), e['pid'] // 1000)

    def test_our_loader_reads_the_result(self):
        """The merged file loads back as its ranks (docs/loading.md, "Merged traces"): each with the rows,
        threads and devices it has in its own file; events counts the merged file's traceEvents."""
        def info(path):
            t = json.loads(run_hta('info', path, '--format', 'json', '--quiet').stdout)['ranks']
            return [dict(zip(t['columns'], r)) for r in t['data']]
        got, direct = info(self.out), info(self.skew)
        self.assertEqual([r['rank'] for r in got], list(range(16)))
        for g, d in zip(got, direct):
            self.assertEqual(g['rank_source'], 'htaMerge')
            self.assertEqual(g['events'], len(self.merged['traceEvents']))
            for k in ('rows', 'flows', 'threads', 'gpu_streams', 'devices', 'profiler_steps'):
                self.assertEqual(g[k], d[k], (g['rank'], k))

    def test_align_none_keeps_the_clocks(self):
        out = os.path.join(self.tmp, 'none.json')
        tb = merge(self.skew, out, '--align', 'none')
        self.assertTrue(all(tb[r]['offset_us'] == 0 and tb[r]['method'] == 'none' for r in range(16)))
        m = load(out)
        origin = m['htaMerge']['origin_ns']
        base = m['htaMerge']['ranks'][0]['base_ns']
        first = {}
        for e in m['traceEvents']:
            if e.get('ph') == 'X':
                first.setdefault(e['pid'] // 1000, e)
        for r in (0, 8):
            o = next(e for e in load(os.path.join(self.skew, 'rank-%d.json' % r))['traceEvents'] if e.get('ph') == 'X')
            self.assertEqual(ns(first[r]['ts']), ns(o['ts']) + base - origin)
        # viewable: small positive ts from a whole-ms origin
        self.assertEqual(origin % 1000000, 0)
        self.assertTrue(all(Decimal(e['ts']) >= 0 for e in m['traceEvents'] if 'ts' in e))

    def test_gzip_output_is_the_same(self):
        out = os.path.join(self.tmp, 'merged.json.gz')
        merge(self.skew, out, '--align', 'collective')
        with gzip.open(out, 'rb') as f, open(self.out, 'rb') as g:
            self.assertEqual(f.read(), g.read())
        self.assertFalse([x for x in os.listdir(self.tmp) if '.tmp' in x])

    def test_bad_usage(self):
        self.assertEqual(run_hta('merge', self.skew, check=False).returncode, 2)
        self.assertEqual(run_hta('merge', self.skew, '-o', '/tmp/x.json', '--align', 'magic', check=False).returncode, 2)
        p = run_hta('merge', os.path.join(self.tmp, 'nothing-here'), '-o', os.path.join(self.tmp, 'x.json'), check=False)
        self.assertEqual(p.returncode, 1)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, 'x.json')))


# ---- libhtatrace files ----

D_NS = 250_000_000  # rank 1's wall clock claims to be this much ahead
STEPS = 6
# Two processes leaving a multiprocessing barrier wake within ~0.1 ms on an
# idle machine, but a busy 2-vCPU VM (or ASan) delays single wake-ups by
# several ms: tolerances are 10 ms against a 250 ms offset.
JITTER_NS = 10_000_000


def _worker(rank, out_dir, barrier, lib):
    os.environ['HTATRACE_LIB'] = lib
    os.environ['HTA_TRACE_GPU'] = '0'
    sys.path.insert(0, os.path.join(ROOT, 'python'))
    import htatrace as tr
    tr.init(rank=rank, world_size=2, file_pattern=os.path.join(out_dir, 'rank-{rank}.json'))
    rnd = random.Random(rank)
    for k in range(STEPS):
        with tr.scope('ProfilerStep#%d' % k):
            with tr.scope('compute', layer=k):
                x = 0
                for i in range(rnd.randrange(2000, 20000)):
                    x += i
            # a collective: everyone leaves when the last one arrives
            with tr.scope('allreduce', collective=1):
                barrier.wait()
    tr.flush()


class TracerMerge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='hta-merge-tr-')
        cls.src = os.path.join(cls.tmp, 'ranks')
        os.mkdir(cls.src)
        lib = os.path.join(ROOT, BUILD, 'libhtatrace.so')
        ctx = multiprocessing.get_context('spawn')
        barrier = ctx.Barrier(2)
        ps = [ctx.Process(target=_worker, args=(r, cls.src, barrier, lib)) for r in range(2)]
        for p in ps:
            p.start()
        for p in ps:
            p.join(60)
            assert p.exitcode == 0
        # Rank 1 "ran on a host whose wall clock is D ahead": same monotonic
        # timestamps, anchor's unix time moved by D.
        p1 = os.path.join(cls.src, 'rank-1.json')
        d = load(p1)
        d['htaClockAnchor']['unix_ns'] += D_NS
        with open(p1, 'w') as f:
            f.write(dump_exact(d))
        cls.orig = {r: load(os.path.join(cls.src, 'rank-%d.json' % r)) for r in range(2)}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ends(self, m, name):
        out = {0: [], 1: []}
        for e in m['traceEvents']:
            if e.get('name') == name and e.get('ph') == 'X':
                out[e['pid'] // 1000].append(ns(e['ts']) + ns(e['dur']))
        self.assertEqual(len(out[0]), STEPS)
        self.assertEqual(len(out[1]), STEPS)
        return out

    def test_none_uses_the_anchor(self):
        out = os.path.join(self.tmp, 'none.json')
        tb = merge(self.src, out, '--align', 'none')
        self.assertEqual(tb[0]['clock'], 'htaClockAnchor')
        self.assertEqual(tb[1]['clock'], 'htaClockAnchor')
        m = load(out)
        # rank 0 on unix time, exactly: base + ts == ts - monotonic + unix
        a = self.orig[0]['htaClockAnchor']
        e0 = next(e for e in self.orig[0]['traceEvents'] if e.get('ph') == 'X')
        g0 = next(e for e in m['traceEvents'] if e.get('ph') == 'X' and e['pid'] // 1000 == 0)
        self.assertEqual(g0['name'], e0['name'])
        self.assertEqual(m['baseTimeNanoseconds'] + ns(g0['ts']), ns(e0['ts']) - a['monotonic_ns'] + a['unix_ns'])
        # rank 1's events appear D late
        en = self.ends(m, 'allreduce')
        self.assertAlmostEqual(median(a1 - a0 for a0, a1 in zip(en[0], en[1])), D_NS, delta=JITTER_NS)

    def test_collective_scopes_recover_the_offset(self):
        out = os.path.join(self.tmp, 'coll.json')
        tb = merge(self.src, out, '--align', 'collective', '--drift', 'off')
        self.assertEqual(tb[1]['anchors'] + tb[1]['outliers'], STEPS)
        self.assertAlmostEqual(tb[1]['offset_us'], -D_NS / 1000, delta=JITTER_NS / 1000)
        self.assertLess(tb[1]['rms_us'], JITTER_NS / 1000)
        en = self.ends(load(out), 'allreduce')
        self.assertAlmostEqual(median(a1 - a0 for a0, a1 in zip(en[0], en[1])), 0, delta=JITTER_NS)

    def test_barrier_by_name(self):
        out = os.path.join(self.tmp, 'bar.json')
        tb = merge(self.src, out, '--align', 'barrier', '--barrier', 'allreduce', '--barrier-edge', 'end')
        self.assertEqual(tb[1]['anchors'], STEPS)
        self.assertAlmostEqual(tb[1]['offset_us'], -D_NS / 1000, delta=JITTER_NS / 1000)
        # default markers: the ProfilerStep#N scopes (their begins differ by the work before)
        tb = merge(self.src, out, '--align', 'barrier')
        self.assertEqual(tb[1]['anchors'], STEPS)
        self.assertAlmostEqual(tb[1]['offset_us'], -D_NS / 1000, delta=50000)

    def test_every_tracer_event_kept(self):
        out = os.path.join(self.tmp, 'all.json')
        merge(self.src, out)
        m = load(out)
        n = sum(len(self.orig[r]['traceEvents']) for r in range(2))
        names = [e for e in m['traceEvents'] if e.get('name') == 'process_name']
        self.assertEqual(sorted(e['args']['name'] for e in names), ['rank 0', 'rank 1'])
        self.assertEqual(len(m['traceEvents']), n)  # the tracer names and sorts its process itself
        p = run_hta('info', out, '--format', 'json', '--quiet')
        ranks = json.loads(p.stdout)['ranks']
        row = dict(zip(ranks['columns'], ranks['data'][0]))
        self.assertEqual(row['events'], n)


def dump_exact(d):
    """JSON text with Decimals written as the numbers they are."""
    def conv(o):
        if isinstance(o, dict):
            return {k: conv(v) for k, v in o.items()}
        if isinstance(o, list):
            return [conv(v) for v in o]
        if isinstance(o, Decimal):
            return _Raw(str(o))
        return o

    return _encode(conv(d))


class _Raw(str):
    pass


def _encode(o):
    if isinstance(o, _Raw):
        return str(o)
    if isinstance(o, dict):
        return '{' + ','.join(json.dumps(k) + ':' + _encode(v) for k, v in o.items()) + '}'
    if isinstance(o, list):
        return '[' + ','.join(_encode(v) for v in o) + ']'
    return json.dumps(o)


if __name__ == '__main__':
    unittest.main()
