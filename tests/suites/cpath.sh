#!/usr/bin/env bash
# Critical path: golden comparison, HTA's reference values, overlay, save/restore, what-if.
set -euo pipefail
HTA=${HTA:-build/hta}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=${HTA_SHARED:-$ROOT/../shared}
T=$SHARED/traces/hta
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
P='[param|pytorch.model.alex_net|0|0|0|measure|forward]'

python3 "$ROOT/tests/golden/check.py" "$HTA" critical_path

# stats as "name=value" lines
stats() { "$HTA" critical-path "$@" --format json --quiet | python3 -c '
import json,sys
d=json.load(sys.stdin)
for n,v in d["stats"]["data"]: print("%s=%g" % (n, v))'; }
expect() { # expect FILE NAME VALUE
  grep -qx "$2=$3" "$1" || { echo "FAIL: $2 != $3 in $1:"; cat "$1"; exit 1; }; }

if [ -d "$T/critical_path" ]; then
  # critical-path.md §13.1, zero-weight launch edges on (HTA's test setting)
  stats "$T/critical_path/simple_add" --annotation "$P" --instance 1 --zero-weight-launch-edges > "$TMP/sa"
  expect "$TMP/sa" graph_edges 440
  expect "$TMP/sa" graph_edge_types.critical_path_kernel_launch_delay 40
  expect "$TMP/sa" critical_path_nodes 315
  expect "$TMP/sa" critical_path_total_weight 241724
  stats "$T/ns_resolution_trace" --annotation ProfilerStep --instance 1 --zero-weight-launch-edges > "$TMP/ns"
  expect "$TMP/ns" graph_edges 12444
  expect "$TMP/ns" critical_path_nodes 2983
  expect "$TMP/ns" critical_path_total_weight 97176
  stats "$T/critical_path/cuda_event_sync_multi_stream" --zero-weight-launch-edges > "$TMP/em"
  expect "$TMP/em" graph_edges 85
  expect "$TMP/em" graph_edge_types.critical_path_sync_dependency 6
  stats "$T/critical_path/end_to_end/simple_add/input" --data-load data_load > "$TMP/e2e"
  expect "$TMP/e2e" graph_edges 1451
  expect "$TMP/e2e" critical_path_total_weight 4.1435e+07
  # where HTA fails: a result and exit 0, never a crash
  for f in cpu_only mtia_trace_single_rank trace_file_list; do
    "$HTA" critical-path "$T/$f" --quiet > /dev/null
  done
  # unknown annotation / instance out of range: clear error, exit 1
  if "$HTA" critical-path "$T/critical_path/simple_add" --annotation __nonexistent__ 2> "$TMP/err"; then exit 1; fi
  grep -q "no event name contains" "$TMP/err"
  if "$HTA" critical-path "$T/critical_path/simple_add" --annotation "$P" --instance 99 2> "$TMP/err"; then exit 1; fi
  grep -q "out of range" "$TMP/err"

  # overlay: HTA's end-to-end expected output (only_show_critical_events=False), same in meaning
  E=$T/critical_path/end_to_end/simple_add
  "$HTA" critical-path "$E/input" --data-load data_load --overlay "$TMP/ov" --all-events --quiet > /dev/null
  python3 "$ROOT/tests/cpath/overlay_compare.py" "$TMP/ov/overlaid_critical_path_trace.json.gz" \
    "$E/output/overlaid_critical_path_trace.json.gz"
  # overlay counts of HTA's tests (critical-path.md §13.1): events, flows, critical X, critical f
  ovcount() { rm -rf "$TMP/ov2"; "$HTA" critical-path "$T/critical_path/simple_add" --annotation "$P" --instance 1 \
      --overlay "$TMP/ov2/sub" "$@" --quiet > /dev/null; python3 -c '
import json,gzip,glob,sys
d=json.load(gzip.open(glob.glob(sys.argv[1] + "/*")[0])); ev=d["traceEvents"]
fl=[e for e in ev if e.get("cat")=="critical_path"]
print(len(ev), len(fl), sum(1 for e in ev if e.get("ph")=="X" and e.get("args",{}).get("critical")==1),
      sum(1 for e in fl if e["ph"]=="f" and e["args"]["critical"]))' "$TMP/ov2/sub"; }
  [ "$(ovcount --all-events --all-edges)" = "2178 830 159 314" ]
  [ "$(ovcount --all-events)" = "1390 42 159 21" ]
  [ "$(ovcount)" = "719 42 159 21" ]
fi

# ---- what-if on a small trace with a known path (tests/cpath/small_trace.py: 580 us) ----
python3 "$ROOT/tests/cpath/small_trace.py" "$TMP/small.json"
whatif() { # whatif RULE... -> "baseline simulated saving"
  local args=(); for r in "$@"; do args+=(--what-if "$r"); done
  "$HTA" critical-path "$TMP/small.json" "${args[@]}" --format json --quiet | python3 -c '
import json,sys
d={n:v for n,v in json.load(sys.stdin)["what_if"]["data"]}
print("%g %g %g" % (d["baseline_path_us"], d["simulated_path_us"], d["saving_us"]))'; }
check() { local got; got=$(whatif "${@:2}"); [ "$got" = "$1" ] || { echo "FAIL what-if ${*:2}: $got != $1"; exit 1; }; }
check "580 330 250" 'kernel:K*=x0.5'     # the kernel stays critical: saving = half its 500 us
check "580 330 250" 'type:comp=x0.5'
check "580 330 250" 'stream:7=x0.5'
check "580 580 0"   'stream:8=x0'        # no kernel on stream 8
check "580 560 20"  'edge:launch=0'      # the 20 us launch delay disappears
check "580 520 60"  'cpu=x0'             # CPU time on the path: 10 + 50
check "580 630 -50" 'op:aten::b=x2'
check "580 150 430" 'kernel:*=x0'        # the kernel leaves the path: the CPU chain (150 us) remains
check "580 255 325" 'gpu=x0.5' 'gpu=x0.7'   # rules compose: the kernel becomes 500 * 0.35 = 175
check "580 580 0"   'kernel:*=500'       # set to its own value
if "$HTA" critical-path "$TMP/small.json" --what-if 'bogus=1' 2> "$TMP/err"; then exit 1; fi
grep -q "unknown selector" "$TMP/err"
# simulated trace: K1 halved -> the sync returns 250 us earlier, aten::b starts at 320 us
"$HTA" critical-path "$TMP/small.json" --what-if 'kernel:K1=x0.5' --what-if-trace "$TMP/sim.json" --quiet > /dev/null
python3 - "$TMP/sim.json" <<'PY'
import json, sys
e = {x["name"]: (x["ts"] - 1000000, x["dur"]) for x in json.load(open(sys.argv[1]))["traceEvents"]}
assert e["K1"] == (30, 250), e
assert e["cudaStreamSynchronize"] == (110, 200), e
assert e["aten::b"] == (320, 50), e
assert e["aten::a"] == (0, 100), e
PY
# an unchanged graph reproduces the trace
"$HTA" critical-path "$TMP/small.json" --what-if 'edge:kk=x1' --what-if-trace "$TMP/sim0.json" --quiet > /dev/null
python3 -c 'import json,sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' "$TMP/sim0.json" "$TMP/small.json"

# ---- save / restore: the same tables without the trace ----
"$HTA" critical-path "$TMP/small.json" --save "$TMP/g.cpg" --format json --quiet > "$TMP/a.json"
"$HTA" critical-path --graph "$TMP/g.cpg" --format json --quiet > "$TMP/b.json"
cmp "$TMP/a.json" "$TMP/b.json"
if [ -d "$T/critical_path" ]; then
  "$HTA" critical-path "$T/critical_path/alexnet" --annotation "$P" --instance 1 --save "$TMP/ax.cpg" --format json --quiet > "$TMP/a.json"
  "$HTA" critical-path --graph "$TMP/ax.cpg" --format json --quiet > "$TMP/b.json"
  cmp "$TMP/a.json" "$TMP/b.json"
  "$HTA" critical-path --graph "$TMP/ax.cpg" --what-if type:comp=x1 --format json --quiet | grep '"saving_us", 0' > /dev/null
fi
head -c 100 "$TMP/g.cpg" > "$TMP/bad.cpg"
if "$HTA" critical-path --graph "$TMP/bad.cpg" 2> "$TMP/err"; then exit 1; fi
grep -q "corrupt" "$TMP/err"
echo "cpath: ok"
