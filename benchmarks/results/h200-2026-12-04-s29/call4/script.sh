#!/usr/bin/env bash
# Session 29, call 4 (call 3 found a launch ending on a generation boundary drained the next launch's first generation as its own, and a context made again kept its numbering; both fixed, tests/collector/test_drain.py now runs the launches on a CPU stand-in): the last generation of a launch drained while the app goes on (async.patch: LAUNCH_END waits
# for the kernel, not for the drain; the next launch's records start in a fresh generation; generations numbered on
# through a context's launches, drain.h). 1. GPU tests, fidelity. 2. The collector without it (async.patch taken
# back) built beside. 3. Paired: before (A) / async (B), eight apps, 3 rounds. 4. Launch waits of matrixMul,
# transpose, LU, reduction and SHOC BFS under both. 5. The suite, 2 rounds, clean install.
#   bash benchmarks/results/h200-2026-12-04-s29/call4/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s29/call4
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "the build without async.patch (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/async.patch /tmp/old -R > /tmp/old.txt 2>&1 &
BUILD=$!
stamp "GPU tests (the failures' tails printed)"
timeout 150 python3 -m pytest -q -rf tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py \
  tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | grep -v "^  \|^$" | tail -15
fidelity_against_ncu
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
wait $BUILD
OLD_LIB=$(grep libreuselens_collector /tmp/old.txt)
[ -n "$OLD_LIB" ] || tail -20 /tmp/old.txt
stamp "paired: before (A) / async (B)"
[ -n "$OLD_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a before=$OLD_LIB --b async=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_async.json 2>/dev/null
stamp "launch waits under both"
for app in cs_matrixMul cs_transpose pb_lu cs_reduction shoc_bfs; do
  A=$(manifest_args $app)
  (cd /tmp/rb && REUSELENS_COLLECTOR_LIB=$OLD_LIB timeout 60 reuselens profile --no-analyze --run-dir /tmp/wb_$app -- ./$app $A > /dev/null 2>&1)
  (cd /tmp/rb && timeout 60 reuselens profile --no-analyze --run-dir /tmp/wa_$app -- ./$app $A > /dev/null 2>&1)
  timeout 30 python3 benchmarks/launch_waits.py /tmp/wb_$app /tmp/wa_$app | tee -a $OUT/launch_waits.txt
done
grep -m2 "launch 7:" /tmp/wa_cs_transpose/collector.log
grep -c "error" /tmp/wa_*/collector.log
short_suite 2 --build /tmp/rb
stamp done
