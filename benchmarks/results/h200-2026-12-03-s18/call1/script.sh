#!/usr/bin/env bash
# Session 18, call 1: session 17's prepared call 6, trimmed to what it must show. The GPU tests on f8df4b2 (the
# review mend that never ran on the GPU); one 12-worker engine against twelve independent one-worker engines on a
# recorded cuBLAS SGEMM launch of the PyTorch loop (issue 14's scaling target); 91c9677 (session 16's engine)
# against the installed engine at 1 and 12 workers on two more launches, the smallest (launch 32) brought back; the PyTorch
# loop collected with 8, 12 and 15 engine workers. Run from the repository root with .whl/ carried:
#   bash benchmarks/results/h200-2026-12-03-s18/call1/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "GPU tests (collector, value cases through the whole analysis, online = replay)"
timeout 240 python3 -m pytest -q -x tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -4
stamp "build 91c9677"
timeout 200 bash benchmarks/build_revision.sh 91c9677 /tmp/old > /tmp/old.txt 2>&1 || tail -20 /tmp/old.txt
OLD=$(find /tmp/old -name "_engine*.so" | head -1)
stamp "launch 28: one 12-worker engine against twelve independent one-worker engines"
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
timeout 120 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1,12 --repeat 3 --independent 12 2>&1 | tail -6
for L in 32 19; do
  stamp "launch $L: 91c9677 against the installed engine at 1 and 12 workers"
  timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
  timeout 150 python3 benchmarks/replay_speed.py /tmp/tg$L --workers 1,12 --repeat 3 --engine $OLD,installed 2>&1 | tail -9
done
rm -f /tmp/tg32/modules/*.cubin
tar cf - -C /tmp tg32 | python3 -c "import sys,zstandard;sys.stdout.buffer.write(zstandard.ZstdCompressor(level=12,threads=8).compress(sys.stdin.buffer.read()))" > /tmp/tg32.tar.zst
ls -la /tmp/tg32.tar.zst; [ $(stat -c %s /tmp/tg32.tar.zst) -lt 16000000 ] && cp /tmp/tg32.tar.zst $OUT/
stamp "the PyTorch loop: native, then collected with 12, 8 and 15 engine workers"
timeout 40 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 35 2>&1 | grep "native:"
for n in 12 8 15; do
  REUSELENS_ENGINE_WORKERS=$n timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/pt$n --steps 40 --rounds 1 --modes collect --timeout 90 2>&1 | grep "collect:"
  grep "exit:" /tmp/pt$n/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
done
stamp done
