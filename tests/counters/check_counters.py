#!/usr/bin/env python3
"""Asserting tests for `hta counters` (values from test-expectations.md G, H, O)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import hta_json  # noqa: E402

hta, T = sys.argv[1], sys.argv[2]


def run(*args):
    return hta_json(hta, *args)


def rows(out, table):
    t = out[table]
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


# O: cuda_event_sync queue-length series and DtoH bandwidth
# HTA's times (--hta-compat): relative to the earliest event of the loaded ranks
o = run("counters", f"{T}/critical_path/cuda_event_sync", "--series", "--hta-compat")
q = [(r["ts"], r["queue_length"]) for r in rows(o, "queue_length_series")]
assert q == [(2775, 1), (2810, 0), (2847, 1), (2859, 0), (2886, 1), (2900, 0), (2917, 1), (2935, 0),
             (3027, 1), (3037, 0)], q
# by default times stay on the trace's own clock: the same series shifted by HTA's origin
d = run("counters", f"{T}/critical_path/cuda_event_sync", "--series")
qd = [(r["ts"], r["queue_length"]) for r in rows(d, "queue_length_series")]
assert [(a - 1707417525509335, n) for a, n in qd] == q, qd
assert all(r["stream"] == 7 for r in rows(o, "queue_length_series"))
m = [(r["name"], r["memory_bw_gbps"]) for r in rows(o, "memory_bw_series")]
assert m == [("Memcpy DtoH", 0.00048828125), ("Memcpy DtoH", 0.0)], m

# G: time blocked on a full queue, HTA's numbers (--hta-compat: whole us, its launch names); HTA reports only
# the last stream (A6), we report every stream
for d, mq, stream, dur, rel in [("mtia_trace_single_rank", 1, 102, 1060, 7.94764e-05),
                               ("negative_queue_length_values_check", 8, 27, 575533, 0.564287318),
                               ("negative_queue_length_values_check", 1, 363, 865451, 0.8485404376),
                               ("trace_diff/test", 2, 16, 55945, 0.088916473),
                               ("critical_path/cuda_event_sync_multi_stream", 2, 28, 0, 0.0),
                               ("amd_trace", 1, 0, 6760, 0.7371864776)]:
    b = rows(run("counters", f"{T}/{d}", "--max-queue-length", str(mq), "--hta-compat"),
             "time_spent_blocked_on_full_queue")
    last = b[-1]
    assert last["stream"] == stream and close(last["duration_at_max_queue_length"], dur) and \
        close(last["relative_duration_at_max_queue_length"], rel, 1e-5), (d, mq, b)
b = rows(run("counters", f"{T}/negative_queue_length_values_check", "--max-queue-length", "1", "--hta-compat"),
         "time_spent_blocked_on_full_queue")
assert [r["stream"] for r in b] == [7, 25, 27, 84, 285, 363], b

# H: mtia stream 102 queue statistics; no data -> empty tables, exit 0
s = rows(run("counters", f"{T}/mtia_trace_single_rank", "--hta-compat"), "queue_length_summary")
assert [r["stream"] for r in s] == [1, 102], s
r = s[1]
assert (r["count"], r["mean"], r["min"], r["50%"], r["max"]) == (6, 0.5, 0, 0.5, 1) and close(r["std"], 0.547723), r
e = run("counters", f"{T}/rank_non_gpu")
assert e["queue_length_summary"]["data"] == [] and e["memory_bw_summary"]["data"] == [], e
print("check_counters: ok")
