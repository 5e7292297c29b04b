#!/usr/bin/env bash
# `make test` runs this: the one test runner, tests/run.py (see tests/README.md).
exec python3 "$(dirname "$0")/run.py" "$@"
