#!/usr/bin/env bash
# Session 27, call 4: 8685658 + benchmarks/launch_waits.py (no collector or engine change since call 1). Why the
# online engine spends 5-6 times a one-worker replay's CPU per record on the launch-heavy short apps, whatever its
# thread count (call 3): (1) cs_transpose collected with traces and the engine on, then its traces replayed at 12, 4
# and 1 workers (CPU per record, step by step); (2) transpose, LU and fdtd2d collected under the default, one copy
# thread, no engine queue (the engine in the drain thread, unpacking itself), the engine unpacking from the queue,
# and the engine's workers at nice 10, two rounds interleaved, each run's launch waits and engine CPU per record;
# (3) perf, if the host has it, on one default transpose run.
#   bash benchmarks/results/h200-2026-12-04-s27/call4/script.sh
source benchmarks/device_call.sh
APPS="cs_transpose pb_lu pb_fdtd2d"
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps ${APPS// /,} > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
args() { python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name'] == '$1')))"; }
stamp "transpose with traces, engine on"
(cd /tmp/rb && timeout 60 reuselens profile --no-analyze --traces --run-dir /tmp/tr_on -- ./cs_transpose $(args cs_transpose) > /dev/null 2>&1)
python3 benchmarks/launch_waits.py /tmp/tr_on
stamp "its traces replayed"
timeout 150 python3 benchmarks/replay_speed.py /tmp/tr_on --workers 12,4,1 --repeat 2 2>&1 | tail -25
stamp "online variants, 2 rounds"
for r in 1 2; do
  for a in $APPS; do
    for cfg in default QUEUE_COPY_THREADS=1 ENGINE_QUEUE_BYTES=0 QUEUE_UNPACK=0 ENGINE_NICE=10; do
      env=(); [ $cfg != default ] && env=(REUSELENS_$cfg)
      d=/tmp/lw/$a-${cfg%%=*}-$r; rm -rf $d
      t0=$(date +%s.%N)
      (cd /tmp/rb && env "${env[@]}" timeout 60 reuselens profile --no-analyze --run-dir $d -- ./$a $(args $a) > /dev/null 2>&1)
      t1=$(date +%s.%N)
      echo "$a $cfg round $r: $(python3 -c "print(f'{$t1 - $t0:.3f}')") s"
    done
  done
done > $OUT/walls.txt
sort $OUT/walls.txt
python3 benchmarks/launch_waits.py $(ls -d /tmp/lw/* | sort) | tee $OUT/launch_waits.txt
if command -v perf > /dev/null; then
  stamp "perf on one transpose run"
  (cd /tmp/rb && timeout 60 perf record -F 2000 -g -o /tmp/perf.data -- reuselens profile --no-analyze --run-dir /tmp/tr_perf -- ./cs_transpose $(args cs_transpose) > /dev/null 2>&1)
  perf report -i /tmp/perf.data --no-children --sort dso,sym 2>/dev/null | grep -v "^#" | grep -v "^$" | head -40 | cut -c1-160
else
  stamp "no perf on this host"
fi
stamp done
