#!/usr/bin/env bash
# Session 17, call 1: s16's last engine commits (shared vectors closed form, run_group_figures, off_issue) on the GPU.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git log --oneline -1; nproc
stamp "gpu tests: collector + values"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -3
stamp "suite: native, collect, full"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -14
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
stamp "pytorch 40, native + collect"
timeout 150 python3 benchmarks/pytorch_overhead.py --out /tmp/pt --steps 40 --rounds 1 --modes native,collect --timeout 110 > $OUT/pytorch.txt 2>&1; tail -5 $OUT/pytorch.txt
grep "exit:" /tmp/pt/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp done
