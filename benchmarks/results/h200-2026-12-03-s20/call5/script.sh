#!/usr/bin/env bash
# Session 20, call 5: save -> diagnostics on two suite apps that have findings, each kept under 1 M records by a
# launch range (call 4's cs_matrixMul has none, so its publishes only cleared the file), and the engine on a
# 256 MB random gather (issue 14: >= 50 M lane-accesses/s per worker), the same code as call 4.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call5/script.sh
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
for spec in cs_transpose:0:150 shoc_sort:0:8; do
  app=${spec%%:*}
  stamp "save -> diagnostics, $app launches ${spec#*:}"
  timeout 80 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/rv/build --app $app --launch-range ${spec#*:} --rounds 3 --json $OUT/lsp_save_$app.json 2>&1 | tail -4
done
stamp "engine, 256 MB random gather, 1 and 12 workers"
timeout 70 python3 benchmarks/engine.py --pattern gather --workers 1,12 --repeat 2 2>&1 | tail -12
stamp done
