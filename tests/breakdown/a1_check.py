#!/usr/bin/env python3
"""Shows that hta kernels differs from HTA's all_kernels only by quirk A1.

For every golden gpu_kernel_breakdown, runs `hta kernels` and checks: the same
rows (name, kernel_type, rank) in the same order with the same `sum (us)`;
rows HTA did not fold (their type/rank has at most --top names) equal in every
column; and in folded groups, HTA's collapsed values are what A1 predicts from
our per-name statistics (max = min = mean = sum, stddev 0; "others" = stats of
the per-name sums).  Skips folders listed on the command line (other quirks).
usage: a1_check.py HTA [SKIP_FOLDER ...]
"""
import json
import math
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
G = os.path.join(root, "tests", "golden", "hta")
T = os.path.join(root, "tests", "data", "hta")


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-9 + 1e-6 * max(abs(a), abs(b))


def main():
    hta, skip = sys.argv[1], set(sys.argv[2:])
    checked = 0
    for root, _, files in sorted(os.walk(G)):
        rel = os.path.relpath(root, G)
        if "gpu_kernel_breakdown.json" not in files or rel in skip or rel.startswith("_"):
            continue
        g = json.load(open(os.path.join(root, "gpu_kernel_breakdown.json")))
        if "all_kernels" not in g.get("parts", {}):
            continue
        a = g["args"]
        cmd = [hta, "kernels", os.path.join(T, rel), "--top", str(a["num_kernels"]), "--duration-ratio",
               str(a["duration_ratio"]), "--format", "json", "--quiet"]
        out = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)["all_kernels"]
        oc = out["columns"]
        ours = [dict(zip(oc, r)) for r in out["data"]]
        gp = g["parts"]["all_kernels"]
        gold = [dict(zip(gp["columns"], r)) for r in gp["data"]]
        assert len(ours) == len(gold), (rel, len(ours), len(gold))
        folded = {(r["kernel_type"], r["rank"]) for r in ours if r["name"] == "others"}
        for o, h in zip(ours, gold):
            key = (o["kernel_type"], o["rank"])
            assert (o["name"], key) == (h["name"], (h["kernel_type"], h["rank"])), (rel, o["name"], h["name"])
            assert close(o["sum (us)"], h["sum (us)"]), (rel, o["name"])
            if key not in folded:
                for c in ("max (us)", "min (us)", "mean (us)", "stddev"):
                    assert close(o[c], h[c]), (rel, o["name"], c, o[c], h[c])
            elif o["name"] != "others":
                for c in ("max (us)", "min (us)", "mean (us)"):
                    assert close(h[c], o["sum (us)"]), (rel, o["name"], c)
                assert h["stddev"] == 0
        # HTA's "others" row: statistics over the per-name sums it folded
        for key in folded:
            grp = [o for o in ours if (o["kernel_type"], o["rank"]) == key]
            kept = sum(o["sum (us)"] for o in grp if o["name"] != "others")
            h = next(x for x in gold if (x["kernel_type"], x["rank"]) == key and x["name"] == "others")
            o = next(x for x in grp if x["name"] == "others")
            assert close(h["sum (us)"], o["sum (us)"]), rel
            assert h["max (us)"] <= o["sum (us)"] and h["min (us)"] >= o["min (us)"], rel
        checked += 1
    print(f"a1_check: {checked} golden kernel tables differ from HTA by quirk A1 only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
