#!/usr/bin/env bash
# Session 17, call 6 (not run: no device time left): what call 3 did not reach. Which of the session's engine
# changes helps how much at 12 workers (91c9677, then b3e18f9 = edge table + closed forms (A), then + block table
# (B), then + lane prefetch (4c1b425, installed)), and one 12-worker engine against twelve independent one-worker
# engines on the same recorded SGEMM launch (issue 14's scaling target). Run from the repository root with .whl/,
# this script and the two patches beside it carried: bash benchmarks/results/h200-2026-12-03-s17/call6-not-run/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
HERE=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "build 91c9677 and the variants"
timeout 200 bash benchmarks/build_revision.sh 91c9677 /tmp/old > /tmp/old.txt 2>&1 || tail -20 /tmp/old.txt
for v in A B; do
  mkdir -p /tmp/src$v && tar cf - pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs | tar xf - -C /tmp/src$v
  (cd /tmp/src$v && git apply -R "$HERE/s17pf.patch" && { [ $v = B ] || git apply -R "$HERE/s17bt.patch"; }) || echo "patch $v failed"
  timeout 200 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/var$v /tmp/src$v > /tmp/var$v.txt 2>&1 || tail -5 /tmp/var$v.txt
done
OLD=$(find /tmp/old -name "_engine*.so" | head -1); A=$(find /tmp/varA -name "_engine*.so" | head -1); B=$(find /tmp/varB -name "_engine*.so" | head -1)
stamp "launch 28: one 12-worker engine against twelve independent one-worker engines"
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
timeout 120 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1,12 --repeat 5 --independent 12 2>&1 | tail -6
for L in 19 32; do
  stamp "launch $L: old, A, B, new at 1 and 12 workers"
  timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
  timeout 200 python3 benchmarks/replay_speed.py /tmp/tg$L --workers 1,12 --repeat 2 --engine $OLD,$A,$B,installed 2>&1 | tail -17
  rm -rf /tmp/tg$L
done
stamp "the PyTorch loop collected with 8, 12 and 15 engine workers (its GEMMs may want another count than short apps)"
for n in 12 8 15; do
  REUSELENS_ENGINE_WORKERS=$n timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt$n --steps 40 --rounds 1 --modes collect --timeout 100 2>&1 | grep "collect:"
done
stamp done
