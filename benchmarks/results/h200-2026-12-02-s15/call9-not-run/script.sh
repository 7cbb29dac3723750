#!/usr/bin/env bash
# Session 15, call 9: uniform companions read in place (no serial expansion): value GPU tests, shoc_bfs collect vs
# values.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: values"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "shoc_bfs, pb_fdtd2d: collect vs values"
timeout 90 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect,values --jobs 16 --apps shoc_bfs,pb_fdtd2d 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -6
stamp done
