#!/usr/bin/env bash
# Session 34, call 1, on 94e3eae (machines were scarce: the checks and the figures issue 14 asks for first).
# 1. GPU tests (online results against replays of the same traces: session 33's hand-over of flagged records and
#    this session's shared-replay closed forms on real launches) and fidelity against ncu.
# 2. The suite from a user's install, two rounds.
# 3. The 40-step PyTorch loop natively and collected (issue 14: <= 3x; this session's closed forms are for its
#    cuBLAS SGEMMs' fragment loads).
#   bash benchmarks/results/h200-2026-12-05-s34/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
pytorch_loop 40
stamp done
