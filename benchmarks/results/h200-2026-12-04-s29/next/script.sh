#!/usr/bin/env bash
# Prepared in session 29 for the next session's first device call (not run: the session's device time was spent).
# ring.patch (not applied on main): the engine queue's ring keeps its batches on the pages touched so far while
# the engine keeps up, instead of walking the whole 1 GiB ring onto fresh pages (a record unpacked onto a fresh
# page cost 5 times one onto a warm page on the development machine; the overlapped drain keeps the queue from
# emptying, so a short app's run walked onto fresh pages; benchmarks/queue_drain.py --ring cold measures it).
# 1. The collector with ring.patch built beside. 2. GPU tests and fidelity with it (REUSELENS_COLLECTOR_LIB).
# 3. Paired: main (A) / ring (B), eight apps, 3 rounds. 4. Launch waits of transpose, fdtd2d, LU, reduction under
# both, and how much of the ring each touched. 5. The suite on main, 2 rounds, clean install. If ring wins, apply
# it (git apply benchmarks/results/h200-2026-12-04-s29/next/ring.patch) with its test, and run the suite on it.
#   bash benchmarks/results/h200-2026-12-04-s29/next/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s29/next
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "the collector with ring.patch (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/ring.patch /tmp/new > /tmp/new.txt 2>&1 &
BUILD=$!
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
wait $BUILD  # the pid: a bare `wait` also waits for the log's tee
NEW_LIB=$(grep libreuselens_collector /tmp/new.txt)
[ -n "$NEW_LIB" ] || { tail -20 /tmp/new.txt; exit 1; }
export REUSELENS_COLLECTOR_LIB=$NEW_LIB
gpu_tests
fidelity_against_ncu
unset REUSELENS_COLLECTOR_LIB
stamp "paired: main (A) / ring (B)"
timeout 200 python3 benchmarks/ab_collector.py --a main=installed --b ring=$NEW_LIB --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_ring.json 2>/dev/null
stamp "launch waits under both"
for app in cs_transpose pb_fdtd2d pb_lu cs_reduction; do
  A=$(manifest_args $app)
  (cd /tmp/rb && timeout 60 reuselens profile --no-analyze --run-dir /tmp/wm_$app -- ./$app $A > /dev/null 2>&1)
  (cd /tmp/rb && REUSELENS_COLLECTOR_LIB=$NEW_LIB timeout 60 reuselens profile --no-analyze --run-dir /tmp/wr_$app -- ./$app $A > /dev/null 2>&1)
  timeout 30 python3 benchmarks/launch_waits.py /tmp/wm_$app /tmp/wr_$app | tee -a $OUT/launch_waits.txt
  grep -h "of the ring touched" /tmp/wr_$app/collector.log | tail -1
done
short_suite 2 --build /tmp/rb
stamp done
