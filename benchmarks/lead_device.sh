#!/usr/bin/env bash
# One device call for the figures that need the GPU host but not the collector's own build loop:
# the package built as pip builds it (engine module + collector), the engine scaling benchmark on 16 cores,
# the actionability loop (findings -> fix -> ncu before/after), and `reuselens demo` on the recorded run.
# Needs the wheels of README's device notes in .whl/ (pyelftools, cxxfilt, zstandard, lz4 for cp312).
# STEPS (default "engine actionability demo"; also "gputests") picks the steps.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUTDIR=${OUT:-/tmp/reuselens-out}; mkdir -p "$OUTDIR"
exec > >(tee "$OUTDIR/lead_log.txt") 2>&1
cd "$(dirname "$0")/.."
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp "wheels + pip build of the package"
# shellcheck disable=SC1091
source benchmarks/device_setup.sh || exit 1
STEPS=" ${STEPS:-engine actionability demo} "
if [[ $STEPS == *" engine "* ]]; then
  stamp "engine benchmark"
  python3 benchmarks/parallel_ceiling.py 2>&1 | tee "$OUTDIR/parallel_ceiling.txt"
  timeout 200 python3 benchmarks/engine.py --workers 1,2,4,8,16 --independent 1,4,8,16 2>&1 | tee "$OUTDIR/engine_bench.txt"
  echo "== the same, shadow huge-page advice off (REUSELENS_SHADOW_THP=0)" | tee -a "$OUTDIR/engine_bench.txt"
  REUSELENS_SHADOW_THP=0 timeout 100 python3 benchmarks/engine.py --workers 1,16 2>&1 | tee -a "$OUTDIR/engine_bench.txt"
fi
if [[ $STEPS == *" actionability "* ]]; then
  stamp "actionability"
  timeout 240 python3 benchmarks/actionability.py --out /tmp/act 2>&1 | tail -60
  cp /tmp/act/actionability.json "$OUTDIR/" 2>/dev/null
fi
if [[ $STEPS == *" gputests "* ]]; then
  stamp "GPU tests (pytest, the pip-built collector)"
  timeout 300 python3 -m pytest -q \
    -p no:cacheprovider -rs tests/collector/test_gpu.py tests/gpu/patterns tests/patterns/test_pattern_suite.py 2>&1 | tail -40
fi
if [[ $STEPS == *" demo "* ]]; then
  stamp "demo"
  timeout 60 python3 -m reuselens demo 2>&1 | tail -30
fi
stamp "done"
