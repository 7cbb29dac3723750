#!/usr/bin/env bash
# Session 23, call 3: lent buffers with eight buffers of 8 MiB (buffers8.patch: the collector's defaults; call 2's
# REUSELENS_BUFFERS and REUSELENS_BUFFER_BYTES never reached the apps, the launcher sets those itself, so both of
# its sides lent two buffers of 16 MiB). Paired on the eight short apps, 3 rounds: the copy as before (installed,
# REUSELENS_LEND_BUFFERS=0, 2 x 16 MiB) against buffers8 lending; then buffers8 copying against buffers8 lending.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call3/script.sh
source benchmarks/device_call.sh
HERE=benchmarks/results/h200-2026-12-03-s23/call3
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "build buffers8.patch beside"
timeout 200 bash benchmarks/build_revision.sh --patch "$HERE/buffers8.patch" /tmp/b8 > /tmp/b_b8.txt 2>&1 || { tail -20 /tmp/b_b8.txt; exit 1; }
LIB=$(grep libreuselens_collector /tmp/b_b8.txt)
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
stamp "paired: copy (2 x 16 MiB) / lend (8 x 8 MiB)"
timeout 220 python3 benchmarks/ab_collector.py --a copy=installed,REUSELENS_LEND_BUFFERS=0 --b lend8=$LIB --apps $SHORT --rounds 3 --out /tmp/ab_l8 --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_l8/ab_collector.json $OUT/ab_lend8.json
grep -h "context .*buffers of\|exit: engine finished" /tmp/ab_l8/runs/r0/pb_lu-*/collector.log
grep -h "launch 1[0-3]: " /tmp/ab_l8/runs/r0/pb_lu-lend8/collector.log | cut -c1-220
stamp "paired: copy (8 x 8 MiB) / lend (8 x 8 MiB)"
timeout 220 python3 benchmarks/ab_collector.py --a copy8=$LIB,REUSELENS_LEND_BUFFERS=0 --b lend8=$LIB --apps $SHORT --rounds 3 --out /tmp/ab_c8 --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_c8/ab_collector.json $OUT/ab_copy8_lend8.json
stamp done
