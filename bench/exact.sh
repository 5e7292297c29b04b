#!/usr/bin/env bash
# Same bytes from two builds: every command below on every trace folder and file under the given roots
# (default tests/data, and /work/shared/traces where it exists) and on the given generated jobs; each run's
# stdout, stderr and exit status are kept under OUT, and `compare` cmps two such folders (info's load_s, a
# measured time, and the table widths it sets are left out).  docs/scaling.md ("A compact graph").
#   bench/exact.sh run HTA OUT [ROOT...]      e.g. bench/exact.sh run build/hta /tmp/new tests/data /tmp/jobs/r4
#   bench/exact.sh compare OUT_A OUT_B         prints each output that differs and the count
# ARGS adds options to every command (ARGS="--threads 2" with HTA_SPLIT_MIN=4096 in the environment: every
# file of a few kilobytes parsed in parts, src/trace/split.c, against one thread's run of the other build).
set -uo pipefail
mode=${1:-}; shift || true
if [ "$mode" = compare ]; then
  A=$1; B=$2; [ -d "$B" ] || { echo "$B: no such folder" >&2; exit 2; }; n=0; same=0; differ=0
  for f in $(ls "$A"); do
    case $f in *.in) continue;; esac
    [ -f "$B/$f" ] || continue
    n=$((n + 1))
    if cmp -s "$A/$f" "$B/$f"; then same=$((same + 1))
    elif [[ $f == *.info*.out ]] && diff -q -w "$A/$f" "$B/$f" >/dev/null; then same=$((same + 1))
    else differ=$((differ + 1)); echo "differs: $f ($(cat "$A/${f%.*}.in"))"; fi
  done
  echo "compared $n outputs: $same same, $differ differ"
  exit $((differ != 0))
fi
[ "$mode" = run ] || { echo "usage: bench/exact.sh run HTA OUT [ROOT...] | compare OUT_A OUT_B" >&2; exit 2; }
HTA=$1; OUT=$2; shift 2
ROOTS=("$@")
[ ${#ROOTS[@]} -gt 0 ] || { ROOTS=(tests/data); [ -d /work/shared/traces ] && ROOTS+=(/work/shared/traces); }
mkdir -p "$OUT"
files=$(find "${ROOTS[@]}" -name "*.json*" -size +1k | grep -v labels.json | sort)
inputs=$( (echo "$files" | xargs -n1 dirname | sort -u; echo "$files") | grep -v '^$')
CMDS=("report" "report --format json" "report --hta-compat" "critical-path --format json"
  "critical-path --hta-compat --format json" "critical-path --all-ranks --what-if cpu=x0.5 --format json"
  "critical-path --what-if gpu=x0.7 --breakdown --format json"
  "critical-path --all-ranks --what-if rank:0=median --format json"
  "temporal" "idle" "kernels" "overlap" "launch" "annotations" "ops" "cpu-ops" "counters" "comms" "efficiency"
  "stragglers" "patterns" "cupti" "info" "events" "kernels --hta-compat" "temporal --hta-compat"
  "idle --hta-compat" "overlap --hta-compat" "counters --hta-compat" "info --hta-compat" "events --hta-table")
i=0
for in in $inputs; do
  i=$((i + 1))
  for c in "${CMDS[@]}"; do
    n="$OUT/$i.$(echo "$c" | tr -c 'a-z0-9\n' '_')"
    echo "$in" > "$n.in"
    # shellcheck disable=SC2086
    timeout 120 "$HTA" $c "$in" ${ARGS:-} > "$n.out" 2> "$n.err"; echo $? > "$n.rc"
    if [ "${c%% *}" = info ]; then sed -i 's/ [0-9.]*$//' "$n.out"; fi # load_s: a measured time
  done
done
