#!/usr/bin/env bash
# Session 57, call 2: the suite's timings again (call 1's short apps ran at 2-4 engine workers' worth of CPU where
# session 56's ran at 7-11: the host's other load, not the code: no collector or engine file changed since session
# 52), with the host's load and the busiest processes printed before each step.
#   bash benchmarks/results/s57/call2/script.sh
#   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
load() { echo "-- $(nproc) CPUs; $(uptime)"; ps -eo pcpu,comm --sort=-pcpu | head -6 | tr '\n' ';'; echo; }
elapsed() { echo $(($(date +%s) - T0)); }
load
short_suite 1
load
[ "$(elapsed)" -lt 60 ] && long_apps $((140 - $(elapsed)))
load
[ -d /tmp/rf/runs/r0 ] && score_suite 0
(cd /tmp/rf/runs/r0 2>/dev/null && tar czf "$OUT/collect_logs.tgz" */collector.log 2>/dev/null)
stamp done
