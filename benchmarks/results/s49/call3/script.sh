#!/usr/bin/env bash
# Session 49, call 3: the same code as call 2 (no change since): mvt collected in 15.5 s in call 2 against 10.3 s in
# call 1 on the same native code. Two more interleaved rounds of the worst apps, natively and under
# `profile --no-analyze`, to tell the host's drift from a change, with their collector.log engine lines.
#   LIMIT=200 bash benchmarks/results/s49/call3/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-200}
nvidia-smi --query-gpu=name --format=csv,noheader
uptime
stamp "clean install"
timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1
stamp "mvt, mergeSort, sortingNetworks: native and collect, 2 rounds"
timeout $((LIMIT - $(date +%s) + T0 - 10)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl \
  --rounds 2 --modes native,collect --jobs 16 --reuselens /tmp/clean/bin/reuselens \
  --apps pb_mvt,cs_mergeSort,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
grep -v "^build" "$OUT/realapps_long.txt" | tail -8
cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
for d in /tmp/rl/runs/r*/*-collect; do
  echo "-- $d"; grep -h "engine steps\|launch ends waited" "$d/collector.log" | cut -c1-300
done
uptime
stamp done
