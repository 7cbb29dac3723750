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
collector_beside $D/handed_over.patch /tmp/before -R
stamp "the four long apps: native, collect, full, one round"
timeout 330 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
  --modes native,collect,full --jobs 16 --apps $LONG > "$OUT/realapps_long.txt" 2>&1
grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -8
cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
if beside_lib /tmp/before; then
  stamp "paired: before the hand-over (A) / with it (B), PolyBench gemm, 2 rounds"
  timeout 120 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b handed_over=installed --apps pb_gemm \
    --rounds 2 --out /tmp/ab_gemm --build /tmp/rl/build > /tmp/ab_gemm.txt 2>&1
  grep -v "^round\|^build\|^  " /tmp/ab_gemm.txt | tail -4
fi
pytorch_loop 40
stamp done
