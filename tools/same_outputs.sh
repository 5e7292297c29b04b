#!/usr/bin/env bash
# Two builds of hta on the same traces and commands, every output compared byte for byte (issue 36,
# "no loss of exactness"): each command's stdout and exit status with build A and with build B.
#   tools/same_outputs.sh A_HTA B_HTA DIR...      (the trace files and rank folders under each DIR)
# stderr (warnings, errors) is compared too.  Prints each difference and then "N outputs compared, M differ".  B runs with HTA_SPLIT_MIN (default
# 4096 bytes) so that a file of a few kilobytes is parsed by --threads 2 in parts (src/trace/split.c).
# info's load_s column (seconds) is the one figure blanked before comparing.
set -u
A=$1 B=$2
shift 2
SPLIT=${HTA_SPLIT_MIN:-4096}
out=$(mktemp -d)
targets() { # trace files, and folders that hold more than one
  for d in "$@"; do
    find "$d" -type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.gz' \) -size -64M
    find "$d" -type d | while read -r f; do
      [ "$(find "$f" -maxdepth 1 -type f \( -name '*.json' -o -name '*.gz' \) | wc -l)" -gt 1 ] && echo "$f"
    done
  done | sort -u
}
CMDS=("info" "events" "temporal" "idle" "kernels" "overlap" "launch" "annotations" "stragglers" "ops"
      "cpu-ops" "counters" "comms" "report" "info --hta-compat" "temporal --hta-compat" "idle --hta-compat"
      "kernels --hta-compat" "overlap --hta-compat" "counters --hta-compat" "events --hta-table")
n=0 bad=0
while read -r t; do
  for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    timeout 120 "$A" $c "$t" --format csv --threads 2 > "$out/a" 2> "$out/ea"; ra=$?
    # shellcheck disable=SC2086
    HTA_SPLIT_MIN=$SPLIT timeout 120 "$B" $c "$t" --format csv --threads 2 > "$out/b" 2> "$out/eb"; rb=$?
    # the ranks' rows (they hold a path) end with load_s
    if [ "${c%% *}" = info ]; then sed -i -E '/\//s/,[0-9.e-]+$/,LOAD_S/' "$out/a" "$out/b"; fi
    n=$((n + 1))
    if [ $ra != $rb ] || ! cmp -s "$out/a" "$out/b" || ! cmp -s "$out/ea" "$out/eb"; then
      bad=$((bad + 1))
      echo "DIFFER: $c $t (exit $ra / $rb)"
      diff "$out/a" "$out/b" | head -5
    fi
  done
done < <(targets "$@")
echo "$n outputs compared, $bad differ"
rm -rf "$out"
