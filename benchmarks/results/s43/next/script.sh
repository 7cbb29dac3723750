#!/usr/bin/env bash
# For session 44's first call. The engine's step times in collector.log are each worker's wall seconds in a step,
# so a worker put off its core counts as working; twelve workers' summed step seconds per record are twice one
# worker's on the GPU host, and fifteen workers took mergeSort 1.75 times as long as twelve (session 43, calls 1-2).
# thread_names.patch names the collector's threads (rl-engine-N, rl-copy-N, rl-drain) so that
# benchmarks/thread_times.py can say, per thread group, how long each spent on a core and how long runnable but
# waiting for one (/proc/PID/task/TID/schedstat). The patch goes on the tree first: the GPU tests and fidelity
# check it; then the long apps, a short one and the PyTorch loop under thread_times.py, at 12 and 15 workers.
# Last, if time is left, short_spins.patch (workers that wait spin a tenth as long before they yield or sleep)
# built beside and paired with the tree on three apps: whether spinning workers hold up the ones put off their cores.
#   LIMIT=540 bash benchmarks/results/s43/next/script.sh   (carry .whl and benchmarks/realapps/src)
git apply benchmarks/results/s43/next/thread_names.patch && echo "thread_names.patch applied" || exit 1
source benchmarks/device_call.sh
LIMIT=${LIMIT:-540}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
collector_beside benchmarks/results/s43/next/short_spins.patch /tmp/spins
gpu_tests
fidelity_against_ncu
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_mergeSort,cs_sortingNetworks,pb_mvt,shoc_sort > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
for app in cs_mergeSort shoc_sort pb_mvt cs_sortingNetworks; do
  for workers in 12 15; do
    left 40 || break 2
    stamp "thread times: $app, $workers workers"
    rm -rf /tmp/tt_$app
    REUSELENS_ENGINE_WORKERS=$workers timeout 60 python3 $REPO/benchmarks/thread_times.py \
      --json $OUT/threads_${app}_$workers.json -- $clean profile --no-analyze --run-dir /tmp/tt_$app \
      -- ./$app $(manifest_args $app) 2>&1 | grep -v "^run written" | tail -9
    grep -h "engine steps" /tmp/tt_$app/collector.log | cut -c1-330
  done
done
cd $REPO
if left 110; then
  stamp "thread times: the PyTorch loop, 40 steps"
  timeout 100 python3 benchmarks/thread_times.py --json $OUT/threads_pytorch.json -- python3 \
    benchmarks/pytorch_overhead.py --out /tmp/pt_tt --steps 40 --rounds 1 --modes collect --timeout 95 2>&1 | tail -9
fi
if left 90 && beside_lib /tmp/spins; then
  cd /tmp/rf/build
  for app in cs_mergeSort shoc_sort cs_sortingNetworks; do
    left 40 || break
    stamp "short spins against the tree: $app"
    timeout 120 python3 $REPO/benchmarks/teardown.py --rounds $([ $app = cs_sortingNetworks ] && echo 1 || echo 2) \
      --reuselens $clean --timeout 60 --json $OUT/spins_$app.json \
      --modes "native,collect,collect:REUSELENS_COLLECTOR_LIB=$BESIDE_LIB" -- ./$app $(manifest_args $app) 2>&1 | tail -4
  done
  cd $REPO
fi
stamp done
