#!/usr/bin/env bash
# Times `hta critical-path` on a generated 2 x 100 MB trace (rank 0), in s per
# million events of the rank: load + build + report, the analysis after load
# alone (HTA_TIMING, CPU time), and what-if / overlay / save on top.
set -euo pipefail
HTA=${HTA:-build/hta}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${BENCH_DIR:-/tmp/hta-bench-cpath}
[ -f "$DIR/rank-0.json" ] || python3 "$ROOT/tools/gen_kineto_trace.py" --out "$DIR" --ranks 2 --target-mb 100 >/dev/null
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
run "critical-path --top 20" "$HTA" critical-path "$DIR" --ranks 0 --top 20 --quiet
run "critical-path --what-if type:comp=x0.5" "$HTA" critical-path "$DIR" --ranks 0 --top 20 --what-if type:comp=x0.5 --quiet
run "critical-path --save" "$HTA" critical-path "$DIR" --ranks 0 --top 20 --save "$DIR/g.cpg" --quiet
run "critical-path --graph (no trace)" "$HTA" critical-path --graph "$DIR/g.cpg" --top 20 --quiet
run "critical-path --overlay" "$HTA" critical-path "$DIR" --ranks 0 --top 20 --overlay "$DIR/ov" --quiet
# the analysis after load (view, graph, longest path, report) from HTA_TIMING:
# CPU time of the analysing thread, so a busy machine does not inflate it
for i in 1 2 3; do
  HTA_TIMING=1 "$HTA" critical-path "$DIR" --ranks 0 --top 20 --quiet 2>&1 >/dev/null | python3 -c '
import re, sys
ev = float(sys.argv[1]); t = sys.stdin.read()
b = re.search(r"built in ([0-9.]+) s, cpu ([0-9.]+) s", t); r = re.search(r"report in ([0-9.]+) s, cpu ([0-9.]+) s", t)
w, c = float(b.group(1)) + float(r.group(1)), float(b.group(2)) + float(r.group(2))
print("analysis after load (build + report): wall %.3f s, cpu %.3f s (%.3f s/M events cpu; build cpu %s s, report cpu %s s)"
      % (w, c, c * 1e6 / ev, b.group(2), r.group(2)))' "$EV"
done
