#!/usr/bin/env bash
# Large runs: online analysis (ring wrapping under a small queue bound, 4 copy threads) == replay of the traces;
# queue-size variants for kernel and wall time.
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."; ROOT=$PWD; export PYTHONPATH=$ROOT:/tmp/site
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null
if [ ! -f build/device/libreuselens_collector.so ]; then
  (cmake -S collector/native -B build/device -DCMAKE_BUILD_TYPE=Release >/tmp/c1.txt 2>&1 && cmake --build build/device -j16 >/tmp/b1.txt 2>&1) || tail -20 /tmp/c1.txt /tmp/b1.txt
  make -C tests/gpu BUILD="$ROOT/build/gpu" -j16 >/tmp/make.txt 2>&1 || tail -20 /tmp/make.txt
fi
if ! ls analyzer/_engine*312*.so >/dev/null 2>&1; then
  mkdir -p /tmp/eb && printf 'cmake_minimum_required(VERSION 3.18)\nproject(eb LANGUAGES CXX)\nset(SKBUILD ON)\nadd_subdirectory(%s/analyzer/engine engine)\n' "$ROOT" > /tmp/eb/CMakeLists.txt
  (cmake -S /tmp/eb -B /tmp/eb/build -DCMAKE_BUILD_TYPE=Release -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) > /tmp/eb.txt 2>&1 && cmake --build /tmp/eb/build -j16 >> /tmp/eb.txt 2>&1) || tail -30 /tmp/eb.txt
  cp $(find /tmp/eb/build -name '_engine*.so' | head -1) analyzer/
fi
export REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so
stamp "online vs replay, large runs"
rm -rf /tmp/big; mkdir -p /tmp/big
for spec in "matmul 256|64000000" "stencil 20|40000000" "matmul 256|1073741824"; do
  args=${spec%|*}; q=${spec#*|}; name=$(echo "$args $q" | tr ' ' '_')
  REUSELENS_ENGINE_QUEUE_BYTES=$q timeout 120 python3 - "$name" build/gpu/apps $args <<'PY'
import json, sys, time
from pathlib import Path
from collector.launcher import profile
from analyzer.replay import analyze_run, resolve_names
name, argv = sys.argv[1], sys.argv[2:]
run = Path('/tmp/big') / name
s = profile(argv, run_dir=str(run), write_traces=True, timeout=100)
print(name, '->', s.status, s.partial_reason, s.records, 'records', '%.2f s' % s.wall_seconds, s.errors[:2])
log = (run / 'collector.log').read_text().splitlines()
print('\n'.join([l for l in log if 'drain thread' in l or 'copy threads' in l or 'exit' in l][:4]))
online = json.loads((run / 'analysis.json').read_text())
functions = {int(f['id']): f for f in json.loads((run / 'run.json').read_text())['functions']}
resolve_names(online, functions, [])
for w in (1, online['stats']['workers']):
    t = time.time(); rep = analyze_run(run, workers=w)
    same = online['kernels'] == rep['kernels'] and all(online['stats'][k] == rep['stats'][k] for k in ('records', 'lane_accesses'))
    print(f"  replay with {w} workers: {'EQUAL' if same else 'DIFFERENT'} ({rep['stats']['records']} records, {time.time()-t:.1f} s)")
PY
  rm -rf /tmp/big/*/traces
done
[ -n "${SKIP_Q:-}" ] && exit 0
stamp "queue bound variants (kernel and wall time)"
for r in 1 2; do for q in 67108864 268435456 1073741824; do
  REUSELENS_ENGINE_QUEUE_BYTES=$q timeout 90 python3 benchmarks/overhead.py --build build/gpu --apps matmul_256,stencil_20 --repeat 2 --work /tmp/ovq --json "$OUT/q_${q}_$r.json" >/dev/null 2>&1
  python3 -c "import json; d=json.load(open('$OUT/q_${q}_$r.json')); print('queue $q:', '  '.join('%s kernel %.1f ms wall %.3f s'%(a['app'][:6],a['profiled_kernel_ms'],a['profiled_wall_s']) for a in d['apps']))"
done; done
stamp done
