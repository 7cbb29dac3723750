#!/usr/bin/env bash
# Session 55, call 3: the final code after the diff review's mends (behaviour-preserving refactors of the rules made
# after call 2): the eight short apps and the four long apps from a user's clean install (native / collect / full,
# one round) and the findings against the answer key.
#   bash benchmarks/results/s55/call3/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 1
long_apps 150
[ -d /tmp/rf/runs/r0 ] && score_suite 0
stamp done
