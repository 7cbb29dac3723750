#!/usr/bin/env bash
# Session 22, call 3: the session's engine (prefetch in its first step) on the GPU, two settings paired, and the
# counts against Nsight Compute.
# 1. GPU tests: tests/collector/test_gpu.py, tests/memory/test_memory_gpu.py.
# 2. Paired with the defaults on five apps, 3 rounds: sixteen engine workers instead of twelve (call 2: eight were
#    13-18% slower on three of five apps, so the engine still gains from cores), and eight queue copy threads
#    instead of four (the copy of each launch's last buffer is on the app's path: 0.25 s over cs_transpose's 808
#    launches in session 20).
# 3. The collector's counts against Nsight Compute (fidelity.py, ncu x3) on the microbenchmark and zero_fill.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s22/call3/script.sh
source benchmarks/device_call.sh
APPS=cs_matrixMul,cs_transpose,pb_fdtd2d,shoc_bfs,shoc_sort
stamp "GPU tests"
timeout 200 python3 -m pytest -q tests/collector/test_gpu.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $APPS > /dev/null 2>&1
for B in w16=installed,REUSELENS_ENGINE_WORKERS=16 copy8=installed,REUSELENS_QUEUE_COPY_THREADS=8; do
  stamp "paired: the defaults, ${B%%=*}"
  timeout 150 python3 benchmarks/ab_collector.py --a now=installed --b $B --apps $APPS --rounds 3 --out /tmp/ab_${B%%=*} --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
  cp /tmp/ab_${B%%=*}/ab_collector.json $OUT/ab_${B%%=*}.json
done
mkdir -p /tmp/zf
for p in microbench zero_fill; do
  nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1
done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 110 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -12
done
stamp done
