#!/usr/bin/env bash
# Session 49, call 1: main as session 48 left it (163e8b3; no native change since session 47). Session 48's call 3,
# which never ran: the final analysis code (loops decoded from the CUBIN's branches, the duplicated warps' races) on
# PolyBench gramschmidt, adi and ATAX from a user's install. Then the suite from a user's install (eight short apps
# two rounds, the four long apps one round) and the answer key, with the long apps' collector.log lines (the engine's
# steps, the launch ends' waits) kept: the baseline for this session's changes, on whichever host the call gets.
#   LIMIT=330 bash benchmarks/results/s49/call1/script.sh
#     (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-330}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 2
breadth_set 60 --apps pb_gramschm,pb_adi,pb_atax
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
left 130 && long_apps 120
score_suite 1
stamp "the long apps' collector.log lines"
for d in /tmp/rl/runs/r0/*-collect /tmp/rl/runs/r0/*-full; do
  [ -f "$d/collector.log" ] || continue
  echo "-- $(basename "$d")"
  grep -h "engine steps\|launch ends waited\|queue emptied" "$d/collector.log" | cut -c1-420
  cp "$d/collector.log" "$OUT/collector_$(basename "$d").log"
done
stamp done
