#!/usr/bin/env bash
# Session 54, call 6: issue 14's editor target on the GPU host, last measured in session 21: save -> diagnostics on
# cuda-samples matrixMul's first 80 launches (0.96 M records), three saves (benchmarks/lsp_save.py), with the final
# analysis; and the language server's start and import cost there.
#   bash benchmarks/results/s54/call6/script.sh   (carry .whl, .whl-lsp, benchmarks/realapps/src)
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
stamp "import lsp_server.server, three times"
for i in 1 2 3; do python3 -X importtime -c "import reuselens.lsp_server.server" 2>&1 | tail -1; done
stamp "build cs_matrixMul"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ls --rounds 1 --modes native \
  --apps cs_matrixMul > "$OUT/native.txt" 2>&1 || tail -5 "$OUT/native.txt"
stamp "save -> diagnostics, cs_matrixMul launches 0-79, 3 saves"
timeout 150 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/ls/build --app cs_matrixMul \
  --launch-range 0:80 --rounds 3 --json "$OUT/lsp_save.json" > "$OUT/lsp_save.txt" 2>&1
tail -8 "$OUT/lsp_save.txt"
stamp done
