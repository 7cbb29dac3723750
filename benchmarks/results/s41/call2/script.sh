#!/usr/bin/env bash
# Session 41, call 2: the engine patches without lanes_ahead ("kept") against main and all five, at twelve workers. Call 1 (all
# five, "more") won every online pair and the xmma, mergesort_shared and SHOC BFS slices, but engine.py's gather and
# strided patterns fell from 4.99 to 3.14 and 5.90 to 4.04 M records/s (the global step 157 -> 269 and 140 -> 187
# ms), where walk_ahead alone matched main. The tree gets walk_ahead + sync_ahead + route_owners + own_lanes ("kept":
# lanes_ahead, the deepest look-ahead, left out), installed; the engine modules of main and more are built beside
# (engine target only, while fidelity runs); GPU tests with "kept"; then engine.py at twelve workers, handed over, on
# gather, strided, the xmma slice and the mergesort_shared slice under the three engines, two rounds (the second in
# reverse order, gather and strided only). Sized for the session's last device time (555 s, a failed start costing
# 90-120 s of it): no online pairs, no engine per patch.
#   LIMIT=300 bash benchmarks/results/s41/call2/script.sh   (carry .whl)
N=benchmarks/results/s39/next
OWN=benchmarks/results/s40/own_lanes.patch
KEPT=($N/walk_ahead.patch $N/sync_ahead.patch $N/route_owners.patch $OWN)
for p in "${KEPT[@]}"; do git apply "$p" && echo "$(basename $p) applied" || exit 1; done
source benchmarks/device_call.sh
LIMIT=${LIMIT:-300}
stamp "tree: $(git diff --stat | tail -1)"
# variant NAME PATCH...: the engine module of main with PATCH... applied, engine target only, in /tmp/eng_NAME.
variant() {
  local name=$1 src=/tmp/src_$1 p
  shift
  rm -rf "$src" && mkdir -p "$src" && cp -r CMakeLists.txt pyproject.toml analyzer collector docs "$src"/ && mkdir -p "$src"/tests/engine && cp tests/engine/test_packed_records.py "$src"/tests/engine/ || return 1
  (cd "$src" && for p in $OWN $N/route_owners.patch $N/sync_ahead.patch $N/walk_ahead.patch; do
     git apply -R "$DEVICE_CALL_REPO/$p" || exit 1; done
   for p in "$@"; do git apply "$DEVICE_CALL_REPO/$p" || exit 1; done) || return 1
  cmake -S "$src" -B /tmp/eng_$name -DCMAKE_BUILD_TYPE=Release -DSKBUILD=ON \
    -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')" > /tmp/eng_$name.txt 2>&1 &&
    timeout 200 cmake --build /tmp/eng_$name --target _engine -j 8 >> /tmp/eng_$name.txt 2>&1
}
stamp "engine modules beside: main, more (in the background)"
PIDS=()  # waited for by pid: a bare `wait` also waits for the log's tee (device_call.sh)
variant main & PIDS+=($!)
variant more $N/walk_ahead.patch $N/sync_ahead.patch $N/route_owners.patch $N/lanes_ahead.patch $OWN & PIDS+=($!)
fidelity_against_ncu
wait "${PIDS[@]}"
declare -A ENG=([kept]=installed)
for name in main more; do
  ENG[$name]=$(find /tmp/eng_$name -name "_engine*.so" | head -1)
  [ -n "${ENG[$name]}" ] || { echo "$name: build failed"; tail -5 /tmp/eng_$name.txt; ENG[$name]=none; }
done
gpu_tests
R=tests/data/real_launches
ORDER=(main kept more)
ITEMS=(gather strided pytorch_xmma_sgemm_64x64_tn cs_mergesort_shared)
for round in 1 2; do
  stamp "engine.py, 12 workers, handed over, round $round: ${ORDER[*]}"
  for what in "${ITEMS[@]}"; do
    for name in "${ORDER[@]}"; do
      eng=${ENG[$name]}
      [ "$eng" = none ] && continue
      [ $(($(date +%s) - T0)) -lt $((LIMIT - 15)) ] || break 3
      case $what in strided|gather) src=(--pattern $what) ;; *) src=(--slice $R/$what) ;; esac
      f=$OUT/eng_${what}_${name}_$round.txt
      timeout 40 python3 benchmarks/engine.py "${src[@]}" --handed-over --workers 12 --repeat 2 --engine "$eng" > $f 2>&1
      echo "$what $name: $(grep -A4 '^warm' $f | grep -E 'M records|mean worker' | sed 's/ms per step, mean worker://' | tr -s ' ' | cut -c1-75 | tr '\n' ' ')"
    done
  done
  ORDER=(more kept main)
  ITEMS=(gather strided)
done
stamp done
