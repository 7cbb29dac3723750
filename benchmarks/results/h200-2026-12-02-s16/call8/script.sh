#!/usr/bin/env bash
# Session 16, call 8: an A/A pairing. The installed package is built from 5a81b85's analyzer/ and collector/ (the
# same code as the revision built beside it by build_revision.sh), so any ratio away from 1 is the position (an
# installed build against one loaded from another folder) or drift, not code.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
git checkout -q 5a81b85 -- analyzer collector
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git status --short | head -5
stamp "build 5a81b85"
timeout 200 bash benchmarks/build_revision.sh 5a81b85 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; exit 1; }
stamp "A/A collect"
timeout 240 python3 benchmarks/ab_collector.py --a folder=$(find /tmp/old -name libreuselens_collector.so | head -1) \
  --b installed=installed --apps pb_lu,cs_reduction,shoc_bfs_uiuc,cs_transpose,cs_matrixMul --rounds 3 --mode collect --out /tmp/ab \
  --src benchmarks/realapps/src 2>&1 | grep -v "^round\|^build" | tail -10
stamp done
