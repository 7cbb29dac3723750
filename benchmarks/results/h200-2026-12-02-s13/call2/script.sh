#!/usr/bin/env bash
# Session 13, call 2: block owners round robin + broadcast records (engine), the engine's step split at exit.
set -uo pipefail
export PYTHONUNBUFFERED=1
O=$OUT/s; mkdir -p $O/logs
exec > >(tee "$O/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > $O/setup.txt 2>&1 || { cat $O/setup.txt; exit 1; }
stamp "gpu tests"
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py 2>&1 | tail -4
stamp "engine matvec + gemm"
timeout 60 python3 benchmarks/engine.py --pattern matvec --workers 1,4,12 --repeat 3 > $O/engine_matvec.txt 2>&1; grep "workers\|trace" $O/engine_matvec.txt
timeout 60 python3 benchmarks/engine.py --pattern gemm --workers 1,4,12 --repeat 3 > $O/engine_gemm.txt 2>&1; grep "workers\|trace" $O/engine_gemm.txt
stamp "realapps collect, big apps"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rb --rounds 1 --modes native,collect --jobs 16 --apps pb_mvt,pb_gemm,cs_mergeSort,cs_sortingNetworks,pb_fdtd2d,cs_matrixMul,shoc_bfs > $O/realapps_big.txt 2>&1; tail -12 $O/realapps_big.txt
for a in /tmp/rb/runs/r0/*-collect; do cp $a/collector.log $O/logs/$(basename $a).log 2>/dev/null; done
grep -h "engine steps" $O/logs/*.log | sed 's/.*engine steps/engine steps/' | head -10
stamp "pytorch 40"
timeout 170 python3 benchmarks/pytorch_overhead.py --out /tmp/pt --steps 40 --rounds 1 --modes native,collect > $O/pytorch.txt 2>&1; tail -4 $O/pytorch.txt
cp /tmp/pt/runs/r0-collect/collector.log $O/pytorch40_collector.log 2>/dev/null; ls /tmp/pt/runs | head
grep "exit:" $O/pytorch40_collector.log | cut -c1-200; grep -o "engine steps.*" $O/pytorch40_collector.log
stamp "realapps full, all apps"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rc --rounds 1 --modes native,full --jobs 16 --apps cs_transpose,cs_reduction,pb_lu,shoc_bfs_uiuc,shoc_sort,pb_fdtd2d,cs_matrixMul,shoc_bfs > $O/realapps_full.txt 2>&1; tail -14 $O/realapps_full.txt
stamp done
tar czf $OUT/res.tgz -C $O .
