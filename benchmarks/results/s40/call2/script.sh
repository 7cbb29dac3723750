#!/usr/bin/env bash
# Session 40, call 2 (the device budget's last 314 s, after twelve failed starts: room for one short call): the GPU
# tests and fidelity against ncu on main with the candidate of call 1 applied ("more": the four patches of
# ../../s39/next and ../own_lanes.patch). Its tree holds main's every native change (cfa6d39 included, never run on a
# GPU), so one run checks both; the paired comparison that decides the candidate is call 1's, for a later session.
#   bash benchmarks/results/s40/call2/script.sh   (carry .whl)
N=benchmarks/results/s39/next
source $N/apply_walk.sh
for p in $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch benchmarks/results/s40/own_lanes.patch; do
  if git apply --check $p 2>/dev/null; then git apply $p && echo "$(basename $p) applied"; fi
done
source benchmarks/device_call.sh
stamp "tree: $(git diff --stat | tail -1)"
gpu_tests
fidelity_against_ncu
stamp done
