#!/usr/bin/env bash
# Session 19, call 3. Installed: 8721180 (phases 3 and 4 of a batch in one parallel run, chunk owners waiting per
# piece for the block owners). Its GPU tests; then, at 12 workers, each engine replayed in its own process
# (replay_speed.py --engine): 3cc9fba (the engine before it, = call 1's), the installed one, and two experiments on
# 3cc9fba's engine, the batch size halved (2fdeab0: min(16384, max(4096, 1024 x workers))) and doubled (a556c8e:
# min(65536, max(4096, 4096 x workers))), on two cuBLAS launches of the PyTorch loop and 60 launches of pb_fdtd2d;
# the installed collector paired with 3cc9fba's on four short apps (ab_collector.py, 3 rounds); the PyTorch loop
# native and collected; the suite, two rounds. Run from the repository root with .whl/ and benchmarks/realapps/src
# carried:
#   bash benchmarks/results/h200-2026-12-03-s19/call3/script.sh
source benchmarks/device_call.sh
stamp "GPU tests"
timeout 200 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -3
stamp "build 3cc9fba and the two batch-size experiments"
for pair in base:3cc9fba half:2fdeab0 x2:a556c8e; do
  timeout 200 bash benchmarks/build_revision.sh ${pair#*:} /tmp/${pair%%:*} > /tmp/${pair%%:*}.txt 2>&1 || tail -20 /tmp/${pair%%:*}.txt
done
BASE=$(find /tmp/base -name "_engine*.so" | head -1); HALF=$(find /tmp/half -name "_engine*.so" | head -1)
X2=$(find /tmp/x2 -name "_engine*.so" | head -1); echo "$BASE $HALF $X2"
stamp "record: PyTorch launches 28 and 19, pb_fdtd2d launches 0-59"
for L in 28 19; do timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1; done
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort > /dev/null 2>&1
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/tfd -- ./pb_fdtd2d > /dev/null 2>&1)
for R in tg28 tg19 tfd; do
  stamp "replay $R at 12 workers: base, installed (fused), half, x2"
  timeout 150 python3 benchmarks/replay_speed.py /tmp/$R --workers 12 --repeat 3 --engine $BASE,installed,$HALF,$X2 2>&1 | tail -9
done
rm -rf /tmp/tg19 /tmp/tfd
stamp "collector 3cc9fba against the installed one, paired"
timeout 200 python3 benchmarks/ab_collector.py --a base=$(find /tmp/base -name libreuselens_collector.so | head -1) --b fused=installed --apps cs_transpose,pb_fdtd2d,shoc_bfs,cs_matrixMul --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | tail -8
stamp "the PyTorch loop, native then collected"
timeout 40 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 35 2>&1 | grep "native:"
timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 90 2>&1 | grep "collect:"
grep "exit:" /tmp/ptc/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "suite, two rounds"
timeout 160 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort > $OUT/realapps.txt 2>&1; grep -v "^build\|^round" $OUT/realapps.txt | tail -13
stamp done
