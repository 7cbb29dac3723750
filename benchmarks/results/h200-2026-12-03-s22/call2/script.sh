#!/usr/bin/env bash
# Session 22, call 2: two small changes aimed at the memory traffic of the online engine's twelve workers, each
# built beside the installed package and paired with it (ab_collector.py, 3 rounds, five apps), plus one setting:
#  - ntcopy.patch: the queue's copy of each full buffer with non-temporal stores (no read for ownership of the
#    1 GiB ring's lines, which the engine reads later);
#  - prefetch_ids.patch: the engine's first step asks for every line of the record four ahead in its piece, so that
#    the header reads and the routing of the same piece find them near;
#  - REUSELENS_ENGINE_WORKERS=8 against the default (12 on 16 cores): is the engine bound by memory traffic?
# Also prefetch_ids replayed at 1 and 12 workers on recorded runs (pb_fdtd2d launches 0-59, cs_transpose 0-99) and
# the PyTorch loop's cuBLAS launch 28, whose run directory comes back (zstd) for profiling the engine's block step on
# the development machine. (A first try of this call lost its machine midway.)
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s22/call2/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
APPS=cs_matrixMul,cs_transpose,pb_fdtd2d,shoc_bfs,shoc_sort
for P in ntcopy prefetch_ids; do
  stamp "build $P.patch beside"
  timeout 240 bash benchmarks/build_revision.sh --patch "$HERE/$P.patch" /tmp/$P > /tmp/b_$P.txt 2>&1 || { tail -20 /tmp/b_$P.txt; exit 1; }
done
PF_ENGINE=$(find /tmp/prefetch_ids -name "_engine*.so" | head -1)
stamp "record: pb_fdtd2d launches 0-59, cs_transpose launches 0-99, PyTorch launch 28"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $APPS > /dev/null 2>&1
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/ttr -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1)
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
tar -C /tmp -cf /tmp/tg28.tar tg28
python3 -c "import sys, zstandard; open(sys.argv[2], 'wb').write(zstandard.ZstdCompressor(level=12, threads=-1).compress(open(sys.argv[1], 'rb').read()))" /tmp/tg28.tar $OUT/tg28.tar.zst
ls -l /tmp/tg28.tar $OUT/tg28.tar.zst
for R in tfd ttr tg28; do
  stamp "replay $R at 1 and 12 workers: installed, prefetch_ids"
  timeout 120 python3 benchmarks/replay_speed.py /tmp/$R --workers 1,12 --repeat 3 --engine installed,$PF_ENGINE 2>&1 | grep "workers\|launches"
done
stamp "GPU tests with the ntcopy collector"
REUSELENS_COLLECTOR_LIB=$(find /tmp/ntcopy -name libreuselens_collector.so | head -1) timeout 150 python3 -m pytest -q tests/collector/test_gpu.py 2>&1 | tail -2
for P in ntcopy prefetch_ids; do
  stamp "collectors paired: installed, $P"
  LIB=$(find /tmp/$P -name libreuselens_collector.so | head -1)
  timeout 150 python3 benchmarks/ab_collector.py --a now=installed --b $P=$LIB --apps $APPS --rounds 3 --out /tmp/ab_$P --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
  cp /tmp/ab_$P/ab_collector.json $OUT/ab_$P.json
done
stamp "engine workers paired: 12 (default), 8"
timeout 150 python3 benchmarks/ab_collector.py --a w12=installed --b w8=installed,REUSELENS_ENGINE_WORKERS=8 --apps $APPS --rounds 3 --out /tmp/ab_w8 --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_w8/ab_collector.json $OUT/ab_w8.json
stamp done
