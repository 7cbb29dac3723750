#!/usr/bin/env bash
# Session 28, call 1 (code: 1620a66, session 27's last edits fd228c2 and 180f53d never run on the GPU, and the suite
# never run with the shared columns' closed form bd7831c). 1. GPU tests, fidelity. 2. The build without the closed
# form (s27 next/columns.patch taken back) and one with the look-ahead for every lane of a scattered shared record
# (s27 next/prefetch_lanes.patch), built side by side. 3. Paired on eight apps, 3 rounds: without / with the closed
# form, then installed / look-ahead. 4. cs_transpose recorded, replayed by all three engines, results checked equal.
# 5. The suite, 2 rounds, clean install. 6. Post-run cost of the suite's runs (postrun.py) where full - collect was
# largest, and those run directories (no traces) brought back.
#   bash benchmarks/results/h200-2026-12-04-s28/call1/script.sh
source benchmarks/device_call.sh
S27=benchmarks/results/h200-2026-12-04-s27/next
REPO=$PWD
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
if [ "${SKIP_CHECKS:-0}" != 1 ]; then
stamp "GPU tests"
timeout 120 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -2
fidelity_against_ncu
fi
stamp "builds: without the closed form, with the look-ahead (in parallel)"
# `wait` with the two pids: a bare `wait` also waits for the log's tee (first try of this call hung there).
timeout 240 bash benchmarks/build_revision.sh --patch $S27/columns.patch /tmp/old -R > /tmp/old.txt 2>&1 &
P1=$!
timeout 240 bash benchmarks/build_revision.sh --patch $S27/prefetch_lanes.patch /tmp/pf > /tmp/pf.txt 2>&1 &
P2=$!
wait $P1 $P2
OLD_LIB=$(grep libreuselens_collector /tmp/old.txt); OLD_ENGINE=$(grep "_engine" /tmp/old.txt)
PF_LIB=$(grep libreuselens_collector /tmp/pf.txt); PF_ENGINE=$(grep "_engine" /tmp/pf.txt)
[ -n "$OLD_LIB" ] || tail -20 /tmp/old.txt; [ -n "$PF_LIB" ] || tail -20 /tmp/pf.txt
echo "old: $OLD_LIB $OLD_ENGINE"; echo "pf: $PF_LIB $PF_ENGINE"
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps $APPS > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
stamp "paired: without (A) / with (B) the closed form"
[ -n "$OLD_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a before=$OLD_LIB --b columns=installed --apps $APPS \
  --rounds 3 --out /tmp/ab --build /tmp/rb > /tmp/ab.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab.txt | tail -12
cp /tmp/ab/ab_collector.json $OUT/ab_columns.json 2>/dev/null
stamp "paired: installed (A) / look-ahead for every lane (B)"
[ -n "$PF_LIB" ] && timeout 200 python3 benchmarks/ab_collector.py --a installed=installed --b lanes=$PF_LIB --apps $APPS \
  --rounds 3 --out /tmp/ab2 --build /tmp/rb > /tmp/ab2.txt 2>&1; grep -v "^round\|^build\|^  " /tmp/ab2.txt | tail -12
cp /tmp/ab2/ab_collector.json $OUT/ab_prefetch_lanes.json 2>/dev/null
stamp "transpose recorded, replayed by the three engines"
ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'cs_transpose')))")
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 30 reuselens profile --no-analyze --traces --run-dir /tmp/tr -- ./cs_transpose $ARGS > /dev/null 2>&1)
[ -n "$OLD_ENGINE" ] && [ -n "$PF_ENGINE" ] && timeout 150 python3 benchmarks/replay_speed.py /tmp/tr --workers 12,1 --repeat 2 --engine $OLD_ENGINE,installed,$PF_ENGINE --check-equal 2>&1 | tail -12
short_suite 2 --build /tmp/rb
stamp "post-run cost of the suite's runs"
mkdir -p $OUT/runs
for app in cs_reduction pb_lu shoc_bfs shoc_bfs_uiuc cs_transpose; do
  d=/tmp/rf/runs/r1/$app-full
  [ -d $d ] && cp -r $d $OUT/runs/$app && rm -rf $OUT/runs/$app/traces
done
timeout 100 python3 benchmarks/postrun.py --repeat 3 /tmp/rf/runs/r1/cs_reduction-full /tmp/rf/runs/r1/pb_lu-full /tmp/rf/runs/r1/shoc_bfs-full /tmp/rf/runs/r1/cs_transpose-full 2>&1 | tail -20
du -sh $OUT/runs
stamp done
