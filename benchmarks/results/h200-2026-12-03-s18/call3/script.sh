#!/usr/bin/env bash
# Session 18, call 3: zero-fill cp.async lanes (null source, src-size 0) left out of the global half. GPU tests
# (incl. tests/gpu/zero_fill.cu, plain and value mode); fidelity.py on zero_fill and async_copies (ncu x3); ncu on
# the PyTorch loop's cuBLAS launch 28 against the new collector's trace of it; the PyTorch loop native and
# collected. Run from the repository root with .whl/ carried: bash benchmarks/results/h200-2026-12-03-s18/call3/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "GPU tests"
timeout 240 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -4
stamp "fidelity: zero_fill, async_copies"
mkdir -p /tmp/zf && nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/zero_fill tests/gpu/zero_fill.cu && /tmp/zf/zero_fill
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/async_copies tests/gpu/async_copies.cu
for p in zero_fill async_copies; do
  timeout 150 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | tail -30
done
(cd /tmp/fid_zero_fill && rm -f run_*/modules/*.cubin.tmp && tar cf $OUT/fid_zero_fill.tar run_default ncu1.csv ncu2.csv ncu3.csv) && ls -la $OUT/fid_zero_fill.tar
stamp "PyTorch loop launch 28 (cuBLAS 32x32 SGEMM): ncu against the new collector's trace"
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
python3 - <<'PY'
import numpy as np, json
from reuselens.analyzer.replay import RECORD_DTYPE
run = json.load(open('/tmp/tg28/run.json'))
l = [x for x in run['launches'] if x.get('trace')][0]
print('traced', l['id'], l['kernel'][:80], l['records'], 'records')
recs = np.fromfile('/tmp/tg28/' + l['trace'], dtype=np.uint8)[64:].view(RECORD_DTYPE)
g = recs[(recs['type'] == 1) & (recs['space'] == 1) & (recs['access'] == 1)]
lanes = ((g['active_mask'][:, None] >> np.arange(32)) & 1).astype(bool)
sec = 0
for a, m, s in zip(g['addr'], lanes, g['size']):
    aa = a[m]
    sec += len({b for x in aa for b in range(int(x) // 32, (int(x) + int(s) - 1) // 32 + 1)})
print('ours: global ld requests', len(g), 'of them cp.async', int((g['flags'] & 1).sum()), 'sectors', sec, 'null lanes', int(((g['addr'] == 0) & lanes).sum()))
PY
for i in 1 2; do
  timeout 120 ncu --csv --clock-control none --launch-skip 28 --launch-count 1 --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed_op_ldgsts.sum python3 benchmarks/pytorch_memory_step.py 2 2>/dev/null | grep -E "l1tex|smsp" | cut -d, -f5,13- | head -5
done
stamp "the PyTorch loop, native then collected"
timeout 40 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 35 2>&1 | grep "native:"
timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 90 2>&1 | grep "collect:"
grep "exit:" /tmp/ptc/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp done
