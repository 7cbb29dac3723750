#!/usr/bin/env bash
# Session 46, call 1: main after the kernel filter's cache (a native edit: the GPU tests, graphs included, and
# fidelity against ncu); the breadth set with its nine new Parboil apps (35 apps, native and full profile, one
# round, from a user's install) and breadth_check.py; the PyTorch loop (40 steps) natively and under --no-analyze.
#   LIMIT=560 bash benchmarks/results/s46/call1/script.sh   (carry .whl and benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
gpu_tests
fidelity_against_ncu
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1 || { echo "clean install failed"; exit 1; }
left 200 && breadth_set 240
left 120 && pytorch_loop 40
stamp done
