#!/usr/bin/env bash
# Session 23, call 6: the final collector (call 5's, and a destroyed context's modules are no longer unpatched at
# their unload, which came after the context and failed: call 5's reset run logged "sanitizerUnpatchModule failed").
# 1. GPU tests: collector (incl. the reset run, now with no error in its log or run.json), values, memory.
# 2. The eight short apps, native / collect / full, 2 rounds, from a user's install (clean_install.sh).
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call6/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 300 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
stamp done
