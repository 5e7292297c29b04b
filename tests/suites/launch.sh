#!/usr/bin/env bash
# hta launch / annotations / stragglers / ops: golden comparison plus asserting tests.
set -euo pipefail
HTA=${HTA:-build/hta}
HTA=$(cd "$(dirname "$HTA")" && pwd)/$(basename "$HTA")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$ROOT/tests/data/hta
TMP=$(mktemp -d /tmp/hta-launch-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

python3 "$(dirname "$0")/../golden/check.py" "$HTA" cuda_kernel_launch_stats gpu_user_annotation_breakdown \
    potential_stragglers aten_op_kernels_and_delay

# json TABLE < file -> one Python expression over `rows` (list of dicts), asserted true
check() { # check NAME FILE TABLE PYEXPR
    python3 - "$@" <<'PY'
import json, sys
name, path, table, expr = sys.argv[1:5]
d = json.load(open(path))
t = d[table]
rows = [dict(zip(t["columns"], r)) for r in t["data"]]
ok = eval(expr)
if not ok:
    print(f"FAIL {name}: {expr}\n  rows: {rows[:6]}")
    sys.exit(1)
print(f"ok   {name}")
PY
}

# --- launch: HTA's outlier counts (test-expectations F) and options
"$HTA" launch "$T/ns_resolution_trace" --format json --quiet > "$TMP/l1.json"
check "launch ns_resolution counts" "$TMP/l1.json" launch_summary \
  'rows == [dict(rows[0], rank=0, launches=4876, short_kernels=2173, runtime_outliers=663, launch_delay_outliers=4713)]'
check "launch ns_resolution per-launch flags sum to the counts" "$TMP/l1.json" cuda_kernel_launch_stats \
  'len(rows) == 4876 and sum(r["short_kernel"] for r in rows) == 2173 and sum(r["launch_delay_outlier"] for r in rows) == 4713 and round(sum(r["cpu_duration"] for r in rows)) == 192088 and round(sum(r["launch_delay"] for r in rows)) == 322052817'
"$HTA" launch "$T/ns_resolution_trace" --no-memory --runtime-cutoff 10 --launch-delay-cutoff 1000 --format json --quiet > "$TMP/l2.json"
check "launch --no-memory and cutoffs" "$TMP/l2.json" launch_summary \
  'rows[0]["launches"] == 3480 and rows[0]["runtime_outliers"] == 694 and rows[0]["short_kernels"] == 985 and rows[0]["launch_delay_outliers"] == 3472 and rows[0]["runtime_cutoff"] == 10'
"$HTA" launch "$T/critical_path/alexnet" --format json --quiet > "$TMP/l3.json"
check "launch alexnet counts" "$TMP/l3.json" launch_summary \
  'rows[0]["launches"] == 98 and rows[0]["runtime_outliers"] == 11 and rows[0]["launch_delay_outliers"] == 43 and rows[0]["short_kernels"] == 23'
"$HTA" launch "$T/amd_trace" --format json --quiet > "$TMP/l4.json"
check "launch amd: empty (HIP launches are not HTA launch names)" "$TMP/l4.json" cuda_kernel_launch_stats 'rows == []'

# --- annotations (test-expectations J)
"$HTA" annotations "$T/ns_resolution_trace" --format json --quiet > "$TMP/a1.json"
check "annotations gpu" "$TMP/a1.json" gpu_user_annotation_breakdown \
  '[(r["name"], r["sum (us)"], r["count"]) for r in rows] == [("## backward ##", 81, 3), ("DistributedDataParallel.forward", 123880, 4), ("Optimizer.step#SGD.step", 3334, 3)] and abs(rows[1]["stddev"] - 976.649033) < 1e-5'
"$HTA" annotations "$T/ns_resolution_trace" --cpu --top 5 --allow Optimizer --format json --quiet > "$TMP/a2.json"
check "annotations fold into others with true statistics (Quirk A1 fixed)" "$TMP/a2.json" gpu_user_annotation_breakdown \
  'len(rows) == 8 and rows[-1]["name"] == "others" and rows[-1]["sum (us)"] == 111575 and rows[-1]["count"] == 34 and [r for r in rows if r["name"] == "Optimizer.step#SGD.step"][0]["max (us)"] == 969 and [r for r in rows if r["name"] == "## backward ##"][0]["min (us)"] == 17028'
"$HTA" annotations "$T/cpu_only" --format json --quiet > "$TMP/a3.json"
check "annotations without gpu_user_annotation: empty" "$TMP/a3.json" gpu_user_annotation_breakdown 'rows == []'

# --- stragglers
"$HTA" stragglers "$T/trace_filter" --candidates 1 --format json --quiet > "$TMP/s1.json"
check "stragglers trace_filter 1 candidate (test-expectations M)" "$TMP/s1.json" potential_stragglers '[r["rank"] for r in rows] == [1]'
python3 "$ROOT/tools/gen_kineto_trace.py" --out "$TMP/gen" --ranks 4 --layers 2 --steps 3 --straggler 2 > /dev/null
"$HTA" stragglers "$TMP/gen" --format json --quiet > "$TMP/s2.json"
check "stragglers generated: rank 2 flagged in every step" "$TMP/s2.json" potential_stragglers \
  'rows[0]["rank"] == 2 and rows[0]["flagged_steps"] == rows[0]["steps"] == 2 and len(rows) == 2 and rows[1]["flagged_steps"] < 2'
check "stragglers generated: metric shows rank 2 starting last, ncclDevKernel recognised" "$TMP/s2.json" straggler_metric \
  'len(rows) == 8 and all(r["kernel"].startswith("ncclDevKernel_") for r in rows) and all(max((x for x in rows if x["step"] == s), key=lambda x: x["start_us"])["rank"] == 2 for s in (10, 11))'
"$HTA" stragglers "$TMP/gen" --candidates 1 --format json --quiet > "$TMP/s3.json"
check "stragglers generated, 1 candidate" "$TMP/s3.json" potential_stragglers '[r["rank"] for r in rows] == [2]'
"$HTA" stragglers "$TMP/gen" --hta-compat --format json --quiet > "$TMP/s4.json"
check "stragglers --hta-compat finds no ncclKernel* on modern NCCL (HTA issue 360)" "$TMP/s4.json" potential_stragglers 'rows == []'
"$HTA" stragglers "$TMP/gen" --steps 11 --format json --quiet > "$TMP/s5.json"
check "stragglers --steps" "$TMP/s5.json" straggler_metric 'len(rows) == 4 and {r["step"] for r in rows} == {11}'

# --- ops
"$HTA" ops "$T/mtia_trace_single_rank" --sort-by occurrence_count,avg_aten_op_launch_delay --format json --quiet > "$TMP/o1.json"
check "ops mtia (test-expectations)" "$TMP/o1.json" aten_op_kernels_and_delay \
  'rows[0]["aten_op_name"] == "aten::mul" and rows[0]["kernel_sequence"] == "customized_fba_mul_const-dtype_Float" and rows[0]["occurrence_count"] == 822 and abs(rows[0]["avg_aten_op_launch_delay"] - 1092.545) <= 2 and abs(rows[0]["avg_runtime_delay"] - 293.113) <= 2'
"$HTA" ops "$T/trace_filter" --format json --quiet > "$TMP/o2.json"
python3 - "$TMP/o2.json" "$ROOT/tests/golden/hta/trace_filter/aten_op_kernels_and_delay.json" <<'PY'
# Quirk A5: HTA's rank-1 table = rank 0's and rank 1's op instances merged.
import json, sys, collections
o = json.load(open(sys.argv[1]))["aten_op_kernels_and_delay"]
ours = collections.defaultdict(dict)
for r in o["data"]:
    d = dict(zip(o["columns"], r)); ours[d["rank"]][(d["aten_op_name"], d["kernel_sequence"])] = d["occurrence_count"]
g = json.load(open(sys.argv[2]))["parts"]["rank_1"]
for r in g["data"]:
    d = dict(zip(g["columns"], r)); k = (d["aten_op_name"], d["kernel_sequence"])
    assert ours[0].get(k, 0) + ours[1].get(k, 0) == d["occurrence_count"], k
assert len(ours[1]) == 175 and len(g["data"]) == 187
print("ok   ops trace_filter: golden rank 1 = our ranks 0 + 1 (Quirk A5)")
PY
for d in amd_trace triton_example cupti_profiler cpu_only trace_file_list; do
  "$HTA" ops "$T/$d" --format json --quiet > "$TMP/o3.json"
  check "ops $d: empty, exit 0 (HTA raises)" "$TMP/o3.json" aten_op_kernels_and_delay 'rows == []'
done
if "$HTA" ops "$T/call_stack" --sort-by bogus --quiet > /dev/null 2>&1; then echo "FAIL ops --sort-by bogus accepted"; exit 1; fi
echo "ok   ops --sort-by bogus rejected"
