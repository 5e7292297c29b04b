#!/usr/bin/env bash
# Times `hta critical-path` on a generated 2 x 100 MB trace (rank 0), in s per
# million events of the rank: load + build + report, the graph build alone
# (HTA_TIMING), and what-if / overlay / save on top.
set -euo pipefail
HTA=${HTA:-build/hta}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${HTA_SHARED:-$ROOT/../shared}
DIR=${BENCH_DIR:-/tmp/hta-bench-cpath}
[ -f "$DIR/rank-0.json" ] || python3 "$SHARED/tools/gen_kineto_trace.py" --out "$DIR" --ranks 2 --target-mb 100 >/dev/null
EV=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['traceEvents']))" "$DIR/rank-0.json")
echo "rank 0: $EV events"
per_m() { python3 -c "import sys; print('%.3f' % (float(sys.argv[1]) * 1e6 / float(sys.argv[2])))" "$1" "$2"; }
run() { # label, command...
  local label=$1; shift
  local out; out=$( { /usr/bin/time -f "%e %U %S %M" "$@" >/dev/null; } 2>&1 | tail -1)
  read -r wall user sys rss <<< "$out"
  local cpu; cpu=$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$user" "$sys")
  printf "%-34s wall %6.2f s (%s s/M events)  cpu %6.2f s (%s s/M)  rss %d MB\n" "$label" "$wall" \
    "$(per_m "$wall" "$EV")" "$cpu" "$(per_m "$cpu" "$EV")" $((rss / 1024))
}
run "hta info (load only)" "$HTA" info "$DIR" --ranks 0 --quiet
run "critical-path --top 20" "$HTA" critical-path "$DIR" --rank 0 --top 20 --quiet
run "critical-path --what-if type:comp=x0.5" "$HTA" critical-path "$DIR" --rank 0 --top 20 --what-if type:comp=x0.5 --quiet
run "critical-path --save" "$HTA" critical-path "$DIR" --rank 0 --top 20 --save "$DIR/g.cpg" --quiet
run "critical-path --graph (no trace)" "$HTA" critical-path --graph "$DIR/g.cpg" --top 20 --quiet
run "critical-path --overlay" "$HTA" critical-path "$DIR" --rank 0 --top 20 --overlay "$DIR/ov" --quiet
for i in 1 2 3; do
  HTA_TIMING=1 "$HTA" critical-path "$DIR" --rank 0 --top 1 --quiet 2>&1 >/dev/null | \
    sed -E "s/.*built in ([0-9.]+) s.*/\1/" | { read -r s; echo "graph build alone: $s s ($(per_m "$s" "$EV") s/M events)"; }
done
