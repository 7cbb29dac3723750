#!/usr/bin/env bash
# Prepared in session 28 for the next session's first device call. Session 28's two changes to native code never
# ran on the GPU: 0b513e2 (the drain walks each buffer once; a callee's PCs after its kernel's tail resolved to the
# callee) and the engine's broadcasts recognised before their addresses are copied (distributions.cpp). 1. GPU tests,
# fidelity. 2. The collector and engine without both (s28.patch, collector/native/src and analyzer/engine/src since
# 1620a66, taken back) built beside. 3. Paired: before (A) / session 28 (B), eight apps, 3 rounds. 4. SHOC BFS
# collected under both, its launch waits (drain: resolving, sinks, copy). 5. The suite, 2 rounds, clean install.
# 6. SHOC BFS's traces replayed from memory by both engines at 12 and 1 workers, results checked equal. Every step
# has its own timeout (call 4 lost 200 s to a walk of BFS's 6.9 GB of traces without one).
#   bash benchmarks/results/h200-2026-12-04-s28/next/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s28/next
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "the build without session 28's native changes (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/s28.patch /tmp/old -R > /tmp/old.txt 2>&1 &
BUILD=$!
gpu_tests
fidelity_against_ncu
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
wait $BUILD  # the pid: a bare `wait` also waits for the log's tee
OLD_LIB=$(grep libreuselens_collector /tmp/old.txt); OLD_ENGINE=$(grep "_engine" /tmp/old.txt)
[ -n "$OLD_LIB" ] || tail -20 /tmp/old.txt
stamp "paired: before (A) / session 28 (B)"
[ -n "$OLD_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a before=$OLD_LIB --b s28=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_s28.json 2>/dev/null
stamp "SHOC BFS under both: launch waits"
ARGS=$(manifest_args shoc_bfs)
for round in 1 2; do
  (cd /tmp/rb && REUSELENS_COLLECTOR_LIB=$OLD_LIB timeout 60 reuselens profile --no-analyze --run-dir /tmp/bfs_before -- ./shoc_bfs $ARGS > /dev/null 2>&1)
  (cd /tmp/rb && timeout 60 reuselens profile --no-analyze --run-dir /tmp/bfs_s28 -- ./shoc_bfs $ARGS > /dev/null 2>&1)
  timeout 30 python3 benchmarks/launch_waits.py /tmp/bfs_before /tmp/bfs_s28 | tee -a $OUT/launch_waits_bfs.txt
done
short_suite 2 --build /tmp/rb
# Whether the twelve-worker replays' ids step (4.81 CPU-s against one worker's 0.73 on BFS, call 4) was the traces'
# file mapping faulted in inside the clock: replay_speed now copies them into memory first (d40626e).
stamp "SHOC BFS with traces, replayed from memory by both engines at 12 and 1 workers"
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 90 reuselens profile --no-analyze --traces --run-dir /tmp/tr_bfs -- ./shoc_bfs $ARGS > /dev/null 2>&1)
[ -n "$OLD_ENGINE" ] && timeout 200 python3 benchmarks/replay_speed.py /tmp/tr_bfs --workers 12,1 --repeat 1 \
  --engine $OLD_ENGINE,installed --check-equal 2>&1 | tee $OUT/replay_bfs.txt | tail -9
stamp done
