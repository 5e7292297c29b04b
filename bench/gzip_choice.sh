#!/usr/bin/env bash
# Why ISA-L: loads one .json.gz rank with the ISA-L build and with a zlib-only
# build of the same loader, back to back (median of RUNS each), and times
# `igzip -dc` and `gzip -dc` on the file.
#   bench/gzip_choice.sh [FILE.json.gz] [RUNS]
set -eu
cd "$(dirname "$0")/.."
F=${1:-bench/out/2x250/gz/rank-0.json.gz}
RUNS=${2:-3}
make -s build/load_bench >/dev/null
make -s BUILD=build-zlib HAVE_ISAL= build-zlib/libhta.a >/dev/null
cc -O2 -Iinclude -o build-zlib/load_bench bench/load_bench.c build-zlib/libhta.a -lz -lm -lpthread
echo "isal: $(./build/load_bench "$F" "$RUNS" 1 | grep -o 'median_s=[0-9.]*.*mb_per_s=[0-9]*')"
echo "zlib: $(build-zlib/load_bench "$F" "$RUNS" 1 | grep -o 'median_s=[0-9.]*.*mb_per_s=[0-9]*')"
for tool in "igzip -dc" "gzip -dc"; do
  s=$(date +%s.%N); $tool "$F" >/dev/null; e=$(date +%s.%N)
  echo "$tool alone: $(echo "$e - $s" | bc) s"
done
