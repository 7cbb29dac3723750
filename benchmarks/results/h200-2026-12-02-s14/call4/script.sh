#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -20 /tmp/setup.txt; exit 1; }
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --check-only --apps pb_lu,cs_transpose,shoc_sort,cs_reduction 2>&1 | grep -v " ok " | tail -3
stamp exp
timeout 200 python3 benchmarks/.s14exp.py /tmp/ra/build 5
LD_DEBUG=statistics LD_PRELOAD=$REUSELENS_COLLECTOR_LIB /tmp/ra/build/shoc_sort -s 1 --passes 1 2>&1 >/dev/null | grep -i "total startup\|relocation" | head -5
ls -la $(dirname $REUSELENS_COLLECTOR_LIB); ldd $REUSELENS_COLLECTOR_LIB | head
stamp done
