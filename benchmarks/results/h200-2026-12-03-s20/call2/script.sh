#!/usr/bin/env bash
# Session 20, call 2. (1) Prefetching a coalesced global record's shadow lines ahead of its replay, as gathers'
# lanes already are (`prefetch.patch`; `prefetch_ahead4.patch`: the same, four records ahead instead of two), each
# built from a patched copy of the working tree beside the installed package: replays at 1 and 12 workers, then
# the prefetch collector paired with the installed one. (2) Where `profile --no-analyze` spends the time the app
# does not (benchmarks/overhead_split.py), and the object-level cost (issue 18), three rounds each.
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call2/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
ENGINES=""
for v in prefetch prefetch_ahead4; do
  stamp "build $v"
  rm -rf /tmp/src_$v && mkdir -p /tmp/src_$v
  cp -r pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs /tmp/src_$v/
  (cd /tmp/src_$v && git apply "$HERE/$v.patch") || { echo "$v.patch does not apply"; continue; }
  timeout 200 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/$v /tmp/src_$v > /tmp/$v.txt 2>&1 || tail -20 /tmp/$v.txt
  ENGINES="$ENGINES,$(find /tmp/$v -name "_engine*.so" | head -1)"
done
stamp "record PyTorch launches 28 and 19, pb_fdtd2d launches 0-59, cs_transpose launches 0-99"
for L in 28 19; do timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1; done
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --build /tmp/os/build --rounds 1 --modes native --jobs 16 --apps $APPS > /dev/null 2>&1
(cd /tmp/os/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
(cd /tmp/os/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/ttr -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1)
for R in tfd tg19 tg28 ttr; do
  stamp "replay $R at 1 and 12 workers: installed$ENGINES"
  timeout 150 python3 benchmarks/replay_speed.py /tmp/$R --workers 1,12 --repeat 3 --engine installed$ENGINES 2>&1 | grep "workers\|launches"
done
stamp "collectors paired: installed, prefetch"
timeout 150 python3 benchmarks/ab_collector.py --a now=installed --b prefetch=$(find /tmp/prefetch -name libreuselens_collector.so | head -1) --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul --rounds 3 --out /tmp/ab --build /tmp/os/build 2>&1 | tail -7
stamp "overhead split, 3 rounds"
timeout 240 python3 benchmarks/overhead_split.py --src benchmarks/realapps/src --out /tmp/os --rounds 3 --jobs 16 --apps $APPS 2>&1 | grep -v "^round "
cp /tmp/os/overhead_split.json "$OUT/"
for a in pb_fdtd2d cs_transpose shoc_bfs; do grep -v " analysed, \|^\[ *[0-9.]*\] launch [0-9]*:" /tmp/os/runs/$a-collect-2/collector.log > "$OUT/$a-collect.log"; done
stamp "object-level, 3 rounds (issue 18)"
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ro --build /tmp/os/build --rounds 3 --modes native,objects --jobs 16 --apps $APPS 2>&1 | grep -v "^round "
stamp done
