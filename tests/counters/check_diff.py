#!/usr/bin/env python3
"""`hta diff` against Python HTA's TraceDiff goldens (golden/hta/_trace_diff__control_vs_test, which
golden_check.py skips) and test-expectations (trace_compare)."""
import json
import math
import os
import subprocess
import sys

hta, traces, golden = sys.argv[1:4]
G = os.path.join(golden, "_trace_diff__control_vs_test")
C, T = os.path.join(traces, "trace_diff", "control"), os.path.join(traces, "trace_diff", "test")


def run(*args):
    # HTA's rows: all of them, names as written (by default the 20 largest changes, addresses and integer
    # template arguments folded: docs/differences-from-hta.md "diff"); a --top in args comes later and wins
    p = subprocess.run([hta, "diff", "--top", "0", "--exact-names", *args, "--format", "json", "--quiet"],
                       capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stderr)
    return json.loads(p.stdout)


def same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def opts(args):
    o = []
    if args.get("use_short_name"): o.append("--short-names")
    if args.get("device_type"): o += ["--device", args["device_type"].lower()]
    for k in ("control_rank", "test_rank", "control_iteration", "test_iteration"):
        if k in args: o += ["--" + k.replace("_", "-"), str(args[k])]
    return o


status = json.load(open(os.path.join(G, "status.json")))
checked = 0
for name, st in sorted(status.items()):
    assert st == "ok", (name, st)
    g = json.load(open(os.path.join(G, name + ".json")))
    args = g["args"]
    out = run(C, T, *opts(args))
    part = g["parts"]["result"]
    if args["method"] == "compare_traces":
        t = out["compare_traces"]
        key = part["index_names"][0]
        cols = [key] + part["columns"]
        assert all(c in t["columns"] for c in cols), (name, t["columns"])
        pos = [t["columns"].index(c) for c in cols]
        ours = [[r[p] for p in pos] for r in t["data"]]
        gold = [[i] + r for i, r in zip(part["index"], part["data"])]
        assert len(ours) == len(gold), (name, len(ours), len(gold))
        # the same rows; ours by the size of the change, largest first (HTA's order with --hta-compat,
        # docs/differences-from-hta.md "diff")
        dd = [abs(r[t["columns"].index("diff_duration")]) for r in t["data"]]
        assert dd == sorted(dd, reverse=True), (name, dd[:10])
        for i, (a, b) in enumerate(zip(sorted(ours, key=str), sorted(gold, key=str))):
            assert all(same(x, y) for x, y in zip(a, b)), (name, i, a, b)
    else:
        t = out["ops_diff"]
        got = {}
        for cat, nm in t["data"]:
            got.setdefault(cat, []).append(nm)
        for cat, names in part.items():
            assert sorted(got.get(cat, [])) == sorted(names), (name, cat, got.get(cat, [])[:5], names[:5])
    checked += 1
    print(f"diff golden {name}: ok")

# test-expectations (tests/test_trace_diff.py): trace_compare base vs test, rank 1, iteration 1010, CPU, short names
B, TT = os.path.join(traces, "trace_compare", "base"), os.path.join(traces, "trace_compare", "test")
o = run(B, TT, "--control-rank", "1", "--test-rank", "1", "--control-iteration", "1010", "--test-iteration", "1010",
        "--device", "cpu", "--short-names", "--control-label", "B", "--test-label", "T", "--hta-compat")
t = o["compare_traces"]
rows = [dict(zip(t["columns"], r)) for r in t["data"]]
assert [r["short_name"] for r in rows] == ["ProfilerStep#1010", "aten::as_strided", "aten::empty", "cudaEventQuery",
                                           "cudaLaunchKernel", "nccl:all_reduce", "AddmmBackward0",
                                           "All2All_Pooled_Req", "CatBackward0"], rows
nccl = rows[5]
assert (nccl["B_counts"], nccl["B_total_duration"], nccl["T_counts"], nccl["diff_duration"],
        nccl["counts_change_categories"]) == (1, 67, 0, -67, "-"), nccl
assert [r["T_total_duration"] for r in rows[6:]] == [207, 311, 11]
cats = {}
for c, n in o["ops_diff"]["data"]:
    cats.setdefault(c, []).append(n)
assert cats == {"added": ["AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"], "deleted": ["nccl:all_reduce"],
                "unchanged": ["ProfilerStep#1010", "aten::as_strided", "aten::empty", "cudaEventQuery",
                              "cudaLaunchKernel"]}, cats
# by default the largest changes first (ties by name), --top keeps the first N of each table and list
d = run(B, TT, "--control-rank", "1", "--test-rank", "1", "--control-iteration", "1010", "--test-iteration", "1010",
        "--device", "cpu", "--short-names", "--control-label", "B", "--test-label", "T", "--top", "2")
assert [r[0] for r in d["compare_traces"]["data"]] == ["All2All_Pooled_Req", "AddmmBackward0"], d["compare_traces"]
assert d["ops_diff"]["data"] == [["added", "All2All_Pooled_Req"], ["added", "AddmmBackward0"],
                                 ["deleted", "nccl:all_reduce"], ["unchanged", "ProfilerStep#1010"],
                                 ["unchanged", "aten::as_strided"]], d["ops_diff"]
g = run(B, TT, "--control-iteration", "1010", "--test-iteration", "1010", "--device", "gpu")["compare_traces"]
assert [r[-1] for r in g["data"]] == ["-"], g
# equal labels: the test side is renamed (A9)
e = run(B, TT, "--control-label", "X", "--test-label", "X")["compare_traces"]
assert "X_control_test_counts" in e["columns"], e["columns"]
print(f"diff: {checked} goldens and trace_compare expectations ok")
