#!/usr/bin/env bash
# The run context: rank selection, time origin, one way to choose ranks, option checks.
set -eu
cd "$(dirname "$0")/../.."
HTA=${HTA:-build/hta} python3 -m unittest -q tests/context/test_context.py
