#!/usr/bin/env bash
# For the next session's first H200 call (session 36 got only the H100 kind, whose host drifted by 1.5x within a
# call): the checks and figures on the H200, and session 36's code paired with the code before it on the eight
# short apps, 3 rounds, to settle call 5's cs_transpose pairs (1.10, 0.92-1.14 over 4 rounds on the H100 host; its
# slice's replay on the development machine did not change); and one core's load latency per working set, beside
# the development machine's, for the engine's per-core gap (2.2-2.7x on every step of the slices).
#   bash benchmarks/results/h100-2026-12-05-s37/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
stamp "load latency over working sets (next/latency.cpp; the development machine's figures in next/latency_dev.txt)"
g++ -O2 -std=c++17 benchmarks/results/h100-2026-12-05-s36/next/latency.cpp -o /tmp/latency && timeout 60 /tmp/latency \
  | tee $OUT/latency.txt
collector_beside benchmarks/results/h100-2026-12-05-s37/call1/session36_code.patch /tmp/old -R
gpu_tests
fidelity_against_ncu
short_suite 2
beside_lib /tmp/old && timeout 280 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b s36=installed \
  --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort --rounds 3 \
  --out /tmp/abb --build /tmp/rf/build > $OUT/ab_before.txt 2>&1
tail -11 $OUT/ab_before.txt
pytorch_loop 40
stamp done
