#!/usr/bin/env bash
# Session 44, call 3. (1) The tree's adaptive wait (REUSELENS_BLOCKING_SYNC unset: a context the app left to CUDA's
# automatic scheduling blocks while instrumented kernels wait long, and spins again once they wait briefly), against
# the old spinning wait (=0) and with a thirteenth engine worker, interleaved, on the three long apps and three
# launch-heavy short ones; the GPU tests on it first. (2) What the Sanitizer's subscription costs by itself:
# benchmarks/subscribe_probe's tool library subscribes as the collector does with callbacks that return at once,
# domain by domain (teardown.py's passive mode), beside the collector attached with nothing to instrument.
#   LIMIT=560 bash benchmarks/results/s44/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
gpu_tests
stamp "clean install, builds, the probe library"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
probe=$(bash benchmarks/subscribe_probe/build.sh /tmp/probe 2>&1 | tail -1)
echo "$probe"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_mergeSort,cs_sortingNetworks,pb_mvt,shoc_sort,cs_matrixMul,cs_transpose,shoc_bfs,pb_lu,cs_reduction \
  > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
stamp "thread times: cs_mergeSort, adaptive wait"
rm -rf /tmp/tt
timeout 60 python3 $REPO/benchmarks/thread_times.py --json $OUT/threads_mergeSort_adaptive.json \
  -- $clean profile --no-analyze --run-dir /tmp/tt -- ./cs_mergeSort $(manifest_args cs_mergeSort) 2>&1 |
  grep -v "^run written" | tail -9
grep -h "waits for the GPU\|engine steps\|launch ends waited" /tmp/tt/collector.log | cut -c1-330
P=RL_PROBE_DOMAINS
for app in cs_matrixMul cs_transpose shoc_sort pb_lu; do
  left 150 || break
  stamp "the subscription's parts: $app, 3 rounds"
  timeout 60 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --timeout 30 --library "$probe" \
    --json $OUT/probe_$app.json \
    --modes "native,passive,passive:$P=none,passive:$P=resource,passive:$P=launch,passive:$P=memcpy+memset,passive:$P=api,passive:$P=all,attach" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -10
done
for spec in cs_mergeSort:2 cs_transpose:3 cs_matrixMul:3 shoc_bfs:3 pb_mvt:2 cs_sortingNetworks:2; do
  app=${spec%:*}
  rounds=${spec#*:}
  left 60 || break
  stamp "adaptive wait against spinning: $app, $rounds rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 10)) python3 $REPO/benchmarks/teardown.py --rounds $rounds --reuselens $clean \
    --timeout 60 --json $OUT/sync_$app.json \
    --modes "native,collect,collect:REUSELENS_BLOCKING_SYNC=0,collect:REUSELENS_ENGINE_WORKERS=13" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -5
done
cd $REPO
stamp done
