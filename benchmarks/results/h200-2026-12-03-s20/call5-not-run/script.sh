#!/usr/bin/env bash
# Session 20, call 5: save -> diagnostics on two suite apps that have findings, each kept under 1 M records by a
# launch range (call 4's cs_matrixMul has none, so its publishes only cleared the file), with the same code as
# call 4 but for the
# language server's start-up, whose imports now run with the cyclic garbage collector off: the server on those two
# runs' reports (lsp_realapps.py), and the CPU seconds of importing the server with the collector on and off.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call5-not-run/script.sh
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
for spec in cs_transpose:0:150 shoc_sort:0:8; do
  app=${spec%%:*}
  stamp "save -> diagnostics, $app launches ${spec#*:}"
  timeout 80 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/rv/build --app $app --launch-range ${spec#*:} --rounds 2 --json $OUT/lsp_save_$app.json 2>&1 | tail -4
done
stamp "language server on the two runs' reports"
mkdir -p /tmp/lr && for d in /tmp/reuselens-lsp-save-*/run; do ln -sfn "$d" /tmp/lr/$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['command'][0].split('/')[-1])" "$d/run.json"); done
timeout 60 python3 benchmarks/lsp_realapps.py --runs /tmp/lr 2>&1 | tail -3
stamp "CPU seconds to import the server, collector on / off, alternating"
for i in 1 2 3; do for mode in on off; do python3 -c "
import gc, resource, sys
if sys.argv[1] == 'off': gc.disable()
r0 = resource.getrusage(resource.RUSAGE_SELF)
import reuselens.lsp_server.app
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(sys.argv[1], round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 3))" $mode; done; done | sort | awk '{a[$1] = a[$1] " " $2} END {for (k in a) print k, a[k]}'
stamp done
