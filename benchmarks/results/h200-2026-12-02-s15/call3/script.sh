#!/usr/bin/env bash
# Session 15, call 3: the LU fix measured, the value cost over the suite on the final engine (approximate counts on),
# and the value findings of the apps (shares incl. approximate; shared silent stores against the block's data).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
stamp "lu fix"
timeout 150 python3 benchmarks/value_fixes.py --src benchmarks/realapps/src --out /tmp/vf --fixes lu_guard_silent_store --rounds 3 --timeout 120 2>&1 | tee $OUT/value_fixes_lu.txt
cp /tmp/vf/value_fixes.json $OUT/value_fixes_lu.json 2>/dev/null
stamp "suite: collect vs values"
timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,values --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -16
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
stamp "value reports"
mkdir -p /tmp/vrep
for name in cs_matrixMul cs_transpose cs_reduction pb_lu pb_fdtd2d shoc_bfs shoc_bfs_uiuc shoc_sort; do
  args=$(python3 -c "import json;print(' '.join(next(a for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name']=='$name')['args']))")
  (cd /tmp/rv/build && timeout 60 reuselens profile --values --run-dir /tmp/vrep/$name -- ./$name $args > /tmp/vrep/$name.log 2>&1) || { echo "FAIL $name"; tail -3 /tmp/vrep/$name.log; }
  grep -h "^values:" /tmp/vrep/$name.log | sed "s/^/$name /"
done
tar czf $OUT/value_reports.tgz -C /tmp/vrep --exclude='traces' --exclude='modules' .
stamp done
