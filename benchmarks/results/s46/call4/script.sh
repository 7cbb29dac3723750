#!/usr/bin/env bash
# Session 46, call 4: main after the last native edit (the graph instantiation's filter answers per function id,
# collector/native/src/resource_events.cpp): graphs.cu's modes under a kernel filter (the path that changed) and
# without, the GPU tests (CUDA graphs included) and fidelity against ncu.
#   LIMIT=300 bash benchmarks/results/s46/call4/script.sh   (carry .whl)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "graphs.cu with and without a kernel filter, each under a 60 s timeout"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/graphs tests/gpu/graphs.cu || exit 1
for filter in "" "--kernel-filter scale"; do
  for mode in interleaved all; do
    rm -rf /tmp/g_$mode
    timeout -s KILL 60 python3 -m reuselens profile --no-analyze $filter --run-dir /tmp/g_$mode -- /tmp/graphs $mode 2>&1 | grep "graphs:\|error" | head -3
    echo "exit ${PIPESTATUS[0]} ($mode, filter '${filter}')"
    python3 - /tmp/g_$mode <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/run.json"))
c = r["collector"]
print(" status", r.get("status"), "errors", r.get("errors"), "graph launches", c.get("graph_launches"), "nodes",
      c.get("graph_kernel_nodes"), "launches", [("g" if x.get("graph_node") else "d") + ("+" if x["instrumented"] else "-") + str(x.get("records")) for x in r["launches"]])
PY
    grep -h "graph instantiated\|left unpatched" /tmp/g_$mode/collector.log | head -2
  done
done
gpu_tests
fidelity_against_ncu
stamp done
