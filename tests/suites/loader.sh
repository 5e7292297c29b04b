#!/usr/bin/env bash
# Loader: counts against independent Python counts and HTA's goldens, exact ns, bad input.
set -eu
cd "$(dirname "$0")/../.."
HTA=${HTA:-build/hta} python3 -m unittest -q tests/loader/test_loader.py
"${BUILD:-build}/test_raw" tests/data/hta/critical_path/simple_add
