#!/usr/bin/env bash
# Session 54, call 4: the final code (the session's analysis changes: address origins' new opcodes, streaming,
# redundant, coalescing, hierarchical and bank-conflict advice; no native change since call 1) on the GPU: GPU tests,
# the eight short apps and the four long apps from a user's clean install (native / collect / full, one round), and
# the findings against the answer key.
#   bash benchmarks/results/s54/call4/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
short_suite 1
long_apps 200
[ -d /tmp/rf/runs/r0 ] && score_suite 0
stamp done
