#!/usr/bin/env bash
# The one engine against `hta info`, in time and peak memory (issue 36's targets: at most 2x its time and 1.5x
# its memory; issue 24's were 4x and 2x): `critical-path --all-ranks --what-if cpu=x0.5` and `report` on a
# generated 2 x 250 MB job, on its rank 0 alone, and on 16, 64 and 256 small ranks (the report's peak on 256
# ranks against 16: flat memory in ranks, at most 1.5x).  Each figure is the median of RUNS runs (/usr/bin/time): CPU seconds (user + sys), wall seconds, peak
# RSS; then the ratio to `info` on the same job.  With BASE=path/to/other/hta, that binary runs too, its runs
# alternated with HTA's, so that the two are measured side by side on the same machine.
#
#   bench/engine.sh                      # generates the jobs under /tmp/hta-bench-engine (about 1 GB, once)
#   BASE=/tmp/hta-old RUNS=5 bench/engine.sh
#   JOBS="one two" bench/engine.sh       # some of: two one r16 r64 r256
#   BENCH_DIR=/work/bench-data/engine    # where the jobs are (two/ may be a link to an existing 2 x 250 MB job)
#   RUN="chrt -f 10" bench/engine.sh     # a prefix for every measured command
set -euo pipefail
HTA=${HTA:-build/hta}
BASE=${BASE:-}
RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${BENCH_DIR:-/tmp/hta-bench-engine}
JOBS=${JOBS:-two one r16 r64 r256}
GEN="python3 $ROOT/tools/gen_kineto_trace.py --quiet"

mkdir -p "$DIR"
[ -f "$DIR/two/rank-1.json" ] || $GEN --out "$DIR/two" --ranks 2 --target-mb 250
mkdir -p "$DIR/one" && ln -sf "$DIR/two/rank-0.json" "$DIR/one/rank-0.json"
[ -f "$DIR/r16/rank-15.json" ] || $GEN --out "$DIR/r16" --ranks 16 --layers 2 --steps 4 --straggler 5
[ -f "$DIR/r64/rank-63.json" ] || $GEN --out "$DIR/r64" --ranks 64 --layers 2 --steps 4 --straggler 5
[ -f "$DIR/r256/rank-255.json" ] || $GEN --out "$DIR/r256" --ranks 256 --layers 2 --steps 4 --straggler 5

# one run: "cpu wall rss_mb"; the times go to a file of this run's own (other runs may share BENCH_DIR), and
# RUN prefixes each command (e.g. RUN="nice -n -5" or "chrt -f 10" where allowed, on a shared machine)
TFILE=$(mktemp); trap 'rm -f "$TFILE"' EXIT
once() {
  ${RUN:-} /usr/bin/time -f "%U %S %e %M" -o "$TFILE" "$@" >/dev/null 2>&1
  read -r u s e m < "$TFILE"
  echo "$(python3 -c "print('%.2f' % ($u + $s))") $e $((m / 1024))"
}
# the median of the runs, per column
median() { python3 -c '
import sys, statistics
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
print(" ".join("%.2f" % statistics.median(c) for c in zip(*rows)))'; }

declare -A RES
measure() { # job label args...
  local job=$1 label=$2; shift 2
  local bins=("$HTA"); [ -n "$BASE" ] && bins+=("$BASE")
  local -A runs=()
  for ((i = 0; i < RUNS; i++)); do
    for b in "${bins[@]}"; do runs[$b]+="$(once "$b" "$@" "$DIR/$job")"$'\n'; done
  done
  for b in "${bins[@]}"; do RES["$b|$job|$label"]=$(printf "%s" "${runs[$b]}" | median); done
}

for job in $JOBS; do
  measure "$job" info info
  measure "$job" cp-all critical-path --all-ranks --what-if cpu=x0.5
  measure "$job" report report
done

printf "%-6s %-7s %-22s %10s %8s %8s %16s\n" job command binary cpu_s wall_s peak_MB "x info (cpu/mem)"
for job in $JOBS; do
  for label in info cp-all report; do
    for b in "$HTA" ${BASE:+"$BASE"}; do
      read -r c w m <<< "${RES["$b|$job|$label"]}"
      read -r ci wi mi <<< "${RES["$b|$job|info"]}"
      ratio=$(python3 -c "print('%.2f / %.2f' % ($c / $ci, $m / $mi))")
      printf "%-6s %-7s %-22s %10s %8s %8s %16s\n" "$job" "$label" "$(basename "$b")" "$c" "$w" "${m%.*}" "$ratio"
    done
  done
done
# flat memory in ranks: the report's peak on 256 ranks against 16
case " $JOBS " in *" r16 "*) case " $JOBS " in *" r256 "*)
  for b in "$HTA" ${BASE:+"$BASE"}; do
    read -r _ _ m16 <<< "${RES["$b|r16|report"]}"
    read -r _ _ m256 <<< "${RES["$b|r256|report"]}"
    printf "report peak, 256 ranks / 16 ranks (%s): %s MB / %s MB = %s (target at most 1.5)\n" "$(basename "$b")" \
      "${m256%.*}" "${m16%.*}" "$(python3 -c "print('%.2f' % ($m256 / $m16))")"
  done;;
esac;; esac
