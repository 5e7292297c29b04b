"""Inputs of the reduced commands' tests (tests/scale/test_reduce.py, tests/mpi/test_mpi.py): small generated
jobs, one with a rank that has no GPU work and one where no rank has any (the notes about the whole run),
and ranks made from HTA's CUPTI trace with different counters (the counter columns of every rank)."""
import copy
import gzip
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, 'tools', 'gen_kineto_trace.py')
CUPTI = os.path.join(ROOT, 'tests', 'data', 'hta', 'cupti_profiler',
                     'benchmark_result_924719_1679055439_trace.json.gz')

# what a rank without GPU work lacks: the device rows, the runtime calls that launch them and their links
GPU_CATS = {'kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_user_annotation', 'cuda_runtime', 'cuda_driver', 'ac2g',
            'cuda_sync'}

# (command and its options); the path goes after the command name
CMDS = [
    ['kernels'], ['kernels', '--top', '2', '--no-memory'],
    ['launch'], ['launch', '--no-memory', '--runtime-cutoff', '5'],
    ['annotations'], ['annotations', '--cpu', '--top', '2'],
    ['ops'], ['ops', '--sort-by', 'avg_runtime_delay,occurrence_count'],
    ['cpu-ops', '--step-top', '2'],
    ['counters'], ['counters', '--series'],
    ['cupti'],
    ['patterns', '--op', 'ProfilerStep'],
    ['efficiency'], ['efficiency', '--peak-tbps', '1.5'],
    ['comms'], ['comms', '--peak-link-gbps', '100'],
]


def cut_copy(src, dst, name, frac=2):
    """A copy of folder src at dst whose file `name` is cut to 1/frac of its length and ends in a control
    character, which no JSON may hold (a bad rank file: a cut alone would load as a truncated trace);
    returns dst."""
    shutil.copytree(src, dst)
    p = os.path.join(dst, name)
    with open(p) as f:
        s = f.read()
    with open(p, 'w') as f:
        f.write(s[:len(s) // frac] + '\x01')
    return dst


def write_rank(path, head, events):
    """A rank file with distributedInfo before traceEvents, as Kineto writes it (the plan reads the head)."""
    d = {k: v for k, v in head.items() if k != 'traceEvents'}
    d = dict([('distributedInfo', d.pop('distributedInfo', {}))] + list(d.items()))
    d['traceEvents'] = events
    with open(path, 'w') as f:
        json.dump(d, f)


def strip_gpu(path):
    with open(path) as f:
        d = json.load(f)
    write_rank(path, d, [e for e in d['traceEvents'] if e.get('cat') not in GPU_CATS])


def make_inputs(tmp):
    """Folders under tmp: gen (4 ranks), mixed (rank 2 without GPU work), cpu (no GPU work at all), cupti."""
    gen = os.path.join(tmp, 'gen')
    subprocess.run([sys.executable, GEN, '--out', gen, '--ranks', '4', '--layers', '1', '--steps', '3',
                    '--straggler', '1', '--quiet'], check=True)
    out = {'gen': gen}
    for name, ranks in (('mixed', [2]), ('cpu', [0, 1, 2, 3])):
        d = os.path.join(tmp, name)
        os.mkdir(d)
        for r in range(4):
            src, dst = os.path.join(gen, 'rank-%d.json' % r), os.path.join(d, 'rank-%d.json' % r)
            with open(src, 'rb') as f, open(dst, 'wb') as g:
                g.write(f.read())
            if r in ranks:
                strip_gpu(dst)
        out[name] = d
    # CUPTI: rank 0 as HTA's file, rank 1 with one counter renamed (a column only it has), rank 2 without
    # profiled ranges
    with gzip.open(CUPTI, 'rt') as f:
        base = json.load(f)
    d = os.path.join(tmp, 'cupti')
    os.mkdir(d)
    for r in range(3):
        head = copy.deepcopy(base)
        head['distributedInfo'] = {'rank': r, 'world_size': 3}
        evs = head['traceEvents']
        if r == 1:
            for e in evs:
                if e.get('cat') == 'cuda_profiler_range':
                    a = e['args']
                    a['rank1_only.sum'] = a.pop('smsp__sass_thread_inst_executed_op_hfma_pred_on.sum')
        if r == 2:
            evs = [e for e in evs if e.get('cat') != 'cuda_profiler_range']
        write_rank(os.path.join(d, 'rank-%d.json' % r), head, evs)
    out['cupti'] = d
    return out
