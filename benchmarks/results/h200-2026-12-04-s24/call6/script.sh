#!/usr/bin/env bash
# Session 24, call 6, the final code (22c94a1; its collector is c9d9376's, which call 4 ran the GPU tests and the
# suite on): fidelity against ncu (x3) on the microbenchmark and zero_fill, default and smallest buffers.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call6/script.sh
source benchmarks/device_call.sh
mkdir -p /tmp/zf
for p in microbench zero_fill; do nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1; done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 100 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -6
done
stamp done
