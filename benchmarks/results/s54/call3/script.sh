#!/usr/bin/env bash
# Session 54, call 3: does an engine queue that fits the host's L3 speed up the engine-bound apps? Call 2's perf put
# mergeSort's engine time in many functions, the first reader of each record paying most (shared_distribution's
# lane loop reads its 256 address bytes first); the 1 GiB ring is full from mergeSort's first launch, so each
# record is read about 1 GiB after it was written, from memory. Session 20 tried 128 and 256 MiB on short apps only
# (no gain) and on the PyTorch loop (slower). Here: mergeSort, sortingNetworks and mvt collected with the default
# 1 GiB and with 128 MiB, interleaved, two rounds; then whether the shadow gets huge pages (mvt's smaps_rollup while
# it runs).
#   bash benchmarks/results/s54/call3/script.sh   (carry .whl with pyelftools and cxxfilt, benchmarks/realapps/src)
source benchmarks/device_call.sh
RL=$(command -v reuselens)
stamp "build"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/la --rounds 1 --modes native \
  --apps cs_mergeSort,pb_mvt,cs_sortingNetworks > "$OUT/native.txt" 2>&1 || tail -5 "$OUT/native.txt"
grep -E "^cs_|^pb_" "$OUT/native.txt"
collect_once() {  # collect_once NAME APP [VAR=VALUE]: one `profile --no-analyze` of APP
  local name=$1 app=$2
  shift 2
  env "$@" timeout 60 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out "/tmp/$name" \
    --build /tmp/la/build --rounds 1 --modes collect --jobs 16 --reuselens "$RL" --apps "$app" > "$OUT/$name.txt" 2>&1
  grep "collect " "$OUT/$name.txt" | grep round | sed "s/^/$name: /" | cut -c1-120
  grep -h "engine steps" /tmp/$name/runs/r0/*/collector.log | sed 's/.*CPU: //' | cut -c1-260
}
for round in 1 2; do
  for app in cs_mergeSort pb_mvt cs_sortingNetworks; do
    stamp "$app round $round"
    collect_once "q1g_${app}_$round" "$app"
    collect_once "q128m_${app}_$round" "$app" REUSELENS_ENGINE_QUEUE_BYTES=134217728
  done
done
stamp "THP: mvt's smaps_rollup while it is collected"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
rm -rf /tmp/mvt_thp
(cd /tmp/la/build && "$RL" profile --no-analyze --run-dir /tmp/mvt_thp -- ./pb_mvt $(manifest_args pb_mvt) > /tmp/mvt_thp.txt 2>&1) &
for i in 1 2 3 4 5 6 7; do
  sleep 1
  pid=$(pgrep -x pb_mvt | head -1)
  [ -n "$pid" ] && grep -E "^Rss|AnonHuge" /proc/$pid/smaps_rollup | tr -s ' ' | tr '\n' ' ' && echo
done
wait
stamp done
