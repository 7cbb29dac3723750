#!/usr/bin/env bash
# Session 15, call 9 (refused: no device time left; for the next session): the final engine on the GPU (value GPU
# tests), and the cost of uniform companions settled by a paired A/B in value mode against 220d058 (approximate
# redundancy, full companions; call 3 measured it at median 1.65x, worst 2.34x over collect).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: values + collector"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -3
stamp "build 220d058"
timeout 240 bash benchmarks/build_revision.sh 220d058 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/B, value mode"
timeout 280 python3 benchmarks/ab_collector.py --a full=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b uniform=installed --apps shoc_bfs,pb_fdtd2d,cs_matrixMul --rounds 3 --mode values --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | tail -12
stamp done
