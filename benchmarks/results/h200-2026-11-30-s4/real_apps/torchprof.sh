#!/usr/bin/env bash
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
stamp "torch, record only"
rm -rf /tmp/rwt; timeout 100 python3 -m analyzer.cli.main profile --no-analyze --run-dir /tmp/rwt --timeout 90 -- python3 scratch/rw/torch_app.py 2>&1 | tail -3
du -sh /tmp/rwt /tmp/rwt/modules; ls -la /tmp/rwt/modules | head -12
(cd /tmp && tar cf - rwt | gzip -1 | split -b 15m - "$OUT/rwt.tgz.part-")
ls -la $OUT
stamp "analysis under cProfile"
timeout 150 python3 -m cProfile -o /tmp/ana.prof -m analyzer.cli.main analyze /tmp/rwt > /tmp/ana.txt 2>&1; echo "analyze rc $?"; tail -5 /tmp/ana.txt
python3 -c "
import pstats; p = pstats.Stats('/tmp/ana.prof'); p.sort_stats('cumulative').print_stats(45)" 2>&1 | grep -v '^$' | cut -c1-200 | head -80
python3 -c "
import pstats; p = pstats.Stats('/tmp/ana.prof'); p.sort_stats('tottime').print_stats(25)" 2>&1 | grep -v '^$' | cut -c1-200 | tail -30
stamp done
