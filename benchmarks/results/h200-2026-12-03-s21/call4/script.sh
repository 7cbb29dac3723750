#!/usr/bin/env bash
# Session 21, call 4 (the last of the session).
# 1. The language server's start with the generated-code cache (07b5068), from a user's install
#    (benchmarks/clean_install.sh), on the eight short apps' reports: a fresh cache folder (the first app's server
#    compiles and saves, the others load), again (every server loads), and with the cache off (a cache folder under
#    a file). Run from /tmp: call 3 ran it from the checkout, whose reuselens/ folder (the application alone) then
#    shadowed the installed package for `python -m reuselens.lsp_server`, and every server exited at once.
# 2. The object patch's per-access cost (issue 18: the heavy kernels of pb_mvt, pb_gemm and shoc_bfs run 10-30%
#    longer instrumented). `objmark.patch`: a mark's two words read in one 16-byte load (one trip to L2 instead of
#    two in a row), and no element-map work without element maps (a flag in the launch state; every 8- and 16-byte
#    access paid a warp vote and a lookup per extra granule for maps object-level runs never have). Built beside the
#    installed package from a patched copy of the tree: the memory GPU tests with its collector, then paired with
#    the installed one under --object-level, four apps, 3 rounds.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s21/call4/script.sh
source benchmarks/device_call.sh
HERE=$(realpath "$(dirname "$0")")
REPO=$(pwd)
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
stamp "the eight short apps' reports"
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rr --rounds 1 --modes native,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" 2>&1 | grep "median\|worst"
for pass in cold warm off; do
  stamp "language server on the reports, generated-code cache $pass"
  case $pass in
    cold) rm -rf /tmp/xdg; export XDG_CACHE_HOME=/tmp/xdg ;;
    warm) export XDG_CACHE_HOME=/tmp/xdg; ls -l /tmp/xdg/reuselens ;;
    off) touch /tmp/xdg_file; export XDG_CACHE_HOME=/tmp/xdg_file ;;  # a folder under a file: nothing cached
  esac
  (cd /tmp && timeout 100 /tmp/clean/bin/python $REPO/benchmarks/lsp_realapps.py --runs /tmp/rr/runs/r0 --json $OUT/lsp_realapps_$pass.json 2>&1 | tail -9)
done
unset XDG_CACHE_HOME
stamp "build objmark.patch beside"
timeout 200 bash benchmarks/build_revision.sh --patch "$HERE/objmark.patch" /tmp/objmark > /tmp/objmark.txt 2>&1 || { tail -20 /tmp/objmark.txt; exit 1; }
LIB=$(find /tmp/objmark -name libreuselens_collector.so | head -1)
stamp "memory GPU tests with its collector ($LIB)"
REUSELENS_COLLECTOR_LIB=$LIB timeout 100 python3 -m pytest -q tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "paired, --object-level"
timeout 100 python3 benchmarks/ab_collector.py --a now=installed --b objmark=$LIB --mode objects --apps pb_mvt,pb_gemm,shoc_bfs,pb_fdtd2d --rounds 3 --out /tmp/ab --build /tmp/rr/build --src benchmarks/realapps/src 2>&1 | grep -v "^round \|^build "
stamp done
