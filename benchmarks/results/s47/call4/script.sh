#!/usr/bin/env bash
# Session 47, call 4 (call 3 could not start; what the last device time allows): main after its last native edit
# (the engine's `irregular` count, 8216d53): the GPU tests and fidelity against ncu, then the suite on main's final
# code from a user's install (eight short apps one round, the four long apps as far as the limit allows), the answer
# key, and each report's irregular requests and the GPU's L2 as run.json gives it.
#   LIMIT=300 bash benchmarks/results/s47/call4/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
left 80 && short_suite 1
left 60 && long_apps $((LIMIT - $(date +%s) + T0 - 20))
score_suite 0
stamp done
