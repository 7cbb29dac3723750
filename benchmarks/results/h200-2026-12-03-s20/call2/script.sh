#!/usr/bin/env bash
# Session 20, call 2: where `profile --no-analyze` spends the time the app does not, on the eight suite apps
# (benchmarks/overhead_split.py: native, attached with nothing instrumented, instrumented without the engine,
# collect; three rounds interleaved). Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call2/script.sh
source benchmarks/device_call.sh
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "overhead split, 3 rounds"
timeout 400 python3 benchmarks/overhead_split.py --src benchmarks/realapps/src --out /tmp/os --rounds 3 --jobs 16 --apps $APPS 2>&1 | grep -v "^round "
cp /tmp/os/overhead_split.json "$OUT/"
for a in pb_fdtd2d cs_transpose shoc_bfs; do grep -v " analysed, \|^\[ *[0-9.]*\] launch [0-9]*:" /tmp/os/runs/$a-collect-2/collector.log > "$OUT/$a-collect.log"; done
stamp done
