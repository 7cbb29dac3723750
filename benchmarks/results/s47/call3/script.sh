#!/usr/bin/env bash
# Session 47, call 3: main after its last native edit (the engine counts each global access's executions whose
# lanes follow no stride, `irregular`): the GPU tests and fidelity against ncu; the suite on main's final code from
# a user's install (eight short apps two rounds, four long one round) and the answer key; then the breadth set (35
# apps, the report rules of this session, the GPU's L2 in run.json) and breadth_check.py.
#   LIMIT=570 bash benchmarks/results/s47/call3/script.sh
#     (carry .whl, benchmarks/realapps/src, benchmarks/realapps/breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-570}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
short_suite 2
left 200 && long_apps 110
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r1/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
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
left 100 && breadth_set $((LIMIT - $(date +%s) + T0 - 25))
stamp done
