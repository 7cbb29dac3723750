#!/usr/bin/env bash
# Session 27, call 2: 8685658 + benchmarks/launch_waits.py. What the launch-heavy short apps' launch ends wait for,
# with the records packed and unpacked by the queue's copy threads (default), unpacked by the engine
# (REUSELENS_QUEUE_UNPACK=0), full records (REUSELENS_PACKED_RECORDS=0) and with no engine
# (REUSELENS_ONLINE_ANALYSIS=0), two rounds interleaved, each run's wall time and its collector.log summed.
#   bash benchmarks/results/h200-2026-12-04-s27/call2/script.sh
source benchmarks/device_call.sh
APPS=cs_transpose,pb_lu,pb_fdtd2d,cs_matrixMul,cs_reduction
stamp "build, one native round"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS 2>&1 | grep -v "^build\|^round" | tail -6
stamp "runs"
for r in 1 2; do
  for a in ${APPS//,/ }; do
    ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name'] == '$a')))")
    for cfg in default QUEUE_UNPACK=0 PACKED_RECORDS=0 ONLINE_ANALYSIS=0; do
      env=(); [ $cfg != default ] && env=(REUSELENS_$cfg)
      d=/tmp/lw/$a-${cfg%%=*}-$r; rm -rf $d
      t0=$(date +%s.%N)
      (cd /tmp/rb && env "${env[@]}" timeout 60 reuselens profile --no-analyze --run-dir $d -- ./$a $ARGS > /dev/null 2>&1)
      t1=$(date +%s.%N)
      echo "$a $cfg round $r: $(python3 -c "print(f'{$t1 - $t0:.3f}')") s"
    done
  done
done > $OUT/walls.txt
sort $OUT/walls.txt
stamp "launch waits"
python3 benchmarks/launch_waits.py $(ls -d /tmp/lw/* | sort) | tee $OUT/launch_waits.txt
stamp "one transpose run's launch lines (default)"
grep -A2 "] launch 40[0-2]:" /tmp/lw/cs_transpose-default-2/collector.log | cut -c1-330
stamp done
