#!/usr/bin/env bash
# Session 56, call 3: the final code (7957ce5) on the GPU: the GPU tests, then the breadth2 apps whose findings the
# session's last rules changed (Tango AlexNet and SHOC spmv: compiler-placed WARPSYNC; Parboil bfs: atomicMin and
# atomicOr whose old value is read; cdpQuadtree: device launches), natively and under `profile`, and what their
# reports now say about those.
#   bash benchmarks/results/s56/call3/script.sh
#   (carry .whl and benchmarks/realapps/breadth2-src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
python3 benchmarks/realapps/parboil_inputs2.py benchmarks/realapps/breadth2-src/parboil
gpu_tests
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
BREADTH_MANIFEST=benchmarks/realapps/breadth2.json BREADTH_SRC=benchmarks/realapps/breadth2-src breadth_set 200 \
  --apps tango_alexnet,shoc_spmv,parboil_bfs,cs_cdpQuadtree
stamp "what the changed rules say"
python3 - /tmp/breadth/runs/r0 <<'PY' | tee "$OUT/changed_rules.txt"
import json, pathlib, sys
for report in sorted(pathlib.Path(sys.argv[1]).glob("*-full/report.json")):
    data = json.loads(report.read_text())
    for kernel in data["kernels"]:
        marked = [hex(b["pc"]) for b in kernel["barriers"] if b.get("compiler_inserted")]
        ops = sorted({(hex(n["pc"]), n.get("fetch_add")) for n in kernel["nodes"] if n.get("returns")})
        counts = {}
        for f in kernel["findings"]:
            counts[(f["pattern"], f["severity"])] = counts.get((f["pattern"], f["severity"]), 0) + 1
        print(f"{report.parent.name} {kernel['name'][:40]}: compiler-placed barriers {marked}; returning atomics "
              f"(pc, fetch_add) {ops}")
        print(f"    findings {sorted(counts.items())}")
        for f in kernel["findings"]:
            if f["pattern"] in ("removable-barrier", "hierarchical-reuse-grid") or "from the device" in f["message"]:
                print(f"    {f['pattern']} {f['severity']} fix={f['fix']['kind']}: {f['message'][:200]}")
PY
stamp done
