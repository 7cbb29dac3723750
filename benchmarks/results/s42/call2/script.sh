#!/usr/bin/env bash
# Session 42, call 2: what a short app's exit costs under the collector. Call 1 found the launcher's post-run work
# hidden in the app's teardown (the analysis on its thread, 0 ms waited for it), but the app still running 120-139
# ms after the tool library's exit files, under --no-analyze as under the whole profile, out of 230-245 ms that the
# app takes more than natively. benchmarks/teardown.py times, from a pseudo-terminal, each app's last line of
# output to its exit natively, collected, with the engine off, with the Sanitizer attached and nothing
# instrumented, and with a queue of 256 MiB instead of 1 GiB, and the peak RSS and page faults with each.
#   LIMIT=240 bash benchmarks/results/s42/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-240}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
APPS=shoc_sort,cs_reduction,cs_matrixMul,pb_lu,cs_transpose
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps $APPS > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
for app in ${APPS//,/ }; do
  left 40 || break
  stamp "teardown: $app"
  timeout 90 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --json $OUT/teardown_$app.json \
    --modes native,collect,no-engine,attach,collect:REUSELENS_ENGINE_QUEUE_BYTES=268435456 \
    -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/teardown.txt
done
stamp done
