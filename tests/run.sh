#!/usr/bin/env bash
# Runs every test suite; each suite is a script in tests/suites/.
set -u
rc=0
for s in tests/suites/*.sh; do
  [ -e "$s" ] || continue
  echo "== $s"
  bash "$s" || { echo "FAILED: $s"; rc=1; }
done
exit $rc
