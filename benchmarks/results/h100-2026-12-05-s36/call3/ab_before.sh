#!/usr/bin/env bash
# Session 36, call 5: this session's code (dda82fe replay_lane_runs, fa03d95 the walk's prefetch) paired with the
# collector before it (session36_code.patch taken back = ab77333's), on five short apps, 2 rounds: call 4's suite
# on this host was slower than session 35's on the H200 (collect median 2.86x against 2.14x).
source benchmarks/device_call.sh
collector_beside benchmarks/results/h100-2026-12-05-s36/call3/session36_code.patch /tmp/old -R
beside_lib /tmp/old || exit 1
timeout 200 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b s36=installed \
  --apps cs_transpose,shoc_bfs,pb_fdtd2d,shoc_sort,cs_matrixMul --rounds 2 --out /tmp/abb --build /tmp/rf/build \
  > $OUT/ab_before.txt 2>&1
tail -9 $OUT/ab_before.txt
stamp done
