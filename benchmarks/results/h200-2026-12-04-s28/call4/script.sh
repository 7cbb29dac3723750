#!/usr/bin/env bash
# Session 28, call 4: where the engine's time goes on SHOC BFS (the suite's worst app; 97% of its records are
# broadcasts, session 24's record_shapes.py): its traces recorded (engine off), replayed at 12, 4 and 1 workers with
# each step's time.
#   bash benchmarks/results/h200-2026-12-04-s28/call4/script.sh
source benchmarks/device_call.sh
REPO=$PWD
stamp "build shoc_bfs"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps shoc_bfs > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'shoc_bfs')))")
stamp "recorded with traces, the engine off"
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 90 reuselens profile --no-analyze --traces --run-dir /tmp/tr_bfs -- ./shoc_bfs $ARGS > /dev/null 2>&1)
du -sh /tmp/tr_bfs/traces
stamp "collected once with the engine (launch waits)"
(cd /tmp/rb && timeout 60 reuselens profile --no-analyze --run-dir /tmp/e_bfs -- ./shoc_bfs $ARGS > /dev/null 2>&1)
python3 benchmarks/launch_waits.py /tmp/e_bfs | tee $OUT/launch_waits.txt
stamp "replayed at 12, 4, 1 workers"
timeout 200 python3 benchmarks/replay_speed.py /tmp/tr_bfs --workers 12,4,1 --repeat 1 2>&1 | tee $OUT/replay_bfs.txt | tail -8
python3 benchmarks/record_shapes.py /tmp/tr_bfs 2>&1 | tail -4
stamp done
