#!/usr/bin/env bash
# Session 45, call 8 (the device time left): main fc91544 after the review's collector changes (graph instantiation
# patches only modules the kernel filter wants, not fatally; a module a graph runs unpatched stays unpatched):
# graphs.cu's interleaved mode by hand, tests/collector/test_gpu_graphs.py (4), the GPU tests, then fidelity.
#   LIMIT=170 bash benchmarks/results/s45/call8/script.sh   (carry .whl)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-170}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "graphs.cu interleaved by hand, under a 60 s timeout"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/graphs tests/gpu/graphs.cu || exit 1
timeout -s KILL 60 python3 -m reuselens profile --no-analyze --run-dir /tmp/g_i -- /tmp/graphs interleaved 2>&1 | head -3
python3 -c "import json; r=json.load(open('/tmp/g_i/run.json')); print(r['status'], r['errors'], [('g' if x.get('graph_node') else 'd') + ('+' if x['instrumented'] else '-') + str(x.get('records')) for x in r['launches']])"
grep "graph" /tmp/g_i/collector.log | cut -c1-160
stamp "GPU test: test_gpu_graphs.py"
timeout 100 python3 -m pytest -q tests/collector/test_gpu_graphs.py 2>&1 | grep -v "Warning\|warn\|^$\|Docs:\|^  " | tail -6
left 60 && gpu_tests
left 45 && fidelity_against_ncu
stamp done
