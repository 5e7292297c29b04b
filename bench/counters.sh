#!/usr/bin/env bash
# Times hta counters / --augment / patterns / cupti on a generated 2 x 100 MB trace and prints
# seconds per million events (and the load alone, `hta info`, for comparison).
# usage: bench/counters.sh [TRACE_DIR]   (default: generates /tmp/hta-bench-counters)
set -euo pipefail
HTA=${HTA:-build/hta}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-/tmp/hta-bench-counters}
if [ ! -d "$DIR" ]; then
  python3 "$ROOT/tools/gen_kineto_trace.py" --out "$DIR" --ranks 2 --target-mb 100 --quiet
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
events=$("$HTA" info "$DIR" --format json --quiet | python3 -c \
  'import json,sys; t=json.load(sys.stdin)["ranks"]; print(sum(r[t["columns"].index("events")] for r in t["data"]))')
echo "trace: $DIR ($events events)"
t() {
  local name=$1; shift
  local s e
  s=$(date +%s.%N)
  "$@" >/dev/null
  e=$(date +%s.%N)
  [ -n "${LOAD:-}" ] || LOAD=$(awk -v s="$s" -v e="$e" 'BEGIN{print e-s}')
  awk -v n="$name" -v s="$s" -v e="$e" -v ev="$events" -v l="$LOAD" \
    'BEGIN{printf "%-28s %6.2f s  %6.3f s/M events  (minus load: %6.3f s/M events)\n", n, e-s, (e-s)/(ev/1e6), (e-s-l)/(ev/1e6)}'
}
t "load (hta info)" "$HTA" info "$DIR" --quiet
t "counters" "$HTA" counters "$DIR" --quiet
t "counters --series" "$HTA" counters "$DIR" --series --format csv --quiet
t "counters --augment" "$HTA" counters "$DIR" --augment "$OUT" --quiet
t "patterns --op aten::mm" "$HTA" patterns "$DIR" --op aten::mm --min-len 1 --quiet
t "cupti" "$HTA" cupti "$DIR" --quiet
