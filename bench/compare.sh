#!/usr/bin/env bash
# Two builds of hta side by side on the same commands: runs A and B in turn
# (A B A B ...) so drift of the machine hits both, and prints per case the
# median wall time and peak RSS of each and the ratio of the medians.
#   bench/compare.sh OLD_HTA NEW_HTA [RUNS]      (RUNS default 5)
# Cases: DIR2 (2 ranks x 250 MB, made if missing) and DIR64 (64 ranks x 8 MB).
set -eu
cd "$(dirname "$0")/.."
A=$1 B=$2 RUNS=${3:-5}
DIR2=${DIR2:-bench/out/2x250/json} DIR64=${DIR64:-bench/out/64r}
[ -f "$DIR2/rank-1.json" ] || python3 tools/gen_kineto_trace.py --out "$DIR2" --ranks 2 --target-mb 250 --quiet
[ -f "$DIR64/rank-63.json" ] || python3 tools/gen_kineto_trace.py --out "$DIR64" --ranks 64 --target-mb 8 --quiet

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
one() { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>/tmp/hta-compare.$$ || true; tail -1 /tmp/hta-compare.$$; }

printf '%-34s %9s %9s %7s %9s %9s\n' case "A wall s" "B wall s" "B/A" "A MiB" "B MiB"
for c in "info $DIR2" "report $DIR2" "report $DIR64" "temporal $DIR64" "temporal $DIR64 --ranks 0"; do
  : > /tmp/hta-compare.a.$$; : > /tmp/hta-compare.b.$$
  for _ in $(seq "$RUNS"); do
    # shellcheck disable=SC2086
    one "$A" $c --quiet >> /tmp/hta-compare.a.$$
    # shellcheck disable=SC2086
    one "$B" $c --quiet >> /tmp/hta-compare.b.$$
  done
  aw=$(cut -d' ' -f1 /tmp/hta-compare.a.$$ | median); bw=$(cut -d' ' -f1 /tmp/hta-compare.b.$$ | median)
  am=$(cut -d' ' -f2 /tmp/hta-compare.a.$$ | median); bm=$(cut -d' ' -f2 /tmp/hta-compare.b.$$ | median)
  name=$(echo "$c" | sed "s#$DIR2#2x250#; s#$DIR64#64r#")
  awk -v n="$name" -v aw="$aw" -v bw="$bw" -v am="$am" -v bm="$bm" \
    'BEGIN { printf "%-34s %9s %9s %7.3f %9.1f %9.1f\n", n, aw, bw, bw / aw, am / 1024, bm / 1024 }'
done
rm -f /tmp/hta-compare.*.$$ /tmp/hta-compare.$$
