#!/usr/bin/env bash
# Session 56, call 1: the GPU tests on this session's code, then the second breadth set
# (benchmarks/realapps/breadth2.json: SHOC, Parboil, Tango and cuda-samples apps no session has profiled) natively
# and under `profile` from a user's clean install, one round, with breadth_check; the runs' modules come back apart
# (breadth2_modules.tgz: third-party builds, never committed) for re-deriving findings with their SASS here.
#   bash benchmarks/results/s56/call1/script.sh
#   (carry .whl and benchmarks/realapps/breadth2-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
# Parboil's generated inputs (3.9 MiB) are made here rather than carried: the tree, .whl and sources fill 62 of 64 MiB.
python3 benchmarks/realapps/parboil_inputs2.py benchmarks/realapps/breadth2-src/parboil
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth2.json BREADTH_SRC=benchmarks/realapps/breadth2-src breadth_set 300
stamp "the runs' modules"
(cd /tmp/breadth && find runs -path '*-full/modules/*' -type f -size -3M | tar czf "$OUT/breadth2_modules.tgz" -T -)
# results.tgz comes back only under 16 MiB: the modules go first
[ "$(stat -c %s "$OUT/breadth2_modules.tgz")" -lt 9000000 ] || { echo "modules too large, dropped"; rm -f "$OUT/breadth2_modules.tgz"; }
ls -la "$OUT"
stamp done
