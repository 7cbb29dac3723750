#!/usr/bin/env bash
# Session 45, call 4: CUDA graph nodes (the collector's graphs domain, on_graph_node). The breadth set's
# simpleCudaGraphs got a run with no launch at all in call 3. First tests/gpu/graphs.cu by hand under a hard timeout
# (a node's end could come before its kernel is submitted, and the launch end's wait would then hang or read
# counters too early): what run.json and collector.log say; then tests/collector/test_gpu_graphs.py; then
# simpleCudaGraphs from the breadth set.
#   LIMIT=240 bash benchmarks/results/s45/call4/script.sh   (carry .whl and benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-240}
stamp "graphs.cu by hand, each mode under a 60 s timeout"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/graphs tests/gpu/graphs.cu || exit 1
for mode in direct capture manual all; do
  rm -rf /tmp/g_$mode
  timeout -s KILL 60 python3 -m reuselens profile --no-analyze --run-dir /tmp/g_$mode -- /tmp/graphs $mode
  echo "exit $? ($mode)"
  python3 - /tmp/g_$mode <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/run.json"))
print(" status", r.get("status"), r.get("partial_reason"), "errors", r.get("errors"))
for x in r["launches"]:
    print("  launch", x["id"], x["kernel"][:22], x["grid"], x["block"], "instr", x["instrumented"], x["status"], x.get("records"))
PY
  grep -v "sink engine" /tmp/g_$mode/collector.log | cut -c1-220 | tail -12
done
cp -r /tmp/g_all $OUT/g_all 2>/dev/null; rm -rf $OUT/g_all/modules
stamp "GPU test: test_gpu_graphs.py"
timeout 200 python3 -m pytest -q -x tests/collector/test_gpu_graphs.py 2>&1 | tail -15
stamp done
