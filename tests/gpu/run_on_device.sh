#!/usr/bin/env bash
# Everything the collector needs a GPU for, in one device call (docs/collector.md):
#   build the collector (standalone CMake, the system CUDA's compute-sanitizer) and the tests/gpu programs,
#   multi-stream and robustness runs, the fidelity table (collector traces vs ncu), the overhead table, the
#   runs recorded as fixtures (tests/data/runs/*, reuselens/demo/run), optionally the GPU pytest tests.
#   Every step has its own time limit; results go to $OUT/results.tgz even when a step fails.
# Usage: tests/gpu/run_on_device.sh [quick|full]      (full adds the GPU tests and a second overhead pass)
set -uo pipefail
MODE=${1:-quick}
export PYTHONUNBUFFERED=1
OUTDIR=${OUT:-/tmp/reuselens-out}
R=/tmp/reuselens-res
rm -rf "$R"; mkdir -p "$R" "$OUTDIR"
exec > >(tee "$OUTDIR/log.txt") 2>&1
cd "$(dirname "$0")/../.."
ROOT=$PWD
T0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
pack() { rm -rf "$R/fidelity/run_minbuf/traces" "$R/fid_async/run_minbuf/traces"; tar czf "$OUTDIR/results.tgz" -C "$R" . ; }
trap pack EXIT

stamp "environment"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
stamp "build the package (collector, engine module) as pip does"
# shellcheck disable=SC1091
source benchmarks/device_setup.sh || exit 1
make -C tests/gpu BUILD="$ROOT/build/gpu" -j8 > "$R/make.txt" 2>&1 || { tail -40 "$R/make.txt"; exit 1; }
B=$ROOT/build/gpu

prof() {  # prof LIMIT RUN_DIR [profile() keyword args as python] -- ARGV...
  local limit=$1 run=$2 kw=$3; shift 4
  timeout "$limit" python3 -c "
import sys
from reuselens.collector.launcher import profile, MIN_BUFFER_BYTES
s = profile(sys.argv[1:], run_dir='$run', $kw)
print('$run'.split('/')[-1], '->', s.status, '|', s.partial_reason, '| exit', s.exit_code, '|', s.launches_instrumented, 'launches', s.records, 'records', '%.2f s' % s.wall_seconds, '|', s.errors[:3])
" "$@" || echo "step failed or timed out: $run"
}

stamp "multi-stream app (4 non-blocking streams, cross-stream events), smallest buffer, traces"
REUSELENS_DEBUG=1 prof 30 "$R/multistream" "write_traces=True, buffer_bytes=MIN_BUFFER_BYTES, timeout=20" -- "$B/apps" multistream 2
tail -n 12 "$R/multistream/collector.log"
stamp "robustness"
prof 30 "$R/crash_fault" "write_traces=True, timeout=25" -- "$B/crash" fault
prof 20 "$R/crash_abort" "timeout=15" -- "$B/crash" abort
prof 15 "$R/crash_hang" "timeout=5" -- "$B/crash" hang
stamp "demo"
prof 30 "$R/demo_run" "write_traces=True, timeout=25" -- "$B/demo"
echo "{\"source_dir\": \"$ROOT/reuselens/demo/src\", \"build\": \"nvcc -O3 -lineinfo -gencode arch=compute_90,code=sm_90\"}" > "$R/demo_build.json"
stamp "pattern suite (every pattern implanted + its control, tests/patterns/test_pattern_suite.py replays it)"
prof 60 "$R/pattern_suite" "write_traces=True, timeout=50" -- "$B/pattern_suite"
stamp "ldmatrix and bulk copies: fidelity run (traces + ncu CSV kept as the fixture)"
timeout 60 python3 benchmarks/fidelity.py --bench "$B/async_copies" --work "$R/fid_async" --json "$R/fid_async.json" || echo "fidelity (async copies) exit $?"
stamp "fidelity"
timeout 60 python3 benchmarks/fidelity.py --bench "$B/microbench" --work "$R/fidelity" --json "$R/fidelity.json" || echo "fidelity exit $?"
stamp "overhead"
left=$(( ${BUDGET_S:-245} - ($(date +%s) - T0) )); [ $left -gt 100 ] && left=100
timeout $left python3 benchmarks/overhead.py --build "$B" --repeat 2 --work /tmp/ovh --json "$R/overhead.json" || echo "overhead exit $?"
if [ "$MODE" = full ]; then
  stamp "GPU tests"
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/collector/test_gpu.py 2>&1 | tail -15
  stamp "overhead, traces off and online analysis off"
  REUSELENS_ONLINE_ANALYSIS=0 timeout 150 python3 benchmarks/overhead.py --build "$B" --repeat 2 --work /tmp/ovh2 --json "$R/overhead_noengine.json" || echo "overhead exit $?"
fi
stamp "done"
