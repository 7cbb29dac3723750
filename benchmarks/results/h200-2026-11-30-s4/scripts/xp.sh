#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD; export PYTHONPATH=$ROOT:/tmp/site
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
(cmake -S collector/native -B build/xp -DCMAKE_BUILD_TYPE=Release >/tmp/c1.txt 2>&1 && cmake --build build/xp -j16 >/tmp/b1.txt 2>&1) || tail -20 /tmp/c1.txt /tmp/b1.txt
[ -x build/gpu/apps ] || make -C tests/gpu BUILD="$ROOT/build/gpu" -j16 >/tmp/make.txt 2>&1 || tail -20 /tmp/make.txt
export REUSELENS_COLLECTOR_LIB=$ROOT/build/xp/libreuselens_collector.so
rm -rf /tmp/xp_*
v() { local name=$1; shift
  env "$@" timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps vecadd_1M,matmul_256,stencil_20 --repeat 3 --work /tmp/xp_$name --json "$OUT/xp_$name.json" >/dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/xp_$name.json')); print('$name'.ljust(12), '  '.join('%s %6.1f ms %.3f s'%(a['app'][:6],a['profiled_kernel_ms'],a['profiled_wall_s']) for a in d['apps']))"; }
for r in 1 2; do
v base_$r
v noprefault_$r XP_NO_PREFAULT=1
v ahead16_$r XP_AHEAD_MIB=16
v ahead32_$r XP_AHEAD_MIB=32
v ahead4_$r XP_AHEAD_MIB=4
done
