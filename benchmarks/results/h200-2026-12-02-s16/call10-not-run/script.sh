#!/usr/bin/env bash
# Session 16, call 10: shared vectors in closed form (066e861) on the GPU (online = replay), then the PyTorch loop
# collected once (its native time: call 9).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: collector + values"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "pytorch 40, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt --steps 40 --rounds 1 --modes collect --timeout 100 > $OUT/pytorch.txt 2>&1; tail -4 $OUT/pytorch.txt
grep "exit:" /tmp/pt/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-260
stamp done
