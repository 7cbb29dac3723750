#!/usr/bin/env bash
# Session 47, call 4 (call 3 could not start; what the last device time allows): main after its last native edit
# (the engine's `irregular` count, 8216d53): the GPU tests and fidelity against ncu, then the suite on main's final
# code from a user's install (eight short apps one round, the four long apps as far as the limit allows), the answer
# key, and each report's irregular requests and the GPU's L2 as run.json gives it.
#   LIMIT=300 bash benchmarks/results/s47/call4/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
left 80 && short_suite 1
left 60 && long_apps $((LIMIT - $(date +%s) + T0 - 20))
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r0/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
timeout 10 python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score \
  --json "$OUT/score.json" > "$OUT/score.txt" 2>&1
grep -A8 OVERALL "$OUT/score.txt"
(cd /tmp && find -L score/ -maxdepth 2 -name report.json -size -6M | tar czhf "$OUT/suite_reports.tgz" -T -)
python3 - /tmp/score <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*/report.json")):
    r = json.loads(p.read_text())
    nodes = [n for k in r["kernels"] for n in k["nodes"] if n.get("space") == "global"]
    irregular = sum(n.get("irregular", 0) for n in nodes)
    requests = sum(c for n in nodes for _v, c in n.get("sectors") or ())
    print(f"{p.parent.name:24s} l2 {r['run']['gpu'].get('l2_bytes')}  irregular {irregular:,} of {requests:,} global requests")
PY
stamp done
