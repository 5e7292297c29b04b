#!/bin/sh
# Peak RSS and time of `hta info`, `hta temporal`, `hta stragglers` and `hta merge --align collective`
# over 16, 64, 256 and 1000 generated ranks of ~1.4 MB (rank by rank, and with HTA_PER_RANK=0 the whole
# load for comparison), and over one large rank of the same total bytes.  The ranks are generated once
# into bench/out/scale/ (git-ignored) by tools/gen_kineto_trace.py (rank 1 a straggler); merge writes
# bench/out/scale/merged.json, removed after each run.  docs/scaling.md.
#   bench/scale.sh [BIG_MB]     (BIG_MB: size of the one large rank, default 1400)
#   CMDS="kernels launch" NS="16 64" bench/scale.sh   only those commands (any, the reduced ones too), rank counts
set -eu
cd "$(dirname "$0")/.."
HTA=${HTA:-build/hta}
BIG_MB=${1:-1400}
CMDS=${CMDS:-info temporal stragglers merge}
NS=${NS:-16 64 256 1000}
OUT=bench/out/scale
mkdir -p "$OUT"
for n in $NS; do
  [ -d "$OUT/r$n" ] || python3 tools/gen_kineto_trace.py --out "$OUT/r$n" --ranks "$n" --target-mb 1.4 --quiet --jobs 2 \
    --straggler 1
done
[ -d "$OUT/big$BIG_MB" ] || python3 tools/gen_kineto_trace.py --out "$OUT/big$BIG_MB" --ranks 1 \
  --target-mb "$BIG_MB" --quiet
measure() { # label env command...
  label=$1; shift
  /usr/bin/time -f "%e %M" -o /tmp/hta-scale.$$ env "$@" >/dev/null 2>&1
  read -r s kb < /tmp/hta-scale.$$
  mb=$(du -sm "$dir" | cut -f1)
  printf '%-34s %6s MB  %7.2f s  %7.1f MB/s  peak RSS %6d MB\n' "$label" "$mb" "$s" \
    "$(echo "$mb / $s" | bc -l)" $((kb / 1024))
  rm -f "$OUT/merged.json"
}
for cmd in $CMDS; do
  args=
  [ "$cmd" = merge ] && args="-o $OUT/merged.json --align collective"
  for n in $NS; do
    dir=$OUT/r$n
    measure "$cmd $n ranks, rank by rank" HTA_PER_RANK=1 "$HTA" $cmd "$dir" $args
    measure "$cmd $n ranks, whole load" HTA_PER_RANK=0 "$HTA" $cmd "$dir" $args
  done
  dir=$OUT/big$BIG_MB
  measure "$cmd 1 rank of $BIG_MB MB" HTA_PER_RANK=1 "$HTA" $cmd "$dir" $args
done
rm -f /tmp/hta-scale.$$
