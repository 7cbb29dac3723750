#!/usr/bin/env bash
# Session 45, call 2: the engine's block arena (analyzer/engine/src/block_arena.h: the running blocks' states and
# shared shadows on transparent huge pages) against the same build with it off (REUSELENS_ENGINE_BLOCK_ARENA=0, the
# blocks' memory from malloc as before), and against glibc's malloc on huge pages for everything else
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which took mergeSort and sortingNetworks 5-6% faster in call 1's three
# pairs). First the engine alone, 12 workers, on the bitonic pattern and the mergeSort slice; then whole collections.
#   LIMIT=330 bash benchmarks/results/s45/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-330}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
ARENA_OFF=REUSELENS_ENGINE_BLOCK_ARENA=0
HUGE_MALLOC=GLIBC_TUNABLES=glibc.malloc.hugetlb=1
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_sortingNetworks,cs_mergeSort > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
for round in 1 2 3; do
  for setting in "" "$ARENA_OFF"; do
    left 60 || break
    stamp "engine alone, 12 workers, round $round: ${setting:-arena on}"
    env $setting timeout 60 python3 benchmarks/engine.py --pattern bitonic --blocks 65536 --workers 12 --repeat 2 2>&1 \
      | grep -A2 "^warm" | sed -n 2,3p
    env $setting timeout 60 python3 benchmarks/engine.py --slice tests/data/real_launches/cs_mergesort_shared \
      --workers 12 --repeat 3 2>&1 | grep -A2 "^warm" | sed -n 2,3p
  done
done
cd /tmp/rf/build || exit 1
for spec in cs_mergeSort:3 cs_sortingNetworks:2; do
  app=${spec%:*}
  left 70 || break
  stamp "collect: arena, arena off, arena with glibc's malloc on huge pages: $app, ${spec#*:} rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 $REPO/benchmarks/teardown.py --rounds ${spec#*:} --reuselens $clean \
    --timeout 60 --json $OUT/arena_$app.json --modes "native,collect,collect:$ARENA_OFF,collect:$HUGE_MALLOC" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -5
done
cd $REPO
stamp done
