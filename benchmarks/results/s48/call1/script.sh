#!/usr/bin/env bash
# Session 48, call 1: main as session 47 left it (ddf7660; the engine's `irregular` count and run.json's L2 never ran
# on a GPU in their final form): the GPU tests (the online-equals-replay test with `irregular` included) and fidelity
# against ncu; the suite from a user's install (eight short apps two rounds, the four long apps one round) and the
# answer key; the breadth set under session 47's rules (fresh reports carry `irregular` and the GPU's L2); the PyTorch
# loop of 40 steps.
#   LIMIT=560 bash benchmarks/results/s48/call1/script.sh
#     (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
short_suite 2
left 250 && long_apps 120
score_suite 1
left 150 && breadth_set 110
left 60 && pytorch_loop 40
stamp done
