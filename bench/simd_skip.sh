#!/usr/bin/env bash
# The lexer's SIMD structure walk (src/trace/json_scan.c) against its byte-by-byte skip (issue 36):
# user CPU seconds of one load (load_bench FILE 1 1) with HTA_SIMD=scalar, avx2 and avx512, runs
# alternated, medians of RUNS, on three files made here:
#   dense  args of long values the model skips, tokens a few bytes apart ([[1234, 56], [7]], "c10::Half")
#   str    long strings (stack-like paths with escaped quotes) in a value the model skips, indented
#   HTA_SIMD_WALK_AFTER=0 on a Kineto rank: every skipped container walked (Kineto's are a few bytes)
# With the default (walk after 256 bytes) Kineto's values never reach the walk: that rank is shown too.
#   bench/simd_skip.sh [KINETO_RANK.json] [RUNS]
set -eu
cd "$(dirname "$0")/.."
RANK=${1:-}
RUNS=${2:-5}
OUT=bench/out/simd
make -s build/load_bench >/dev/null
mkdir -p "$OUT"
[ -f "$OUT/dense.json" ] || /usr/bin/python3 - "$OUT" <<'EOF'
import json, random, sys
out = sys.argv[1]
rng = random.Random(1)
def ev(i, args):
    return {"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % (i % 50), "pid": 1, "tid": 1, "ts": 1000 + i * 10,
            "dur": 5, "args": args}
evs = [ev(i, {"External id": i, "Dims": [[rng.randint(1, 4096) for _ in range(rng.randint(0, 4))] for _ in range(60)],
              "Types": ["c10::BFloat16" if rng.random() < .5 else "float" for _ in range(40)],
              "Inputs": [""] * 30, "nested": {"a": [1, 2.5, -3e4, True, None, {"k": "v"}] * 10}})
       for i in range(30000)]
json.dump({"schemaVersion": 1, "traceEvents": evs}, open(out + "/dense.json", "w"))
st = lambda: ["/usr/lib/python3.10/site-packages/torch/nn/modules/module.py(%d): _call_impl \"x\" " %
              rng.randint(1, 2000) + "y" * rng.randint(0, 80) for _ in range(12)]
evs = [ev(i, {"External id": i, "Stack": st()}) for i in range(30000)]
json.dump({"schemaVersion": 1, "traceEvents": evs}, open(out + "/str.json", "w"), indent=2)
EOF

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
user_s() { { /usr/bin/time -f "%U" env "$@" ./build/load_bench "$F" 1 1 >/dev/null; } 2>&1 | tail -1; }

run() { # name, extra env
  local name=$1; shift
  for _ in $(seq "$RUNS"); do
    for p in scalar avx2 avx512; do echo "$p $(user_s HTA_SIMD=$p "$@")"; done
  done > /tmp/hta-simd.$$
  printf '  %-28s' "$name"
  for p in scalar avx2 avx512; do printf ' %s %ss' "$p" "$(awk -v p=$p '$1 == p {print $2}' /tmp/hta-simd.$$ | median)"; done
  echo
  rm -f /tmp/hta-simd.$$
}

echo "user CPU s of one load, medians of $RUNS, alternated ($(grep -c ^processor /proc/cpuinfo) cores):"
F=$OUT/dense.json; run "dense ($(( $(wc -c < "$F") / 1000000 )) MB)"
F=$OUT/str.json; run "str ($(( $(wc -c < "$F") / 1000000 )) MB)"
if [ -n "$RANK" ]; then
  F=$RANK; run "Kineto rank, default" 
  F=$RANK; run "Kineto rank, walk all" HTA_SIMD_WALK_AFTER=0
fi
