#!/usr/bin/env bash
# Session 14, call 1: HEAD (a6a8372) on the GPU (its engine commits never ran there), then where the object-level
# mode's time goes on the whole suite (issue 18's cost target), and the suite's objects median.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -20 /tmp/setup.txt; exit 1; }
nproc; free -g | head -2
stamp "gpu tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/memory/test_memory_gpu.py 2>&1 | tail -4
stamp "object-level cost"
timeout 300 python3 benchmarks/object_level_cost.py --src benchmarks/realapps/src --out /tmp/olc --rounds 3 --jobs 16 --json $OUT/olc.json 2>&1 | tee $OUT/olc.txt | grep -v "^build" | tail -30
stamp "suite objects"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --build /tmp/olc/build --rounds 2 --modes native,objects --jobs 16 2>&1 | tee $OUT/ra_objects.txt | tail -16
stamp "collect, two apps (engine on HEAD)"
timeout 60 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rc --build /tmp/olc/build --rounds 1 --modes native,collect --jobs 16 --apps shoc_bfs,pb_fdtd2d 2>&1 | tail -4
grep -h "exit: engine: engine steps" /tmp/rc/runs/r0/*/collector.log | cut -c1-300
stamp done
