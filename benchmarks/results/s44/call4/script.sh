#!/usr/bin/env bash
# Session 44, call 4: main's final code (its tool library and engine as in call 1, whose GPU tests and fidelity
# ran on them; no Python changed since) measured, nothing changed:
# (1) what the Sanitizer's subscription costs by itself, domain by domain (benchmarks/subscribe_probe, teardown.py's
#     passive mode; call 3's build of it failed), beside the collector attached with nothing to instrument, and one
#     attached run's collector.log (when its context, modules and exit come);
# (2) the launcher's phases of `reuselens profile` on three short apps (what the full profile adds after the app);
# (3) the suite from a user's install: the eight short apps 2 rounds, the four long ones 1 round.
#   LIMIT=560 bash benchmarks/results/s44/call4/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-560}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "clean install, the probe library, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
probe=$(bash benchmarks/subscribe_probe/build.sh /tmp/probe) || probe=
echo "probe: ${probe:-did not build}"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 16 \
  --apps cs_matrixMul,cs_transpose,shoc_sort,pb_lu > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
P=RL_PROBE_DOMAINS
if [ -n "$probe" ]; then
  for app in cs_matrixMul cs_transpose shoc_sort pb_lu; do
    stamp "the subscription's parts: $app, 3 rounds"
    timeout 60 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --timeout 30 --library "$probe" \
      --json $OUT/probe_$app.json \
      --modes "native,passive,passive:$P=none,passive:$P=resource,passive:$P=launch,passive:$P=memcpy+memset,passive:$P=api,passive:$P=all,attach" \
      -- ./$app $(manifest_args $app) 2>&1 | tail -10
  done
fi
stamp "one attached run of cs_matrixMul: its collector.log"
rm -rf /tmp/att
timeout 30 $clean profile --no-analyze --kernel-filter '^matches_no_kernel$' --run-dir /tmp/att -- ./cs_matrixMul \
  $(manifest_args cs_matrixMul) > /dev/null 2>&1
cp /tmp/att/collector.log $OUT/attach_matrixMul_collector.log 2>/dev/null && head -c 2500 /tmp/att/collector.log
for app in cs_transpose shoc_sort pb_lu; do
  left 380 || break
  stamp "launcher phases: $app, 3 rounds"
  timeout 40 python3 $REPO/benchmarks/launcher_phases.py --rounds 3 -- ./$app $(manifest_args $app) 2>&1 | tail -20
done
cd $REPO
if left 200; then short_suite 2; fi
if left 90; then
  stamp "the four long apps: native, collect, full, one round, clean install"
  timeout $((LIMIT - $(date +%s) + T0 - 5)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl \
    --rounds 1 --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,pb_gemm,pb_mvt,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -9
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
fi
stamp done
