#!/usr/bin/env bash
# Prepared in session 23, not run (no device time left): how much a coalesced shadow segment (docs/engine.md,
# "Where the next factor is") could take over on real applications. Records traces of launch ranges of six suite
# apps (the engine-bound ones and the median ones) and prints benchmarks/record_shapes.py's table: per run the
# records' compact forms and the share of global records that cover one aligned 128-byte segment whose previous
# access did too (the only accesses a 16-byte summary would serve instead of 32 entries).
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s23/next-segments/script.sh
source benchmarks/device_call.sh
APPS=cs_matrixMul,cs_transpose,pb_lu,pb_fdtd2d,shoc_bfs,shoc_sort
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $APPS > /dev/null 2>&1
stamp "record"
cd /tmp/rv/build || exit 1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/seg/pb_fdtd2d -- ./pb_fdtd2d > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/seg/cs_transpose -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/seg/cs_matrixMul -- ./cs_matrixMul -wA=64 -hA=64 -wB=64 -hB=64 > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:200 --run-dir /tmp/seg/pb_lu -- ./pb_lu > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:4 --run-dir /tmp/seg/shoc_bfs -- ./shoc_bfs -s 4 --passes 1 > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:16 --run-dir /tmp/seg/shoc_sort -- ./shoc_sort -s 1 --passes 1 > /dev/null 2>&1
cd - > /dev/null || exit 1
stamp "record_shapes"
timeout 300 python3 benchmarks/record_shapes.py /tmp/seg/* 2>&1 | tee $OUT/record_shapes.txt
stamp done
