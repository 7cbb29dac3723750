#!/usr/bin/env bash
# Session 32: the engine's block and global steps fused into one run of the pool (593de2b) and the next batch's
# ids and routing pipelined into that run (c6719fe), never run on the GPU.
# 1. GPU tests and fidelity against ncu (the online engine runs inside the collector). 2. engine.py's transpose,
# sgemm and gather at 12 and 16 workers under three settings of the same build (the switches are read at the
# engine's start): both off (REUSELENS_ENGINE_FUSE=0 REUSELENS_ENGINE_PIPELINE=0, the engine before), fused only
# (PIPELINE=0), both on (the default); alternating, two rounds. 3. suite.sh, a call of its own.
#   bash benchmarks/results/h200-2026-12-05-s32/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
for round in 1 2; do
  for cfg in "0 0" "1 0" "1 1"; do
    set -- $cfg
    for pattern in transpose sgemm gather; do
      stamp "round $round: engine.py --pattern $pattern, FUSE=$1 PIPELINE=$2"
      REUSELENS_ENGINE_FUSE=$1 REUSELENS_ENGINE_PIPELINE=$2 timeout 60 python3 benchmarks/engine.py \
        --pattern $pattern --workers 12,16 --repeat 2 > /tmp/e_${pattern}_$1$2_$round.txt 2>&1
      grep -E "^  workers|slowest|consume wall" /tmp/e_${pattern}_$1$2_$round.txt | head -12
    done
  done
done
tar czf $OUT/engine_fuse.tgz /tmp/e_*.txt 2>/dev/null
stamp done
