#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
BUDGET_S=240 bash tests/gpu/run_on_device.sh quick > /tmp/quick.txt 2>&1; echo "quick rc $?"
cp /tmp/quick.txt "$OUT/quick_log.txt"
grep -E '^== |->|mismatch|median|FAIL|rror' /tmp/quick.txt | tail -32
export PYTHONPATH=$ROOT:/tmp/site
stamp "engine module"
rm -f analyzer/_engine*.so
mkdir -p /tmp/eb && printf 'cmake_minimum_required(VERSION 3.18)\nproject(eb LANGUAGES CXX)\nset(SKBUILD ON)\nadd_subdirectory(%s/analyzer/engine engine)\n' "$ROOT" > /tmp/eb/CMakeLists.txt
(cmake -S /tmp/eb -B /tmp/eb/build -DCMAKE_BUILD_TYPE=Release -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) > /tmp/eb.txt 2>&1 && cmake --build /tmp/eb/build -j16 >> /tmp/eb.txt 2>&1) || tail -30 /tmp/eb.txt
cp $(find /tmp/eb/build -name '_engine*.so' | head -1) analyzer/
stamp "GPU pytest"
REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so timeout 200 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/collector/test_gpu.py tests/gpu/patterns tests/patterns/test_pattern_suite.py tests/engine > "$OUT/gpu_pytest.txt" 2>&1
echo "pytest rc $?"; tail -2 "$OUT/gpu_pytest.txt"
stamp "A/B: main (8c742f5) vs final, same call"
(cmake -S scratch/main/collector/native -B build/dev-main -DCMAKE_BUILD_TYPE=Release >/tmp/c2.txt 2>&1 && cmake --build build/dev-main -j16 >/tmp/b2.txt 2>&1) || tail -30 /tmp/c2.txt /tmp/b2.txt
v() { local name=$1 lib=$2; shift 2
  env "$@" REUSELENS_COLLECTOR_LIB=$ROOT/$lib timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps vecadd_1M,matmul_256,stencil_20 --repeat 3 --work /tmp/fin_$name --json "$OUT/final_ab_$name.json" >/dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/final_ab_$name.json')); print('$name'.ljust(10), '  '.join('%s %6.1f ms %.3f s'%(a['app'][:6],a['profiled_kernel_ms'],a['profiled_wall_s']) for a in d['apps']))"; }
for r in 1 2; do
v main_$r build/dev-main/libreuselens_collector.so
v final_$r build/device/libreuselens_collector.so
v off_$r build/device/libreuselens_collector.so REUSELENS_ONLINE_ANALYSIS=0
done
stamp done
