#!/usr/bin/env bash
# Prepared in session 30 for the next session's first device call (session 30 had no device: its one call lost its
# machine and no more were lent). Checks main with session 30's engine changes (`engine.patch`, every engine change
# since f94d1c8: a scattered record's shadow lines asked for one per lane replayed; -fno-semantic-interposition;
# scattered lanes' sectors checked with a bitmap; the region hint and touched-page test inline; hidden visibility;
# a broadcast's entry prefetched; a column walk's distribution in closed form).
# The engine analyses online inside the collector, so they must pass on the GPU:
# 1. GPU tests and fidelity against ncu on main. 2. The engine before the changes built beside (engine.patch taken
# back). 3. engine.py's gather, scalars and strided patterns (256 MB) at 1 and 12 workers under both engines.
# 4. Strided at 256 and 250 MB, one worker (the row pitch a power of two or not). 5. SHOC BFS's traces replayed
# from memory by both engines at 12 and 1 workers, results checked equal.
# Then, as calls 2 and 3: `bash benchmarks/results/h200-2026-12-04-s29/next/script.sh` (the ring patches' pairing,
# lost with session 30's machine) and the suite (`source benchmarks/device_call.sh; short_suite 2`).
#   bash benchmarks/results/h200-2026-12-04-s30/next/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s30/next
stamp "the engine before session 30 (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/before -R > /tmp/before.txt 2>&1 &
BUILD=$!
gpu_tests
fidelity_against_ncu
wait $BUILD  # the pid: a bare `wait` also waits for the log's tee
BEFORE=$(grep "_engine" /tmp/before.txt)
[ -n "$BEFORE" ] || { tail -20 /tmp/before.txt; exit 1; }
for round in 1; do  # one round: the call's 600 s hold the GPU checks, these six runs and BFS's replays
  for pattern in gather scalars strided; do
    for engine in $BEFORE installed; do
      name=$([ $engine = installed ] && echo after || echo before)
      stamp "engine.py --pattern $pattern, $name, round $round"
      timeout 90 python3 benchmarks/engine.py --pattern $pattern --workers 1,12 --repeat 2 --engine $engine \
        > $OUT/engine_${pattern}_${name}_$round.txt 2>&1
      grep -E "^  workers|global" $OUT/engine_${pattern}_${name}_$round.txt | head -8
    done
  done
done
# Session 23 measured strided (256 MB: rows of 8192 floats, 32 KiB apart, 128 KiB of shadow apart) at 18.9 M
# lane-accesses/s per worker, warm, against 37.8 for the gather; on the development VM strided is the faster one.
# Whether the power-of-two row pitch is why (a warp's 32 shadow lines in one cache set): 250 MB has rows of 7904.
for mb in 256 250; do
  stamp "engine.py --pattern strided --footprint-mb $mb, after, one worker"
  timeout 60 python3 benchmarks/engine.py --pattern strided --footprint-mb $mb --workers 1 --repeat 2 \
    > $OUT/engine_strided_${mb}mb.txt 2>&1
  grep -E "^  workers|global" $OUT/engine_strided_${mb}mb.txt | head -4
done
stamp "build SHOC BFS"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 \
  --modes native --jobs 16 --apps shoc_bfs > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
stamp "SHOC BFS with traces, replayed from memory by both engines at 12 and 1 workers"
ARGS=$(manifest_args shoc_bfs)
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 90 reuselens profile --no-analyze --traces --run-dir /tmp/tr_bfs -- ./shoc_bfs $ARGS > /dev/null 2>&1)
timeout 200 python3 benchmarks/replay_speed.py /tmp/tr_bfs --workers 12,1 --repeat 1 \
  --engine $BEFORE,installed --check-equal 2>&1 | tee $OUT/replay_bfs.txt | tail -9
stamp done
