#!/usr/bin/env bash
# For the next session's first device call (written in session 35, whose device time ran out): the engine alone on
# the H200 host on the real slices session 35 recorded, beside the synthetic patterns sessions 34-35 tuned on, so
# that the per-core gap between this host and the development machine (2.5x on the xmma slice) is measured per
# pattern and per step; then where one worker's time goes on the xmma slice (perf, if the image has it).
#   bash benchmarks/results/h200-2026-12-05-s35/next/script.sh   (carry .whl)
source benchmarks/device_call.sh
R=tests/data/real_launches
for what in "--slice $R/pytorch_xmma_sgemm_64x64_tn" "--slice $R/pytorch_cutlass_sgemm_256x128_nt" \
  "--slice $R/cs_merge_intervals" "--slice $R/cs_mergesort_shared" "--pattern sgemm" "--pattern gemm-pairs"; do
  name=$(echo "$what" | sed 's/.* //; s#.*/##')
  stamp "engine.py $name, 1 and 12 workers"
  timeout 45 python3 benchmarks/engine.py $what --workers 1,12 --repeat 2 > $OUT/engine_$name.txt 2>&1
  grep -E "^  workers|slowest" $OUT/engine_$name.txt | cut -c1-150
done
if command -v perf > /dev/null; then
  stamp "perf: one worker on the xmma slice"
  timeout 60 perf record -e cpu-clock -g -o /tmp/xmma.perf python3 benchmarks/engine.py \
    --slice $R/pytorch_xmma_sgemm_64x64_tn --workers 1 > /dev/null 2>&1
  perf report -i /tmp/xmma.perf --no-children --percent-limit 1 --stdio 2>/dev/null | grep "%" | grep -v -- "--" \
    | head -30 > $OUT/xmma_perf.txt
  cat $OUT/xmma_perf.txt | cut -c1-140
else
  echo "no perf in this image"
fi
(cd $OUT && tar czf engine_slices.tgz engine_*.txt && rm engine_*.txt)
stamp done
