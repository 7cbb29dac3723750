#!/usr/bin/env bash
# Session 58, call 3: a third breadth set of nine public apps no session has profiled (benchmarks/realapps/breadth3.json:
# PolyBench jacobi1d/jacobi2d/doitgen, SHOC fft and s3d, cuda-samples simpleAWBarrier, jacobiCudaGraphs,
# tf32TensorCoreGemm, cdpAdvancedQuicksort), natively and under `profile` from a user's clean install, one round;
# breadth_check.py names every defect; the reports come back for review.
#   bash benchmarks/results/s58/call3/script.sh
#   (carry .whl and benchmarks/realapps/breadth3-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
echo "-- $(nproc) CPUs; $(uptime)"
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth3.json BREADTH_SRC=benchmarks/realapps/breadth3-src breadth_set 420
(cd /tmp/breadth && find runs -path '*modules*' -name '*.cubin' -size -8M | tar czf "$OUT/breadth3_modules.tgz" -T - 2>/dev/null)
stamp done
