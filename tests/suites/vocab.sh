#!/usr/bin/env bash
# Name rules (hta/vocab.h): HTA's lists beside the corrected ones, step-name variants.
set -eu
cd "$(dirname "$0")/../.."
"${BUILD:-build}/test_vocab"
