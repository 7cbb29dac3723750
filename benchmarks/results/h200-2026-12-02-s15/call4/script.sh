#!/usr/bin/env bash
# Session 15, call 4: the LU silent-store guard measured over its first 40 pivots (where its silent stores are).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "lu fix"
timeout 300 python3 benchmarks/value_fixes.py --src benchmarks/realapps/src --out /tmp/vf --fixes lu_guard_silent_store --rounds 3 --timeout 150 2>&1 | tee $OUT/value_fixes_lu.txt
cp /tmp/vf/value_fixes.json $OUT/value_fixes_lu.json 2>/dev/null
stamp done
