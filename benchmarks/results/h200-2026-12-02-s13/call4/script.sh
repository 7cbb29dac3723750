#!/usr/bin/env bash
# Session 13, call 4 (last device minutes): the final code's GPU tests and collector.log format first, then this
# session's collector against 20e50fa, paired (benchmarks/ab_collector.py), as far as the time allows. Outputs go
# straight to $OUT so that a run cut short still brings back what it did.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -20 /tmp/setup.txt; exit 1; }
git log --oneline -1
stamp "gpu tests (final code)"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py 2>&1 | tail -1
stamp "collector.log format (final code)"
timeout 40 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/lf --rounds 1 --modes collect --jobs 16 --apps cs_matrixMul,pb_fdtd2d 2>&1 | grep "^round"
L=/tmp/lf/runs/r0/cs_matrixMul-collect/collector.log; grep -c "" $L; grep "exit:" $L | head -3 | cut -c1-200; grep -h "exit: engine: engine steps" /tmp/lf/runs/r0/*/collector.log | cut -c1-300
grep -A2 "launch 5:" /tmp/lf/runs/r0/pb_fdtd2d-collect/collector.log | cut -c1-160
gzip -c $L > $OUT/cs_matrixMul-collector.log.gz
stamp "old build (20e50fa)"
OLD_LIB=$(timeout 90 bash benchmarks/build_revision.sh 20e50fa /tmp/oldpkg 2> /tmp/old_build.txt | head -1)
echo "old: $OLD_LIB"; [ -n "$OLD_LIB" ] || { tail -5 /tmp/old_build.txt; exit 1; }
stamp "A/B"
timeout 120 python3 benchmarks/ab_collector.py --a old=$OLD_LIB --b new=installed --apps shoc_bfs,pb_gemm --rounds 3 --out /tmp/ab --build /tmp/lf/build --timeout 60 2>&1 | tee $OUT/ab.txt | tail -6
cp /tmp/ab/ab_collector.json $OUT/ 2>/dev/null
stamp done
