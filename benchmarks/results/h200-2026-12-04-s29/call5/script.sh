#!/usr/bin/env bash
# Session 29, call 5 (code of 0eedab0 + launcher_phases --profile-analysis): 1. Where cs_reduction's early analysis
# spends its 264 ms (call 2), its thread under cProfile inside the profile; the run directory brought back. 2. With
# the last generation drained while the app goes on, the drain thread's queue copy is what transpose-like apps wait
# on: transpose, fdtd2d, LU and reduction under the queue's default copy threads, 8, 2, and the engine unpacking
# (REUSELENS_QUEUE_UNPACK=0), 2 rounds, wall seconds and launch waits.
#   bash benchmarks/results/h200-2026-12-04-s29/call5/script.sh
source benchmarks/device_call.sh
REPO=$PWD
APPS="cs_transpose pb_fdtd2d pb_lu cs_reduction"
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps ${APPS// /,} > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
cd /tmp/rb
stamp "cs_reduction's analysis under cProfile"
timeout 60 python3 $REPO/benchmarks/launcher_phases.py --rounds 2 --mode reuse --profile-analysis $OUT/reduction_analysis.prof -- ./cs_reduction $(manifest_args cs_reduction) 2>&1 | grep -v "^run written" | tee $OUT/reduction_phases.txt | head -75
timeout 60 reuselens profile --run-dir /tmp/run_red -- ./cs_reduction $(manifest_args cs_reduction) > /dev/null 2>&1
tar -C /tmp -czf $OUT/run_cs_reduction.tar.gz run_red
wall() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); python3 -c "print(f'{$t1 - $t0:.3f}')"; }
stamp "queue copy threads: default, 8, 2, the engine unpacking"
for round in 1 2; do
  for app in $APPS; do
    A=$(manifest_args $app)
    line="$app r$round native $(wall ./$app $A)"
    line="$line default $(wall timeout 60 reuselens profile --no-analyze --run-dir /tmp/q_${app}_default -- ./$app $A)"
    line="$line copy8 $(REUSELENS_QUEUE_COPY_THREADS=8 wall timeout 60 reuselens profile --no-analyze --run-dir /tmp/q_${app}_copy8 -- ./$app $A)"
    line="$line copy2 $(REUSELENS_QUEUE_COPY_THREADS=2 wall timeout 60 reuselens profile --no-analyze --run-dir /tmp/q_${app}_copy2 -- ./$app $A)"
    line="$line engine_unpacks $(REUSELENS_QUEUE_UNPACK=0 wall timeout 60 reuselens profile --no-analyze --run-dir /tmp/q_${app}_unpack0 -- ./$app $A)"
    echo "$line" | tee -a $OUT/walls.txt
    timeout 30 python3 $REPO/benchmarks/launch_waits.py /tmp/q_${app}_default /tmp/q_${app}_copy8 /tmp/q_${app}_copy2 /tmp/q_${app}_unpack0 >> $OUT/launch_waits.txt
  done
done
cat $OUT/launch_waits.txt | tail -20
cd $REPO
stamp done
