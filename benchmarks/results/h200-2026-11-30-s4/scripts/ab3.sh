#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD; export PYTHONPATH=$ROOT:/tmp/site
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
(cmake -S collector/native -B build/dev-branch -DCMAKE_BUILD_TYPE=Release >/tmp/c1.txt 2>&1 && cmake --build build/dev-branch -j16 >/tmp/b1.txt 2>&1) || tail -20 /tmp/c1.txt /tmp/b1.txt
make -C tests/gpu BUILD="$ROOT/build/gpu" -j16 >/tmp/make.txt 2>&1 || tail -20 /tmp/make.txt
rm -rf /tmp/ovh3_*
APPS=vecadd_1M,matmul_256,stencil_20
B=build/dev-branch/libreuselens_collector.so
ovh() { local name=$1; shift; echo "== $name $*"
  env "$@" REUSELENS_COLLECTOR_LIB=$ROOT/$B timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps $APPS --repeat 2 --work /tmp/ovh3_$name --json "$OUT/ab3_$name.json" >/dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/ab3_$name.json')); print('  '.join('%s %.1f'%(a['app'][:6],a['profiled_kernel_ms']) for a in d['apps']))"
  grep -rh 'drain thread' /tmp/ovh3_$name | grep -E ' 856064 records' | head -2 | cut -c13-; }
for r in 1 2; do
ovh w8_$r
ovh w1_$r REUSELENS_ENGINE_WORKERS=1
ovh w4_$r REUSELENS_ENGINE_WORKERS=4
ovh off_$r REUSELENS_ONLINE_ANALYSIS=0
done
grep -h 'copy threads' -r /tmp/ovh3_w8_1 | head -1
