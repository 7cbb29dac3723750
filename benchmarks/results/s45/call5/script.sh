#!/usr/bin/env bash
# Session 45, call 5: CUDA graphs as docs/collector.md "CUDA graphs" now describes them (one kernel node per graph
# launch, armed on and awaited at the graph launch's stream; modules patched when a graph is instantiated): graphs.cu
# by hand under a hard timeout, tests/collector/test_gpu_graphs.py, then the GPU tests and fidelity against ncu (the
# collector changed), then the breadth set again (simpleCudaGraphs among it).
#   LIMIT=500 bash benchmarks/results/s45/call5/script.sh   (carry .whl and benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-500}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "graphs.cu by hand, each mode under a 60 s timeout"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/graphs tests/gpu/graphs.cu || exit 1
for mode in capture manual all; do
  rm -rf /tmp/g_$mode
  timeout -s KILL 60 python3 -m reuselens profile --run-dir /tmp/g_$mode -- /tmp/graphs $mode 2>&1 | grep -v "^  \|^top\|^$" | head -8
  echo "exit $? ($mode)"
  python3 - /tmp/g_$mode <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/run.json"))
c = r["collector"]
print(" status", r.get("status"), r.get("partial_reason"), "errors", r.get("errors"), "graph launches",
      c.get("graph_launches"), "nodes", c.get("graph_kernel_nodes"))
for x in r["launches"]:
    print("  launch", x["id"], x["kernel"][:22], "graph" if x.get("graph_node") else "direct", "instr", x["instrumented"], x["status"], x.get("records"))
PY
  grep "graph\|error\|finishing" /tmp/g_$mode/collector.log | cut -c1-200 | head -6
done
stamp "GPU test: test_gpu_graphs.py"
timeout 150 python3 -m pytest -q tests/collector/test_gpu_graphs.py 2>&1 | grep -v "Warning\|warn\|^$\|Docs:" | tail -12
left 200 && gpu_tests
left 150 && fidelity_against_ncu
if left 60; then
  stamp "the breadth set again: native, full, 1 round"
  clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
  timeout $((LIMIT - $(date +%s) + T0 - 20)) python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json \
    --src benchmarks/realapps/breadth-src --out /tmp/breadth --modes native,full --rounds 1 --timeout 60 --jobs 16 \
    --reuselens "$clean" > $OUT/breadth_realapps.txt 2>&1
  python3 benchmarks/breadth_check.py /tmp/breadth --json $OUT/breadth_check.json > $OUT/breadth_check.txt 2>&1
  tail -30 $OUT/breadth_check.txt
  grep "full:" $OUT/breadth_realapps.txt
  cp /tmp/breadth/realapps.json $OUT/breadth_realapps.json 2>/dev/null
fi
stamp done
