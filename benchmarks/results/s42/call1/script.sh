#!/usr/bin/env bash
# Session 42, call 1: the closing figures of main (e34466b: the four engine changes kept in session 41) on the whole
# real-application suite, which session 41 could not run (its call 3 was refused): the eight short apps (2 rounds)
# and the four long ones (1 round; their worst ratio, mergeSort's 9.75x in session 35, is the suite's), then the
# PyTorch loop; then where `profile` spends what `--no-analyze` does not (the launcher's phases with the clean
# install's interpreter, 3 rounds, and SHOC sort's analysis under cProfile), and engine.py's gather at 1 and 12
# workers on this host. Each step runs only while the call has time for it.
#   LIMIT=520 bash benchmarks/results/s42/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-520}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
short_suite 2
if left 200; then
  stamp "the four long apps: native, collect, full, one round, clean install"
  timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
    --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,cs_sortingNetworks,pb_gemm,pb_mvt > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -9
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
if left 140; then pytorch_loop 40; fi
stamp "launcher phases, the clean install's interpreter"
cd /tmp/rf/build || exit 1
for app in shoc_sort cs_reduction; do
  for mode in reuse no-analyze; do
    left 25 || break 2
    timeout 60 /tmp/clean/bin/python $REPO/benchmarks/launcher_phases.py --rounds 3 --mode $mode \
      -- ./$app $(manifest_args $app) 2>&1 | grep -v "^run written" | tee -a $OUT/phases.txt
  done
done
if left 20; then
  timeout 40 /tmp/clean/bin/python $REPO/benchmarks/launcher_phases.py --rounds 1 --profile-analysis $OUT/shoc_sort.prof \
    -- ./shoc_sort $(manifest_args shoc_sort) 2>&1 | grep -v "^run written" | tee -a $OUT/phases_profiled.txt
fi
cd $REPO
if left 30; then
  stamp "engine.py gather, 1 and 12 workers"
  timeout 60 python3 benchmarks/engine.py --pattern gather --handed-over --workers 1,12 --repeat 2 > $OUT/eng_gather_1_12.txt 2>&1
  grep -A4 "^warm" $OUT/eng_gather_1_12.txt | grep -E "workers|mean worker"
fi
stamp done
