#!/usr/bin/env bash
# Prepared in session 39: the chosen engine change online. Six apps under `profile --no-analyze`, main's collector
# (the patches taken back, built beside) against the installed one with them, paired, two rounds; the engine's step
# lines of sortingNetworks' runs; then the PyTorch loop (40 steps) with them. CANDIDATE picks what call 1 found
# best: walk (walk_ahead.patch, the default) or more (walk_ahead + sync_ahead + route_owners + lanes_ahead).
#   CANDIDATE=more bash benchmarks/results/s39/next/call2.sh   (carry .whl and benchmarks/realapps/src)
N=benchmarks/results/s39/next
source $N/apply_walk.sh
CANDIDATE=${CANDIDATE:-walk}
cp $N/walk_ahead.patch /tmp/candidate.patch
if [ "$CANDIDATE" = more ]; then
  for p in sync_ahead route_owners lanes_ahead; do
    if git apply --check $N/$p.patch 2>/dev/null; then git apply $N/$p.patch && echo "$p.patch applied"; fi
    cat $N/$p.patch >> /tmp/candidate.patch
  done
fi
source benchmarks/device_call.sh
stamp "candidate: $CANDIDATE"
collector_beside /tmp/candidate.patch /tmp/old -R
stamp "build the apps"
APPS=cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort,shoc_bfs,pb_fdtd2d
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps $APPS --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
beside_lib /tmp/old || exit 1
stamp "$CANDIDATE against main, collect, 2 rounds"
timeout 280 python3 benchmarks/ab_collector.py --a main=$BESIDE_LIB --b $CANDIDATE=installed \
  --apps $APPS --rounds 2 --out /tmp/abs --build /tmp/rf/build > $OUT/ab_$CANDIDATE.txt 2>&1
tail -9 $OUT/ab_$CANDIDATE.txt
grep -h "engine steps" /tmp/abs/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
pytorch_loop 40
stamp done
