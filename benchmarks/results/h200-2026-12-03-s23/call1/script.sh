#!/usr/bin/env bash
# Session 23, call 1: record buffers lent to the online engine instead of copied into its queue (drain.cpp).
# 1. GPU tests: collector (incl. lent buffers across a context reset, buffers of 64 records), values, memory.
# 2. Paired on the eight short apps, 3 rounds: lending off (REUSELENS_LEND_BUFFERS=0, the copy as before) against
#    lending on (the default now); then lending with 4 buffers of 8 MiB against the default 2 of 16 MiB.
# 3. The collector's counts against Nsight Compute (fidelity.py, ncu x3; default and smallest buffers).
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call1/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 420 python3 -m pytest -q -x tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -4
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
stamp "paired: copy (lending off) / lend"
timeout 200 python3 benchmarks/ab_collector.py --a copy=installed,REUSELENS_LEND_BUFFERS=0 --b lend=installed --apps $SHORT --rounds 3 --out /tmp/ab_lend --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_lend/ab_collector.json $OUT/ab_lend.json
grep -h "launch 1[0-9]: \|exit: engine finished" /tmp/ab_lend/runs/r0/pb_lu-lend/collector.log /tmp/ab_lend/runs/r0/cs_transpose-lend/collector.log | head -6
stamp "paired: lend 2 x 16 MiB / lend 4 x 8 MiB"
timeout 200 python3 benchmarks/ab_collector.py --a lend=installed --b lend4=installed,REUSELENS_BUFFERS=4,REUSELENS_BUFFER_BYTES=8388608 --apps $SHORT --rounds 3 --out /tmp/ab_lend4 --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_lend4/ab_collector.json $OUT/ab_lend4.json
mkdir -p /tmp/zf
for p in microbench zero_fill; do
  nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1
done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 110 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -12
done
stamp done
