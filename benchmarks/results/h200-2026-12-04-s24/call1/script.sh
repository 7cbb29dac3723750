#!/usr/bin/env bash
# Session 24, call 1: before building a coalesced shadow segment (docs/engine.md, "Where the next factor is"),
# (a) session 23's prepared next-segments script: the share of global records a 16-byte segment summary could
# serve on six suite apps' traces; (b) where the online engine's time goes per step on the eight short apps
# (collector.log's exit line), at the current code.
source benchmarks/device_call.sh
sed -n '/^APPS=/,$p' benchmarks/results/h200-2026-12-03-s23/next-segments/script.sh > /tmp/seg.sh
stamp "next-segments"
source /tmp/seg.sh
stamp "collect, 1 round"
APPS8=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect --jobs 16 --apps $APPS8 --keep-runs 2>&1 | tail -14
for d in /tmp/rv/runs/r0/*-collect; do echo "--- $d"; grep -h "engine steps" $d/collector.log 2>/dev/null | cut -c1-400; done
stamp done
