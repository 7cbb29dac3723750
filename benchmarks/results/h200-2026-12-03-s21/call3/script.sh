#!/usr/bin/env bash
# Session 21, call 3: the session's code on the GPU (collector and memory GPU tests), the language server's start
# with the generated-code cache (07b5068) on the suite's reports, and the object-level cost from a user's install
# again (call 2's measure, three more rounds).
# 1. GPU tests: tests/collector/test_gpu.py, tests/memory/test_memory_gpu.py.
# 2. The eight short apps' reports (realapps.py --modes native,full, 1 round, clean install); lsp_realapps.py on
#    them from the clean install: a fresh cache folder (the first app's server compiles and saves, the others load),
#    then again (every server loads); once more with the cache off (an unwritable cache folder).
# 3. realapps.py --modes native,objects,intra, 3 rounds, twelve apps, clean install.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s21/call3/script.sh
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 200 python3 -m pytest -q tests/collector/test_gpu.py tests/memory/test_memory_gpu.py 2>&1 | tail -4
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "the eight short apps' reports"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rr --rounds 1 --modes native,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" 2>&1 | grep "median\|worst"
for pass in cold warm off; do
  stamp "language server on the reports, generated-code cache $pass"
  case $pass in
    cold) rm -rf /tmp/xdg; export XDG_CACHE_HOME=/tmp/xdg ;;
    warm) export XDG_CACHE_HOME=/tmp/xdg; ls -l /tmp/xdg/reuselens ;;
    off) touch /tmp/xdg_file; export XDG_CACHE_HOME=/tmp/xdg_file ;;  # a folder under a file: nothing cached
  esac
  timeout 120 /tmp/clean/bin/python benchmarks/lsp_realapps.py --runs /tmp/rr/runs/r0 --json $OUT/lsp_realapps_$pass.json 2>&1 | tail -9
done
unset XDG_CACHE_HOME
stamp "object-level and intra-object, twelve apps, 3 rounds, clean install"
timeout 240 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rc --build /tmp/rr/build --rounds 3 --modes native,objects,intra --jobs 16 --reuselens "$CLEAN" > $OUT/realapps_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_clean.txt | tail -16
cp /tmp/rc/realapps.json $OUT/realapps_clean.json
stamp done
