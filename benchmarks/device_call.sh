# Sourced first by a device call's script (benchmarks/results/*/callN/script.sh), from the repository root on the GPU
# machine: strict mode, everything printed also kept in $OUT/log.txt, `stamp` for the elapsed seconds of each step,
# and benchmarks/device_setup.sh (the package built and installed); the call ends here when the build fails.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s)
stamp() { echo "== [$(($(date +%s) - T0)) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f "$OUT/pip_build.txt"
