#!/usr/bin/env bash
# Session 15, call 2: approximate redundancy and the shared/local silent-store rule on the GPU (value tests incl. the
# four approx cases, findings typed by nvdisasm), all value cases re-recorded with their SASS listing, and the
# three value fixes measured with ncu.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
stamp "gpu tests: values + collector"
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -25
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared replicated approx approx_far approx_double approx_int; do
  timeout 60 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || { echo "FAIL $c"; tail -3 /tmp/fx/$c.log; }
done
for m in /tmp/fx/approx/modules/*.cubin; do nvdisasm -c $m > /tmp/fx/$(basename $m .cubin).sass; done
cd $REPO; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
stamp "value fixes"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --check-only --jobs 16 --apps shoc_bfs_uiuc,shoc_sort,pb_lu > /dev/null 2>&1
timeout 330 python3 benchmarks/value_fixes.py --src benchmarks/realapps/src --out /tmp/vf --rounds 3 --timeout 120 2>&1 | tee $OUT/value_fixes.txt
cp /tmp/vf/value_fixes.json $OUT/ 2>/dev/null
stamp done
