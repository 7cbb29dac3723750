#!/usr/bin/env bash
# Session 45, call 6: main's final code. CUDA graph nodes listed and never instrumented, modules patched when a graph
# is instantiated (docs/collector.md, "CUDA graphs"): graphs.cu by hand under a hard timeout and
# tests/collector/test_gpu_graphs.py; the GPU tests and fidelity against ncu (the collector changed); then the suite
# from a user's install: the eight short apps 2 rounds, the four long ones 1 round.
#   LIMIT=560 bash benchmarks/results/s45/call6/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "graphs.cu by hand, each mode under a 60 s timeout"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/graphs tests/gpu/graphs.cu || exit 1
for mode in capture manual all; do
  rm -rf /tmp/g_$mode
  timeout -s KILL 60 python3 -m reuselens profile --run-dir /tmp/g_$mode -- /tmp/graphs $mode 2>&1 | grep "graphs:\|note:\|error" | head -4
  echo "exit ${PIPESTATUS[0]} ($mode)"
  python3 - /tmp/g_$mode <<'PY'
import json, sys
r = json.load(open(sys.argv[1] + "/run.json"))
c = r["collector"]
print(" status", r.get("status"), "errors", r.get("errors"), "graph launches", c.get("graph_launches"), "nodes",
      c.get("graph_kernel_nodes"), "launches", [("g" if x.get("graph_node") else "d") + ("+" if x["instrumented"] else "-") + str(x.get("records")) for x in r["launches"]])
PY
done
stamp "GPU test: test_gpu_graphs.py"
timeout 150 python3 -m pytest -q tests/collector/test_gpu_graphs.py 2>&1 | grep -v "Warning\|warn\|^$\|Docs:\|^  " | tail -8
gpu_tests
fidelity_against_ncu
left 150 && short_suite 2
if left 100; then
  stamp "the four long apps: native, collect, full, one round, clean install"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl \
    --rounds 1 --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,pb_gemm,pb_mvt,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -9
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
stamp done
