#!/usr/bin/env bash
# Prepared in session 39 (no device machine was lent to it): the owners' walks looking ahead across pieces
# (walk_ahead.patch) against main's engine, and with either of two changes on top: the chunk owners asking for each
# record's barrier counters ahead (sync_ahead.patch) or session 37's shared hand-over. GPU tests and fidelity with
# walk_ahead.patch; then engine.py's slices at twelve workers, --handed-over, two rounds, each slice under main's
# engine (walk_ahead.patch taken back), the patch's (installed), and the patch's with sync_ahead.patch or with
# shared_hand_over.patch, as engine.py turns the slice copies (one record in twelve per owner, as in a real launch)
# and, for two slices and the first two engines in the first round, unturned (owner_runs.py: each owner's records in runs, session 38's
# prepared comparison).
#   bash benchmarks/results/s39/next/call1.sh   (carry .whl)
source benchmarks/results/s39/next/apply_walk.sh
source benchmarks/device_call.sh
N=benchmarks/results/s39/next
RUNS=benchmarks/results/h100-2026-12-05-s38/next/owner_runs.py
SHARED=$N/shared_hand_over_on_walk.patch  # session 37's shared_hand_over.patch, rebased on walk_ahead.patch
collector_beside $N/walk_ahead.patch /tmp/old -R
gpu_tests
# The other two engines' packages are built while ncu counts (the GPU tests' launch waits are timed: not beside them).
timeout 300 bash benchmarks/build_revision.sh --patch $SHARED /tmp/shared > /tmp/shared.build.txt 2>&1 &
SHARED_PID=$!
timeout 300 bash benchmarks/build_revision.sh --patch $N/sync_ahead.patch /tmp/sync > /tmp/sync.build.txt 2>&1 &
SYNC_PID=$!
fidelity_against_ncu
beside_lib /tmp/old && MAIN_ENGINE=$(grep -m1 "_engine" /tmp/old.build.txt)
wait $SHARED_PID $SYNC_PID
SHARED_ENGINE=$(grep -m1 "_engine" /tmp/shared.build.txt)
[ -n "$SHARED_ENGINE" ] || { tail -20 /tmp/shared.build.txt; SHARED_ENGINE=none; }
SYNC_ENGINE=$(grep -m1 "_engine" /tmp/sync.build.txt)
[ -n "$SYNC_ENGINE" ] || { tail -20 /tmp/sync.build.txt; SYNC_ENGINE=none; }
R=tests/data/real_launches
for round in 1 2; do
  for s in cs_mergesort_shared pytorch_xmma_sgemm_64x64_tn shoc_sort cs_merge_intervals pb_fdtd2d shoc_bfs; do
    for how in turned runs; do
      [ $how = runs ] && { [ $round = 2 ] || { [ $s != cs_mergesort_shared ] && [ $s != pytorch_xmma_sgemm_64x64_tn ]; }; } && continue
      for name in main walk sync shared; do
        case $name in main) eng=$MAIN_ENGINE ;; walk) eng=installed ;; sync) eng=$SYNC_ENGINE ;; shared) eng=$SHARED_ENGINE ;; esac
        [ "$eng" = none ] && continue
        [ $how = runs ] && { [ $name = sync ] || [ $name = shared ]; } && continue
        [ $name = shared ] && { [ $s = pb_fdtd2d ] || [ $s = shoc_bfs ]; } && continue  # few shared records
        if [ $how = turned ]; then cmd=(python3 benchmarks/engine.py); else cmd=(python3 $RUNS benchmarks/engine.py); fi
        f=$OUT/eng_${s}_${how}_${name}_r$round.txt
        timeout 40 "${cmd[@]}" --slice $R/$s --handed-over --workers 12 --repeat 2 --engine "$eng" > $f 2>&1
        echo "r$round $s $how $name: $(grep -A4 '^warm' $f | grep -E 'M records|mean worker' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-75 | tr '\n' ' ')"
      done
    done
  done
  stamp "round $round"
done
stamp done
