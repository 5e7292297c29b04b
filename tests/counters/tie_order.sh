#!/bin/sh
# Wrapper for golden_check.py: runs hta with HTA's numpy tie order.
exec "$HTA_REAL" "$@" --hta-tie-order
