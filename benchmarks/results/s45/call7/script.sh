#!/usr/bin/env bash
# Session 45, call 7 (the device time left): a patch variant, not on main. Each record's release fence at GPU scope
# (fence.acq_rel.gpu) instead of system scope; the writer that completes a generation keeps its system-scope fence
# before it raises the buffer's ready flag, so by the fences' cumulativity the host still sees every record of the
# generation. Paired with the default on the breadth set's two slowest apps (pb_corr 10-11x and pb_gramschm 7-8x in
# calls 3 and 5: a few warps in long serial loops, each record's latency exposed) and on mergeSort; each app's
# records under the variant must equal the default's.
#   LIMIT=250 bash benchmarks/results/s45/call7/script.sh   (carry .whl, benchmarks/realapps/src, .../breadth-src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-250}
REPO=$PWD
left() { [ $(($(date +%s) - T0)) -lt $((LIMIT - $1)) ]; }
stamp "clean install, the variant, builds"
clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
mkdir -p /tmp/pv && cp collector/native/src/patch.cu /tmp/pv/patch.cu
python3 - <<'PY'
p = "/tmp/pv/patch.cu"
s = open(p).read()
old = "    release_fence_system();\n    commit(s, t, record_slots * slots);"
assert s.count(old) == 1
open(p, "w").write(s.replace(old, '    asm volatile("fence.acq_rel.gpu;" ::: "memory");\n    commit(s, t, record_slots * slots);'))
PY
nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch -O3 -gencode arch=compute_90,code=sm_90 \
  -I/usr/local/cuda/compute-sanitizer/include -I$REPO/collector/native/src -I$REPO/analyzer/engine/include \
  -o /tmp/pv/gpu_fence.fatbin /tmp/pv/patch.cu || exit 1
timeout 120 python3 benchmarks/realapps.py --manifest benchmarks/realapps/breadth.json --src benchmarks/realapps/breadth-src \
  --out /tmp/breadth --check-only --jobs 16 --apps pb_corr,pb_gramschm > /dev/null 2>&1
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --check-only --jobs 16 \
  --apps cs_mergeSort,cs_transpose > /dev/null 2>&1
VARIANT=REUSELENS_PATCH=/tmp/pv/gpu_fence.fatbin
for exe in /tmp/breadth/build/pb_corr /tmp/breadth/build/pb_gramschm /tmp/rl/build/cs_mergeSort /tmp/rl/build/cs_transpose; do
  app=$(basename $exe)
  left 45 || break
  cd $(dirname $exe)
  args=""; [ $app = cs_transpose ] && args="-dimX=256 -dimY=256"
  stamp "fence scope: $app, 2 rounds"
  timeout $((LIMIT - $(date +%s) + T0 - 10)) python3 $REPO/benchmarks/teardown.py --rounds 2 --reuselens $clean \
    --timeout 60 --json $OUT/fence_$app.json --modes "native,collect,collect:$VARIANT" -- ./$app $args 2>&1 | tail -3
  for v in default variant; do
    rm -rf /tmp/fr_$v
    if [ $v = variant ]; then envs="$VARIANT"; else envs="REUSELENS_UNUSED=1"; fi
    env $envs timeout 60 $clean profile --no-analyze --run-dir /tmp/fr_$v -- ./$app $args > /dev/null 2>&1
    python3 -c "import json; r=json.load(open('/tmp/fr_$v/run.json')); print('  $v', r['status'], r['errors'][:2], r['collector']['patch'].split('/')[-1], sum(x.get('records') or 0 for x in r['launches']), 'records', [x.get('records') for x in r['launches']][:5])"
  done
  cd $REPO
done
stamp done
