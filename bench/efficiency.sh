#!/usr/bin/env bash
# Times `hta efficiency` against `hta kernels` on one generated 250 MB rank (issue 28: at most 1.5x), runs
# alternated, and prints the median wall-clock seconds of each and their ratio.  The generator records
# shapes (Input Dims, Input type, Concrete Inputs) on the operators it writes.
# usage: bench/efficiency.sh [TRACE_DIR] [RUNS]   (env HTA = binary, default build/hta)
set -euo pipefail
HTA=${HTA:-build/hta}
DIR=${1:-/tmp/hta-bench-efficiency}
RUNS=${2:-5}
GEN=$(cd "$(dirname "$0")/.." && pwd)/tools/gen_kineto_trace.py
if [ ! -d "$DIR" ]; then
  python3 "$GEN" --out "$DIR" --ranks 1 --target-mb 250 --quiet >/dev/null
fi
wall() {  # wall-clock seconds of one run
  local s e
  s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
  echo "$s $e" | awk '{printf "%.3f\n", $2-$1}'
}
k=(); e=()
for _ in $(seq "$RUNS"); do
  k+=("$(wall "$HTA" kernels "$DIR" --quiet)")
  e+=("$(wall "$HTA" efficiency "$DIR" --quiet)")
done
median() { printf "%s\n" "$@" | sort -n | awk '{v[NR]=$1} END{print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
mk=$(median "${k[@]}"); me=$(median "${e[@]}")
mb=$(du -m "$DIR" | tail -1 | cut -f1)
rows=$("$HTA" efficiency "$DIR" --quiet --format csv | awk '/^# op_roofline/{f=1;next} /^$/{f=0} f' | tail -n +2 | wc -l)
printf "trace %s (%s MB), %s runs each\n" "$DIR" "$mb" "$RUNS"
printf "kernels     median %.3f s   (%s)\n" "$mk" "${k[*]}"
printf "efficiency  median %.3f s   (%s)   %d op_roofline rows\n" "$me" "${e[*]}" "$rows"
awk -v a="$me" -v b="$mk" 'BEGIN{printf "ratio efficiency / kernels: %.2f (target <= 1.5)\n", a/b}'
