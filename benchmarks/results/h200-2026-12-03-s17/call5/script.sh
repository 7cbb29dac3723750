#!/usr/bin/env bash
# Session 17, call 5 (last device time): the PyTorch loop collected with the session's engine (native: call 4,
# 10.879 s, minutes before on the same host), then the suite once.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "pytorch 40, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt5 --steps 40 --rounds 1 --modes collect --timeout 100 > $OUT/pytorch.txt 2>&1; tail -3 $OUT/pytorch.txt
grep "exit:" /tmp/pt5/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "suite once"
timeout 70 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv5 --rounds 1 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -13
stamp done
