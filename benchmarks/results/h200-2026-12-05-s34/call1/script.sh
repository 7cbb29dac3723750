#!/usr/bin/env bash
# Session 34, call 1, on 52082f0: the first half of session 33's prepared call (next/script.sh there), whose whole
# would not fit one call's 600 s; its engine-only steps move to call 2.
# 1. GPU tests (online results against replays of the same traces: the hand-over's flagged records and this
#    session's two shared-replay closed forms on real launches) and fidelity against ncu.
# 2. The suite from a user's install, two rounds.
# 3. The collector without the hand-over (session 33's handed_over.patch taken back) paired with it, eight apps,
#    3 rounds.
#   bash benchmarks/results/h200-2026-12-05-s34/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
PATCH=benchmarks/results/h200-2026-12-05-s33/next/handed_over.patch
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
collector_beside $PATCH /tmp/before -R
gpu_tests
fidelity_against_ncu
short_suite 2
beside_lib /tmp/before || exit 1
stamp "paired: before the hand-over (A) / with it (B), eight apps, 3 rounds"
timeout 170 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b handed_over=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rf/build > $OUT/ab_handed_over.txt 2>&1
grep -v "^round\|^build\|^  " $OUT/ab_handed_over.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_handed_over.json 2>/dev/null
stamp done
