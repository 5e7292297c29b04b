#!/usr/bin/env python3
"""`hta cupti` against the cupti_profiler golden, column by column, with --hta-compat (HTA's time origin,
and its `end` left on the trace's clock, TF Q1); `op_stack` is '|'-joined text (HTA: a list); every other
value must be equal.  Without --hta-compat both times stay on the trace's clock, consistently.
Also test-expectations L (sums, top-level op counts)."""
import json
import math
import os
import subprocess
import sys
from collections import Counter

hta, traces, golden = sys.argv[1:4]


def cupti(*extra):
    p = subprocess.run([hta, "cupti", os.path.join(traces, "cupti_profiler"), "--format", "json", "--quiet", *extra],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["cupti_counter_data_with_operators"]


t = cupti("--hta-compat")
g = json.load(open(os.path.join(golden, "cupti_profiler", "cupti_counter_data_with_operators.json")))
part = g["parts"]["item_0"]
assert len(t["data"]) == len(part["data"]) == 77
cols = part["columns"]
ours = [dict(zip(t["columns"], r)) for r in t["data"]]
gold = [dict(zip(cols, r)) for r in part["data"]]
offsets = set()
for i, (a, b) in enumerate(zip(ours, gold)):
    for c in cols:
        x, y = a[c], b[c]
        if c == "end":
            assert x == y, (i, x, y)
            offsets.add(y - (a["ts"] + a["dur"]))
        elif c == "op_stack":
            assert x.split("|") == y, (i, x, y)
        elif isinstance(y, (int, float)) and isinstance(x, (int, float)):
            assert math.isclose(x, y, rel_tol=1e-12), (i, c, x, y)
        else:
            assert x == y, (i, c, x, y)
assert len(offsets) == 1, offsets  # golden end = ours + min_ts
# default: the trace's own clock, i.e. HTA's relative times + min_ts, end included
own = [dict(zip(t["columns"], r)) for r in cupti()["data"]]
(min_ts,) = offsets

assert [(a["ts"] - min_ts, a["end"] - min_ts) for a in own] == [(a["ts"], a["end"] - min_ts) for a in ours]
r5 = ours[5]
assert "fft2d_r2c_32x32" in r5["name"] and r5["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] == 86114304
assert (r5["top_level_op"], r5["bottom_level_op"]) == ("aten::conv2d", "aten::cudnn_convolution")
assert sum(r["smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"] for r in ours) == 964651656
assert sum(r["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] for r in ours) == 39142369720
assert Counter(r["top_level_op"] for r in ours) == {"aten::conv2d": 38, "aten::relu_": 14, "aten::linear": 12,
                                                    "aten::max_pool2d": 6, "aten::dropout": 4,
                                                    "aten::adaptive_avg_pool2d": 2, "aten::rand": 1}
print(f"cupti: 77 rows x {len(cols)} golden columns equal (end relative, op_stack joined): ok")
