#!/usr/bin/env bash
# Session 31's third prepared call: slices of the suite's engine-bound apps for engine work on the development VM,
# which has no trace of them (benchmarks/launch_slice.py; tests/data/real_launches/README.md has the format). Each
# app is built, run once under `reuselens profile --no-analyze --traces` over a few launches with the online engine
# off, and its launch with the most records is cut to its first 12 blocks into $OUT/slices/. Commit the slices
# worth keeping under tests/data/real_launches (a slice holds records only: no source, no machine code), then
# `python benchmarks/engine.py --slice tests/data/real_launches/NAME`.
#   bash benchmarks/results/h200-2026-12-05-s31/call5/script.sh
source benchmarks/device_call.sh
APPS=(pb_fdtd2d cs_transpose shoc_bfs shoc_sort cs_reduction pb_lu)
stamp "build ${APPS[*]}"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 \
  --modes native --jobs 16 --apps "$(IFS=,; echo "${APPS[*]}")" > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
mkdir -p "$OUT/slices"
for app in "${APPS[@]}"; do
  # cuda-samples transpose runs each of its 8 kernels 101 times in turn: 404-504 are transposeNoBankConflicts'.
  range=$([ "$app" = cs_transpose ] && echo 404:406 || echo 0:16)
  stamp "$app: traces of launches $range, the largest cut"
  ARGS=$(manifest_args "$app")
  (cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 60 reuselens profile --no-analyze --traces \
    --launch-range "$range" --run-dir "/tmp/tr_$app" -- "./$app" $ARGS > /dev/null 2>&1)
  timeout 60 python3 benchmarks/launch_slice.py "/tmp/tr_$app" --launch largest --out "$OUT/slices/$app" 2>&1 | tail -2
done
ls -la "$OUT/slices"
stamp done
