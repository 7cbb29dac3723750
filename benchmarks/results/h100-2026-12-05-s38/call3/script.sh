#!/usr/bin/env bash
# Session 38, call 3: block owners read their records from their routers' copies (owner_copies.patch, in the working
# tree): the GPU tests (the test that failed once in call 2 first, three times, its output kept) and fidelity with
# it; then the tree without it built beside, and engine.py (slices, 12 workers, 2 rounds) and six apps online
# (collect, 2 rounds) paired.
#   bash benchmarks/results/h100-2026-12-05-s38/call3/script.sh   (carry .whl and benchmarks/realapps/src)
D=benchmarks/results/h100-2026-12-05-s38/call3
source benchmarks/device_call.sh
collector_beside $D/owner_copies.patch /tmp/old -R
for k in 1 2 3; do
  stamp "test_every_launch_complete_with_valid_records, run $k"
  timeout 60 python3 -m pytest -q -x "tests/collector/test_gpu.py::test_every_launch_complete_with_valid_records" \
    > $OUT/launch_test_$k.txt 2>&1
  tail -1 $OUT/launch_test_$k.txt
  grep -q failed $OUT/launch_test_$k.txt && grep -E "^E |assert" $OUT/launch_test_$k.txt | head -20 | cut -c1-300
done
gpu_tests
fidelity_against_ncu
beside_lib /tmp/old && OLD_ENGINE=$(grep -m1 "_engine" /tmp/old.build.txt)
R=tests/data/real_launches
for round in 1 2; do
  for s in pytorch_xmma_sgemm_64x64_tn cs_mergesort_shared cs_merge_intervals shoc_sort cs_transpose; do
    for eng in "$OLD_ENGINE" installed; do
      name=$([ "$eng" = installed ] && echo copies || echo before)
      timeout 40 python3 benchmarks/engine.py --slice $R/$s --handed-over --workers 12 --repeat 2 --engine "$eng" \
        > $OUT/eng_${s}_${name}_${round}.txt 2>&1
      echo "$s $name $round: $(grep -A3 '^warm' $OUT/eng_${s}_${name}_${round}.txt | grep -o '[0-9.]* M records/s') ; blocks $(grep -A3 '^warm' $OUT/eng_${s}_${name}_${round}.txt | grep -o 'blocks *[0-9.]*' | tr '\n' ' ')"
    done
  done
done
stamp "build the apps"
APPS=cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort,shoc_bfs,pb_lu
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps $APPS --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
stamp "owner copies against without, collect, 2 rounds"
timeout 250 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b copies=installed \
  --apps $APPS --rounds 2 --out /tmp/abs --build /tmp/rf/build > $OUT/ab_copies.txt 2>&1
tail -9 $OUT/ab_copies.txt
grep -h "engine steps" /tmp/abs/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
stamp done
