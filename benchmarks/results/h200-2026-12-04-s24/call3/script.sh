#!/usr/bin/env bash
# Session 24, call 3, the final code (coalesced shadow segments, f5eb75d; nothing in the collector or the engine
# changed after call 2, which ran the GPU tests): 1. the eight short apps, native / collect / full, 2 rounds, from
# a user's install; 2. fidelity against ncu (x3) on the microbenchmark and zero_fill; 3. the 40-step PyTorch loop,
# native and collected; 4. whether peak_shadow_bytes repeats between replays of one trace at twelve workers (call 2
# saw it differ with segments on and off on two shared-memory apps); 5. engine.py's gather at 1 and 12 workers.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call3/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
mkdir -p /tmp/zf
for p in microbench zero_fill; do nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1; done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 100 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -8
done
stamp "PyTorch loop, 40 steps: native, collect"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps" /tmp/ptc/runs/*/collector.log 2>/dev/null | tail -1 | cut -c1-400
stamp "peak shadow of repeated replays, 12 workers"
(cd /tmp/rf/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/seg/cs_reduction -- ./cs_reduction --n=1048576 > /dev/null 2>&1)
for S in 0 0 1 1; do
  REUSELENS_SHADOW_SEGMENTS=$S timeout 100 python3 -c "
import sys
from reuselens.analyzer import replay
out = replay.replay_run('/tmp/seg/cs_reduction', workers=12)
print('segments=$S peak_shadow_bytes', out['stats']['peak_shadow_bytes'], 'segment_records', out['stats']['segment_records'])"
done
stamp "engine.py --pattern gather"
timeout 200 python3 benchmarks/engine.py --pattern gather --workers 1,12 --repeat 2 2>&1 | grep -v "^ *ms per step, mean\|hand-over"
stamp done
