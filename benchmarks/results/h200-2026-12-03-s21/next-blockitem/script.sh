#!/usr/bin/env bash
# Prepared in session 21, not run (no device time left): the block owners' items carry a global record's block and
# warp (`blockitem.patch`), so that phase 3 reads neither the record nor its context for global accesses. At twelve
# workers the block step cost 4.1-4.9 times its one-worker CPU per record on fdtd2d and transpose (docs/engine.md,
# where twelve workers' extra CPU goes), against the host's own ~1.85x. On the 2-core development machine: tests/engine
# 355 passed with the patched module (the sanitizer driver of test_engine_sanitized.py builds from the tree: run it
# with the patch applied before adopting); replay of 3 fdtd2d launches at 2 workers 2.60 -> 2.73 M records/s, blocks
# 0.010 -> 0.009 CPU-s (noise-level there: two cores show little of a twelve-core effect).
# Built beside the installed package from a patched copy; replays at 1 and 12 workers (best of 3, each engine in its
# own process) of sixty pb_fdtd2d launches, a hundred cs_transpose launches and the PyTorch loop's cuBLAS launches 19
# and 28; then its collector paired with the installed one on four short apps.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s21/next-blockitem/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
stamp "build blockitem.patch beside"
timeout 240 bash benchmarks/build_revision.sh --patch "$HERE/blockitem.patch" /tmp/blockitem > /tmp/bi.txt 2>&1 || { tail -20 /tmp/bi.txt; exit 1; }
ENGINE=$(find /tmp/blockitem -name "_engine*.so" | head -1)
LIB=$(find /tmp/blockitem -name libreuselens_collector.so | head -1)
stamp "record: PyTorch launches 28 and 19, pb_fdtd2d launches 0-59, cs_transpose launches 0-99"
for L in 28 19; do timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1; done
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps pb_fdtd2d,cs_transpose,shoc_bfs,cs_matrixMul > /dev/null 2>&1
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/ttr -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1)
for R in tfd ttr tg19 tg28; do
  stamp "replay $R at 1 and 12 workers: installed, blockitem"
  timeout 150 python3 benchmarks/replay_speed.py /tmp/$R --workers 1,12 --repeat 3 --engine installed,$ENGINE 2>&1 | grep "workers\|launches"
done
stamp "GPU tests with its collector"
REUSELENS_COLLECTOR_LIB=$LIB timeout 150 python3 -m pytest -q tests/collector/test_gpu.py 2>&1 | tail -3
stamp "collectors paired: installed, blockitem"
timeout 150 python3 benchmarks/ab_collector.py --a now=installed --b blockitem=$LIB --apps pb_fdtd2d,cs_transpose,shoc_bfs,cs_matrixMul --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
stamp done
