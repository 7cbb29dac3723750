#!/usr/bin/env bash
# Session 20, call 4 (the last of the session): the final code on the GPU, then one engine experiment beside it.
# 1. Collector and value GPU tests; the suite, two rounds (native, collect, full); the language server on the
#    suite's reports (benchmarks/lsp_realapps.py) and save -> diagnostics on cs_matrixMul's first 80 launches,
#    0.96 M records (benchmarks/lsp_save.py); the 40-step PyTorch loop natively and collected.
# 2. `yield.patch` (a worker waiting for the next step yields its core every 64 polls, so that the drain's copy
#    threads and the app's thread are not crowded out by spinning workers) built beside: the GPU tests with its
#    collector, paired with the installed one on five apps, and the 10-step PyTorch loop with each.
# Run from the repository root with .whl/, .whl-lsp/ (the language server's wheels, installed where the image
# lacks them) and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call4/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
APPS=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
stamp "GPU tests"
timeout 150 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -4
stamp "suite, two rounds"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps $APPS > $OUT/realapps.txt 2>&1; grep -v "^build\|^round" $OUT/realapps.txt | tail -13
stamp "language server on the suite's reports"
timeout 150 python3 benchmarks/lsp_realapps.py --runs /tmp/rv/runs/r1 --json $OUT/lsp_realapps.json 2>&1 | tail -10
stamp "save -> diagnostics, cs_matrixMul launches 0-79"
timeout 90 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/rv/build --app cs_matrixMul --launch-range 0:80 --rounds 3 --json $OUT/lsp_save.json 2>&1 | tail -5
stamp "the PyTorch loop, 40 steps, native then collected"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/ptn --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
timeout 100 python3 benchmarks/pytorch_overhead.py --out /tmp/ptc --steps 40 --rounds 1 --modes collect --timeout 95 2>&1 | grep "collect:"
grep "exit:" /tmp/ptc/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "build yield.patch beside"
rm -rf /tmp/src_yield && mkdir -p /tmp/src_yield
cp -r pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs /tmp/src_yield/
(cd /tmp/src_yield && git apply "$HERE/yield.patch") && timeout 120 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/yield /tmp/src_yield > /tmp/yield.txt 2>&1 || tail -20 /tmp/yield.txt
YLIB=$(find /tmp/yield -name libreuselens_collector.so | head -1)
stamp "GPU tests with the yield collector ($YLIB)"
REUSELENS_COLLECTOR_LIB=$YLIB timeout 100 python3 -m pytest -q tests/collector/test_gpu.py 2>&1 | tail -3
stamp "collectors paired: installed, yield"
timeout 130 python3 benchmarks/ab_collector.py --a now=installed --b yield=$YLIB --apps pb_fdtd2d,shoc_bfs,cs_transpose,cs_matrixMul,shoc_sort --rounds 3 --out /tmp/ab --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
stamp "PyTorch loop, 10 steps, collected: installed, yield"
for side in "installed=$REUSELENS_COLLECTOR_LIB" "yield=$YLIB"; do
  REUSELENS_COLLECTOR_LIB=${side#*=} timeout 50 python3 benchmarks/pytorch_overhead.py --out /tmp/pt10 --steps 10 --rounds 1 --modes collect --timeout 45 2>&1 | grep "collect:" | sed "s#^#${side%%=*}: #"
done
stamp done
