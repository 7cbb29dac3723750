#!/usr/bin/env bash
# Session 15, call 7: uniform (compact) value companions, trace version 3: value GPU tests, the value cases
# re-recorded, and the value cost over the suite (one round).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
stamp "gpu tests: values + collector"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -8
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared replicated approx approx_far approx_double approx_int; do
  timeout 60 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || { echo "FAIL $c"; tail -3 /tmp/fx/$c.log; }
done
for m in /tmp/fx/approx/modules/*.cubin; do nvdisasm -c $m > /tmp/fx/$(basename $m .cubin).sass; done
python3 - <<'PY'
import numpy as np, glob
from reuselens.analyzer.replay import RECORD_DTYPE
uni = tot = 0
for f in glob.glob("/tmp/fx/*/traces/*.rltrace"):
    r = np.fromfile(f, dtype=np.uint8)[64:].view(RECORD_DTYPE)
    c = r[r["type"] == 4]
    tot += len(c); uni += int((c["flags"] & 1).sum())
print(f"companions {tot}, uniform {uni}")
PY
cd $REPO; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
stamp "suite: collect vs values"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect,values --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -4
stamp done
