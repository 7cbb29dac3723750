#!/usr/bin/env bash
# Session 46, call 5: the suite on main's final code (the diff review's rule mends and refactors after calls 2-3;
# the collector as call 1's), squeezed into the session's last device time: the eight short apps one round, then the
# four long apps as far as the limit allows, the findings against the answer key.
#   LIMIT=170 bash benchmarks/results/s46/call5/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-170}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 1
left 60 && long_apps $((LIMIT - $(date +%s) + T0 - 15))
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r0/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
timeout 10 python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score \
  --json "$OUT/score.json" > "$OUT/score.txt" 2>&1
grep OVERALL "$OUT/score.txt"
stamp done
