#!/usr/bin/env bash
# Session 47, call 1: main after the last native edit (f6a5c27 re-applied: a graph's instantiation keeps the kernel
# filter's answers per function id in the tool): graphs.cu's modes with and without a kernel filter, the GPU tests
# and fidelity against ncu; then the suite on main's exact code (eight short apps 2 rounds, four long 1 round), the
# answer key.
#   LIMIT=570 bash benchmarks/results/s47/call1/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-570}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
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
left 200 && short_suite 2
left 90 && long_apps $((LIMIT - $(date +%s) + T0 - 60))
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r0/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
timeout 10 python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score \
  --json "$OUT/score.json" > "$OUT/score.txt" 2>&1
grep OVERALL "$OUT/score.txt"
stamp done
