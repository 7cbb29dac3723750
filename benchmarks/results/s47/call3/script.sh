#!/usr/bin/env bash
# Session 47, call 3: main after its last native edit (the engine counts each global access's executions whose
# lanes follow no stride, `irregular`): the GPU tests and fidelity against ncu; the suite on main's final code from
# a user's install (eight short apps two rounds, four long one round) and the answer key; then the breadth set (35
# apps, the report rules of this session, the GPU's L2 in run.json) and breadth_check.py.
#   LIMIT=570 bash benchmarks/results/s47/call3/script.sh   (never ran: refused twice; its scoring block is now
#   device_call.sh's score_suite, which later calls use)
#     (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-570}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
short_suite 2
left 200 && long_apps 110
score_suite 1
left 100 && breadth_set $((LIMIT - $(date +%s) + T0 - 25))
stamp done
