#!/usr/bin/env bash
# For the next session's first device call: 2a2389d (mends after reading session 32's diff: one switch reader, one
# tail of the batch loop, one walk in phase 3) came after session 32's last device call and was never run on the
# GPU; it changes no result off the GPU. GPU tests, fidelity against ncu, the suite from a user's install.
#   bash benchmarks/results/h200-2026-12-05-s32/next/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
stamp done
