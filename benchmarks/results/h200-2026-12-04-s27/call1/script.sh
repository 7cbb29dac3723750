#!/usr/bin/env bash
# Session 27, call 1: 8685658 (the last three edits of session 26, 5b03e11, 91c2dad, 6cfd0de, never ran on the GPU).
# 1. GPU tests and fidelity against ncu. 2. One PyTorch step with traces and the online engine on: its online
# analysis.json against a replay of its traces (the queue's copy threads unpack its cuBLAS records, the records
# GCC's vectorizer broke). 3. The eight short apps from a user's install, 2 rounds. 4. Where their time goes now
# (overhead_split.py, 2 rounds). 5. The 40-step loop native and collected.
#   bash benchmarks/results/h200-2026-12-04-s27/call1/script.sh
source benchmarks/device_call.sh
REPO=$PWD
stamp "GPU tests"
timeout 240 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -3
fidelity_against_ncu
stamp "PyTorch loop, 1 step, traces, online engine on"
(cd /tmp && timeout 150 reuselens profile --no-analyze --traces --run-dir /tmp/pt_on -- python3 $REPO/benchmarks/pytorch_memory_step.py 1 > /tmp/pt_on.log 2>&1); tail -1 /tmp/pt_on.log
stamp "online analysis.json against a replay of the traces (12 workers)"
timeout 200 python3 - <<'PY'
import json
from pathlib import Path
from reuselens.analyzer import engine_result
from reuselens.analyzer.replay import replay_run, resolve_names
run = Path("/tmp/pt_on")
online = engine_result.load(run / "analysis.json")
functions = {int(f["id"]): f for f in json.loads((run / "run.json").read_text())["functions"]}
resolve_names(online, functions, [])
replayed = replay_run(run, workers=online["stats"]["workers"])
same = online["kernels"] == replayed["kernels"]
print("records online", online["stats"]["records"], "replayed", replayed["stats"]["records"], "kernels equal:", same)
if not same:
    for a, b in zip(online["kernels"], replayed["kernels"]):
        if a != b:
            print("first different kernel:", a.get("mangled", "")[:80])
            for key in a:
                if a[key] != b.get(key):
                    print("  differs in", key)
            break
PY
short_suite 2 --build /tmp/rb
stamp "overhead split, 8 apps, 2 rounds"
timeout 200 python3 benchmarks/overhead_split.py --src benchmarks/realapps/src --out /tmp/os --build /tmp/rb --rounds 2 --reuselens /tmp/clean/bin/reuselens > $OUT/overhead_split.txt 2>&1; tail -14 $OUT/overhead_split.txt
cp /tmp/os/overhead_split.json $OUT/ 2>/dev/null
stamp "one collect run's collector.log per app"
for a in cs_transpose pb_lu pb_fdtd2d shoc_bfs; do d=$(ls -d /tmp/os/runs/*$a*collect* 2>/dev/null | head -1); [ -n "$d" ] && { echo "--- $a $d"; grep -v "^\[ *[0-9.]*\] launch " $d/collector.log | tail -12 | cut -c1-300; }; done
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited\|drain thread" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-400
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp done
