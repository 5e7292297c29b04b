#!/usr/bin/env bash
# Load benchmark (issue "Foundation"): 2 ranks x 250 MB generated Kineto traces,
# as .json and .json.gz.  Prints MB/s of JSON text (median of RUNS loads), peak
# RSS as a fraction of the JSON size, and `igzip -dc` on the same .gz files.
#   bench/load.sh [DIR] [RUNS]     (DIR default bench/out/2x250)
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-bench/out/2x250}
RUNS=${2:-5}
GEN=${GEN:-tools/gen_kineto_trace.py}
make -s build/load_bench build/hta >/dev/null

if [ ! -f "$DIR/json/rank-1.json" ]; then
  echo "generating $DIR/json (2 ranks x 250 MB)..."
  python3 "$GEN" --out "$DIR/json" --ranks 2 --target-mb 250 --quiet
fi
if [ ! -f "$DIR/gz/rank-1.json.gz" ]; then
  echo "compressing to $DIR/gz (gzip -6, as torch's profiler writes)..."
  mkdir -p "$DIR/gz"
  for f in "$DIR"/json/*.json; do gzip -6 -c "$f" > "$DIR/gz/$(basename "$f").gz"; done
fi

json_bytes=$(cat "$DIR"/json/*.json | wc -c)
echo "JSON: $((json_bytes / 1000000)) MB in 2 ranks; gz: $(( $(cat "$DIR"/gz/*.gz | wc -c) / 1000000 )) MB; $(nproc) cores"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

time_cmd() { # prints seconds of wall time of "$@", median of RUNS
  for _ in $(seq "$RUNS"); do
    s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median
}

one=$DIR/json/rank-0.json
one_gz=$DIR/gz/rank-0.json.gz
echo
echo "one rank, one core (1 thread):"
./build/load_bench "$one" "$RUNS" 1 | sed 's/^/  json  /'
./build/load_bench "$one_gz" "$RUNS" 1 | sed 's/^/  gz    /'
t_igzip=$(time_cmd igzip -dc "$one_gz")
mb=$(( $(wc -c < "$one") ))
echo "  igzip -dc alone: $t_igzip s = $(echo "$mb / 1000000 / $t_igzip" | bc) MB/s of JSON"

echo
echo "both ranks (folder, ranks in parallel threads):"
./build/load_bench "$DIR/json" "$RUNS" 0 | sed 's/^/  json  /'
./build/load_bench "$DIR/gz" "$RUNS" 0 | sed 's/^/  gz    /'

echo
echo "peak RSS, both ranks (fraction of the 2-rank JSON size):"
for d in json gz; do
  kb=$( { /usr/bin/time -f "%M" ./build/load_bench "$DIR/$d" 1 0 >/dev/null; } 2>&1 | tail -1)
  echo "  load       $d: $((kb / 1024)) MiB = $(echo "scale=3; $kb * 1024 / $json_bytes" | bc)x"
  kb=$( { /usr/bin/time -f "%M" ./build/hta info "$DIR/$d" --quiet >/dev/null; } 2>&1 | tail -1)
  echo "  hta info   $d: $((kb / 1024)) MiB = $(echo "scale=3; $kb * 1024 / $json_bytes" | bc)x (load + HTA's table per rank)"
done
