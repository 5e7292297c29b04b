#!/usr/bin/env python3
"""A small CPU-only Kineto trace (object form) with hand-computed answers, for tests/cpu.

Times in us from B.  Main thread (tid 1):
  ProfilerStep#1 [100, 1100]
    aten::linear [150, 650]: aten::t [160, 200], aten::addmm [210, 610]
    aten::relu   [700, 800]
  ProfilerStep#2 [1200, 2000]
    aten::linear [1250, 1550]: aten::addmm [1260, 1510]
    aten::relu   [1600, 1650]
  ProfilerStep#3 [2400, 2500]   the last step: HTA's filter drops it and what starts after its start
Data-loader thread (tid 2), user annotations:
  dataloader [300, 500] args batch=32, dataloader [1900, 2300] args batch=64 (runs past step 2's end)

Self times: linear 60 + 50, addmm 400 + 250, relu 100 + 50, t 40, dataloader 200 + 400;
step 1 outside ops 400, step 2 outside ops 450.  Critical path (HTA's model, CPU-only: annotations get
nodes): the main thread's chain, steps 1 and 2 end to end = 1800 us, all cpu_bound."""
import json
import sys

B = 1_000_000


def X(name, cat, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": tid, "ts": B + ts, "dur": dur, "args": args}


EVENTS = [
    X("ProfilerStep#1", "user_annotation", 100, 1000),
    X("aten::linear", "cpu_op", 150, 500, **{"External id": 1}),
    X("aten::t", "cpu_op", 160, 40, **{"External id": 2}),
    X("aten::addmm", "cpu_op", 210, 400, **{"External id": 3}),
    X("aten::relu", "cpu_op", 700, 100, **{"External id": 4}),
    X("ProfilerStep#2", "user_annotation", 1200, 800),
    X("aten::linear", "cpu_op", 1250, 300, **{"External id": 5}),
    X("aten::addmm", "cpu_op", 1260, 250, **{"External id": 6}),
    X("aten::relu", "cpu_op", 1600, 50, **{"External id": 7}),
    X("ProfilerStep#3", "user_annotation", 2400, 100),
    X("dataloader", "user_annotation", 300, 200, tid=2, batch=32, source="disk"),
    X("dataloader", "user_annotation", 1900, 400, tid=2, batch=64, source="disk"),
]


def write(path, rank=0):
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": rank}, "traceEvents": EVENTS + [
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 1, "args": {"name": "main"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 2, "args": {"name": "loader"}}]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    write(sys.argv[1])
