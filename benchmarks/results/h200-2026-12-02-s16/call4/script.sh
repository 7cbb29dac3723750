#!/usr/bin/env bash
# Session 16, call 4: real traces of three suite apps (a launch range each), the engine replayed on them on this
# host at 1 / 4 / 12 workers (benchmarks/replay_speed.py), and the traces brought back compressed for profiling.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp build
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_matrixMul,pb_fdtd2d,shoc_bfs > /dev/null 2>&1
for spec in pb_fdtd2d:0:9 cs_matrixMul:0:30 shoc_bfs:0:6; do
  IFS=: read name a b <<< "$spec"
  args=$(python3 -c "import json;print(' '.join(next(x for x in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if x['name']=='$name')['args']))")
  stamp "trace $name $a:$b"
  (cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range $a:$b --run-dir /tmp/t_$name -- ./$name $args > /dev/null 2>&1)
  du -sh /tmp/t_$name/traces
  timeout 200 python3 benchmarks/replay_speed.py /tmp/t_$name --workers 1,4,12 --repeat 2
  rm -rf /tmp/t_$name/modules/*.cubin 2>/dev/null
  tar cf - -C /tmp t_$name | python3 -c "import sys,zstandard;sys.stdout.buffer.write(zstandard.ZstdCompressor(level=10,threads=8).compress(sys.stdin.buffer.read()))" > $OUT/t_$name.tar.zst
  ls -la $OUT/t_$name.tar.zst
done
stamp done
