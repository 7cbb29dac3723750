#!/usr/bin/env bash
# For the next session's first device call: shared records handed to the online engine by one or two addresses
# (shared_hand_over.patch, made in session 37 after its device time was spent; README.md beside). The working tree
# with the patch applied is installed and checked (GPU tests: online results against replays of the same traces;
# fidelity), then measured against the tree without it: the engine's replay of five shared-heavy slices at twelve
# workers as the queue hands records over, the queue and engine without the GPU (benchmarks/pipeline.py, trees with and
# without the patch), and four shared-heavy apps collected, paired, 2 rounds.
#   bash benchmarks/results/h100-2026-12-05-s37/next/script.sh   (carry .whl and benchmarks/realapps/src)
P=benchmarks/results/h100-2026-12-05-s37/next/shared_hand_over.patch
git apply "$P" || { echo "the patch does not apply to this tree"; exit 1; }
source benchmarks/device_call.sh
collector_beside "$P" /tmp/old -R
gpu_tests
fidelity_against_ncu
beside_lib /tmp/old && OLD_ENGINE=$(grep -m1 "_engine" /tmp/old.build.txt)
R=tests/data/real_launches
for round in 1 2; do
  for s in cs_mergesort_shared cs_merge_intervals shoc_sort cs_transpose pytorch_cutlass_sgemm_256x128_nt; do
    for eng in "$OLD_ENGINE" installed; do
      name=$([ "$eng" = installed ] && echo shared || echo before)
      stamp "engine.py $s --handed-over, 12 workers, $name, round $round"
      timeout 40 python3 benchmarks/engine.py --slice $R/$s --handed-over --workers 12 --repeat 2 --engine "$eng" \
        > $OUT/eng_${s}_${name}_${round}.txt 2>&1
      grep -A3 "workers 12" $OUT/eng_${s}_${name}_${round}.txt | tail -4 | cut -c1-150
    done
  done
done
stamp "pipeline.py (queue and engine, no GPU), 12 workers, without and with the patch"
rm -rf /tmp/oldtree && mkdir /tmp/oldtree && cp -r analyzer collector benchmarks tests /tmp/oldtree/ &&
  (cd /tmp/oldtree && git apply -R --exclude="docs/*" "$DEVICE_CALL_REPO/$P") || echo "no tree without the patch"
S=$R/cs_mergesort_shared,$R/cs_merge_intervals,$R/shoc_sort,$R/cs_transpose
for round in 1 2; do
  for tree in /tmp/oldtree "$DEVICE_CALL_REPO"; do
    name=$([ "$tree" = /tmp/oldtree ] && echo before || echo shared)
    timeout 150 python3 $tree/benchmarks/pipeline.py --slice $S --workers 12 --launches 2 \
      > $OUT/pipeline_${name}_${round}.txt 2>&1
    grep -E "^trace|end to end" $OUT/pipeline_${name}_${round}.txt | sed "s/^/$name: /"
  done
done
stamp "build the apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 1 --modes native \
  --apps cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort --jobs 16 > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
stamp "shared records handed over against whole, collect, 2 rounds"
timeout 240 python3 benchmarks/ab_collector.py --a before=$BESIDE_LIB --b shared=installed \
  --apps cs_mergeSort,cs_sortingNetworks,cs_transpose,shoc_sort --rounds 2 --out /tmp/abs --build /tmp/rf/build \
  > $OUT/ab_shared.txt 2>&1
tail -7 $OUT/ab_shared.txt
grep -h "engine steps" /tmp/abs/runs/r*/cs_sortingNetworks-*/collector.log 2>/dev/null | cut -c1-330
# If time is left: the host side's throughput by worker and copy-thread count (this tree), to say which of the two the
# pipeline waits on there.
if [ $(($(date +%s) - T0)) -lt 470 ]; then
  stamp "pipeline.py, workers 12 and 14, copy threads 2 and 4"
  for ct in 2 4; do
    timeout 60 python3 benchmarks/pipeline.py --slice $R/cs_mergesort_shared,$R/pytorch_xmma_sgemm_64x64_tn \
      --workers 12,14 --copy-threads $ct --launches 2 > $OUT/pipeline_ct$ct.txt 2>&1
    grep -E "^trace|^stream|end to end" $OUT/pipeline_ct$ct.txt | cut -c1-120
  done
fi
stamp done
