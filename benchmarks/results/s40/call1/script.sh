#!/usr/bin/env bash
# Session 40, call 1: session 39's prepared engine changes decided in one call (session 40's device starts kept
# failing, so its calls 1 and 2 became one). The tree gets all four patches and this session's own_lanes.patch
# ("more": walk_ahead + sync_ahead + route_owners + lanes_ahead + own_lanes, installed); main's collector and engine
# (the five taken back) and walk_ahead's alone (the other four taken back) are built beside. GPU tests and fidelity with "more"; engine.py at twelve workers,
# handed over, under main / walk / more, four slices turned and the strided and gather patterns (last); six apps online
# under `profile --no-analyze`, main against more, paired, two rounds (ab_collector.py); then, time left, the eight
# short apps from a user's install and the 40-step PyTorch loop with more.
#   LIMIT=550 bash benchmarks/results/s40/call1/script.sh   (carry .whl and benchmarks/realapps/src)
N=benchmarks/results/s39/next
source $N/apply_walk.sh
OWN=benchmarks/results/s40/own_lanes.patch
for p in $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch $OWN; do
  if git apply --check $p 2>/dev/null; then git apply $p && echo "$(basename $p) applied"; fi
done
cat $N/walk_ahead.patch $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch $OWN > /tmp/candidate.patch
cat $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch $OWN > /tmp/more_only.patch
source benchmarks/device_call.sh
stamp "tree: $(git diff --stat | tail -1)"
collector_beside /tmp/candidate.patch /tmp/old -R
gpu_tests
# walk_ahead alone, built while ncu counts (the GPU tests' launch waits are timed: not beside a build)
timeout 300 bash benchmarks/build_revision.sh --patch /tmp/more_only.patch /tmp/walk -R > /tmp/walk.build.txt 2>&1 &
WALK_PID=$!
fidelity_against_ncu
MAIN_ENGINE=none
beside_lib /tmp/old && MAIN_ENGINE=$(grep -m1 "_engine" /tmp/old.build.txt)
[ "$MAIN_ENGINE" != none ] || echo "main's build failed: no pairs and no main engine figures"
wait $WALK_PID
WALK_ENGINE=$(grep -m1 "_engine" /tmp/walk.build.txt)
[ -n "$WALK_ENGINE" ] || { tail -20 /tmp/walk.build.txt; WALK_ENGINE=none; }
stamp "build the apps"
APPS=cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort,shoc_bfs,pb_fdtd2d
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps $APPS --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
stamp "more against main, collect, 2 rounds"
[ "$MAIN_ENGINE" != none ] && timeout 200 python3 benchmarks/ab_collector.py --a main=$BESIDE_LIB --b more=installed \
  --apps $APPS --rounds 2 --out /tmp/abs --build /tmp/rf/build > $OUT/ab_more.txt 2>&1
tail -9 $OUT/ab_more.txt
grep -h "engine steps" /tmp/abs/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
# The figures a closing note reports, with "more" installed (main's own are session 38's call 4): left out when the
# call is late.
LIMIT=${LIMIT:-550}  # the call's seconds less the packing's
if [ $(($(date +%s) - T0)) -lt $((LIMIT - 80)) ]; then short_suite 2; fi
if [ $(($(date +%s) - T0)) -lt $((LIMIT - 60)) ]; then pytorch_loop 40; fi
# The steps' figures last (the call's limit may cut them): where each engine's time goes at twelve workers.
R=tests/data/real_launches
stamp "engine.py, 12 workers, handed over: main / walk / more"
for what in pytorch_xmma_sgemm_64x64_tn cs_mergesort_shared shoc_sort shoc_bfs strided gather; do
  for name in main walk more; do
    case $name in main) eng=$MAIN_ENGINE ;; walk) eng=$WALK_ENGINE ;; more) eng=installed ;; esac
    [ "$eng" = none ] && continue
    [ $(($(date +%s) - T0)) -lt $((LIMIT - 10)) ] || break 2
    case $what in strided|gather) src=(--pattern $what) ;; *) src=(--slice $R/$what) ;; esac
    f=$OUT/eng_${what}_${name}.txt
    timeout 40 python3 benchmarks/engine.py "${src[@]}" --handed-over --workers 12 --repeat 2 --engine "$eng" > $f 2>&1
    echo "$what $name: $(grep -A4 '^warm' $f | grep -E 'M records|mean worker' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-75 | tr '\n' ' ')"
  done
done
stamp done
