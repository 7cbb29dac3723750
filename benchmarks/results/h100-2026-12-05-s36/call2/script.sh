#!/usr/bin/env bash
# Session 36, call 2: the checks for dda82fe's engine change (replay_lane_runs: GPU tests with online results
# against replays, fidelity against ncu), and the drain walk's prefetch (prefetch_cursor.patch: PackedCursor asks
# for the stream's lines 2 KiB ahead) paired with the installed collector on the three apps whose launches keep
# the drain thread busy, with each build's "resolving PCs" seconds summed from the runs' collector.logs.
#   bash benchmarks/results/h100-2026-12-05-s36/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
collector_beside benchmarks/results/h100-2026-12-05-s36/call2/prefetch_cursor.patch /tmp/pf
gpu_tests
fidelity_against_ncu
beside_lib /tmp/pf || exit 1
stamp "prefetch A/B, collect, 2 rounds"
timeout 300 python3 benchmarks/ab_collector.py --a base=installed --b prefetch=$BESIDE_LIB \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks --rounds 2 --out /tmp/ab --build /tmp/la/build > $OUT/ab.txt 2>&1
tail -8 $OUT/ab.txt
cp /tmp/ab/ab_collector.json $OUT/ 2>/dev/null
for d in /tmp/ab/runs/r*/*/; do
  printf "%-40s " "$(basename $(dirname $d))/$(basename $d)"
  grep -o "resolving PCs [0-9.]* s, sinks [0-9.]* s" $d/collector.log | awk '{r += $3; s += $6} END {printf "resolving %.3f s, sinks %.3f s\n", r, s}'
done
stamp done
