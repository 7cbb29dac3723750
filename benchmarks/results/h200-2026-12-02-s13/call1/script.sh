#!/usr/bin/env bash
# Session 13, call 1: session 12's engine changes on the GPU host (tests, gemm engine bench), the suite traced.
set -uo pipefail
export PYTHONUNBUFFERED=1
O=$OUT/s; mkdir -p $O
exec > >(tee "$O/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > $O/setup.txt 2>&1 || { cat $O/setup.txt; exit 1; }
git log --oneline -1
stamp "gpu tests"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/memory/test_memory_gpu.py 2>&1 | tail -15
stamp "engine gemm"
timeout 80 python3 benchmarks/engine.py --pattern gemm --workers 1,4,12 --repeat 3 2>&1 | tail -20 | tee $O/engine_gemm.txt
stamp "realapps traced"
timeout 330 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 2 --modes native,collect,full --jobs 16 2>&1 | tail -40
cp /tmp/ra/realapps.json $O/ 2>/dev/null
mkdir -p $O/logs; for a in /tmp/ra/runs/r1/*-full; do n=$(basename $a); cp $a/collector.log $O/logs/$n.collector.log 2>/dev/null; done
ls /tmp/ra/runs/r1 2>/dev/null | head -40; du -sh /tmp/ra/runs/r1/* 2>/dev/null
stamp done
tar czf $OUT/res.tgz -C $O .
