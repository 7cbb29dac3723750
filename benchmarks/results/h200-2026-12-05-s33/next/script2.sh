#!/usr/bin/env bash
# Prepared in session 33 for the next session's second device call. Issue 14's ratios are over the whole
# real-application suite, but its four long apps (cuda-samples mergeSort and sortingNetworks, PolyBench gemm and
# mvt: 67-220 M records each) last ran in session 13; every call since ran the eight short ones. 1. The four long
# apps natively, under `profile --no-analyze` and under `profile`, one round (their worst ratio is the suite's).
# 2. PolyBench gemm (a broadcast of A[i][k] in half its records) paired before / with the hand-over, 2 rounds. 3. The
# 40-step PyTorch loop natively and collected (issue 14: <= 3x).
#   bash benchmarks/results/h200-2026-12-05-s33/next/script2.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s33/next
LONG=cs_mergeSort,cs_sortingNetworks,pb_gemm,pb_mvt
stamp "the collector before the hand-over (in the background)"
timeout 300 bash benchmarks/build_revision.sh --patch $D/handed_over.patch /tmp/before -R > /tmp/before.txt 2>&1 &
BUILD=$!
stamp "the four long apps: native, collect, full, one round"
timeout 330 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
  --modes native,collect,full --jobs 16 --apps $LONG > "$OUT/realapps_long.txt" 2>&1
grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -8
cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
wait $BUILD
BEFORE_LIB=$(grep libreuselens_collector /tmp/before.txt)
if [ -n "$BEFORE_LIB" ]; then
  stamp "paired: before the hand-over (A) / with it (B), PolyBench gemm, 2 rounds"
  timeout 120 python3 benchmarks/ab_collector.py --a before=$BEFORE_LIB --b handed_over=installed --apps pb_gemm \
    --rounds 2 --out /tmp/ab_gemm --build /tmp/rl/build > /tmp/ab_gemm.txt 2>&1
  grep -v "^round\|^build\|^  " /tmp/ab_gemm.txt | tail -4
else
  tail -n 20 /tmp/before.txt
fi
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native \
  --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect \
  --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited\|drain thread" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-400
stamp done
