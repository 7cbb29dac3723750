#!/usr/bin/env bash
# Session 16, call 2: where a short app's traced collect spends its time (collector.log per launch and at exit),
# with and without the online engine; the interpreter's start-up in the image.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "interpreter"
which python3; python3 -c "import sys; print(sys.version, sys.prefix, sys.path)"
for i in 1 2 3; do /usr/bin/time -f "%e s bare" python3 -c pass; /usr/bin/time -f "%e s -S" python3 -S -c pass; /usr/bin/time -f "%e s -I" python3 -I -c pass; done
python3 -X importtime -c pass 2>&1 | sort -t'|' -k2 -n | tail -8
ls $(python3 -c "import site;print(' '.join(site.getsitepackages()))") 2>/dev/null | grep "\.pth$"
stamp build
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_matrixMul,pb_lu,shoc_sort,shoc_bfs,pb_fdtd2d 2>&1 | tail -8
mkdir -p $OUT/logs
for name in cs_matrixMul pb_lu shoc_sort shoc_bfs pb_fdtd2d; do
  args=$(python3 -c "import json;print(' '.join(next(a for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name']=='$name')['args']))")
  cd /tmp/rv/build
  for i in 1 2; do /usr/bin/time -f "$name native %e s" ./$name $args > /dev/null 2>/tmp/t; tail -1 /tmp/t; done
  /usr/bin/time -f "$name collect %e s" timeout 60 reuselens profile --no-analyze --run-dir /tmp/c_$name -- ./$name $args > /dev/null 2>/tmp/t; tail -1 /tmp/t
  REUSELENS_ONLINE_ANALYSIS=0 /usr/bin/time -f "$name collect-noengine %e s" timeout 60 reuselens profile --no-analyze --run-dir /tmp/n_$name -- ./$name $args > /dev/null 2>/tmp/t; tail -1 /tmp/t
  /usr/bin/time -f "$name objects %e s" timeout 60 reuselens profile --object-level --no-analyze --run-dir /tmp/o_$name -- ./$name $args > /dev/null 2>/tmp/t; tail -1 /tmp/t
  cp /tmp/c_$name/collector.log $OUT/logs/$name.collect.log; cp /tmp/n_$name/collector.log $OUT/logs/$name.noengine.log; cp /tmp/o_$name/collector.log $OUT/logs/$name.objects.log
  cd - > /dev/null
done
stamp done
