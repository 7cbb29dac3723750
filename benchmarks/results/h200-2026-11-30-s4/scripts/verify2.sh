#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD
export PYTHONPATH=$ROOT:/tmp/site
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp "engine module"
mkdir -p /tmp/eb && cat > /tmp/eb/CMakeLists.txt <<EOC
cmake_minimum_required(VERSION 3.18)
project(eb LANGUAGES CXX)
set(SKBUILD ON)
add_subdirectory($ROOT/analyzer/engine engine)
EOC
(cmake -S /tmp/eb -B /tmp/eb/build -DCMAKE_BUILD_TYPE=Release -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) > /tmp/eb.txt 2>&1 && cmake --build /tmp/eb/build -j16 >> /tmp/eb.txt 2>&1) || { tail -30 /tmp/eb.txt; exit 1; }
cp $(find /tmp/eb/build -name '_engine*.so' | head -1) analyzer/ && ls analyzer/_engine*.so
stamp "GPU pytest"
REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so timeout 240 python3 -m pytest -q -p no:cacheprovider -rs \
  tests/collector/test_gpu.py tests/gpu/patterns tests/patterns/test_pattern_suite.py tests/engine > "$OUT/gpu_pytest.txt" 2>&1
echo "pytest rc $?"; tail -5 "$OUT/gpu_pytest.txt"
stamp "engine benchmark"
timeout 200 python3 benchmarks/engine.py --workers 1,2,4,8,16 --independent 1,4,8,16 2>&1 | tee "$OUT/engine_bench.txt" | tail -30
stamp done
