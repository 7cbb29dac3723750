#!/usr/bin/env bash
# Session 14, call 5: value mode (issue 19) on the GPU: build (value patch), GPU tests, fixtures, cost vs collect.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
ls $(dirname $REUSELENS_COLLECTOR_LIB)
stamp "gpu tests: values"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py 2>&1 | tail -40
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared; do
  timeout 60 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || { echo "FAIL $c"; tail -3 /tmp/fx/$c.log; }
done
cd $REPO; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
du -sh /tmp/fx; grep -h "exit:" /tmp/fx/table/collector.log | cut -c1-200
stamp "gpu tests: collector regression"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py 2>&1 | tail -3
stamp "suite: collect vs values"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,values --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -16
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
grep -h "exit: engine: engine steps" /tmp/rv/runs/r1/*-values/collector.log | cut -c1-260
stamp done
