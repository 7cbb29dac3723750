#!/usr/bin/env bash
# Prepared in session 39 (no device machine was lent to it): the owners' walks looking ahead across pieces
# (walk_ahead.patch) against main's engine, and with more on top: the chunk owners asking for each record's barrier
# counters ahead, the routing finding each owner's lanes at once and phase 4 asking for shadow lines some lanes ahead
# (sync_ahead.patch + route_owners.patch + lanes_ahead.patch, "more").
# GPU tests and fidelity with walk_ahead.patch; then engine.py's slices and the strided and gather patterns at twelve
# workers, --handed-over, two rounds, each under main's engine (walk_ahead.patch taken back), the patch's (installed)
# and "more", the slices as engine.py turns their copies (one record in twelve per owner, as in a real launch)
# and, for two slices and the first two engines in the first round, unturned (owner_runs.py: each owner's records in runs, session 38's
# prepared comparison).
#   bash benchmarks/results/s39/next/call1.sh   (carry .whl)
source benchmarks/results/s39/next/apply_walk.sh
source benchmarks/device_call.sh
N=benchmarks/results/s39/next
RUNS=benchmarks/results/h100-2026-12-05-s38/next/owner_runs.py
collector_beside $N/walk_ahead.patch /tmp/old -R
gpu_tests
# The third engine's package is built while ncu counts (the GPU tests' launch waits are timed: not beside them).
cat $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch > /tmp/more.patch  # in turn, as one patch
timeout 300 bash benchmarks/build_revision.sh --patch /tmp/more.patch /tmp/more > /tmp/more.build.txt 2>&1 &
MORE_PID=$!
fidelity_against_ncu
beside_lib /tmp/old && MAIN_ENGINE=$(grep -m1 "_engine" /tmp/old.build.txt)
wait $MORE_PID
MORE_ENGINE=$(grep -m1 "_engine" /tmp/more.build.txt)
[ -n "$MORE_ENGINE" ] || { tail -20 /tmp/more.build.txt; MORE_ENGINE=none; }
R=tests/data/real_launches
for round in 1 2; do
  for s in cs_mergesort_shared pytorch_xmma_sgemm_64x64_tn shoc_sort cs_merge_intervals pb_fdtd2d shoc_bfs; do
    for how in turned runs; do
      [ $how = runs ] && { [ $round = 2 ] || { [ $s != cs_mergesort_shared ] && [ $s != pytorch_xmma_sgemm_64x64_tn ]; }; } && continue
      for name in main walk more; do
        case $name in main) eng=$MAIN_ENGINE ;; walk) eng=installed ;; more) eng=$MORE_ENGINE ;; esac
        [ "$eng" = none ] && continue
        [ $how = runs ] && [ $name = more ] && continue
        if [ $how = turned ]; then cmd=(python3 benchmarks/engine.py); else cmd=(python3 $RUNS benchmarks/engine.py); fi
        f=$OUT/eng_${s}_${how}_${name}_r$round.txt
        timeout 40 "${cmd[@]}" --slice $R/$s --handed-over --workers 12 --repeat 2 --engine "$eng" > $f 2>&1
        echo "r$round $s $how $name: $(grep -A4 '^warm' $f | grep -E 'M records|mean worker' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-75 | tr '\n' ' ')"
      done
    done
  done
  for p in strided gather; do  # every lane in another chunk: an item per owner per record (PolyBench mvt's column walk)
    for name in main walk more; do
      case $name in main) eng=$MAIN_ENGINE ;; walk) eng=installed ;; more) eng=$MORE_ENGINE ;; esac
      [ "$eng" = none ] && continue
      f=$OUT/eng_${p}_${name}_r$round.txt
      timeout 60 python3 benchmarks/engine.py --pattern $p --handed-over --workers 12 --repeat 2 --engine "$eng" > $f 2>&1
      echo "r$round $p $name: $(grep -A4 '^warm' $f | grep -E 'M records|mean worker' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-75 | tr '\n' ' ')"
    done
  done
  stamp "round $round"
done
stamp done
