#!/usr/bin/env bash
# Session 49, call 2: main's final code (this session's analysis rules; no native change since session 47) from a
# user's install: the suite (eight short apps two rounds, the four long apps one round) and the answer key, the
# whole breadth set (51 apps) with its defect check, and the PyTorch loop of 40 steps.
#   LIMIT=480 bash benchmarks/results/s49/call2/script.sh
#     (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-480}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 2
left 330 && long_apps 120
score_suite 1
left 210 && breadth_set 160
left 60 && pytorch_loop 40
stamp done
