#!/usr/bin/env bash
# Everything the collector needs a GPU for, in one device call (see docs/collector.md):
#   build the collector (standalone CMake, system CUDA's compute-sanitizer) and tests/gpu programs,
#   smoke/robustness runs, the fidelity table (collector traces vs ncu), the overhead table, and the
#   recorded fixtures (tests/data/runs/*, analyzer/demo/run). Results are tarred into $OUT/results.tgz.
# Usage: tests/gpu/run_on_device.sh [smoke|full]
set -uo pipefail
MODE=${1:-full}
export PYTHONUNBUFFERED=1
OUTDIR=${OUT:-/tmp/reuselens-out}
R=$OUTDIR/res
mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
cd "$(dirname "$0")/../.."
ROOT=$PWD
export PYTHONPATH=$ROOT
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
finish() { stamp "tar"; tar czf "$OUTDIR/results.tgz" -C "$R" . ; ls -la "$OUTDIR"; }
trap finish EXIT

stamp "environment"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 --version; cmake --version | head -1; nvcc --version | tail -1; which ncu

stamp "build collector"
cmake -S collector/native -B build/device -DCMAKE_BUILD_TYPE=Release > "$R/cmake.txt" 2>&1 || { cat "$R/cmake.txt"; exit 1; }
grep -E "ReuseLens|Warn" "$R/cmake.txt"
cmake --build build/device -j16 > "$R/build.txt" 2>&1 || { tail -40 "$R/build.txt"; exit 1; }
export REUSELENS_COLLECTOR_LIB=$ROOT/build/device/libreuselens_collector.so
stamp "build tests/gpu"
make -C tests/gpu BUILD="$ROOT/build/gpu" -j8 > "$R/make.txt" 2>&1 || { tail -40 "$R/make.txt"; exit 1; }
B=$ROOT/build/gpu

stamp "smoke: microbench under the collector"
python3 - <<PY
from collector.launcher import profile
s = profile(["$B/microbench"], run_dir="$R/smoke", write_traces=True, timeout=300)
print(s)
PY
tail -5 "$R/smoke/collector.log"
python3 -c "import json;m=json.load(open('$R/smoke/run.json'));print(m['status'],m['partial_reason'],m['errors'][:5]);[print(l['id'],l['kernel'],l['status'],l['records'],l.get('seconds')) for l in m['launches']]"

stamp "robustness: kernel fault, abort, timeout"
python3 - <<PY
from collector.launcher import profile
for mode, t in [("fault", 120), ("abort", 120), ("hang", 8)]:
    s = profile(["$B/crash", mode], run_dir=f"$R/crash_{mode}", write_traces=True, timeout=t)
    print(mode, "->", s.status, "|", s.partial_reason, "| exit", s.exit_code, "|", s.errors[:3])
PY

stamp "fidelity"
python3 benchmarks/fidelity.py --bench "$B/microbench" --work "$R/fidelity" --json "$R/fidelity.json" || echo "fidelity exit $?"

stamp "demo + fixtures"
python3 - <<PY
from collector.launcher import profile
print(profile(["$B/demo"], run_dir="$R/demo_run", write_traces=True, timeout=300))
PY
cp -r "$B/../gpu" "$R/bin" 2>/dev/null; rm -rf "$R/bin"
mkdir -p "$R/build_info" && echo "{\"source_dir\": \"$ROOT/analyzer/demo/src\"}" > "$R/build_info/build.json"

if [ "$MODE" = full ]; then
  stamp "overhead"
  python3 benchmarks/overhead.py --build "$B" --repeat 3 --work /tmp/ovh --json "$R/overhead.json" || echo "overhead exit $?"
  stamp "multistream with traces, min buffer"
  python3 - <<PY
from collector.launcher import profile, MIN_BUFFER_BYTES
print(profile(["$B/apps", "multistream", "2"], run_dir="$R/multistream_min", buffer_bytes=MIN_BUFFER_BYTES, timeout=300))
PY
fi
stamp "done"
