#!/usr/bin/env bash
# Session 22, call 3: the session's final collector and engine on the GPU.
# 1. GPU tests: tests/collector/test_gpu.py, tests/memory/test_memory_gpu.py.
# 2. The eight short apps of issue 14, native / collect / full, 2 rounds, from a user's install (clean_install.sh).
# 3. The collector's counts against Nsight Compute (fidelity.py, ncu x3) on the microbenchmark and zero_fill.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s22/call3/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 200 python3 -m pytest -q tests/collector/test_gpu.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
mkdir -p /tmp/zf
for p in microbench zero_fill; do
  nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1
done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 110 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -12
done
stamp done
