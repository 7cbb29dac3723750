#!/usr/bin/env bash
# Session 47, call 2: main after its last native edit (run.json records the GPU's L2 size): the GPU tests and
# fidelity against ncu; then the suite on main's final code (this session's rule changes), from a user's install:
# the eight short apps two rounds, the four long apps one round, the answer key, then the 40-step PyTorch loop.
#   LIMIT=570 bash benchmarks/results/s47/call2/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-570}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
fidelity_against_ncu
short_suite 2
python3 -c "import json, sys; print('run.json gpu:', json.load(open(sys.argv[1]))['gpu'])" /tmp/rf/runs/r1/cs_matrixMul-full/run.json
left 150 && long_apps 110
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r1/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
timeout 10 python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score \
  --json "$OUT/score.json" > "$OUT/score.txt" 2>&1
grep -A8 OVERALL "$OUT/score.txt"
(cd /tmp && find -L score/ -maxdepth 2 -name report.json -size -6M | tar czhf "$OUT/suite_reports.tgz" -T -)
left 170 && pytorch_loop 40
stamp done
