#!/usr/bin/env bash
# Session 46, call 3: a second sample of call 2 on another machine start (call 2's host ran the PyTorch loop natively in 13.4 s against 7.0 s in call 1). main's final code (analysis rules of this session; the collector as call 1's). The suite from
# a user's install (the eight short apps 2 rounds, the four long ones 1 round), its findings scored against the
# answer key (benchmarks/score_findings.py), the PyTorch loop (40 steps) again; the suite's reports come back
# (no modules) for re-deriving them on the development machine.
#   LIMIT=560 bash benchmarks/results/s46/call3/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
nvidia-smi --query-gpu=name --format=csv,noheader
short_suite 2
left 150 && long_apps $((LIMIT - $(date +%s) + T0 - 100))
stamp "findings against the answer key"
mkdir -p /tmp/score
for d in /tmp/rf/runs/r1/*-full /tmp/rl/runs/r0/*-full; do [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"; done
python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score --json "$OUT/score.json" \
  > "$OUT/score.txt" 2>&1
cat "$OUT/score.txt" | tail -20
(cd /tmp && find -L score/ -maxdepth 2 -name report.json -size -6M | tar czhf "$OUT/suite_reports.tgz" -T -)
left 60 && pytorch_loop 40
stamp done
