#!/usr/bin/env bash
# Session 19, call 5 (prepared, not run: no device time left). Three engine experiments, each a patch beside this
# script applied to a copy of the working tree and built beside the installed package (the device's checkout has no
# git objects of recent commits, so benchmarks/build_revision.sh cannot build them):
#   chunk_256b.patch  chunks of 256 bytes instead of 1 KiB: the cuBLAS launch's cp.async global lanes gather on a
#                     few 1 KiB chunks (partition_balance.py: busiest worker 1.92 / 1.29 / 1.47 / 2.57 times the mean
#                     in four batches; 1.14 / 1.11 / 1.25 / 2.57 with 256-byte chunks, while the records split over
#                     two chunks, routed lane by lane, go from 3% to 12% of its global ones). Same results (engine
#                     JSON equal at 1, 3 and 12 workers on two recorded runs, development machine).
#   batch_x2.patch    batches of min(65536, max(4096, 4096 x workers)) records instead of min(32768, ..., 2048 x).
#   batch_half.patch  batches of min(16384, max(4096, 1024 x workers)).
# At 12 workers, each engine replayed in its own process (replay_speed.py --engine): two cuBLAS launches of the
# PyTorch loop and 60 launches of pb_fdtd2d; then the chunk experiment's collector paired with the installed one
# on four short apps (ab_collector.py, 3 rounds). Run from the repository root with .whl/ and
# benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call1/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
ENGINES=""
for v in chunk_256b batch_x2 batch_half; do
  stamp "build $v"
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v
  cp -r pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs /tmp/src_$v/
  (cd /tmp/src_$v && git apply "$HERE/$v.patch") || { echo "$v.patch does not apply"; continue; }
  timeout 200 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/$v /tmp/src_$v > /tmp/$v.txt 2>&1 || tail -20 /tmp/$v.txt
  ENGINES="$ENGINES,$(find /tmp/$v -name "_engine*.so" | head -1)"
done
stamp "record PyTorch launches 28 and 19, pb_fdtd2d launches 0-59"
for L in 28 19; do timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1; done
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul > /dev/null 2>&1
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
for R in tg28 tg19 tfd; do
  stamp "replay $R at 12 workers: installed$ENGINES"
  timeout 200 python3 benchmarks/replay_speed.py /tmp/$R --workers 12 --repeat 3 --engine installed$ENGINES 2>&1 | tail -9
done
stamp "collectors paired: installed, chunk_256b"
timeout 200 python3 benchmarks/ab_collector.py --a now=installed --b chunk_256b=$(find /tmp/chunk_256b -name libreuselens_collector.so | head -1) --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | tail -8
stamp done
