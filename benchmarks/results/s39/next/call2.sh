#!/usr/bin/env bash
# Prepared in session 39: walk_ahead.patch online. Six apps under `profile --no-analyze`, main's collector (the patch
# taken back, built beside) against the installed one with the patch, paired, two rounds; the engine's step lines of
# sortingNetworks' runs; then the PyTorch loop (40 steps) with the patch.
#   bash benchmarks/results/s39/next/call2.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/results/s39/next/apply_walk.sh
source benchmarks/device_call.sh
N=benchmarks/results/s39/next
collector_beside $N/walk_ahead.patch /tmp/old -R
stamp "build the apps"
APPS=cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort,shoc_bfs,pb_fdtd2d
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps $APPS --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
beside_lib /tmp/old || exit 1
stamp "walk ahead against main, collect, 2 rounds"
timeout 280 python3 benchmarks/ab_collector.py --a main=$BESIDE_LIB --b walk=installed \
  --apps $APPS --rounds 2 --out /tmp/abs --build /tmp/rf/build > $OUT/ab_walk.txt 2>&1
tail -9 $OUT/ab_walk.txt
grep -h "engine steps" /tmp/abs/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
pytorch_loop 40
stamp done
