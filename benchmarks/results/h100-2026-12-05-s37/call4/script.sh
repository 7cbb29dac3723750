#!/usr/bin/env bash
# Session 37, call 4: smaller engine batches (REUSELENS_ENGINE_BATCH_PER_WORKER, a measuring switch; default 2048
# records per worker, 24,576 = 7 MB at twelve workers). Call 3 (engine.py, twelve workers against one on the same
# slices) put every step at 2.0-2.6 times one worker's CPU per record, the ids step (a read of each header and a
# table lookup) included, and next/latency.cpp put this host's loads at 47-52 ns for 8 MiB working sets and 130-150
# ns beyond 32 MiB: a batch and the one pipelined beside it (14 MB) do not stay in cache between the steps.
#   bash benchmarks/results/h100-2026-12-05-s37/call4/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
R=tests/data/real_launches
for round in 1 2; do
  for s in pytorch_xmma_sgemm_64x64_tn cs_merge_intervals cs_mergesort_shared; do
    for b in 2048 1024 512 256; do
      stamp "engine.py $s, 12 workers, $b records a worker, round $round"
      REUSELENS_ENGINE_BATCH_PER_WORKER=$b timeout 60 python3 benchmarks/engine.py --slice $R/$s --workers 12 --repeat 2 \
        > $OUT/eng_${s}_${b}_${round}.txt 2>&1
      grep -E "workers|slowest" $OUT/eng_${s}_${b}_${round}.txt | cut -c1-150
    done
  done
done
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps cs_transpose,pb_fdtd2d,shoc_bfs,shoc_sort,cs_mergeSort,pb_mvt,cs_sortingNetworks \
  --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
stamp "512 records a worker against 2048, collect, 2 rounds"
timeout 300 python3 benchmarks/ab_collector.py --a b2048=installed --b b512=installed,REUSELENS_ENGINE_BATCH_PER_WORKER=512 \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks,cs_transpose,pb_fdtd2d,shoc_bfs,shoc_sort \
  --rounds 2 --out /tmp/abb --build /tmp/rf/build > $OUT/ab_batch.txt 2>&1
tail -10 $OUT/ab_batch.txt
grep -h "engine steps" /tmp/abb/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
for b in 2048 512 1024; do
  stamp "PyTorch loop, 40 steps, $b records a worker"
  REUSELENS_ENGINE_BATCH_PER_WORKER=$b timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_$b --steps 40 \
    --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
  grep -h "engine steps\|launch ends waited" /tmp/pt_$b/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-400
done
stamp done
