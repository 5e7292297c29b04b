#!/usr/bin/env bash
# Error and memory conventions: statuses told apart by code, HTA_TRY forwarding,
# scratch arenas (tests/unit/test_errors.c).
set -eu
cd "$(dirname "$0")/../.."
"${BUILD:-build}/test_errors"
