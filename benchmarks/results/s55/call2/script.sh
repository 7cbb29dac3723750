#!/usr/bin/env bash
# Session 55, call 2: the final code (the session's analysis changes; no native change since session 52) on the GPU:
# GPU tests, the eight short apps and the four long apps from a user's clean install (native / collect / full, one
# round), the findings against the answer key, the SASS decoders (atomic results included) against nvdisasm on the
# suite's modules as collected, and two breadth-set apps whose findings the session's review changed
# (warpAggregatedAtomicsCG's slot counters and source stream, histogram256's near-distinct atomics), with their
# atomic-related findings printed.
#   bash benchmarks/results/s55/call2/script.sh
#   (carry .whl, benchmarks/realapps/src, and benchmarks/realapps/breadth-src staged with those two apps only)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
short_suite 1
long_apps 200
[ -d /tmp/rf/runs/r0 ] && score_suite 0
stamp "the SASS decoders against nvdisasm on the suite's modules"
timeout 60 python3 benchmarks/sass_decoder_check.py /tmp/rf/runs/r0/*-full/modules /tmp/rl/runs/r0/*-full/modules \
  > "$OUT/sass_decoder_check.txt" 2>&1
tail -1 "$OUT/sass_decoder_check.txt"
breadth_set 120 --apps cs_warpAggregatedAtomicsCG,cs_histogram
stamp "their atomic-related findings"
python3 - /tmp/breadth/runs/r0 <<'PY' | tee "$OUT/breadth_atomics.txt"
import json, pathlib, sys
for report in sorted(pathlib.Path(sys.argv[1]).glob("*-full/report.json")):
    data = json.loads(report.read_text())
    for kernel in data["kernels"]:
        nodes = {n["id"]: n for n in kernel["nodes"]}
        returns = sorted(hex(n["pc"]) for n in kernel["nodes"] if n.get("returns"))
        atomics = sorted(hex(n["pc"]) for n in kernel["nodes"] if n.get("type") == "atomic")
        print(f"{report.parent.name} {kernel['name'][:40]}: atomics {atomics}, returning {returns}")
        for f in kernel["findings"]:
            if f["pattern"] in ("hierarchical-reuse-grid", "atomic-contention", "streaming-access"):
                print(f"  {f['pattern']} {f['severity']} fix={f['fix']['kind']}: {f['message'][:230]}")
PY
stamp done
