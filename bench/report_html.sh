#!/bin/sh
# The HTML page's cost over the text report: `hta report` with and without `--html` on a generated job of
# N ranks (default 64, 1 layer, 3 steps, rank 7 a straggler), runs alternated; medians of RUNS (default 5)
# of wall-clock seconds, and their ratio (target: at most 2).  The job is generated once into
# bench/out/html-rN (git-ignored).
#   bench/report_html.sh [N] [RUNS]
set -eu
cd "$(dirname "$0")/.."
HTA=${HTA:-build/hta}
N=${1:-64}
RUNS=${2:-5}
JOB=bench/out/html-r$N
[ -d "$JOB" ] || python3 tools/gen_kineto_trace.py --out "$JOB" --ranks "$N" --layers 1 --steps 3 --straggler 7 \
  --quiet
python3 - "$HTA" "$JOB" "$RUNS" <<'PY'
import os, statistics, subprocess, sys, tempfile, time
hta, job, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = os.path.join(tempfile.mkdtemp(), "r.html")
def once(*extra):
    s = time.perf_counter()
    subprocess.run([hta, "report", job, "--quiet", *extra], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - s
text, html = [], []
for _ in range(runs):
    text.append(once())
    html.append(once("--html", out))
t, h = statistics.median(text), statistics.median(html)
print("report, %s: text %.3f s, --html %.3f s (medians of %d), ratio %.2f; page %.2f MB"
      % (job, t, h, runs, h / t, os.path.getsize(out) / 1e6))
PY
