#!/usr/bin/env bash
# Session 41, call 3: the closing figures on main with the kept engine changes (c9defad..80fcaa1, the code call 2's
# GPU tests and fidelity ran): the eight short apps from a user's install, 2 rounds, and, time left, the 40-step
# PyTorch loop.
#   LIMIT=200 bash benchmarks/results/s41/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-200}
stamp "main: $(git log --oneline -1 2>/dev/null || echo 'no git history')"
short_suite 2
if [ $(($(date +%s) - T0)) -lt $((LIMIT - 70)) ]; then pytorch_loop 40; fi
stamp done
