#!/usr/bin/env bash
# Session 37, call 3: engine workers pinned to cores of their own (EngineConfig::pin_workers, REUSELENS_ENGINE_PIN=1)
# against the scheduler's placement. Call 2's perf showed one worker replaying the xmma slice at 60-76 M
# lane-accesses/s here; the PyTorch loop's workers (call 1) spent 536 CPU-ns a record in the block step at twelve
# workers. Question: how much of the twelve-worker inflation is workers moving between cores (their blocks' shadow
# and routed lists left in another core's L2)?
#   bash benchmarks/results/h100-2026-12-05-s37/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
R=tests/data/real_launches
for round in 1 2; do
  for s in pytorch_xmma_sgemm_64x64_tn cs_merge_intervals cs_mergesort_shared; do
    for pin in "" --pin; do
      stamp "engine.py $s, 12 workers ${pin:-unpinned}, round $round"
      timeout 60 python3 benchmarks/engine.py --slice $R/$s --workers 12 --repeat 2 $pin > $OUT/eng_${s}_${round}${pin}.txt 2>&1
      grep -E "workers|slowest" $OUT/eng_${s}_${round}${pin}.txt | cut -c1-150
    done
  done
done
stamp "build the long apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort,cs_mergeSort,pb_mvt,cs_sortingNetworks \
  --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
stamp "pinned against unpinned, collect, 2 rounds"
timeout 330 python3 benchmarks/ab_collector.py --a free=installed --b pinned=installed,REUSELENS_ENGINE_PIN=1 \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks,cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort \
  --rounds 2 --out /tmp/abp --build /tmp/rf/build > $OUT/ab_pin.txt 2>&1
tail -14 $OUT/ab_pin.txt
grep -h "engine steps" /tmp/abp/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
stamp "PyTorch loop, 40 steps, unpinned"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_f --steps 40 --rounds 1 \
  --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited" /tmp/pt_f/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-400
stamp "PyTorch loop, 40 steps, pinned"
REUSELENS_ENGINE_PIN=1 timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_p --steps 40 --rounds 1 \
  --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited" /tmp/pt_p/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-400
stamp done
