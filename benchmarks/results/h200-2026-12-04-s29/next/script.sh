#!/usr/bin/env bash
# Prepared in session 29 for the next session's first device call (not run: the session's device time was spent).
# ring.patch (not applied on main): the engine queue's ring keeps its batches on the pages touched so far while
# the engine keeps up, instead of walking the whole 1 GiB ring onto fresh pages (a record unpacked onto a fresh
# page cost 5 times one onto a warm page on the development machine; the overlapped drain keeps the queue from
# emptying, so a short app's run walked onto fresh pages; benchmarks/queue_drain.py --ring cold measures it).
# ring.patch goes back to the ring's start while the queue holds at most an eighth of the touched part;
# ring_half.patch (the same, a half; its comments still say an eighth) was faster on the development machine from a
# cold ring but leaves less room when the engine falls behind (a reviewer's model: the drain waited after a skip).
# 1. Both collectors built beside. 2. GPU tests and fidelity with ring (REUSELENS_COLLECTOR_LIB). 3. Paired with
# main, eight apps, 3 rounds, each: compare the pairs and the "q wait" (waiting for space) of the launch waits.
# 4. Launch waits of transpose, fdtd2d, LU, reduction under the three, and how much of the ring each touched. If one
# wins, apply it (git apply benchmarks/results/h200-2026-12-04-s29/next/ring.patch) with its test, and run the suite.
#   bash benchmarks/results/h200-2026-12-04-s29/next/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s29/next
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "the collectors with ring.patch and ring_half.patch (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/ring.patch /tmp/new > /tmp/new.txt 2>&1 &
BUILD=$!
timeout 240 bash benchmarks/build_revision.sh --patch $D/ring_half.patch /tmp/half > /tmp/half.txt 2>&1 &
BUILD_HALF=$!
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
wait $BUILD $BUILD_HALF  # the pids: a bare `wait` also waits for the log's tee
NEW_LIB=$(grep libreuselens_collector /tmp/new.txt)
HALF_LIB=$(grep libreuselens_collector /tmp/half.txt)
[ -n "$NEW_LIB" ] && [ -n "$HALF_LIB" ] || { tail -n 20 /tmp/new.txt /tmp/half.txt; exit 1; }
export REUSELENS_COLLECTOR_LIB=$NEW_LIB
gpu_tests
fidelity_against_ncu
unset REUSELENS_COLLECTOR_LIB
for variant in ring half; do
  LIB=$([ $variant = ring ] && echo $NEW_LIB || echo $HALF_LIB)
  stamp "paired: main (A) / $variant (B)"
  timeout 150 python3 benchmarks/ab_collector.py --a main=installed --b $variant=$LIB --apps $APPS \
    --rounds 3 --out /tmp/ab_$variant --build /tmp/rb > /tmp/ab_$variant.txt 2>&1
  grep -v "^round\|^build\|^  " /tmp/ab_$variant.txt | tail -12
  cp /tmp/ab_$variant/ab_collector.json $OUT/ab_$variant.json 2>/dev/null
done
stamp "launch waits under both"
for app in cs_transpose pb_fdtd2d pb_lu cs_reduction; do
  A=$(manifest_args $app)
  (cd /tmp/rb && timeout 60 reuselens profile --no-analyze --run-dir /tmp/wm_$app -- ./$app $A > /dev/null 2>&1)
  (cd /tmp/rb && REUSELENS_COLLECTOR_LIB=$NEW_LIB timeout 60 reuselens profile --no-analyze --run-dir /tmp/wr_$app -- ./$app $A > /dev/null 2>&1)
  (cd /tmp/rb && REUSELENS_COLLECTOR_LIB=$HALF_LIB timeout 60 reuselens profile --no-analyze --run-dir /tmp/wh_$app -- ./$app $A > /dev/null 2>&1)
  timeout 30 python3 benchmarks/launch_waits.py /tmp/wm_$app /tmp/wr_$app /tmp/wh_$app | tee -a $OUT/launch_waits.txt
  grep -h "of the ring touched" /tmp/wr_$app/collector.log /tmp/wh_$app/collector.log | tail -2
done
stamp done
