#!/usr/bin/env bash
# Prepared in session 33 for the next session's second device call. Issue 14's ratios are over the whole
# real-application suite, but its four long apps (cuda-samples mergeSort and sortingNetworks, PolyBench gemm and
# mvt: 67-220 M records each) last ran in session 13; every call since ran the eight short ones.
# 1. The four long apps natively, under `profile --no-analyze` and under `profile`, one round (their worst ratio is
#    the suite's).
# 2. The 40-step PyTorch loop natively and collected (issue 14: <= 3x).
# 3. PolyBench gemm (a broadcast of A[i][k] in half its records) and mvt (a column walk) paired before / with the
#    hand-over (0569728..4f6e078), 2 rounds, as long as the call lasts.
#   bash benchmarks/results/h200-2026-12-05-s33/next/script2.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s33/next
LONG=cs_mergeSort,cs_sortingNetworks,pb_gemm,pb_mvt
collector_beside $D/handed_over.patch /tmp/before -R
stamp "the four long apps: native, collect, full, one round"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
  --modes native,collect,full --jobs 16 --apps $LONG > "$OUT/realapps_long.txt" 2>&1
grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -8
cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
pytorch_loop 40
if beside_lib /tmp/before; then
  stamp "paired: before the hand-over (A) / with it (B), PolyBench gemm and mvt, 2 rounds"
  timeout 150 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b handed_over=installed \
    --apps pb_gemm,pb_mvt --rounds 2 --out /tmp/ab_long --build /tmp/rl/build > /tmp/ab_long.txt 2>&1
  grep -v "^round\|^build\|^  " /tmp/ab_long.txt | tail -6
  cp /tmp/ab_long/ab_collector.json $OUT/ab_long.json 2>/dev/null
fi
stamp done
