#!/usr/bin/env bash
# Prepared in session 27 for the next session's first device call (its code: fd228c2 or later). The shared columns'
# closed form (bd7831c, fd228c2) ran on the GPU only in call 5 (fidelity, GPU tests, one transpose replay); the suite
# never ran with it, and it was never paired with the engine before it. 1. GPU tests, fidelity. 2. The engine and
# collector without it (columns.patch taken back) built beside. 3. Paired: without (A) / with (B), eight apps,
# 3 rounds. 4. cs_transpose recorded, replayed by both engines at 12 and 1 workers, results checked equal. 5. The
# suite, 2 rounds, clean install.
#   bash benchmarks/results/h200-2026-12-04-s27/next/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s27/next
REPO=$PWD
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 120 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -2
fidelity_against_ncu
stamp "the build without the closed form"
timeout 240 bash benchmarks/build_revision.sh --patch $D/columns.patch /tmp/old -R > /tmp/old.txt 2>&1 || tail -20 /tmp/old.txt
OLD_LIB=$(grep libreuselens_collector /tmp/old.txt); OLD_ENGINE=$(grep "_engine" /tmp/old.txt)
echo "old: $OLD_LIB $OLD_ENGINE"
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
stamp "paired: without (A) / with (B) the closed form"
[ -n "$OLD_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a before=$OLD_LIB --b columns=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_columns.json 2>/dev/null
stamp "transpose recorded, replayed by both engines"
ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'cs_transpose')))")
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 30 reuselens profile --no-analyze --traces --run-dir /tmp/tr -- ./cs_transpose $ARGS > /dev/null 2>&1)
[ -n "$OLD_ENGINE" ] && timeout 120 python3 benchmarks/replay_speed.py /tmp/tr --workers 12,1 --repeat 2 --engine $OLD_ENGINE,installed --check-equal 2>&1 | tail -10
short_suite 2 --build /tmp/rb
stamp done
