#!/usr/bin/env bash
# Prepared in session 33 (no device machine was lent that session) for the next session's first device call.
# 0569728..4f6e078 hand global broadcasts and the other records of one stride over the warp (coalesced accesses,
# column walks) to the online engine by one or two of their addresses and barriers by their header (packed_records.h,
# unpack_for_engine; docs/collector.md "Packed records"), never run on the GPU; 2a2389d (session 32's last engine
# edit) has not run there either.
# 1. GPU tests (online results against replays of the same traces: the flagged records on real launches) and
#    fidelity against ncu.
# 2. The suite from a user's install.
# 3. The collector without the hand-over (handed_over.patch taken back) paired with it, eight apps, 3 rounds: SHOC
#    BFS (97% broadcasts, bound by the drain thread's sinks) and the coalesced apps' last generations should move.
# 4. The engine alone at twelve workers on three patterns, records whole and as handed over (engine.py
#    --handed-over); the unpacking's cost per record on this host (unpack_speed.py); the drain with four copy
#    threads (queue_drain.py).
#   bash benchmarks/results/h200-2026-12-05-s33/next/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s33/next
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
collector_beside $D/handed_over.patch /tmp/before -R
gpu_tests
fidelity_against_ncu
short_suite 2
beside_lib /tmp/before || exit 1
stamp "paired: before the hand-over (A) / with it (B), eight apps, 3 rounds"
timeout 200 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b handed_over=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rf/build > /tmp/ab.txt 2>&1
grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_handed_over.json 2>/dev/null
for pattern in bfs stencil strided; do  # the engine alone at twelve workers, records whole and as handed over
  for how in "" --handed-over; do
    timeout 60 python3 benchmarks/engine.py --pattern $pattern --workers 12 --repeat 2 $how \
      > /tmp/e_$pattern$how.txt 2>&1
    echo "engine.py $pattern ${how:-whole}: $(grep -A1 '^warm' /tmp/e_$pattern$how.txt | tail -1 | cut -c1-60)"
  done
done
stamp "unpack speed, one thread"
timeout 90 python3 benchmarks/unpack_speed.py
stamp "queue drain, four copy threads"
timeout 90 python3 benchmarks/queue_drain.py --engine-ns 30 --copy-threads 4 --walk one --repeat 2
stamp done
