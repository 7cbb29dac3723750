#!/usr/bin/env bash
# Session 36, call 3: GPU tests on fa03d95 (PackedCursor's prefetch as committed), then fifteen engine workers
# against the default twelve (REUSELENS_ENGINE_WORKERS), paired app by app (ab_collector.py, 2 rounds) on the
# three engine-bound long apps and two short ones. Calls 1-2 found mergeSort, sortingNetworks and mvt engine-bound
# (the engine's queue full, the drain thread waiting for space), so the drain thread and the copy threads leave
# their cores idle there while twelve workers run.
#   bash benchmarks/results/h100-2026-12-05-s36/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
stamp "15 workers against 12, collect, 2 rounds"
timeout 400 python3 benchmarks/ab_collector.py --a w12=installed --b w15=installed,REUSELENS_ENGINE_WORKERS=15 \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks,cs_transpose,pb_lu --rounds 2 --out /tmp/ab15 --build /tmp/la/build \
  > $OUT/ab15.txt 2>&1
tail -9 $OUT/ab15.txt
cp /tmp/ab15/ab_collector.json $OUT/ab15.json 2>/dev/null
for d in /tmp/ab15/runs/r0/*/; do
  printf "%-28s " "$(basename $d)"
  grep -o "consume wall [0-9.]* s" $d/collector.log | head -1
done
stamp done
