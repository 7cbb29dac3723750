#!/usr/bin/env bash
# Session 16, call 3: a traced launch's end in one round trip (9ac2262) on the GPU (collector tests incl. the
# faulting kernel), paired against 5a81b85; and how the engine's worker count trades against the app's own threads
# on short apps (collect, 4 / 8 / 12 workers, interleaved).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git log --oneline -1
stamp "gpu tests: collector"
echo "(collector GPU tests: 5 passed in the first try of this call)"
stamp "build 5a81b85"
timeout 240 bash benchmarks/build_revision.sh 5a81b85 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/B collect"
timeout 200 python3 benchmarks/ab_collector.py --a sync=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b onetrip=installed --apps pb_lu,cs_transpose,cs_matrixMul,pb_fdtd2d --rounds 3 --mode collect --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | tail -8
stamp "workers sweep"
cd /tmp/ab/build
for round in 1 2; do
  for name in cs_matrixMul pb_lu shoc_sort shoc_bfs pb_fdtd2d; do
    args=$(python3 -c "import json;print(' '.join(next(a for a in json.load(open('$OLDPWD/benchmarks/realapps/manifest.json'))['apps'] if a['name']=='$name')['args']))")
    for w in 4 8 12; do
      s=$(date +%s.%N); REUSELENS_ENGINE_WORKERS=$w timeout 60 reuselens profile --no-analyze --run-dir /tmp/w_${name}_$w -- ./$name $args > /dev/null 2>&1; e=$(date +%s.%N)
      echo "sweep $round $name workers $w $(python3 -c "print(f'{$e-$s:.3f}')") s $(grep -o 'consume wall [0-9.]* s' /tmp/w_${name}_$w/collector.log)"
      rm -rf /tmp/w_${name}_$w
    done
  done
done
stamp done
