#!/usr/bin/env bash
# Session 14, call 3: where the object-level collector's time goes inside the app (new exit line), per app.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -20 /tmp/setup.txt; exit 1; }
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --check-only 2>&1 | grep -v " ok " | tail -3
stamp "object-level runs"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 2 --modes native,objects --jobs 16 --keep-runs 2>&1 | tail -16
for f in /tmp/ra/runs/r1/*-objects/collector.log; do echo "$(basename $(dirname $f)): $(grep 'exit: object-level' $f | cut -c1-250)"; grep -c "patched" $f; done
grep -h "module.*\(loaded\|patched\)\|^\[ *[0-9.]*\] reuselens collector" /tmp/ra/runs/r1/pb_lu-objects/collector.log | head -6
tail -5 /tmp/ra/runs/r1/pb_lu-objects/collector.log | cut -c1-250
stamp done
