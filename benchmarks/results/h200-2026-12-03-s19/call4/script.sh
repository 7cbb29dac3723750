#!/usr/bin/env bash
# Session 19, call 4: call 3's A/B again, without git: the device's checkout has no objects of this session's
# commits, so the engine before 8721180 is built from the working tree with fused.patch (beside this script, the
# engine diff of 8721180) taken back. At 12 workers, each engine replayed in its own process (replay_speed.py
# --engine): the engine before it against the installed one (phases 3 and 4 in one parallel run), on two cuBLAS
# launches of the PyTorch loop; the collectors paired on four short apps (ab_collector.py, 3 rounds). Run from the
# repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s19/call4/script.sh
source benchmarks/device_call.sh
stamp "build the engine before 8721180"
mkdir -p /tmp/basesrc && cp -r pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs /tmp/basesrc/
PATCH=$(realpath "$(dirname "$0")/fused.patch"); (cd /tmp/basesrc && git apply -R "$PATCH") || { echo "fused.patch does not come off"; exit 1; }
grep -c "phases34" /tmp/basesrc/analyzer/engine/src/consume.cpp
timeout 200 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/base /tmp/basesrc > /tmp/base.txt 2>&1 || tail -20 /tmp/base.txt
BASE=$(find /tmp/base -name "_engine*.so" | head -1); echo "$BASE"
stamp "record PyTorch launches 28 and 19; build four apps"
for L in 28 19; do timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1; done
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul > /dev/null 2>&1
for R in tg28 tg19; do
  stamp "replay $R at 12 workers: before, installed"
  timeout 120 python3 benchmarks/replay_speed.py /tmp/$R --workers 12 --repeat 3 --engine $BASE,installed 2>&1 | tail -5
done
stamp "collectors paired: before, installed"
timeout 200 python3 benchmarks/ab_collector.py --a before=$(find /tmp/base -name libreuselens_collector.so | head -1) --b fused=installed --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | tail -8
stamp done
