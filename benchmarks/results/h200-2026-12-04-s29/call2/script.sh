#!/usr/bin/env bash
# Session 29, call 2: where the whole `profile` spends what `--no-analyze` does not (0.06-0.32 s a run in call 1's
# suite, cs_reduction the most), and what the launches' ends wait for with the engine on. 1. test_gpu.py (collector.log's
# launch lines now split the last records' wait: the drain thread taking the end up, its last generation). 2. The
# launcher's phases, reuse profile and --no-analyze, on four apps, 3 rounds. 3. cs_reduction and shoc_sort profiled,
# their runs brought back (no traces) and their post-run cost in fresh processes. 4. Launch waits of matrixMul,
# transpose, LU, reduction with the engine at its default workers, at 4, and off, 2 rounds.
#   bash benchmarks/results/h200-2026-12-04-s29/call2/script.sh
source benchmarks/device_call.sh
REPO=$PWD
stamp "test_gpu.py"
timeout 90 python3 -m pytest -q tests/collector/test_gpu.py 2>&1 | tail -2
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 \
  --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,shoc_sort,shoc_bfs_uiuc > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
cd /tmp/rb
stamp "launcher phases"
for app in cs_reduction cs_matrixMul shoc_sort shoc_bfs_uiuc; do
  for mode in reuse no-analyze; do
    timeout 60 python3 $REPO/benchmarks/launcher_phases.py --rounds 3 --mode $mode -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/phases.txt
  done
done
stamp "runs brought back, post-run cost"
for app in cs_reduction shoc_sort; do
  timeout 60 reuselens profile --run-dir /tmp/run_$app -- ./$app $(manifest_args $app) > /tmp/run_$app.txt 2>&1 || tail -3 /tmp/run_$app.txt
  mkdir -p $OUT/run_$app && find /tmp/run_$app -maxdepth 2 -type f -size -20M -exec cp --parents {} $OUT/run_$app/ \;
done
timeout 60 python3 $REPO/benchmarks/postrun.py --repeat 3 /tmp/run_cs_reduction /tmp/run_shoc_sort 2>&1 | tee $OUT/postrun.txt | tail -8
stamp "launch waits: engine default, 4 workers, off"
for round in 1 2; do
  for app in cs_matrixMul cs_transpose pb_lu cs_reduction; do
    A=$(manifest_args $app)
    timeout 60 reuselens profile --no-analyze --run-dir /tmp/w_${app}_default -- ./$app $A > /dev/null 2>&1
    REUSELENS_ENGINE_WORKERS=4 timeout 60 reuselens profile --no-analyze --run-dir /tmp/w_${app}_4 -- ./$app $A > /dev/null 2>&1
    REUSELENS_ONLINE_ANALYSIS=0 timeout 60 reuselens profile --no-analyze --run-dir /tmp/w_${app}_off -- ./$app $A > /dev/null 2>&1
    timeout 30 python3 $REPO/benchmarks/launch_waits.py /tmp/w_${app}_default /tmp/w_${app}_4 /tmp/w_${app}_off | tee -a $OUT/launch_waits.txt
  done
done
grep -m2 "launch 7:" /tmp/w_cs_matrixMul_default/collector.log
cd $REPO
stamp done
