#!/usr/bin/env bash
# hta merge throughput on a generated 2 x 100 MB Kineto set: MB/s of input
# (uncompressed JSON, end to end: load, align, rewrite, write), s per million
# events, and peak RSS.  Usage: bench/merge.sh [DIR] (default /tmp/hta-merge-bench).
set -eu
cd "$(dirname "$0")/.."
HTA=${HTA:-build/hta}
DIR=${1:-/tmp/hta-merge-bench}
OUT=${OUT:-/tmp/hta-merge-bench-out}
mkdir -p "$OUT"
if [ ! -e "$DIR/rank-1.json" ]; then
  python3 tools/gen_kineto_trace.py --out "$DIR" --ranks 2 --target-mb 100 --quiet
fi
bytes=$(cat "$DIR"/rank-*.json | wc -c)
events=$("$HTA" info "$DIR" --format json --quiet |
  python3 -c 'import json,sys; t=json.load(sys.stdin)["ranks"]; i=t["columns"].index("events"); print(sum(r[i] for r in t["data"]))')
echo "input: $DIR, $((bytes / 1000000)) MB, $events events"
for spec in "none json" "collective json" "collective json.gz"; do
  set -- $spec
  for run in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$OUT/time" "$HTA" merge "$DIR" -o "$OUT/merged.$2" --align "$1" --quiet >/dev/null
    read -r s kb < "$OUT/time"
    echo "$s $kb"
  done | sort -n | head -1 | {
    read -r s kb
    awk -v a="$1" -v f="$2" -v s="$s" -v kb="$kb" -v b="$bytes" -v e="$events" \
      'BEGIN{printf "merge --align %-10s -> .%-7s %6.2f s  %6.0f MB/s  %5.2f s per million events  RSS %d MB\n", a, f, s, b/1e6/s, s/(e/1e6), kb/1024}'
  }
done
rm -rf "$OUT"
