#!/usr/bin/env bash
# Session 38, call 2: main's checks after the mends (645378e) with the shared hand-over dropped; what one core of the
# host keeps of its speed beside others (host_scaling.cpp); engine.py's slices, their copies' blocks now turned
# (slice_records), at 1, 4, 8 and 12 workers.
#   bash benchmarks/results/h100-2026-12-05-s38/call2/script.sh   (carry .whl)
source benchmarks/device_call.sh
D=benchmarks/results/h100-2026-12-05-s38/call2
gpu_tests
fidelity_against_ncu
stamp "host scaling: compute, memory stream, lines handed between cores, 1-16 threads"
g++ -O2 -pthread $D/host_scaling.cpp -o /tmp/host_scaling && timeout 120 /tmp/host_scaling | tee $OUT/host_scaling.txt
R=tests/data/real_launches
for s in pytorch_xmma_sgemm_64x64_tn cs_merge_intervals cs_mergesort_shared; do
  stamp "engine.py $s --handed-over, workers 1,4,8,12"
  timeout 100 python3 benchmarks/engine.py --slice $R/$s --handed-over --workers 1,4,8,12 --repeat 2 \
    > $OUT/eng_$s.txt 2>&1
  grep -E "^warm|^cold|workers|slowest|mean worker|consume" $OUT/eng_$s.txt | cut -c1-150
done
stamp done
