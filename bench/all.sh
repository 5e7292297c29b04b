#!/usr/bin/env bash
# Every benchmark on one generated set: 2 ranks x 250 MB (bench/load.sh makes
# it under bench/out/2x250).  Prints the figures quoted in bench/README.md.
#   bench/all.sh [RUNS]
set -eu
cd "$(dirname "$0")/.."
RUNS=${1:-5}
make -s -j2 all bench >/dev/null
D=bench/out/2x250
echo "### load";        bench/load.sh "$D" "$RUNS"
echo "### breakdown";   bench/breakdown.sh "$D/json"
echo "### launch";      bench/launch.sh "$D/json"
echo "### critical path"; BENCH_DIR="$D/json" bench/cpath.sh
echo "### counters";    bench/counters.sh "$D/json"
echo "### merge";       bench/merge.sh "$D/json"
echo "### tracer";      make -s build/bench-tracer && build/bench-tracer 10000000 5
