#!/usr/bin/env bash
# For the next session (session 38 had no device time left to start it): the block step at twelve workers with each owner's records in runs
# (owner_runs.py: the slice copies unturned) against one record in twelve (engine.py as it is), in one call.
#   bash benchmarks/results/h100-2026-12-05-s38/next/script.sh   (carry .whl)
source benchmarks/device_call.sh
D=benchmarks/results/h100-2026-12-05-s38/next
R=tests/data/real_launches
for s in cs_mergesort_shared pytorch_xmma_sgemm_64x64_tn shoc_sort; do
  for how in turned runs; do
    if [ $how = turned ]; then cmd=(python3 benchmarks/engine.py); else cmd=(python3 $D/owner_runs.py benchmarks/engine.py); fi
    timeout 25 "${cmd[@]}" --slice $R/$s --handed-over --workers 12 --repeat 2 > $OUT/eng_${s}_$how.txt 2>&1
    echo "$s $how: $(grep -A4 '^warm' $OUT/eng_${s}_$how.txt | grep -E 'M records|mean worker|consume' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-60 | tr '\n' ' ')"
  done
done
stamp done
