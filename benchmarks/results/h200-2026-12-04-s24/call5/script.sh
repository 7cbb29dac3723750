#!/usr/bin/env bash
# Session 24, call 5: a launch's end no longer waits for the drain of its last records (async_drain.patch, the
# whole change against c9d9376): LAUNCH_END returns once the kernel's record count is read, the next launch starts
# at the next generation in another buffer, and the drain thread, now the only caller of the sinks, finishes the
# records meanwhile (docs/collector.md, "What a launch's end waits for").
# 1. GPU tests. 2. fidelity against ncu (x3), default and smallest buffers. 3. the collector before the change
# (this tree with the patch taken back) paired with this one, eight apps, 3 rounds. 4. the suite, 2 rounds, clean
# install, with each collect run's launch span.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call5/script.sh
source benchmarks/device_call.sh
HERE=benchmarks/results/h200-2026-12-04-s24/call5
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 300 python3 -m pytest -q -x tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -15
mkdir -p /tmp/zf
for p in microbench zero_fill; do nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/zf/$p tests/gpu/$p.cu || exit 1; done
for p in microbench zero_fill; do
  stamp "fidelity: $p (ncu x3)"
  timeout 100 python3 benchmarks/fidelity.py --bench /tmp/zf/$p --work /tmp/fid_$p --ncu-runs 3 --json $OUT/fid_$p.json 2>&1 | grep -v " ok$" | tail -5
done
stamp "build the collector before the change"
timeout 200 bash benchmarks/build_revision.sh --patch $HERE/async_drain.patch /tmp/before -R > /tmp/before.txt 2>&1 || { tail -20 /tmp/before.txt; exit 1; }
BEFORE=$(find /tmp/before -name libreuselens_collector.so | head -1)
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
stamp "collectors paired: before (A) / async drain (B), 3 rounds"
timeout 240 python3 benchmarks/ab_collector.py --a before=$BEFORE --b async=installed --apps $SHORT --rounds 3 --out /tmp/ab_async --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_async/ab_collector.json $OUT/ab_async.json
for d in /tmp/ab_async/runs/r2/*-async; do echo "$(basename $d): $(grep -h "exit: launch ends\|exit: engine finished" $d/collector.log | cut -c1-160 | tr '\n' ' ')"; grep -h "error" $d/collector.log | head -3; done
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
stamp done
