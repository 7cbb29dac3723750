#!/usr/bin/env bash
# Session 15, call 8: the final engine (uniform companions expanded into a reused vector): value GPU tests and the
# value cost over the suite (one round).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
stamp "gpu tests: values"
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "suite: collect vs values"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect,values --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -14
grep -h "exit: engine: engine steps" /tmp/rv/runs/r1/shoc_bfs-values/collector.log /tmp/rv/runs/r1/shoc_bfs-collect/collector.log 2>/dev/null | cut -c1-300
stamp done
