#!/usr/bin/env bash
# Session 17, call 4 (warm machine after call 3 hit its limit): the PyTorch loop, one GEMM launch old vs new at
# 1 and 12 workers, the suite once.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
export REUSELENS_COLLECTOR_LIB=$(python3 -c "from reuselens.collector.launcher import find_tool_library as f; print(f())")
ls /tmp/old/reuselens/analyzer/ 2>/dev/null | head -2
stamp "pytorch 40, native + collect"
timeout 130 python3 benchmarks/pytorch_overhead.py --out /tmp/pt4 --steps 40 --rounds 1 --modes native,collect --timeout 100 > $OUT/pytorch.txt 2>&1; tail -3 $OUT/pytorch.txt
grep "exit:" /tmp/pt4/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "trace launch 19, replay old vs new"
timeout 40 reuselens profile --no-analyze --traces --launch-range 19:20 --run-dir /tmp/tg19b -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
OLD=$(find /tmp/old -name "_engine*.so" | head -1)
timeout 60 python3 benchmarks/replay_speed.py /tmp/tg19b --workers 12,1 --repeat 1 --engine ${OLD:-installed},installed 2>&1 | tail -9
stamp "suite once"
timeout 90 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv4 --rounds 1 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -13
stamp done
