#!/usr/bin/env bash
# Session 55, call 1: the code after the constant-region change (analysis only; no native change since session 52)
# on the GPU: GPU tests, the eight short apps (two interleaved rounds) and the four long apps from a user's clean
# install (native / collect / full), and the findings against the answer key.
#   bash benchmarks/results/s55/call1/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
short_suite 2
long_apps 200
[ -d /tmp/rf/runs/r1 ] && score_suite 1
stamp done
