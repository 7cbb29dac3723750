#!/usr/bin/env bash
# Session 42, call 2. (1) Why SHOC BFS (UIUC) gave 40 findings in call 1 on main, against 41 in every suite run
# since session 25 (session 41's call 1 included, with all five engine patches; main has four of them): its
# whole profile three times each with main's engine at its default workers, with main's at one worker, and with
# the engine before session 41's four commits (pre_kept.patch: main's analyzer/engine taken back to a1d489c) built
# beside; each run's findings and graph sizes printed and kept (findings_of.py). (2) What a short app's exit costs
# under the collector: call 1 found the launcher's post-run work hidden in the app's teardown, but the app still
# running 120-139 ms after the tool library's exit files, out of 230-245 ms it takes more than natively.
# benchmarks/teardown.py times the last line of output to the exit natively, collected, with the engine off, with
# the Sanitizer attached and nothing instrumented, and with a 256 MiB engine queue, with peak RSS and page faults.
#   LIMIT=210 bash benchmarks/results/s42/call2/script.sh   (carry .whl and benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-210}
REPO=$PWD
HERE=$REPO/benchmarks/results/s42/call2
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
collector_beside $HERE/pre_kept.patch /tmp/old
APPS=shoc_bfs_uiuc,shoc_sort,cs_reduction,pb_lu
stamp "clean install, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --check-only --jobs 12 \
  --apps $APPS > $OUT/build.txt 2>&1 || tail -5 $OUT/build.txt
cd /tmp/rf/build || exit 1
UIUC="./shoc_bfs_uiuc $(manifest_args shoc_bfs_uiuc)"
uiuc() {  # uiuc NAME [VAR=VALUE...]: one whole profile of BFS UIUC, its findings printed and kept
  local name=$1
  shift
  rm -rf /tmp/u/$name
  env "$@" timeout 60 $clean profile --run-dir /tmp/u/$name -- $UIUC > /tmp/u_$name.txt 2>&1 || { tail -3 /tmp/u_$name.txt; return; }
  echo "$name: $(python3 $HERE/findings_of.py /tmp/u/$name $OUT/uiuc_$name.json)"
}
mkdir -p /tmp/u
stamp "BFS UIUC, main, 12 and 1 workers"
for i in 1 2 3; do uiuc main$i; uiuc main_w1_$i REUSELENS_ENGINE_WORKERS=1; done
for app in shoc_sort cs_reduction pb_lu; do
  left 50 || break
  stamp "teardown: $app"
  timeout 90 python3 $REPO/benchmarks/teardown.py --rounds 3 --reuselens $clean --json $OUT/teardown_$app.json \
    --modes native,collect,no-engine,attach,collect:REUSELENS_ENGINE_QUEUE_BYTES=268435456 \
    -- ./$app $(manifest_args $app) 2>&1 | tee -a $OUT/teardown.txt
done
stamp "BFS UIUC, the engine before session 41's commits"
if beside_lib /tmp/old; then
  for i in 1 2 3; do uiuc old$i REUSELENS_COLLECTOR_LIB=$BESIDE_LIB; done
fi
stamp done
