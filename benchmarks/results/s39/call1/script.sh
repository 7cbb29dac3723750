#!/usr/bin/env bash
# Session 39, call 1 (a machine came back at the session's end): main as it is (cfa6d39's check included): the GPU
# tests, fidelity against ncu, and the eight short apps from a user's clean install, two rounds.
#   bash benchmarks/results/s39/call1/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
gpu_tests
fidelity_against_ncu
short_suite 2
stamp done
