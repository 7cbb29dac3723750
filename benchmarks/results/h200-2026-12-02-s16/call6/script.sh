#!/usr/bin/env bash
# Session 16, call 6: shared words in closed form + the direct window, on the GPU (GPU tests: online = replay),
# paired against 5a81b85; engine workers niced (REUSELENS_ENGINE_NICE 0 / 10, interleaved); the suite's full
# profile figures on the final code; the host's CPU topology.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
lscpu | grep -E "^CPU\(s\)|Thread|Core|Socket|Model name|NUMA node\(s\)"
stamp "gpu tests: collector + values"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "build 5a81b85"
timeout 200 bash benchmarks/build_revision.sh 5a81b85 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/B collect"
timeout 200 python3 benchmarks/ab_collector.py --a before=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b engine=installed --apps pb_fdtd2d,cs_matrixMul,cs_transpose,shoc_sort,shoc_bfs,pb_lu,cs_reduction,shoc_bfs_uiuc --rounds 2 --mode collect --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | grep -v "^round\|^build" | tail -12
stamp "nice sweep"
for round in 1 2 3; do
  for name in cs_matrixMul pb_lu shoc_sort pb_fdtd2d cs_transpose shoc_bfs; do
    args=$(python3 -c "import json;print(' '.join(next(a for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name']=='$name')['args']))")
    for nice in 0 10; do
      [ $(( round % 2 )) = 0 ] && nice=$(( 10 - nice ))
      s=$(date +%s.%N); (cd /tmp/ab/build && REUSELENS_ENGINE_NICE=$nice timeout 60 reuselens profile --no-analyze --run-dir /tmp/n_${name} -- ./$name $args > /dev/null 2>&1); e=$(date +%s.%N)
      echo "nice $round $name $nice $(python3 -c "print(f'{$e-$s:.3f}')") s"
      rm -rf /tmp/n_${name}
    done
  done
done
stamp "suite: native, collect, full"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -14
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
stamp done
