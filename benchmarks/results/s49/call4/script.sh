#!/usr/bin/env bash
# Session 49, call 4: the address operands decoded from the CUBIN (analyzer/operands.py) on the GPU host, from a
# user's install: cuda-samples alignedTypes (structures of ints read member by member: told to __align__ the type)
# and SHOC scan (double4's two 16-byte halves: no coalescing finding), under `reuselens profile`.
#   LIMIT=150 bash benchmarks/results/s49/call4/script.sh   (carry .whl, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-150}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "clean install"
timeout 120 bash benchmarks/clean_install.sh /tmp/clean | tail -1
breadth_set $((LIMIT - $(date +%s) + T0 - 15)) --apps cs_alignedTypes,shoc_scan
python3 - <<'PY'
import json, pathlib
for p in sorted(pathlib.Path("/tmp/breadth/runs/r0").glob("*-full/report.json")):
    r = json.loads(p.read_text())
    for k in r["kernels"]:
        addressed = sum("address" in n for n in k["nodes"])
        for f in k["findings"]:
            if f["pattern"] == "poor-coalescing":
                print(p.parent.name, k["name"][:40], f["severity"], f["metrics"].get("element_bytes"), f["message"][:90])
        if addressed:
            print(p.parent.name, k["name"][:40], "nodes with an address:", addressed)
PY
stamp done
