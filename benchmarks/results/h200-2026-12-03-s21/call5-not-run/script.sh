#!/usr/bin/env bash
# Session 21, call 5: the collector's counts against Nsight Compute at the session's final code (the collector and
# the engine are unchanged this session; the launcher's Python and the language server changed): fidelity.py on
# the microbenchmark and zero_fill, ncu x3 each. Run from the repository root with .whl/ carried:
#   bash benchmarks/results/h200-2026-12-03-s21/call5/script.sh
source benchmarks/device_call.sh
mkdir -p /tmp/zf
for p in microbench zero_fill; do
  nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1
done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 110 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -12
done
stamp done
