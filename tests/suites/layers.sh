#!/usr/bin/env bash
# Layering: every call between library folders goes down (src/layers.txt).
set -eu
cd "$(dirname "$0")/../.."
python3 tests/layers/check.py "${BUILD:-build}"
python3 -m unittest -q tests/layers/test_check.py
