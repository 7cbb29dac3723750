#!/usr/bin/env bash
# Session 18, call 2: owner shares taken over between workers (c47ec7d) on the H200. GPU tests (online = replay on
# H200 traces); 631a2e9 (fixed owners) against c47ec7d on three recorded cuBLAS launches of the PyTorch loop at 1
# and 12 workers, and the twelve independent engines' ceiling; shares per worker 1, 2, 4, 8 on the largest; the
# PyTorch loop native and collected; the suite once. Run from the repository root with .whl/ and
# benchmarks/realapps/src carried: bash benchmarks/results/h200-2026-12-03-s18/call2/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "GPU tests (collector, value cases through the whole analysis, online = replay)"
timeout 240 python3 -m pytest -q -x tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "build 631a2e9"
timeout 200 bash benchmarks/build_revision.sh 631a2e9 /tmp/old > /tmp/old.txt 2>&1 || tail -20 /tmp/old.txt
OLD=$(find /tmp/old -name "_engine*.so" | head -1)
for L in 28 32 19; do
  timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
done
stamp "launch 28 (294 K records): 631a2e9 against c47ec7d at 1 and 12 workers, then twelve independent engines"
timeout 120 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1,12 --repeat 3 --engine $OLD,installed --independent 12 2>&1 | tail -11
for L in 32 19; do
  stamp "launch $L: 631a2e9 against c47ec7d at 12 workers, then twelve independent engines"
  timeout 150 python3 benchmarks/replay_speed.py /tmp/tg$L --workers 12 --repeat 3 --engine $OLD,installed --independent 12 2>&1 | tail -7
done
stamp "launch 19: shares per worker 1, 2, 8 (4 above)"
for k in 1 2 8; do
  timeout 60 python3 benchmarks/replay_speed.py /tmp/tg19 --workers 12 --repeat 2 --owners-per-worker $k 2>&1 | tail -2 | sed "s/^/k=$k /"
done
rm -f /tmp/tg28/modules/*.cubin
tar cf - -C /tmp tg28 | python3 -c "import sys,zstandard;sys.stdout.buffer.write(zstandard.ZstdCompressor(level=12,threads=8).compress(sys.stdin.buffer.read()))" > /tmp/tg28.tar.zst
ls -la /tmp/tg28.tar.zst; [ $(stat -c %s /tmp/tg28.tar.zst) -lt 16000000 ] && cp /tmp/tg28.tar.zst $OUT/
stamp "the PyTorch loop, native then collected"
timeout 40 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 35 2>&1 | grep "native:"
timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 90 2>&1 | grep "collect:"
grep "exit:" /tmp/ptc/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "suite once"
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort > $OUT/realapps.txt 2>&1; grep -v "^build\|^round" $OUT/realapps.txt | tail -13
stamp done
