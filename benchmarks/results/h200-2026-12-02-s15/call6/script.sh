#!/usr/bin/env bash
# Session 15, call 6: the LU silent-store guard on bits (NaN onto NaN), measured over its first 40 pivots.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "lu fix"
timeout 300 python3 benchmarks/value_fixes.py --src benchmarks/realapps/src --out /tmp/vf --fixes lu_guard_silent_store --rounds 3 --timeout 150 2>&1 | tee $OUT/value_fixes_lu.txt
cp /tmp/vf/value_fixes.json $OUT/value_fixes_lu.json 2>/dev/null
grep -c nan /tmp/vf/lu_guard_silent_store/run_before/app.stdout 2>/dev/null; tail -c 300 /tmp/vf/lu_guard_silent_store/run_before/app.stdout 2>/dev/null
stamp done
