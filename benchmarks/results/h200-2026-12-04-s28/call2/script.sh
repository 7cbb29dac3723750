#!/usr/bin/env bash
# Session 28, call 2: the coalesced segments' flags, one cache line per chunk (flags.patch, shadow.h) against the
# flags side by side (eight chunks, up to eight owners, per line). 1. GPU tests, fidelity (with the change). 2. The
# engine and collector without it (flags.patch taken back). 3. cs_transpose and pb_fdtd2d recorded, replayed by
# both engines at 12 and 1 workers, results checked equal. 4. Paired collectors, eight apps, 3 rounds. 5. The suite,
# 2 rounds, clean install.
#   bash benchmarks/results/h200-2026-12-04-s28/call2/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s28/call2
REPO=$PWD
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "the build without the change (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/flags.patch /tmp/old -R > /tmp/old.txt 2>&1 &
BUILD=$!
stamp "GPU tests"
timeout 120 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -2
fidelity_against_ncu
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
wait $BUILD
OLD_LIB=$(grep libreuselens_collector /tmp/old.txt); OLD_ENGINE=$(grep "_engine" /tmp/old.txt)
[ -n "$OLD_LIB" ] || tail -20 /tmp/old.txt
echo "old: $OLD_LIB $OLD_ENGINE"
for app in cs_transpose pb_fdtd2d; do
  stamp "$app recorded, replayed by both engines"
  ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == '$app')))")
  (cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 30 reuselens profile --no-analyze --traces --run-dir /tmp/tr_$app -- ./$app $ARGS > /dev/null 2>&1)
  [ -n "$OLD_ENGINE" ] && timeout 150 python3 benchmarks/replay_speed.py /tmp/tr_$app --workers 12,1 --repeat 2 --engine $OLD_ENGINE,installed --check-equal > $OUT/replay_$app.txt 2>&1
  grep -v "^ *slowest" $OUT/replay_$app.txt | tail -6
done
stamp "paired: flags side by side (A) / a line per chunk (B)"
[ -n "$OLD_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a before=$OLD_LIB --b lines=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_flags.json 2>/dev/null
short_suite 2 --build /tmp/rb
stamp done
