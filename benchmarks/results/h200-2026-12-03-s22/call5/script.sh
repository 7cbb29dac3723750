#!/usr/bin/env bash
# Session 22, call 5: record forms (`forms.patch`, analyzer/engine/src/record_forms.h): the worker that routes a
# record writes its header and a closed form of its lanes (one step per lane, or one within groups of four or eight
# lanes and another per group) in one line beside the batch, and the owners of the block and chunk steps rebuild the
# record from that line instead of reading its five lines from the routing core. Every record of the three recorded
# runs below fits a form (development machine, classified in Python); engine JSON equal to the installed engine's at
# 1, 2, 3 and 5 workers on them and on the pattern suite, microbenchmark and async-copies runs.
# Built beside the installed package; replays at 12 workers (best of 3, each engine in its own process) of sixty
# pb_fdtd2d launches, a hundred cs_transpose launches and the PyTorch loop's cuBLAS launch 28; the collector GPU tests
# with its library; paired with the installed collector on five apps, 3 rounds.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s22/call5/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
APPS=cs_matrixMul,cs_transpose,pb_fdtd2d,shoc_bfs,shoc_sort
stamp "build forms.patch beside"
timeout 200 bash benchmarks/build_revision.sh --patch "$HERE/forms.patch" /tmp/forms > /tmp/b_forms.txt 2>&1 || { tail -20 /tmp/b_forms.txt; exit 1; }
ENGINE=$(find /tmp/forms -name "_engine*.so" | head -1)
LIB=$(find /tmp/forms -name libreuselens_collector.so | head -1)
stamp "record: pb_fdtd2d launches 0-59, cs_transpose launches 0-99, PyTorch launch 28"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $APPS > /dev/null 2>&1
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/ttr -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1)
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
for R in tfd ttr tg28; do
  stamp "replay $R at 12 workers: installed, forms"
  timeout 60 python3 benchmarks/replay_speed.py /tmp/$R --workers 12 --repeat 3 --engine installed,$ENGINE 2>&1 | grep "workers\|launches"
done
stamp "GPU tests with its collector"
REUSELENS_COLLECTOR_LIB=$LIB timeout 100 python3 -m pytest -q tests/collector/test_gpu.py 2>&1 | tail -2
stamp "collectors paired: installed, forms"
timeout 150 python3 benchmarks/ab_collector.py --a now=installed --b forms=$LIB --apps $APPS --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab/ab_collector.json $OUT/ab_forms.json
stamp done
