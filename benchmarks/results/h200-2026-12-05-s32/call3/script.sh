#!/usr/bin/env bash
# Session 32, call 3: c6719fe's pipelined run was the fastest of three settings in round 1 of call 2 and far the
# slowest in round 2; since then (a90a09d, 04dc231) the piece counter and the routing slots have cache
# lines of their own, and the engine queue keeps to its touched pages (a69417f, session 29's ring.patch, paired in
# call 1). 1. GPU tests and fidelity against ncu (the engine and the queue changed). 2. The suite as every stop
# reports it (short_suite 2). 3. engine.py transpose and sgemm at 12 and 16 workers under the three settings
# (FUSE/PIPELINE 00, 10, 11), interleaved, two rounds. 4. The eight short apps' collect under the default (11) and
# as before (00), one round each (the device budget's last minutes).
#   bash benchmarks/results/h200-2026-12-05-s32/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
for round in 1 2; do
  for cfg in "0 0" "1 0" "1 1"; do
    set -- $cfg
    for pattern in transpose sgemm; do
      REUSELENS_ENGINE_FUSE=$1 REUSELENS_ENGINE_PIPELINE=$2 timeout 60 python3 benchmarks/engine.py \
        --pattern $pattern --workers 12,16 --repeat 2 > /tmp/e_${pattern}_$1$2_$round.txt 2>&1
      echo "round $round $pattern $1$2: $(grep -E '^  workers (12|16)' /tmp/e_${pattern}_$1$2_$round.txt | awk '{print $2 $3}' | tr '\n' ' ')"
    done
  done
done
tar czf $OUT/engine_fuse2.tgz /tmp/e_*.txt 2>/dev/null
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
for round in 1; do
  for fuse in 1 0; do
    stamp "round $round: collect, REUSELENS_ENGINE_FUSE=$fuse REUSELENS_ENGINE_PIPELINE=$fuse"
    REUSELENS_ENGINE_FUSE=$fuse REUSELENS_ENGINE_PIPELINE=$fuse timeout 60 python3 benchmarks/realapps.py \
      --src benchmarks/realapps/src --out /tmp/ra_${fuse}_$round --build /tmp/rf/build --rounds 1 --modes native,collect \
      --jobs 16 --apps $APPS > /tmp/ra_${fuse}_$round.txt 2>&1
    grep -E "^(cs_|pb_|shoc_)|median" /tmp/ra_${fuse}_$round.txt | cut -c1-60
  done
done
tar czf $OUT/suite_fuse.tgz /tmp/ra_*.txt /tmp/ra_*/realapps.json 2>/dev/null
stamp done
