#!/usr/bin/env bash
# Times hta temporal / idle / kernels / overlap on a generated 2 x 100 MB trace
# and prints seconds per million events: the analysis alone (in process, the
# trace loaded once: build/breakdown_bench), then the whole command (best of 3
# wall clock, loading included) and that less `hta info` (about the load).
# usage: bench/breakdown.sh [TRACE_DIR]   (env HTA = binary, default build/hta)
set -euo pipefail
HTA=${HTA:-build/hta}
DIR=${1:-/tmp/hta-bench-breakdown}
GEN=$(cd "$(dirname "$0")/.." && pwd)/tools/gen_kineto_trace.py
if [ ! -d "$DIR" ]; then
  python3 "$GEN" --out "$DIR" --ranks 2 --target-mb 100 >/dev/null
fi
events=$(python3 - "$DIR" <<'P'
import json, sys, os
n = 0
for f in os.listdir(sys.argv[1]):
    n += json.load(open(os.path.join(sys.argv[1], f))).get("traceEvents", []).__len__()
print(n)
P
)
. "$(dirname "$0")/best.sh"
make -s bench-breakdown BUILD="${BUILD:-build}" >/dev/null
"${BUILD:-build}/breakdown_bench" "$DIR"
echo
load=$(best "$HTA" info "$DIR" --quiet)
printf "%-10s %12s %14s   (%d events, load ~%.3f s)\n" command "s/M events" "analysis s/M" "$events" "$load"
for c in temporal "idle --stats" kernels overlap; do
  t=$(best "$HTA" $c "$DIR" --quiet)
  awk -v c="$c" -v t="$t" -v l="$load" -v n="$events" \
    'BEGIN{a=t-l; if(a<0)a=0; printf "%-10s %12.3f %14.3f\n", c, t/(n/1e6), a/(n/1e6)}'
done
