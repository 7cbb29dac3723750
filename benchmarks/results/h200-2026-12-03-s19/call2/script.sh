#!/usr/bin/env bash
# Session 19, call 2. (1) The SASS forms of the recorded fixtures' 16-byte LDGSTS, with nvdisasm, written beside
# each run (ldgsts_forms.json) so that CI derives their shared load instructions; the fidelity tables again with
# the form rule. (2) The short apps' collect time against the engine's worker count and the queue's copy threads
# (16 cores: 12 workers + 4 copy threads + the drain thread + the app's own). (3) Traces of a few launches of
# pb_fdtd2d and cs_transpose, for profiling the engine on the development machine. Run from the
# repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s19/call2/script.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f $OUT/pip_build.txt
stamp "LDGSTS forms of the fixtures; fidelity tables with the form rule"
mkdir -p $OUT/forms
for r in microbench async_copies zero_fill; do
  timeout 60 python3 benchmarks/fidelity.py --runs tests/data/runs/$r --ncu-csv tests/data/runs/$r/ncu.csv 2>&1 | grep -v " ok$" | tail -8
  cp tests/data/runs/$r/ldgsts_forms.json $OUT/forms/$r.json 2>/dev/null || echo "$r: no forms file"
done
mkdir -p /tmp/mb && nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/mb/microbench tests/gpu/microbench.cu 2>/dev/null && cuobjdump -sass /tmp/mb/microbench | grep -E "LDGSTS" | head -8
timeout 100 python3 -m pytest -q tests/collector/test_zero_fill.py tests/collector/test_fixtures.py tests/collector/test_async_copies.py 2>&1 | tail -3
stamp "build the apps"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps cs_transpose,pb_fdtd2d,shoc_bfs,pb_lu > /dev/null 2>&1; ls /tmp/rv/build | head -20
stamp "collect seconds by engine workers / copy threads, 3 rounds each, interleaved"
cd /tmp/rv/build
run() { # name config-label env... -- args
  local name=$1 label=$2; shift 2; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0=$(date +%s.%N); env "${envs[@]}" timeout 60 reuselens profile --no-analyze --run-dir /tmp/k_$name -- ./$name "$@" > /dev/null 2>&1
  echo "$name $label $(awk "BEGIN{print $(date +%s.%N) - $t0}")"
}
for round in 1 2 3; do
  for spec in "cs_transpose -dimX=256 -dimY=256" "pb_fdtd2d" "shoc_bfs -s 4 --passes 1" "pb_lu"; do
    set -- $spec; name=$1; shift
    t0=$(date +%s.%N); ./$name "$@" > /dev/null 2>&1; echo "$name native $(awk "BEGIN{print $(date +%s.%N) - $t0}")"
    run $name w12c4 X=1 -- "$@"
    run $name w10c4 REUSELENS_ENGINE_WORKERS=10 -- "$@"
    run $name w14c2 REUSELENS_ENGINE_WORKERS=14 REUSELENS_QUEUE_COPY_THREADS=2 -- "$@"
    run $name w12c2 REUSELENS_QUEUE_COPY_THREADS=2 -- "$@"
    run $name w8c4 REUSELENS_ENGINE_WORKERS=8 -- "$@"
  done
done 2>&1 | tee /tmp/knobs.txt
python3 - <<'PY'
import collections, statistics
t = collections.defaultdict(list)
for line in open("/tmp/knobs.txt"):
    name, label, s = line.split()
    t[name, label].append(float(s))
for (name, label), v in sorted(t.items()):
    print(f"{name:14} {label:7} median {statistics.median(v):.3f} s  {' '.join(f'{x:.3f}' for x in v)}")
PY
grep "exit:" /tmp/k_pb_fdtd2d/collector.log | cut -c1-300
cd - > /dev/null
stamp "traces of a few launches for the development machine"
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 100:103 --run-dir /tmp/tr_fdtd -- ./pb_fdtd2d > /dev/null 2>&1)
(cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range 100:102 --run-dir /tmp/tr_transpose -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1)
for r in tr_fdtd tr_transpose; do python3 -c "
import json;m=json.load(open('/tmp/$r/run.json'));print('$r', [(l['id'], l['kernel'][:40], l.get('records')) for l in m['launches'] if l.get('instrumented')])"; done
for r in tr_fdtd tr_transpose; do
  (cd /tmp && tar cf /tmp/$r.tar $r) && python3 -c "import zstandard; open('$OUT/$r.tar.zst','wb').write(zstandard.ZstdCompressor(level=10, threads=8).compress(open('/tmp/$r.tar','rb').read()))"
done; ls -la $OUT/*.zst
stamp done
