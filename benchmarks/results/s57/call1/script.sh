#!/usr/bin/env bash
# Session 57, call 1: the register-save marks (analyzer/frame_saves.py) and the session's rules on the GPU: the GPU
# tests, then the second breadth set's apps the rules change (cuda-samples interval and newdelete: called functions'
# saves; Tango SqueezeNet and ResNet: per-thread working sets and per-block scalars; AlexNet and ResNet: statements
# over several lines), natively and under `profile`
# from a user's clean install, and what their reports now say.
#   bash benchmarks/results/s57/call1/script.sh
#   (carry .whl and benchmarks/realapps/breadth2-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth2.json BREADTH_SRC=benchmarks/realapps/breadth2-src breadth_set 200 \
  --apps cs_interval,cs_newdelete,tango_squeezenet,tango_resnet,tango_alexnet
stamp "what the changed rules say"
python3 - /tmp/breadth/runs/r0 <<'PY' | tee "$OUT/changed_rules.txt"
import json, pathlib, sys
for report in sorted(pathlib.Path(sys.argv[1]).glob("*-full/report.json")):
    data = json.loads(report.read_text())
    for kernel in data["kernels"]:
        frames = {}
        for n in kernel["nodes"]:
            if n.get("frame"):
                frames[n["frame"]] = frames.get(n["frame"], 0) + 1
        counts = {}
        for f in kernel["findings"]:
            counts[(f["pattern"], f["severity"], f["fix"]["kind"])] = counts.get((f["pattern"], f["severity"], f["fix"]["kind"]), 0) + 1
        print(f"{report.parent.name} {kernel['name'][:50]}: frame nodes {frames}")
        print(f"    findings {sorted(counts.items())}")
        for f in kernel["findings"]:
            m = f["metrics"]
            lines = {n["source"].get("statement_line") for n in kernel["nodes"] if n["id"] in f["pcs"] and n.get("source")}
            if "frame_restores" in m or "bytes_per_block" in m or "bytes_per_thread" in m or lines - {None}:
                print(f"    {f['pattern']} {f['severity']} fix={f['fix']['kind']}: {f['message'][:220]}")
PY
stamp done
