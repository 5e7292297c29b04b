#!/usr/bin/env bash
# Times hta launch / annotations / stragglers / ops on a generated 2 x 100 MB
# trace and prints seconds per million events: the analysis alone (in
# process, trace loaded once: build/launch_bench), then the whole command
# (best of 3 wall clock, loading included) and that less `hta info` (~ load).
# usage: bench/launch.sh [TRACE_DIR]   (env HTA = binary, default build/hta)
set -euo pipefail
cd "$(dirname "$0")/.."
HTA=${HTA:-build/hta}
BUILD=${BUILD:-build}
DIR=${1:-/tmp/hta-bench-launch}
GEN=tools/gen_kineto_trace.py
if [ ! -d "$DIR" ]; then
  python3 "$GEN" --out "$DIR" --ranks 2 --target-mb 100 >/dev/null
fi
make -s "$BUILD/hta" bench-launch BUILD="$BUILD" >/dev/null
"$BUILD/launch_bench" "$DIR" 3
events=$("$BUILD/launch_bench" "$DIR" 1 | awk 'NR==1{print $1}')
. "$(dirname "$0")/best.sh"
echo
load=$(best "$HTA" info "$DIR" --quiet)
printf "%-12s %12s %14s   (%d events, hta info ~%.3f s)\n" command "s/M events" "less info s/M" "$events" "$load"
for c in launch annotations stragglers ops; do
  t=$(best "$HTA" $c "$DIR" --quiet)
  awk -v c="$c" -v t="$t" -v l="$load" -v n="$events" \
    'BEGIN{a=t-l; if(a<0)a=0; printf "%-12s %12.3f %14.3f\n", c, t/(n/1e6), a/(n/1e6)}'
done
