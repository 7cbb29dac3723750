#!/usr/bin/env bash
# Session 14, call 2: where the launcher's ~0.14 s (object-level profile --no-analyze minus the injected app) goes.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
REPO=$PWD
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -20 /tmp/setup.txt; exit 1; }
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --apps pb_lu,cs_transpose,shoc_bfs_uiuc --check-only 2>&1 | tail -3
ls /tmp/ra/build
stamp "interpreter"
which python3 reuselens; python3 -c "import sys; print(sys.version, sys.prefix)"
ls $(python3 -c "import site; print(site.getsitepackages()[0])")/*.pth
for i in 1 2 3 4 5; do /usr/bin/time -f "python -c pass %e s" python3 -c pass; done 2>&1
for i in 1 2 3; do /usr/bin/time -f "python -S -c pass %e s" python3 -S -c pass; done 2>&1
for i in 1 2 3; do /usr/bin/time -f "python -I -c pass %e s" python3 -I -c pass; done 2>&1
for i in 1 2 3; do /usr/bin/time -f "reuselens --help %e s" reuselens --help >/dev/null; done 2>&1
python3 -X importtime -c "import reuselens.cli.main, reuselens.cli.profile, reuselens.collector.launcher" 2> $OUT/importtime.txt
sort -t'|' -k2 -n -r $OUT/importtime.txt | head -25
stamp "phases"
cd /tmp/ra/build
for app in pb_lu cs_transpose; do
  echo "--- $app"
  A=""; [ $app = cs_transpose ] && A="-dimX=256 -dimY=256"
  timeout 100 python3 $REPO/benchmarks/launcher_phases.py --rounds 5 -- ./$app $A 2>&1 | tail -30
done
stamp done
