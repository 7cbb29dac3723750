#!/usr/bin/env bash
# Session 54, call 6: issue 14's editor target on the GPU host, last measured in session 21: save -> diagnostics on
# cuda-samples matrixMul's first 80 launches (0.96 M records), three saves (benchmarks/lsp_save.py), with the final
# analysis; and the language server's start and import cost there.
#   bash benchmarks/results/s54/call6/script.sh   (carry .whl, .whl-lsp, benchmarks/realapps/src)
#   APPS="shoc_bfs_uiuc:0:10 shoc_sort:0:8" bash benchmarks/results/s54/call6/script.sh   (apps with findings, its
#   second run: matrixMul has none)
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
stamp "import lsp_server.server, three times"
for i in 1 2 3; do python3 -X importtime -c "import reuselens.lsp_server.server" 2>&1 | tail -1; done
stamp "build the apps"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ls --rounds 1 --modes native \
  --apps "$(echo "${APPS:-cs_matrixMul:0:80}" | tr ' ' '\n' | cut -d: -f1 | paste -sd,)" > "$OUT/native.txt" 2>&1 || tail -5 "$OUT/native.txt"
APPS=${APPS:-cs_matrixMul:0:80}
for spec in $APPS; do
  app=${spec%%:*}
  range=${spec#*:}
  stamp "save -> diagnostics, $app launches $range, 3 saves"
  timeout 150 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/ls/build --app "$app" \
    --launch-range "$range" --rounds 3 --json "$OUT/lsp_save_$app.json" > "$OUT/lsp_save_$app.txt" 2>&1
  tail -5 "$OUT/lsp_save_$app.txt"
done
stamp done
