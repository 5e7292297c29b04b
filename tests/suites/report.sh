#!/usr/bin/env bash
# hta report: figures equal the analyses, findings follow from them.
set -eu
cd "$(dirname "$0")/../.."
HTA=${HTA:-build/hta} python3 -m unittest -q tests/report/test_report.py
