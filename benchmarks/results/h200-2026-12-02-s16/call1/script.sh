#!/usr/bin/env bash
# Session 16, call 1: the final value engine (uniform companions read in place) on the GPU, and the value mode's
# cost over the suite (issue 19's last figure); object-level paired with native in the same rounds (issue 18).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
git log --oneline -1
stamp "gpu tests: values + collector"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -4
stamp "suite: native, collect, values, objects"
timeout 330 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,values,objects --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -20
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
stamp done
