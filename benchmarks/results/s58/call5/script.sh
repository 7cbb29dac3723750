#!/usr/bin/env bash
# Session 58, call 5: the collector raises the context's per-thread stack limit before a patched kernel whose
# stated stack leaves less than 512 bytes under it (launch_events.cpp, make_room_for_patch). The GPU tests (deep_stack
# among them), ncu side by side, cuda-samples tf32TensorCoreGemm (call 3's fault) and the rest of the third breadth
# set again from a clean install; then, as time allows, the short apps one round (the change adds a lookup per
# launch).
#   bash benchmarks/results/s58/call5/script.sh   (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth3-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
elapsed() { echo $(($(date +%s) - T0)); }
gpu_tests
fidelity_against_ncu
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth3.json BREADTH_SRC=benchmarks/realapps/breadth3-src breadth_set 150
grep -h "stack: per-thread" /tmp/breadth/runs/r0/*/collector.log | cut -c1-200
[ "$(elapsed)" -lt 330 ] && short_suite 1
stamp done
