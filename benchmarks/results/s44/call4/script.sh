#!/usr/bin/env bash
# Session 44, call 4: the closing checks on main's final code: the GPU tests and fidelity against ncu, then the eight
# short apps (2 rounds) and the four long ones (1 round) from a user's install. Each step runs only while the call
# has time for it.
#   LIMIT=540 bash benchmarks/results/s44/call4/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-540}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
gpu_tests
fidelity_against_ncu
if left 200; then short_suite 2; fi
if left 100; then
  stamp "the four long apps: native, collect, full, one round, clean install"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl \
    --rounds 1 --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,pb_gemm,pb_mvt,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -9
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
stamp done
