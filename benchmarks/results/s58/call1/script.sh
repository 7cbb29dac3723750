#!/usr/bin/env bash
# Session 58, call 1: the session's rule change (hierarchical reuse between warps that block scheduling splits into
# block and grid, 1ef8e45) on the GPU, and the suite's timings with the host's load and CPU topology printed (session
# 57's suite ran on a loaded host). The host first (are its 16 CPUs 16 cores, or 8 with two threads each: what twelve
# engine workers can get); the GPU tests; the suite, short apps two rounds, long apps one; its findings against the
# answer key; the random gather's per-worker rate (issue 14's 50 M lane-accesses/s); the 40-step PyTorch loop.
#   bash benchmarks/results/s58/call1/script.sh
#   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
nvidia-smi --query-gpu=name --format=csv,noheader
elapsed() { echo $(($(date +%s) - T0)); }
load() { echo "-- $(nproc) CPUs; $(uptime)"; ps -eo pcpu,comm --sort=-pcpu | head -6 | tr '\n' ';'; echo; }
stamp "host"
lscpu | grep -E "^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)|L2|L3)" |
  tee "$OUT/host.txt"
(uname -r; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag) | tee -a "$OUT/host.txt"
grep -m1 -E "^siblings" /proc/cpuinfo | tee -a "$OUT/host.txt"
grep -m1 -E "^cpu cores" /proc/cpuinfo | tee -a "$OUT/host.txt"
load
gpu_tests
load
short_suite 2
load
[ "$(elapsed)" -lt 330 ] && long_apps $((470 - $(elapsed)))
[ -d /tmp/rf/runs/r0 ] && score_suite 0
(cd /tmp/rf/runs/r0 2>/dev/null && tar czf "$OUT/collect_logs.tgz" */collector.log 2>/dev/null)
load
if [ "$(elapsed)" -lt 500 ]; then
  stamp "engine.py --pattern gather, 1 and 12 workers"
  timeout 70 python3 benchmarks/engine.py --pattern gather --workers 1,12 --repeat 2 > "$OUT/engine_gather.txt" 2>&1
  grep -E "^(cold|warm)|^  workers" "$OUT/engine_gather.txt"
fi
[ "$(elapsed)" -lt 470 ] && pytorch_loop 40
stamp done
