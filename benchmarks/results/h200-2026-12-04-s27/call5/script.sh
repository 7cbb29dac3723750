#!/usr/bin/env bash
# Session 27, call 5 (the session's last 246 s of device time): the engine's closed form for shared columns
# (distributions.cpp, strided_word_figures). 1. Fidelity against ncu (the microbenchmark's bank-conflict kernels read
# strided shared columns). 2. GPU tests. 3. cs_transpose (manifest arguments) collected with traces, its traces
# replayed at 12 and 1 workers (the step split); transpose, LU and fdtd2d collected once, their launch waits.
#   bash benchmarks/results/h200-2026-12-04-s27/call5/script.sh
source benchmarks/device_call.sh
REPO=$PWD
fidelity_against_ncu
stamp "GPU tests"
timeout 100 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -2
stamp "build three apps"
timeout 60 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps cs_transpose,pb_lu,pb_fdtd2d > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
args() { python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == '$1')))"; }
stamp "transpose with traces; replays"
(cd /tmp/rb && timeout 30 reuselens profile --no-analyze --traces --run-dir /tmp/tr -- ./cs_transpose $(args cs_transpose) > /dev/null 2>&1)
timeout 40 python3 benchmarks/replay_speed.py /tmp/tr --workers 12,1 --repeat 1 2>&1 | tail -5
stamp "collected once"
for a in cs_transpose pb_lu pb_fdtd2d; do (cd /tmp/rb && timeout 20 reuselens profile --no-analyze --run-dir /tmp/lw/$a -- ./$a $(args $a) > /dev/null 2>&1); done
python3 benchmarks/launch_waits.py /tmp/lw/* | tee $OUT/launch_waits.txt
stamp done
