#!/usr/bin/env bash
# hta merge: recovered clock offsets on skewed generated ranks, every event
# kept and placed to the ns, pids/ids per rank, gzip, our loader on the
# result, libhtatrace files lined up through htaClockAnchor (docs/merge.md).
set -eu
BUILD=${BUILD:-build}
export BUILD
cd "$(dirname "$0")/../.."
[ -e "$BUILD/libhtatrace.so" ] || { echo "merge: $BUILD/libhtatrace.so missing (run make test)"; exit 1; }
if readelf -d "$BUILD/libhtatrace.so" 2>/dev/null | grep -q 'libasan'; then
  LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
  export LD_PRELOAD
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
HTA=${HTA:-$BUILD/hta} python3 -m unittest -v tests/merge/test_merge.py 2>&1 | tail -n 40
exit "${PIPESTATUS[0]}"
