#!/usr/bin/env bash
# Session 24, call 4, the final code: collector.log now says what each launch's LAUNCH_END waited for (the kernel,
# then the drain of its last records into the sinks, which holds the app's next launch) and the run's sums.
# 1. GPU tests. 2. The eight short apps, native / collect / full, 2 rounds, from a user's install, runs kept:
# per app, the sums of the launch ends' waits against the collect run's span of launches.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call4/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 300 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" --keep-runs > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
cp /tmp/rf/realapps.json $OUT/realapps_full_clean.json
stamp "launch ends' waits per collect run"
for d in /tmp/rf/runs/r*/*-collect; do
  python3 - "$d/collector.log" "$(basename $(dirname $d))/$(basename $d)" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
stamps = [float(m[1]) for m in re.finditer(r"^\[\s*([0-9.]+)\] launch \d+: ", log, re.M)]
ends = re.search(r"exit: launch ends waited ([0-9.]+) s for their kernels and ([0-9.]+) s", log)
eng = re.search(r"exit: engine finished in ([0-9.]+) s", log)
print(f"{sys.argv[2]:28s} launches {len(stamps):5d}, first to last launch end {stamps[-1] - stamps[0]:.3f} s; "
      f"waits: kernels {ends[1]} s, last records {ends[2]} s; engine after the exit {eng[1] if eng else '-'} s")
PY
done
mkdir -p $OUT/logs; for a in cs_transpose pb_lu cs_reduction; do cp /tmp/rf/runs/r1/$a-collect/collector.log $OUT/logs/$a-collect.log; done
stamp done
