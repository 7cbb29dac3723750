#!/usr/bin/env bash
# Session 48, call 3 (what the budget's last 265 s allow): main's final analysis code (the loops decoded from the
# CUBIN's branches, the duplicated warps' races) from a user's install on PolyBench gramschmidt, adi and ATAX: their
# reports should carry the same loops as call 2's nvdisasm gave, gramschmidt's second pass information, ATAX's races
# saying the warps repeat one another's work, and adi's full profile back near call 1's time.
#   LIMIT=110 bash benchmarks/results/s48/call3/script.sh   (carry .whl, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-110}
nvidia-smi --query-gpu=name --format=csv,noheader
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
breadth_set $((LIMIT - $(date +%s) + T0 - 20)) --apps pb_gramschm,pb_adi,pb_atax
python3 - <<'PY'
import json, pathlib
for p in sorted(pathlib.Path("/tmp/breadth/runs/r0").glob("*-full/report.json")):
    r = json.loads(p.read_text())
    for k in r["kernels"]:
        if "loops" in k:
            print(p.parent.name, k["mangled"], "loops", k["loops"])
        for f in k["findings"]:
            m = f["metrics"]
            if m.get("earlier_loop_values") or m.get("duplicated_warps"):
                print(p.parent.name, f["pattern"], f["severity"], f["message"][-100:])
PY
stamp done
