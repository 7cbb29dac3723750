#!/usr/bin/env bash
# Session 36, call 1 (ab77333 and replay_lane_runs, whose engine JSON equals ab77333's on the dev machine): where the H200 host's time goes on the suite's worst
# apps. Session 35 found mergeSort both drain- and engine-bound (drain thread busy 100% of launch 0, 0.91 s of it a
# serial walk resolving PCs; engine queue near its 1 GiB bound) and one worker replaying its slices 2.5x slower than
# on the development machine. This call asks:
# 1. what the host's cores are (clock, THP, perf);
# 2. how fast one thread walks a packed stream the GPU wrote into pinned memory (pinned_walk.cu);
# 3. where a real mergeSort collect spends its CPU, per function, all threads (perf, cpu-clock);
# 4. whether mvt and sortingNetworks are drain- or engine-bound (their collector.logs);
# 5. one engine worker on two slices under perf stat (clock and IPC against the development machine);
# 6. the engine built for x86-64-v3 (AVX2, BMI2; march_v3.patch) against the installed one, on two slices.
#   bash benchmarks/results/h100-2026-12-05-s36/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
W=/tmp/s36c1
mkdir -p $W
collector_beside benchmarks/results/h100-2026-12-05-s36/call1/march_v3.patch /tmp/v3
stamp "host"
lscpu | grep -E "Model name|MHz|^CPU\(s\)|L2|L3|Flags" | cut -c1-200 | sed 's/Flags:.*\(avx512[a-z]*\).*/Flags: has \1/'
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
command -v perf && perf --version
stamp "build mergeSort, mvt, sortingNetworks"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/la --rounds 1 --modes native \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks --jobs 16 > $W/build.txt 2>&1 || tail -5 $W/build.txt
grep -E "native" $W/build.txt | cut -c1-120
beside_lib /tmp/v3 && V3=$(grep -m1 "_engine" /tmp/v3.build.txt) || V3=
python3 - <<'PY2'
import time
t = time.perf_counter(); s = 0
for i in range(20_000_000): s += i
print(f"python loop 20M: {time.perf_counter() - t:.3f} s")
PY2
stamp "a packed stream the GPU wrote into pinned memory, walked by one host thread"
nvcc -O3 -std=c++17 -I analyzer/engine/include benchmarks/results/h100-2026-12-05-s36/call1/pinned_walk.cu \
  -o /tmp/pinned_walk -lpthread && timeout 60 /tmp/pinned_walk | tee $OUT/pinned_walk.txt
HAVE_PERF=$(command -v perf > /dev/null && echo 1 || echo 0)
run_app() {  # run_app APP: collect (profile --no-analyze), wall time and collector.log's drain/engine lines
  local app=$1 args
  args=$(manifest_args $app)
  rm -rf $W/$app
  stamp "$app collect"
  local t0=$(date +%s.%N)
  (cd /tmp/la/build && timeout 60 reuselens profile --no-analyze --run-dir $W/$app -- ./$app $args > $W/$app.txt 2>&1)
  echo "$app collect wall $(echo "$(date +%s.%N) - $t0" | bc) s"
  cp $W/$app/collector.log $OUT/${app}_collector.log
  grep -E "exit:" $W/$app/collector.log | cut -c1-330
}
run_app cs_mergeSort
run_app pb_mvt
run_app cs_sortingNetworks
if [ "$HAVE_PERF" = 1 ]; then
  stamp "perf: mergeSort collect, all threads"
  args=$(manifest_args cs_mergeSort)
  rm -rf $W/ms_perf
  (cd /tmp/la/build && timeout 90 perf record -e cpu-clock -F 997 -o $W/ms.perf -- reuselens profile --no-analyze \
    --run-dir $W/ms_perf -- ./cs_mergeSort $args > $W/ms_perf.txt 2>&1)
  perf report -i $W/ms.perf --no-children --sort dso,sym --percent-limit 0.4 --stdio 2>/dev/null | grep "%" \
    | head -60 > $OUT/ms_perf_sym.txt
  perf report -i $W/ms.perf --no-children --sort tid --percent-limit 1 --stdio 2>/dev/null | grep "%" \
    | head -30 > $OUT/ms_perf_tid.txt
  cut -c1-150 $OUT/ms_perf_sym.txt | head -40
  cat $OUT/ms_perf_tid.txt
  R=tests/data/real_launches
  for s in cs_merge_intervals pytorch_xmma_sgemm_64x64_tn; do
    stamp "perf stat: one worker on $s"
    timeout 60 perf stat -e task-clock,cycles,instructions,cache-misses -o $OUT/stat_$s.txt python3 benchmarks/engine.py \
      --slice $R/$s --workers 1 --repeat 2 > $OUT/engine_$s.txt 2>&1
    grep -E "workers|slowest" $OUT/engine_$s.txt | head -4 | cut -c1-150
    grep -E "task-clock|cycles|instructions|misses|elapsed" $OUT/stat_$s.txt
  done
  stamp "perf: one worker on the xmma slice"
  timeout 60 perf record -e cpu-clock -o $W/xmma.perf python3 benchmarks/engine.py \
    --slice $R/pytorch_xmma_sgemm_64x64_tn --workers 1 > /dev/null 2>&1
  perf report -i $W/xmma.perf --no-children --sort sym --percent-limit 0.7 --stdio 2>/dev/null | grep "%" | head -30 \
    > $OUT/xmma_perf.txt
  cut -c1-140 $OUT/xmma_perf.txt
fi
if [ -n "$V3" ]; then
  for s in cs_merge_intervals pytorch_xmma_sgemm_64x64_tn; do
    for e in installed $V3 installed $V3; do
      stamp "engine.py $s, engine $(basename $(dirname $(dirname $e)))"
      timeout 60 python3 benchmarks/engine.py --slice tests/data/real_launches/$s --workers 1,12 --repeat 1 --engine $e \
        2>&1 | grep -E "^  workers" | cut -c1-100
    done
  done
fi
stamp done
