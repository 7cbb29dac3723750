#!/usr/bin/env bash
# Real applications the tests never saw: PyTorch (cuBLAS GEMM, ATen kernels) and CuPy (NVRTC kernels), profiled
# end to end with the CLI.
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=$ROOT:/tmp/site
(cmake -S collector/native -B build/device -DCMAKE_BUILD_TYPE=Release >/tmp/c1.txt 2>&1 && cmake --build build/device -j16 >/tmp/b1.txt 2>&1) || tail -20 /tmp/c1.txt /tmp/b1.txt &
P1=$!
mkdir -p /tmp/eb && printf 'cmake_minimum_required(VERSION 3.18)\nproject(eb LANGUAGES CXX)\nset(SKBUILD ON)\nadd_subdirectory(%s/analyzer/engine engine)\n' "$ROOT" > /tmp/eb/CMakeLists.txt
(cmake -S /tmp/eb -B /tmp/eb/build -DCMAKE_BUILD_TYPE=Release -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) > /tmp/eb.txt 2>&1 && cmake --build /tmp/eb/build -j16 >> /tmp/eb.txt 2>&1) || tail -30 /tmp/eb.txt
wait $P1
cp $(find /tmp/eb/build -name '_engine*.so' | head -1) analyzer/
export REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so
mkdir -p /tmp/rw "$OUT/rw"
for app in torch cupy; do
  stamp "$app native"
  /usr/bin/time -f "native %e s" timeout 120 python3 scratch/rw/${app}_app.py 2>&1 | tail -3
  stamp "$app profiled"
  /usr/bin/time -f "profiled %e s" timeout 200 python3 -m analyzer.cli.main profile --run-dir /tmp/rw/$app --timeout 180 --top 5 -- python3 scratch/rw/${app}_app.py > "$OUT/rw/${app}_cli.txt" 2>&1
  echo "cli rc $?"; grep -v '^note' "$OUT/rw/${app}_cli.txt" | cut -c1-160 | head -14; tail -1 "$OUT/rw/${app}_cli.txt"
  cp /tmp/rw/$app/run.json "$OUT/rw/${app}_run.json" 2>/dev/null
  cp /tmp/rw/$app/collector.log "$OUT/rw/${app}_collector.log" 2>/dev/null
  cp /tmp/rw/$app/analysis.json "$OUT/rw/${app}_analysis.json" 2>/dev/null
  du -sh /tmp/rw/$app; ls /tmp/rw/$app | head
  grep -c 'instrumented' /tmp/rw/$app/collector.log
  grep -E 'error|warn' /tmp/rw/$app/collector.log | head -5
done
tar czf "$OUT/rw.tgz" -C "$OUT" rw && rm -rf "$OUT/rw"
stamp done
