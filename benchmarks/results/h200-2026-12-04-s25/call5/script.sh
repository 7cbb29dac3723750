#!/usr/bin/env bash
# Session 25, call 5: packed records with the cheaper unpacking (eedd9e8). 1. The packed == full GPU test (its
# traces are unpacked by the same code). 2. Fidelity against ncu. 3. The PyTorch loop, 40 steps: native, then
# collect with records full, then packed. 4. Paired full / packed, eight apps, 3 rounds. 5. The suite once, from a
# user's install.
#   bash benchmarks/results/h200-2026-12-04-s25/call5/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU test: packed == full"
timeout 120 python3 -m pytest -q tests/collector/test_gpu_packed.py 2>&1 | grep "passed\|failed\|Error" | tail -5
fidelity_against_ncu
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
for i in 1; do
  for P in 0 1; do
    stamp "PyTorch loop, 40 steps, collect, REUSELENS_PACKED_RECORDS=$P"
    REUSELENS_PACKED_RECORDS=$P timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_$P$i --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
    grep -h "engine steps\|launch ends waited" /tmp/pt_$P$i/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-330
    cp /tmp/pt_$P$i/pytorch_overhead.json $OUT/pytorch_collect_packed$P-$i.json 2>/dev/null
  done
done
stamp "paired: full / packed records"
timeout 200 python3 benchmarks/ab_collector.py --a full=installed,REUSELENS_PACKED_RECORDS=0 --b packed=installed --apps $SHORT --rounds 3 --out /tmp/ab_packed --build /tmp/rb 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_packed/ab_collector.json $OUT/ab_packed.json 2>/dev/null
short_suite 1 --build /tmp/rb
stamp done
