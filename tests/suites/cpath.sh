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
echo "cpath: ok"
