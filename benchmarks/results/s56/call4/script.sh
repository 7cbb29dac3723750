#!/usr/bin/env bash
# Session 56, call 4: the real-application suite on the final analysis code (after the device-launch, compiler
# barrier, slot-advice and callee-PC rules and the review mends): the eight short apps and the four long apps, one
# round each, native / collect / full from a user's clean install, and the findings against the answer key.
#   bash benchmarks/results/s56/call4/script.sh      (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 1
long_apps 130
[ -d /tmp/rf/runs/r0 ] && score_suite 0
stamp done
