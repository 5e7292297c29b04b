#!/usr/bin/env bash
# Times `hta efficiency` against `hta kernels` on one generated 250 MB rank (issue 28: at most 1.5x), runs
# alternated, and prints the median wall-clock and CPU (user + sys) seconds of each and their ratios; CPU
# seconds are the steadier figure on a shared machine.  The generator records
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
wall() {  # "wall cpu" seconds of one run (cpu: user + sys of the process, from python's resource module)
  python3 - "$@" <<'P'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f %.3f" % (w, r.ru_utime + r.ru_stime))
P
}
k=(); e=(); kc=(); ec=()
for _ in $(seq "$RUNS"); do
  read -r w c < <(wall "$HTA" kernels "$DIR" --quiet); k+=("$w"); kc+=("$c")
  read -r w c < <(wall "$HTA" efficiency "$DIR" --quiet); e+=("$w"); ec+=("$c")
done
median() { printf "%s\n" "$@" | sort -n | awk '{v[NR]=$1} END{print (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
mk=$(median "${k[@]}"); me=$(median "${e[@]}"); mkc=$(median "${kc[@]}"); mec=$(median "${ec[@]}")
mb=$(du -m "$DIR" | tail -1 | cut -f1)
rows=$("$HTA" efficiency "$DIR" --quiet --format csv | awk '/^# op_roofline/{f=1;next} /^$/{f=0} f' | tail -n +2 | wc -l)
printf "trace %s (%s MB), %s runs each\n" "$DIR" "$mb" "$RUNS"
printf "kernels     median wall %.3f s, cpu %.3f s   (wall: %s)\n" "$mk" "$mkc" "${k[*]}"
printf "efficiency  median wall %.3f s, cpu %.3f s   (wall: %s)   %d op_roofline rows\n" "$me" "$mec" "${e[*]}" "$rows"
awk -v a="$me" -v b="$mk" -v c="$mec" -v d="$mkc" \
  'BEGIN{printf "ratio efficiency / kernels: wall %.2f, cpu %.2f (target <= 1.5)\n", a/b, c/d}'
