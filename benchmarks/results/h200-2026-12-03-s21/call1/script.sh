#!/usr/bin/env bash
# Session 21, call 1: where the object-level mode's time goes now (issue 18's last gap, median <= 1.3x), on the
# whole twelve-app suite, and save -> diagnostics on two apps with findings (issue 14; session 20's call 5).
# 1. object_level_cost.py, 2 rounds, twelve apps: native / attached (nothing instrumented) / injected by hand /
#    launcher --no-analyze / profile --object-level, and the collector's own object-level times (collector.log).
# 2. The interpreter's share: bare start, -S, -I, the CLI's imports, and -X importtime of a profile of /bin/true.
# 3. launcher_phases.py on pb_lu and cs_reduction (3 rounds each).
# 4. lsp_save.py on cs_transpose 0:150 and shoc_sort 0:8.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s21/call1/script.sh
source benchmarks/device_call.sh
for pair in attrs:attrs cattrs:cattrs lsprotocol:lsprotocol pygls:pygls typing_extensions:typing_extensions \
    packaging:packaging pytest_asyncio:pytest_asyncio pytest_lsp:pytest_lsp watchdog:watchdog; do
  python3 -c "import ${pair%%:*}" 2> /dev/null || python3 -m pip install -q --no-index --no-deps .whl-lsp/${pair#*:}-*.whl
done
stamp "object-level cost, twelve apps, 2 rounds"
timeout 260 python3 benchmarks/object_level_cost.py --src benchmarks/realapps/src --out /tmp/olc --rounds 2 --jobs 16 --json $OUT/olc.json 2>&1 | grep -v "^round \|^build " | tail -30
for d in /tmp/olc/runs/*-injected; do echo "$(basename $d): $(grep 'exit: object-level' $d/collector.log | cut -c1-240)"; done
grep -h "^\[" /tmp/olc/runs/pb_lu-injected/collector.log | head -12
stamp "interpreter and imports (median of 15, ms)"
python3 - <<'EOF'
import statistics, subprocess, sys, time
for label, cmd in [("bare", ["-c", "pass"]), ("-S", ["-S", "-c", "pass"]), ("-I", ["-I", "-c", "pass"]),
                   ("cli.main", ["-c", "import reuselens.cli.main"]),
                   ("profile path", ["-c", "import reuselens.cli.main, reuselens.cli.profile, reuselens.collector.launcher"])]:
    ts = []
    for _ in range(15):
        t = time.perf_counter(); subprocess.run([sys.executable, *cmd]); ts.append(time.perf_counter() - t)
    print(f"{statistics.median(ts) * 1000:7.1f} ms  {label}")
EOF
python3 -X importtime -m reuselens profile --object-level --no-analyze --run-dir /tmp/it -- /bin/true 2> $OUT/importtime.txt > /dev/null
sort -t'|' -k2 -n $OUT/importtime.txt | tail -15
stamp "launcher phases, pb_lu and cs_reduction"
(cd /tmp/olc/build && timeout 60 python3 $OLDPWD/benchmarks/launcher_phases.py --rounds 3 -- ./pb_lu 2>&1 | grep -v "^run written")
(cd /tmp/olc/build && timeout 60 python3 $OLDPWD/benchmarks/launcher_phases.py --rounds 3 -- ./cs_reduction --n=1048576 2>&1 | grep -v "^run written")
for spec in cs_transpose:0:150 shoc_sort:0:8; do
  app=${spec%%:*}
  stamp "save -> diagnostics, $app launches ${spec#*:}"
  timeout 80 python3 benchmarks/lsp_save.py --src benchmarks/realapps/src --build /tmp/olc/build --app $app --launch-range ${spec#*:} --rounds 2 --json $OUT/lsp_save_$app.json 2>&1 | tail -4
done
stamp done
