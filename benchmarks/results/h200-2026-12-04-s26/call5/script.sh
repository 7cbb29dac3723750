#!/usr/bin/env bash
# Session 26, call 5: the final code (the online engine gets seven eighths of the cores and the queue's copy threads
# an eighth: 14 and 2 on this host, 12 and 4 before). 1. GPU tests. 2. Fidelity against ncu. 3. Paired: the old
# split (A, through the environment) / the new default (B), eight apps, 3 rounds. 4. The 40-step PyTorch loop,
# native and collected with the new default.
#   bash benchmarks/results/h200-2026-12-04-s26/call5/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 240 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -2
fidelity_against_ncu
stamp "paired: 12 engine workers and 4 copy threads (A) / the default, 14 and 2 (B)"
timeout 200 python3 benchmarks/ab_collector.py --a split12_4=installed,REUSELENS_ENGINE_WORKERS=12,REUSELENS_QUEUE_COPY_THREADS=4 --b default=installed --apps $SHORT --rounds 3 --out /tmp/ab_s --build /tmp/rb 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_s/ab_collector.json $OUT/ab_split.json 2>/dev/null
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect (default split)"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "online analysis behind\|engine steps\|launch ends waited" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-330
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp done
