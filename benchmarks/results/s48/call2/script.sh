#!/usr/bin/env bash
# Session 48, call 2: the breadth set with 16 more apps (51: 9 more PolyBench kernels, 7 more cuda-samples) on main
# after this session's two rule changes (a race's in-block remainder, warps repeating one another's work), from a
# user's install; breadth_check.py names every defect, and the reports come back for the review of the findings on
# code the product had not seen.
#   LIMIT=420 bash benchmarks/results/s48/call2/script.sh   (carry .whl, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-420}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
breadth_set $((LIMIT - $(date +%s) + T0 - 25))
stamp done
