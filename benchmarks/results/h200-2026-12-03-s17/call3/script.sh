#!/usr/bin/env bash
# Session 17, call 3: the engine's edge table (256 direct-mapped slots kept through the launch) and the shared
# closed form for GEMM fragments (lanes sharing footprints in small groups), padded-tile columns in the window:
# GPU tests, replays of two cuBLAS GEMM launches old vs new at 1/4/12 workers, the PyTorch loop, the suite.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
git log --oneline -1
stamp "gpu tests: collector + values"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py tests/collector/test_gpu_values.py 2>&1 | tail -3
stamp "build 91c9677"
timeout 200 bash benchmarks/build_revision.sh 91c9677 /tmp/old > /tmp/old.txt 2>&1 || { tail -20 /tmp/old.txt; }
OLD=$(find /tmp/old -name "_engine*.so" | head -1); echo "old engine: $OLD"
stamp "build HEAD without the lane prefetch (B) and also without the block table (A)"
for v in A B; do
  mkdir -p /tmp/src$v && tar cf - pyproject.toml CMakeLists.txt README.md LICENSE analyzer collector reuselens lsp_server docs | tar xf - -C /tmp/src$v
  (cd /tmp/src$v && git apply -R $OLDPWD/benchmarks/.s17pf.patch && { [ $v = B ] || git apply -R $OLDPWD/benchmarks/.s17bt.patch; }) || echo "patch $v failed"
  timeout 200 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/var$v /tmp/src$v > /tmp/var$v.txt 2>&1 || tail -5 /tmp/var$v.txt
done
A=$(find /tmp/varA -name "_engine*.so" | head -1); B=$(find /tmp/varB -name "_engine*.so" | head -1); echo "A: $A B: $B"
stamp "trace pytorch launch 28; 12 independent one-worker engines against one 12-worker engine"
timeout 60 reuselens profile --no-analyze --traces --launch-range 28:29 --run-dir /tmp/tg28 -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
timeout 60 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1,12 --repeat 5 2>&1 | tail -4
for i in $(seq 12); do timeout 120 python3 benchmarks/replay_speed.py /tmp/tg28 --workers 1 --repeat 5 > /tmp/ind$i.txt 2>&1 & done; wait
grep -h "workers  1" /tmp/ind*.txt | awk '{s+=$5; n++} END {printf "12 independent one-worker engines: %d runs, sum %.2f M records/s\n", n, s}'
rm -rf /tmp/tg28
for L in 19 32; do
  stamp "trace pytorch launch $L"
  timeout 60 reuselens profile --no-analyze --traces --launch-range $L:$((L+1)) --run-dir /tmp/tg$L -- python3 benchmarks/pytorch_memory_step.py 2 > /dev/null 2>&1
  timeout 150 python3 benchmarks/replay_speed.py /tmp/tg$L --workers 1,12 --repeat 2 --engine $OLD,$A,$B,installed 2>&1 | tail -17
  rm -rf /tmp/tg$L
done
stamp "pytorch 40, native + collect"
timeout 150 python3 benchmarks/pytorch_overhead.py --out /tmp/pt --steps 40 --rounds 1 --modes native,collect --timeout 110 > $OUT/pytorch.txt 2>&1; tail -4 $OUT/pytorch.txt
grep "exit:" /tmp/pt/runs/r0-collect/collector.log 2>/dev/null | grep "engine steps" | cut -c1-300
stamp "suite: native, collect, full"
timeout 200 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,full --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps.txt | grep -v "^build\|^round" | tail -14
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
for spec in pb_fdtd2d:0:9 cs_matrixMul:0:30 shoc_bfs:0:3 shoc_sort:0:12; do
  IFS=: read name a b <<< "$spec"
  args=$(python3 -c "import json;print(' '.join(next(x for x in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if x['name']=='$name')['args']))")
  stamp "trace $name $a:$b"
  (cd /tmp/rv/build && timeout 60 reuselens profile --no-analyze --traces --launch-range $a:$b --run-dir /tmp/t_$name -- ./$name $args > /dev/null 2>&1)
  rm -rf /tmp/t_$name/modules/*.cubin 2>/dev/null
  tar cf - -C /tmp t_$name | python3 -c "import sys,zstandard;sys.stdout.buffer.write(zstandard.ZstdCompressor(level=12,threads=8).compress(sys.stdin.buffer.read()))" > /tmp/t_$name.tar.zst
  ls -la /tmp/t_$name.tar.zst; [ $(stat -c %s /tmp/t_$name.tar.zst) -lt 16000000 ] && cp /tmp/t_$name.tar.zst $OUT/
done
rm -f $OUT/pip_build.txt
stamp done
