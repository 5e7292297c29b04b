#!/usr/bin/env python3
"""A small trace with a known critical path (for the what-if tests).

CPU thread 1: aten::a [0,100] containing cudaLaunchKernel [10,20] -> kernel K1
[30,530] on stream 7; cudaStreamSynchronize [110,560] (Stream Sync on stream 7);
aten::b [570,620].  Times in us from 1_000_000.  HTA's critical path:
a.start -10-> launch.start -20 (launch delay)-> K1.start -500-> K1.end -0 (sync)->
sync.end -0 (dependency)-> b.start -50-> b.end = 580 us.  CPU-only chain: 150 us."""
import json
import sys

B = 1_000_000
def X(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": B + ts, "dur": dur, "args": args}

ev = [
    X("aten::a", "cpu_op", 0, 100),
    X("cudaLaunchKernel", "cuda_runtime", 10, 10, correlation=1),
    X("K1", "kernel", 30, 500, pid=0, tid=7, device=0, stream=7, correlation=1),
    X("cudaStreamSynchronize", "cuda_runtime", 110, 450, correlation=2),
    X("Stream Sync", "cuda_sync", 111, 449, pid=0, tid=7, device=0, stream=7, correlation=2),
    X("aten::b", "cpu_op", 570, 50),
]
json.dump({"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": ev}, open(sys.argv[1], "w"), indent=1)
