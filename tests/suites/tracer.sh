#!/usr/bin/env bash
# libhtatrace: the C API tests (build/test-tracer, files checked with python3
# json) and the Python front.  BUILD names the build folder (default build).
# A sanitized build (make SAN=1) runs python3 with libasan preloaded.
set -eu
BUILD=${BUILD:-build}
export BUILD
cd "$(dirname "$0")/../.."
for f in "$BUILD/test-tracer" "$BUILD/libhtatrace.so" "$BUILD/libfakecudart.so"; do
  [ -e "$f" ] || { echo "tracer: $f missing (run make test)"; exit 1; }
done
if readelf -d "$BUILD/libhtatrace.so" 2>/dev/null | grep -q 'libasan'; then
  LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
  export LD_PRELOAD
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"  # python itself leaks at exit
  echo "tracer: sanitized build, python3 runs with $LD_PRELOAD"
fi
python3 -m unittest -v tests/tracer/test_c_api.py tests/tracer/test_python.py 2>&1 | tail -n 40
exit "${PIPESTATUS[0]}"
