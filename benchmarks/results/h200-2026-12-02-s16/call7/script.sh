#!/usr/bin/env bash
# Session 16, call 7: the final engine (two-page window, shared words and straddling coalesced records in closed
# form) on the GPU: GPU tests (online = replay), paired against 5a81b85, and the suite's figures.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git log --oneline -1
stamp "gpu tests: collector + values"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "build 5a81b85"
timeout 200 bash benchmarks/build_revision.sh 5a81b85 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/B collect"
timeout 200 python3 benchmarks/ab_collector.py --a before=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b final=installed --apps pb_fdtd2d,cs_matrixMul,cs_transpose,shoc_sort,shoc_bfs,pb_lu,cs_reduction,shoc_bfs_uiuc --rounds 2 --mode collect --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | grep -v "^round\|^build" | tail -12
stamp "suite: native, collect, full"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -14
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
stamp done
