#!/usr/bin/env bash
# Session 27, call 3: the engine running a batch on fewer threads than workers (EngineConfig::thread_records; each
# thread runs several workers' shares, the rest stay asleep). Paired on the eight short apps, 3 rounds: every batch on
# all twelve workers (REUSELENS_ENGINE_THREAD_RECORDS=0, the behaviour before) against 2048 (the new default), 1024
# and 4096 records per thread; where each run's launches waited (launch_waits.py) for transpose and LU.
#   bash benchmarks/results/h200-2026-12-04-s27/call3/script.sh
source benchmarks/device_call.sh
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
for T in 2048 1024 4096; do
  stamp "paired: all workers (A) / $T records per thread (B)"
  timeout 150 python3 benchmarks/ab_collector.py --a all=installed,REUSELENS_ENGINE_THREAD_RECORDS=0 \
    --b t$T=installed,REUSELENS_ENGINE_THREAD_RECORDS=$T --apps $APPS --rounds 3 --out /tmp/ab$T --build /tmp/rb \
    > /tmp/ab$T.txt 2>&1
  grep -v "^round\|^build\|^  " /tmp/ab$T.txt | tail -12
  cp /tmp/ab$T/ab_collector.json $OUT/ab_threads_$T.json
done
stamp "launch waits of the 2048 pairs' runs (transpose, LU, reduction)"
python3 benchmarks/launch_waits.py $(ls -d /tmp/ab2048/runs/r*/*{transpose,lu,reduction}* 2>/dev/null | sort) 2>&1 | tail -20
grep -h "engine steps" /tmp/ab2048/runs/r0/cs_transpose-*/collector.log | cut -c1-330
stamp done
