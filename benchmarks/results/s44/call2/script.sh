#!/usr/bin/env bash
# Session 44, call 2. Call 1's thread times: at twelve workers the engine's threads are on a core 99.7% of the time
# they want one, but the app's own thread is on a core the whole run (mergeSort 5.13 of 5.49 s) while it only waits
# at each instrumented launch's end for its engine-bound kernel (sanitizerStreamSynchronize under CUDA's automatic
# scheduling, which spins when the host has more cores than GPUs), and the copy threads wait for a core 24-30% of
# the time they want one. REUSELENS_BLOCKING_SYNC=1 (this tree, off by default) sets CU_CTX_SCHED_BLOCKING_SYNC on a
# context whose app chose no scheduling. Paired here: the tree as is, with it, and with it and a thirteenth engine
# worker (the freed core), interleaved, on the long apps and four short ones (matrixMul's 301 launches each wait
# at their end: the one a blocking wait could slow).
#   LIMIT=540 bash benchmarks/results/s44/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-540}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_mergeSort,cs_sortingNetworks,pb_mvt,shoc_sort,cs_matrixMul,cs_transpose,shoc_bfs > $OUT/build.txt 2>&1 ||
  tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
stamp "thread times: cs_mergeSort, blocking sync"
rm -rf /tmp/tt
REUSELENS_BLOCKING_SYNC=1 timeout 60 python3 $REPO/benchmarks/thread_times.py --json $OUT/threads_mergeSort_blocking.json \
  -- $clean profile --no-analyze --run-dir /tmp/tt -- ./cs_mergeSort $(manifest_args cs_mergeSort) 2>&1 |
  grep -v "^run written" | tail -9
grep -h "waits for the GPU\|engine steps\|launch ends waited" /tmp/tt/collector.log | cut -c1-330
B=REUSELENS_BLOCKING_SYNC=1
for spec in cs_mergeSort:2 shoc_sort:3 cs_matrixMul:3 cs_transpose:3 shoc_bfs:3 pb_mvt:1 cs_sortingNetworks:1; do
  app=${spec%:*}
  rounds=${spec#*:}
  left 60 || break
  stamp "blocking sync against the tree: $app, $rounds rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 10)) python3 $REPO/benchmarks/teardown.py --rounds $rounds --reuselens $clean \
    --timeout 60 --json $OUT/sync_$app.json --modes "native,collect,collect:$B,collect:$B:REUSELENS_ENGINE_WORKERS=13" \
    -- ./$app $(manifest_args $app) 2>&1 | tail -5
done
cd $REPO
stamp done
