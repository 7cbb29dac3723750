#!/usr/bin/env bash
# Session 19, call 1 (session 18's prepared call 4, which did not run, with the suite and the PyTorch loop added).
# The last GPU-side code: lane-less global halves enter no request distribution (65d73f7's engine). GPU tests, with
# zero_fill.cu's third kernel (sourced_vectors: the 16-byte src-size form with a source in every lane, for whether
# ncu's shared-load count of the 16-byte LDGSTS follows the form or the zero fill); fidelity.py on it (ncu x3), its
# recorded run and CSVs brought back for re-recording tests/data/runs/zero_fill; zero_fill's LDGSTS forms in SASS;
# launch 28 at 1 and 12 workers; the PyTorch loop; the suite, two rounds. Run from the repository root with .whl/
# and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s19/call1/script.sh
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
stamp "launch 28 (cuBLAS 32x32 SGEMM, zero fills left out): 1 and 12 workers, busy share, independent engines"
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
timeout 120 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1,12 --repeat 3 --independent 12 2>&1 | tail -6
stamp "the PyTorch loop, native then collected"
timeout 40 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 35 2>&1 | grep "native:"
timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 90 2>&1 | grep "collect:"
grep "exit:" /tmp/ptc/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "suite, two rounds"
timeout 160 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort > $OUT/realapps.txt 2>&1; grep -v "^build\|^round" $OUT/realapps.txt | tail -13
stamp done
