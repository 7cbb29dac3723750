#!/usr/bin/env bash
# Session 23, call 8: the collector's counts against Nsight Compute at the session's final code (call 1 ran them
# with the lending code, since taken out): fidelity.py, ncu x3, default and smallest buffers, on the
# microbenchmark and zero_fill.
# Run from the repository root with .whl/ carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call8/script.sh
source benchmarks/device_call.sh
mkdir -p /tmp/zf
for p in microbench zero_fill; do
  nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1
done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 100 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -8
done
stamp done
