#!/usr/bin/env bash
# hta counters / patterns / diff / cupti: golden comparison and asserting tests.
set -euo pipefail
HTA=${HTA:-build/hta}
BUILD=${BUILD:-build}
HTA=$(cd "$(dirname "$HTA")" && pwd)/$(basename "$HTA")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHARED=${HTA_SHARED:-$ROOT/../shared}
T=$SHARED/traces/hta
if [ ! -d "$T" ]; then echo "skip: $T not found"; exit 0; fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$ROOT"

echo "-- golden: counters"
python3 tests/golden/check.py "$HTA" queue_length_summary memory_bw_summary time_spent_blocked_on_full_queue

echo "-- the queue/bandwidth differences are tie order alone: with numpy's order all goldens match but TF Q7"
out=$(HTA_REAL="$HTA" python3 "$SHARED/tools/golden_check.py" "$ROOT/tests/counters/tie_order.sh" "$T" \
      "$SHARED/golden/hta" queue_length_summary memory_bw_summary time_spent_blocked_on_full_queue --verbose || true)
echo "$out" | tail -1
[ "$(echo "$out" | grep -c .)" = 2 ] || fail "numpy tie order: $out"
echo "$out" | grep -q "^trace_file_list queue_length_summary/queue_length_summary: row 0 column 'count': 8.0 != golden 6.0" \
  || fail "numpy tie order: $out"

echo "-- counters: values"
python3 tests/counters/check_counters.py "$HTA" "$T"

echo "-- counters --augment"
for d in negative_queue_length_values_check call_stack/backward_thread.json trace_filter critical_path/cuda_event_sync; do
  rm -rf "$TMP/aug" && mkdir "$TMP/aug"
  python3 tests/counters/check_augment.py "$HTA" "$T/$d" "$TMP/aug"
  [ -z "$(ls "$TMP/aug" | grep -v _with_counters)" ] || fail "stray files in $TMP/aug: $(ls "$TMP/aug")"
done
n=$(zcat "$TMP"/aug/*_with_counters.json.gz | python3 -c "import json,sys; print(sum(e.get('ph')=='C' for e in json.load(sys.stdin)['traceEvents']))")
[ "$n" = 12 ] || fail "cuda_event_sync: $n counter events, expected 12 (test-expectations O)"
if "$HTA" counters "$T/critical_path/cuda_event_sync" --augment "$TMP/no-such-dir" --quiet 2>/dev/null; then
  fail "augment into a missing directory must fail"
fi

echo "-- diff: TraceDiff goldens"
python3 tests/counters/check_diff.py "$HTA" "$T" "$SHARED/golden/hta"
if "$HTA" diff "$T/trace_diff/control" --quiet 2>/dev/null; then fail "diff with one trace must fail"; fi
echo "counters suite: ok"
