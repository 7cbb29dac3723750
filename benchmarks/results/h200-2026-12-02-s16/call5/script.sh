#!/usr/bin/env bash
# Session 16, call 5: the engine's direct window over two shadow pages (records of allocations that are not
# 1 KiB-aligned) on the GPU: collector + value GPU tests (online = replay), and paired against 5a81b85.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: collector + values"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -3
stamp "build 5a81b85"
timeout 240 bash benchmarks/build_revision.sh 5a81b85 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/B collect"
timeout 300 python3 benchmarks/ab_collector.py --a before=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b window=installed --apps pb_fdtd2d,shoc_bfs,cs_transpose,pb_lu,shoc_sort,cs_matrixMul,shoc_bfs_uiuc,cs_reduction --rounds 3 --mode collect --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | grep -v "^round\|^build" | tail -14
stamp "allocations not 1 KiB-aligned, per app"
for d in /tmp/ab/runs/*/; do :; done
python3 - <<'PY'
import json, glob, os
seen = {}
for run in sorted(glob.glob('/tmp/ab/**/run.json', recursive=True)):
    app = run.split('/')[-2]
    try: r = json.load(open(run))
    except Exception: continue
    al = [a for a in r.get('allocations', []) if a.get('size')]
    mis = [a for a in al if a['address'] % 1024]
    key = app.split('_')[0] if False else app
    seen[key] = (len(al), len(mis), sum(a['size'] for a in mis))
for k, v in sorted(seen.items())[:40]: print(k, 'allocations', v[0], 'not 1 KiB-aligned', v[1], 'bytes', v[2])
PY
stamp done
