#!/usr/bin/env bash
# Session 18, call 4 (the session's last GPU-side code): lane-less global halves enter no request distribution.
# GPU tests (zero_fill.cu now with a third kernel: the 16-byte src-size form with a source in every lane);
# fidelity.py on zero_fill (ncu x3), its recorded run and CSVs brought back as a test fixture; zero_fill's LDGSTS
# forms in SASS. Run from the repository root with .whl/ carried:
#   bash benchmarks/results/h200-2026-12-03-s18/call4/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "GPU tests"
timeout 200 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -4
stamp "fidelity: zero_fill"
mkdir -p /tmp/zf && nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/zero_fill tests/gpu/zero_fill.cu && /tmp/zf/zero_fill
cuobjdump -sass /tmp/zf/zero_fill | grep -E "Function|LDGSTS"
timeout 120 python3 benchmarks/fidelity.py --bench /tmp/zf/zero_fill --work /tmp/fid_zero_fill --ncu-runs 3 --json $OUT/fid_zero_fill.json 2>&1 | tail -32
(cd /tmp/fid_zero_fill && tar cf $OUT/fid_zero_fill.tar run_default ncu1.csv ncu2.csv ncu3.csv) && ls -la $OUT/fid_zero_fill.tar
stamp done
