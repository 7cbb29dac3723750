#!/usr/bin/env bash
# Session 23, call 4: buffers lent only while the engine's queue is idle (queued_sink.cpp: otherwise copied as
# before, so that the GPU runs ahead through the queue while the engine is behind; calls 1-3 lent whenever a
# buffer was left to the GPU, and LU's and fdtd2d's dense launches then waited for the engine), with eight
# buffers of 4 MiB (buffers8x4.patch; the same 32 MiB pinned as two of 16 MiB), so that a lent buffer is needed
# again only seven generations later. Paired on the eight short apps, 3 rounds, against the copy as before
# (installed, REUSELENS_LEND_BUFFERS=0, 2 x 16 MiB). Then the collector's GPU tests with the patched library.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call4/script.sh
source benchmarks/device_call.sh
HERE=benchmarks/results/h200-2026-12-03-s23/call4
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "build buffers8x4.patch beside"
timeout 200 bash benchmarks/build_revision.sh --patch "$HERE/buffers8x4.patch" /tmp/b84 > /tmp/b_b84.txt 2>&1 || { tail -20 /tmp/b_b84.txt; exit 1; }
LIB=$(grep libreuselens_collector /tmp/b_b84.txt)
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
stamp "paired: copy (2 x 16 MiB) / lend when idle (8 x 4 MiB)"
timeout 220 python3 benchmarks/ab_collector.py --a copy=installed,REUSELENS_LEND_BUFFERS=0 --b idle8x4=$LIB --apps $SHORT --rounds 3 --out /tmp/ab_i84 --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_i84/ab_collector.json $OUT/ab_idle8x4.json
for a in pb_lu pb_fdtd2d shoc_bfs_uiuc; do grep -h "context .*buffers of\|exit: engine finished" /tmp/ab_i84/runs/r0/$a-*/collector.log; grep -c "lent)" /tmp/ab_i84/runs/r0/$a-idle8x4/collector.log; grep -o "([0-9]* lent)" /tmp/ab_i84/runs/r0/$a-idle8x4/collector.log | tr -dc '0-9\n' | awk '{s+=$1} END {print "lent:", s}'; done
stamp "GPU tests with the patched library"
REUSELENS_COLLECTOR_LIB=$LIB timeout 200 python3 -m pytest -q -x tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py 2>&1 | tail -3
stamp done
