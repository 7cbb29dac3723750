#!/usr/bin/env bash
# Session 23, call 5: the session's final collector (lending not adopted; a destroyed context's buffers are no
# longer reused by a context created later, destroy.patch).
# 1. GPU tests: collector (incl. a cudaDeviceReset between two rounds of launches), values, memory.
# 2. The reset app under the collector without destroy.patch (built beside with it taken back): what a run
#    with a context destroyed midway got before.
# 3. The eight short apps, native / collect / full, 2 rounds, from a user's install (clean_install.sh).
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call5/script.sh
source benchmarks/device_call.sh
HERE=benchmarks/results/h200-2026-12-03-s23/call5
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 300 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "the reset app without destroy.patch"
timeout 200 bash benchmarks/build_revision.sh --patch "$HERE/destroy.patch" /tmp/old -R > /tmp/b_old.txt 2>&1 || { tail -20 /tmp/b_old.txt; }
OLD=$(grep libreuselens_collector /tmp/b_old.txt)
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/apps tests/gpu/apps.cu
for side in old new; do
  L=$([ $side = old ] && echo "$OLD" || echo "$REUSELENS_COLLECTOR_LIB")
  rm -rf /tmp/reset_$side
  REUSELENS_COLLECTOR_LIB=$L timeout 60 reuselens profile --no-analyze --run-dir /tmp/reset_$side -- /tmp/apps reset 4; echo "$side: exit $?"
  python3 -c "import json,sys; r=json.load(open('/tmp/reset_$side/run.json')); print('$side:', r.get('status'), r.get('partial_reason'), [(l['status'], l['records']) for l in r['launches'] if 'stencil' in l['kernel']])"
  grep -i "context\|error\|fault" /tmp/reset_$side/collector.log | head -6
done
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
stamp done
