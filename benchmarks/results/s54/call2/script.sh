#!/usr/bin/env bash
# Session 54, call 2: where the GPU host's engine time goes on the worst app (cuda-samples mergeSort, 9.4x in call 1,
# engine-bound: its queue full from the first launch) and on mvt (6.5x, the global row walk), with perf sampling
# every thread of a `profile --no-analyze` (the collector library keeps its symbols).
#   bash benchmarks/results/s54/call2/script.sh   (carry .whl with pyelftools and cxxfilt only, benchmarks/realapps/src, .perf.tar.xz: 64 MiB of disk blocks
#   with the tree; a collect imports neither lz4 nor zstandard)
source benchmarks/device_call.sh
tar xJf .perf.tar.xz
PERF=$PWD/.perf/perf
$PERF stat -e cpu-clock true > /tmp/perf_check.txt 2>&1 || { tail -3 /tmp/perf_check.txt; echo "perf cannot sample here"; exit 1; }
# The installed library is stripped (call 2's first try: addresses only); the build folder's copy is the same code
# with its symbols, so it takes the installed one's place for perf to read.
UNSTRIPPED=$(ls build/*/collector/native/libreuselens_collector.so | head -1)
cp "$UNSTRIPPED" "$REUSELENS_COLLECTOR_LIB" && nm "$REUSELENS_COLLECTOR_LIB" | grep -c "replay_shared"
stamp "build mergeSort and mvt"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/la --rounds 1 --modes native \
  --apps cs_mergeSort,pb_mvt > "$OUT/native.txt" 2>&1 || tail -5 "$OUT/native.txt"
grep -E "^cs_|^pb_" "$OUT/native.txt"
for app in cs_mergeSort pb_mvt; do
  stamp "$app: profile --no-analyze under perf, every thread"
  rm -rf "/tmp/${app}_run"
  (cd /tmp/la/build && timeout 90 $PERF record -e cpu-clock -F 1999 -o "/tmp/$app.perf" -- reuselens profile --no-analyze \
    --run-dir "/tmp/${app}_run" -- "./$app" $(manifest_args "$app") > "/tmp/${app}_out.txt" 2>&1)
  echo "exit $?"
  grep -h "engine steps\|launch ends waited" "/tmp/${app}_run/collector.log" | cut -c1-400
  $PERF report -i "/tmp/$app.perf" --no-children --sort comm --stdio 2>/dev/null | grep "%" | head -25 > "$OUT/${app}_threads.txt"
  $PERF report -i "/tmp/$app.perf" --no-children --sort dso,sym --percent-limit 0.3 --stdio 2>/dev/null | grep "%" \
    | head -70 > "$OUT/${app}_syms.txt"
  $PERF report -i "/tmp/$app.perf" --no-children --comms rl-engine-3 --sort sym --percent-limit 0.5 --stdio 2>/dev/null \
    | grep "%" | head -40 > "$OUT/${app}_worker3_syms.txt"
  cut -c1-120 "$OUT/${app}_threads.txt" | head -22
  cut -c1-170 "$OUT/${app}_syms.txt" | head -40
  for fn in $(grep -o "reuselens::Engine::Impl::[a-z_0-9]*" "$OUT/${app}_syms.txt" | head -3); do
    $PERF annotate -i "/tmp/$app.perf" --stdio -s "$fn" 2>/dev/null | awk '$1+0 > 1.5' | head -40 > "$OUT/${app}_annotate_${fn##*::}.txt"
  done
  cp "/tmp/${app}_run/collector.log" "$OUT/${app}_collector.log"
done
stamp done
