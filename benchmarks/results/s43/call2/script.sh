#!/usr/bin/env bash
# Session 43, call 2. Call 1 found mergeSort's run 12.2 s with 15 engine workers against 7.0 s with the default 12
# (mvt 12.1 / 11.1, sortingNetworks 20.4 / 18.7): workers that outnumber the free cores lose far more than they add,
# as the fused steps wait on any worker the scheduler puts off its core. The default (three quarters of the cores)
# dates from session 9, before the fused and pipelined steps. This call sweeps the engine's workers and the queue's
# copy threads on the long apps and three short ones, interleaved (teardown.py: whole-run wall times, medians),
# then runs session 42's planned split of a short app's attach cost, whose call 1 runs lacked --library.
#   LIMIT=420 bash benchmarks/results/s43/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-420}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
SHORT=shoc_sort,cs_reduction,pb_lu,cs_matrixMul,cs_transpose
LONG=cs_mergeSort,pb_mvt,cs_sortingNetworks
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
# (from /tmp: the checkout's own reuselens/ folder would shadow the installed package)
library=$(cd /tmp && /tmp/clean/bin/python -c "from reuselens.collector.launcher import find_tool_library; print(find_tool_library())")
echo "tool library: $library"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps $SHORT,$LONG > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
uptime
cd /tmp/rf/build || exit 1
W="REUSELENS_ENGINE_WORKERS"
C="REUSELENS_QUEUE_COPY_THREADS"
SWEEP="collect:$W=12,collect:$W=10,collect:$W=11,collect:$W=12:$C=2,collect:$W=14:$C=2"
sweep() {  # sweep APP ROUNDS MODES
  stamp "sweep: $1, $2 rounds"
  timeout 200 python3 $REPO/benchmarks/teardown.py --rounds $2 --reuselens $clean --timeout 60 \
    --json $OUT/sweep_$1.json --modes "$3" -- ./$1 $(manifest_args $1) 2>&1 | tee -a $OUT/sweep.txt
}
sweep cs_mergeSort 2 "native,$SWEEP"
for app in shoc_sort pb_lu cs_transpose; do
  left 240 || break
  sweep $app 3 "native,collect:$W=12,collect:$W=10,collect:$W=11,collect:$W=14:$C=2"
done
left 200 && sweep cs_sortingNetworks 1 "native,$SWEEP"
for app in ${SHORT//,/ }; do
  left 80 || break
  [ -n "$library" ] || break
  stamp "teardown: $app"
  timeout 90 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --library $library \
    --json $OUT/teardown_$app.json \
    --modes native,passive,attach,attach:SANITIZER_DISABLE_PARALLEL_LAUNCHES=0,no-engine,collect \
    -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/teardown.txt
done
left 70 && sweep pb_mvt 1 "native,$SWEEP"
cd $REPO
stamp done
