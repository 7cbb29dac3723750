#!/usr/bin/env bash
# Session 28, call 3: what an instrumented launch of a small grid costs on the GPU side. matrixMul (64x64: 4 blocks),
# transpose, LU, reduction and fdtd2d run natively, under the patch variants of benchmarks/patch_variants (floor:
# every callback returns; components_B: ticket 1, record writes 2, the leader's fence.acq_rel.sys 4, the commit 8),
# and under the real patch without the engine (REUSELENS_ONLINE_ANALYSIS=0) and with it, `profile --no-analyze`,
# 2 rounds interleaved; then each real-patch run's launch waits (kernel / last records).
#   bash benchmarks/results/h200-2026-12-04-s28/call3/script.sh
source benchmarks/device_call.sh
REPO=$PWD
APPS="cs_matrixMul cs_transpose pb_lu cs_reduction pb_fdtd2d"
stamp "build the variants and the apps"
timeout 120 bash benchmarks/patch_variants/build.sh /tmp/pv > /tmp/pv.txt 2>&1 || tail -5 /tmp/pv.txt
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 --modes native --jobs 16 --apps ${APPS// /,} > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
args() { python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('$REPO/benchmarks/realapps/manifest.json'))['apps'] if a['name'] == '$1')))"; }
wall() {  # wall NAME COMMAND... -> prints its wall seconds (NAME: a label, unused)
  shift; local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null 2>&1; t1=$(date +%s.%N); python3 -c "print(f'{$t1 - $t0:.3f}')"
}
stamp "runs"
cd /tmp/rb
for round in 1 2; do
  for app in $APPS; do
    A=$(args $app)
    line="$app r$round native $(wall x ./$app $A)"
    for v in floor components_1 components_3 components_7 components_15; do
      line="$line $v $(REUSELENS_PATCH=/tmp/pv/$v.fatbin wall x timeout 60 reuselens profile --no-analyze --run-dir /tmp/v_$app -- ./$app $A)"
    done
    line="$line no-engine $(REUSELENS_ONLINE_ANALYSIS=0 wall x timeout 60 reuselens profile --no-analyze --run-dir /tmp/ne_$app -- ./$app $A)"
    line="$line engine $(wall x timeout 60 reuselens profile --no-analyze --run-dir /tmp/e_$app -- ./$app $A)"
    echo "$line" | tee -a $OUT/walls.txt
  done
done
cd $REPO
stamp "launch waits, no engine then engine"
for app in $APPS; do python3 benchmarks/launch_waits.py /tmp/ne_$app /tmp/e_$app 2>&1 | tail -4; done | tee $OUT/launch_waits.txt
grep -m3 "launch 5:" /tmp/ne_cs_matrixMul/collector.log
stamp done
