#!/usr/bin/env bash
# Session 43, call 5: main's final code (the post-run changes after call 3: graph metrics from the kernel's edges,
# no networkx graph, report.json compact) from a user's install: the eight short apps (1 round) and mergeSort and
# sortingNetworks natively, collected and profiled, then sortingNetworks' launcher phases (call 4: 0.62 s after the
# exit, 0.32 s of it waiting for the analysis and 0.27 s writing the report). Sized for the session's last 325 s.
#   LIMIT=190 bash benchmarks/results/s43/call5/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-190}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "builds: mergeSort, sortingNetworks"
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --check-only --jobs 16 \
  --apps cs_mergeSort,cs_sortingNetworks > $OUT/build_long.txt 2>&1 || tail -3 $OUT/build_long.txt
short_suite 1
if left 60; then
  stamp "mergeSort and sortingNetworks: native, collect, full, one round"
  timeout $((LIMIT - $(date +%s) + T0 - 30)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl \
    --rounds 1 --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -6
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
if left 25; then
  stamp "sortingNetworks: the launcher's phases, 1 round"
  cd /tmp/rl/build && timeout $((LIMIT - $(date +%s) + T0 - 3)) /tmp/clean/bin/python $REPO/benchmarks/launcher_phases.py \
    --rounds 1 -- ./cs_sortingNetworks 2>&1 | grep -v "^run written" | tee $OUT/phases_sn.txt | tail -22
  cd $REPO
fi
stamp done
