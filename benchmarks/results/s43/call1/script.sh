#!/usr/bin/env bash
# Session 43, call 1. (1) The long apps, whose ratios are the suite's worst (mergeSort 7.82x collected on the H100 in
# session 42, sortingNetworks 6.02x, mvt 5.84x): one `profile --no-analyze` each with the online engine on (default
# workers and 15 workers) and off, every run's collector.log and run.json kept, so that the drain's and the engine's
# shares are read per launch; mergeSort once under `perf record` where the host has perf. (2) Session 42's planned
# split of a short app's attach cost (teardown.py: passive, attach with and without the Sanitizer's parallel
# launches, no engine, collect; 3 rounds) on four short apps.
#   LIMIT=330 bash benchmarks/results/s43/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-330}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
SHORT=shoc_sort,cs_reduction,pb_lu,cs_matrixMul
LONG=cs_mergeSort,pb_mvt,cs_sortingNetworks
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
library=$(/tmp/clean/bin/python -c "from reuselens.collector.launcher import find_tool_library; print(find_tool_library())")
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps $SHORT,$LONG > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
nproc; uptime
cd /tmp/rf/build || exit 1
long_run() {  # long_run APP NAME [VAR=VALUE...]: one `profile --no-analyze`, its wall time, log and run.json kept
  local app=$1 name=$2 d=/tmp/ld/$1-$2 t0 t1
  shift 2
  rm -rf $d
  t0=$(date +%s.%N)
  env "$@" timeout 60 $clean profile --no-analyze --run-dir $d -- ./$app $(manifest_args $app) > /tmp/ld_$app-$name.txt 2>&1 || tail -3 /tmp/ld_$app-$name.txt
  t1=$(date +%s.%N)
  echo "$app $name: $(python3 -c "print(f'{$t1-$t0:.3f} s')")"
  mkdir -p $OUT/long/$app-$name && cp $d/collector.log $d/run.json $OUT/long/$app-$name/ 2>/dev/null
  grep -h "exit:" $d/collector.log | cut -c1-300
}
for app in ${LONG//,/ }; do
  left 60 || break
  stamp "long app: $app"
  s=$(date +%s.%N); timeout 30 ./$app $(manifest_args $app) > /dev/null 2>&1; e=$(date +%s.%N)
  echo "$app native: $(python3 -c "print(f'{$e-$s:.3f} s')")"
  long_run $app engine
  long_run $app no-engine REUSELENS_ONLINE_ANALYSIS=0
  left 60 || break
  long_run $app engine15 REUSELENS_ENGINE_WORKERS=15
done
if command -v perf > /dev/null && left 60; then
  stamp "perf record: mergeSort collected"
  rm -rf /tmp/ld/perf
  timeout 60 perf record -F 499 -g -o /tmp/ms.perf -- $clean profile --no-analyze --run-dir /tmp/ld/perf -- ./cs_mergeSort > /dev/null 2>&1
  timeout 60 perf report -i /tmp/ms.perf --no-children --sort comm,dso,symbol --stdio 2>/dev/null | grep -v "^$" | head -300 > $OUT/perf_mergesort.txt
  timeout 30 perf report -i /tmp/ms.perf --no-children --sort comm,symbol -g none --stdio 2>/dev/null | grep -v "^#\|^$" | head -80
else
  echo "no perf on this host"
fi
for app in ${SHORT//,/ }; do
  left 30 || break
  stamp "teardown: $app"
  timeout 90 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --library $library \
    --json $OUT/teardown_$app.json \
    --modes native,passive,attach,attach:SANITIZER_DISABLE_PARALLEL_LAUNCHES=0,no-engine,collect \
    -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/teardown.txt
done
cd $REPO
stamp done
