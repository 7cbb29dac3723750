#!/usr/bin/env bash
# Session 16, call 9: the PyTorch loop (40 steps) natively and collected, on the final engine (issue 14's 3x target).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git log --oneline -1
stamp "pytorch 40"
timeout 230 python3 benchmarks/pytorch_overhead.py --out /tmp/pt --steps 40 --rounds 1 --modes native,collect --timeout 200 > $OUT/pytorch.txt 2>&1; tail -5 $OUT/pytorch.txt
cp /tmp/pt/runs/r0-collect/collector.log /tmp/pt40.log 2>/dev/null
grep "exit:" /tmp/pt40.log | grep -v analysed | cut -c1-240
stamp done
