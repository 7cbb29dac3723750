#!/usr/bin/env bash
# Session 25, call 4: with packed records the drain copies a fifth of the bytes, and the engine is what the short
# apps wait for (call 3: it finished 0.07-0.9 s after the exit on six apps). 1. Paired: the default (12 engine
# workers, 4 copy threads) / 14 workers and 2 copy threads, eight apps, 3 rounds. 2. The PyTorch training loop,
# 40 steps, native then collect (session 24, call 3: 4.79x with full records).
#   bash benchmarks/results/h200-2026-12-04-s25/call4/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "paired: default / 14 workers, 2 copy threads"
timeout 200 python3 benchmarks/ab_collector.py --a w12=installed --b w14=installed,REUSELENS_ENGINE_WORKERS=14,REUSELENS_QUEUE_COPY_THREADS=2 --apps $SHORT --rounds 3 --out /tmp/ab_w --build /tmp/rb 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_w/ab_collector.json $OUT/ab_workers.json 2>/dev/null
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_collect --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited\|exit: [0-9]* launches" /tmp/pt_collect/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-400
cp /tmp/pt_native/pytorch_overhead.json $OUT/pytorch_native.json 2>/dev/null; cp /tmp/pt_collect/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp done
