#!/usr/bin/env bash
# Session 37, call 5 (the session's last device time, after a failed start took 122 s of it): a shared record's
# distributions computed by its block owner instead of beside its routing (shared_in_block_step.patch; engine JSON
# identical to the code before on 17 patterns and slices at 1-3 workers), so that its lanes' lines cross to one
# core, not two. The GPU tests after that edit, then the replay of three slices at twelve workers with and without
# it (the engine module before it built beside, engine target only), and fidelity against ncu if time is left.
#   bash benchmarks/results/h100-2026-12-05-s37/call5/script.sh   (carry .whl)
source benchmarks/device_call.sh
stamp "the engine module without the patch (in the background)"
mkdir -p /tmp/oldsrc && cp -r CMakeLists.txt pyproject.toml analyzer collector /tmp/oldsrc/ &&
  (cd /tmp/oldsrc && git apply -R "$DEVICE_CALL_REPO/benchmarks/results/h100-2026-12-05-s37/call5/shared_in_block_step.patch") &&
  (cmake -S /tmp/oldsrc -B /tmp/oldb -DCMAKE_BUILD_TYPE=Release -DSKBUILD=ON \
    -Dpybind11_DIR="$(python3 -c 'import pybind11; print(pybind11.get_cmake_dir())')" > /tmp/oldb.txt 2>&1 &&
    timeout 150 cmake --build /tmp/oldb --target _engine -j 12 >> /tmp/oldb.txt 2>&1) &
BUILD=$!
gpu_tests
wait $BUILD
OLD_ENGINE=$(find /tmp/oldb -name "_engine*.so" | head -1)
[ -n "$OLD_ENGINE" ] || tail -5 /tmp/oldb.txt
R=tests/data/real_launches
for s in pytorch_xmma_sgemm_64x64_tn cs_mergesort_shared cs_merge_intervals; do
  for eng in "$OLD_ENGINE" installed; do
    name=$([ "$eng" = installed ] && echo after || echo before)
    stamp "engine.py $s, 12 workers, $name"
    timeout 30 python3 benchmarks/engine.py --slice $R/$s --workers 12 --repeat 2 --engine "$eng" \
      > $OUT/eng_${s}_${name}.txt 2>&1
    grep -E "workers|slowest" $OUT/eng_${s}_${name}.txt | cut -c1-150
  done
done
left=$((150 - $(date +%s) + T0))
[ $left -gt 45 ] && fidelity_against_ncu
stamp done
