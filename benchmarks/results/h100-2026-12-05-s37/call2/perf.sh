#!/usr/bin/env bash
# For the call after next/script.sh, on the same warm machine: where the GPU host's CPU time goes, with perf (the
# image has none: bash benchmarks/bundle_perf.sh here first, then carry .perf). Session 36 could not say why one
# engine worker replays the slices 2.2-2.7x as slowly there as on the development machine, nor which functions a
# real mergeSort collect spends its 57 CPU-s of engine steps in.
#   bash benchmarks/results/h100-2026-12-05-s37/call2/perf.sh   (carry .whl, benchmarks/realapps/src and .perf)
source benchmarks/device_call.sh
PERF=$(command -v perf || echo "$PWD/.perf/perf")
stamp "perf: $PERF"
$PERF stat -e cpu-clock true > /tmp/perf_check.txt 2>&1 || { tail -3 /tmp/perf_check.txt; echo "perf cannot sample here"; exit 1; }
$PERF stat -e cycles,instructions,cache-misses true 2>&1 | grep -E "cycles|instructions|misses" | head -3
# The installed replay module is stripped (pybind11 strips modules in Release builds): one with its symbols.
stamp "the engine module with symbols (RelWithDebInfo, -O3)"
cmake -S . -B /tmp/bg $(command -v ninja > /dev/null && echo -G Ninja) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O3 -g -DNDEBUG" \
  -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')" -DSKBUILD=ON > /tmp/bg.txt 2>&1 &&
  timeout 200 cmake --build /tmp/bg --target _engine -j 16 >> /tmp/bg.txt 2>&1 || { tail -5 /tmp/bg.txt; exit 1; }
ENGINE=$(find /tmp/bg -name "_engine*.so" | head -1)
R=tests/data/real_launches
for s in pytorch_xmma_sgemm_64x64_tn cs_merge_intervals; do
  stamp "perf stat: one worker on $s"
  timeout 60 $PERF stat -e task-clock,cycles,instructions,cache-misses,LLC-load-misses -o $OUT/stat_$s.txt \
    python3 benchmarks/engine.py --slice $R/$s --workers 1 --repeat 2 --engine $ENGINE > $OUT/engine_$s.txt 2>&1
  grep -E "workers|slowest" $OUT/engine_$s.txt | head -4 | cut -c1-150
  grep -E "task-clock|cycles|instructions|misses|elapsed" $OUT/stat_$s.txt
  stamp "perf record: one worker on $s"
  timeout 60 $PERF record -e cpu-clock -o /tmp/$s.perf python3 benchmarks/engine.py --slice $R/$s --workers 1 \
    --engine $ENGINE > /dev/null 2>&1
  $PERF report -i /tmp/$s.perf --no-children --sort sym --percent-limit 0.7 --stdio 2>/dev/null | grep "%" | head -30 \
    > $OUT/perf_$s.txt
  cut -c1-140 $OUT/perf_$s.txt | head -16
done
stamp "mergeSort: build, then a collect under perf, all threads"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/la --rounds 1 --modes native \
  --apps cs_mergeSort > /tmp/la_build.txt 2>&1 || tail -5 /tmp/la_build.txt
rm -rf /tmp/ms_perf
(cd /tmp/la/build && timeout 90 $PERF record -e cpu-clock -F 997 -o /tmp/ms.perf -- reuselens profile --no-analyze \
  --run-dir /tmp/ms_perf -- ./cs_mergeSort $(manifest_args cs_mergeSort) > /tmp/ms_perf.txt 2>&1)
$PERF report -i /tmp/ms.perf --no-children --sort dso,sym --percent-limit 0.4 --stdio 2>/dev/null | grep "%" \
  | head -60 > $OUT/ms_perf_sym.txt
$PERF report -i /tmp/ms.perf --no-children --sort tid --percent-limit 1 --stdio 2>/dev/null | grep "%" \
  | head -30 > $OUT/ms_perf_tid.txt
cut -c1-150 $OUT/ms_perf_sym.txt | head -40
cat $OUT/ms_perf_tid.txt
stamp done
