#!/usr/bin/env bash
# Session 38, call 4: the checks on the session's last code (main's native code is 645378e's): GPU tests, fidelity
# against ncu, the eight short apps from a user's install (2 rounds), and the 40-step PyTorch loop if time is left.
#   bash benchmarks/results/h100-2026-12-05-s38/call4/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
if [ $(($(date +%s) - T0)) -lt 250 ]; then pytorch_loop 40; fi
stamp done
