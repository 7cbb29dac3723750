#!/usr/bin/env bash
# For session 43's first call. Session 42 ran on the H100 host only; its call 2 split a short app's extra time
# under `profile --no-analyze` into three parts of one size: attached with nothing instrumented (+96 to +157 ms
# over native, mostly the Sanitizer's: its attach, and its teardown at the exit), the instrumentation and the drain
# (+47 to +93), the online engine (+47 to +163). This call splits the first part: `passive` injects the tool
# library as the launcher does but with no run directory, so it loads the Sanitizer's library and subscribes to
# nothing; `attach` subscribes with no kernel to instrument, once with the Sanitizer's parallel launches disabled
# (the launcher's default) and once enabled. Then the suite (2 rounds) and the PyTorch loop, for the H200's figures
# of main if an H200 comes.
#   LIMIT=400 bash benchmarks/results/s42/next/script.sh   (carry .whl and benchmarks/realapps/src)
# (TEARDOWN_RESERVE=25 LIMIT=120: the teardown part alone, as session 42 tried with its last 251 s)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-400}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
APPS=shoc_sort,cs_reduction,pb_lu,cs_matrixMul
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
library=$(/tmp/clean/bin/python -c "from reuselens.collector.launcher import find_tool_library; print(find_tool_library())")
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps $APPS > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
for app in ${APPS//,/ }; do
  left ${TEARDOWN_RESERVE:-300} || break
  stamp "teardown: $app"
  timeout 90 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --library $library \
    --json $OUT/teardown_$app.json \
    --modes native,passive,attach,attach:SANITIZER_DISABLE_PARALLEL_LAUNCHES=0,no-engine,collect \
    -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/teardown.txt
done
cd $REPO
if left 150; then short_suite 2; fi
if left 90; then pytorch_loop 40; fi
stamp done
