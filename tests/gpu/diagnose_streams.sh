#!/usr/bin/env bash
# Short device check of the multi-stream app (the case the public implementation deadlocks on): builds the
# collector and tests/gpu/apps only, profiles `apps multistream`, prints cuda-gdb backtraces if it is still
# running after 12 s, then measures the overhead of the apps given in $APPS. Results: $OUT/streams.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUTDIR=${OUT:-/tmp/reuselens-out}; R=/tmp/rl-streams; rm -rf "$R"; mkdir -p "$R" "$OUTDIR"
exec > >(tee "$OUTDIR/log.txt") 2>&1
trap 'tar czf "$OUTDIR/streams.tgz" -C "$R" .' EXIT
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
cmake -S collector/native -B build/device -DCMAKE_BUILD_TYPE=Release > "$R/cmake.txt" 2>&1 && cmake --build build/device -j16 > "$R/build.txt" 2>&1 || { tail -30 "$R/build.txt"; exit 1; }
make -C tests/gpu BUILD="$PWD/build/gpu" "$PWD/build/gpu/apps" > /dev/null 2>&1 || exit 1
export REUSELENS_COLLECTOR_LIB=$PWD/build/device/libreuselens_collector.so
stamp "the same app under plain compute-sanitizer (is a hang ours or the Sanitizer's?)"
timeout 20 compute-sanitizer --tool memcheck --print-limit 5 build/gpu/apps multistream 2 2>&1 | tail -4 || echo "compute-sanitizer: exit $?"
stamp "multistream, per-launch state copies on the legacy stream"
REUSELENS_STATE_STREAM=legacy timeout 20 python3 -c "
from collector.launcher import profile
s = profile(['build/gpu/apps', 'multistream', '2'], run_dir='$R/multistream_legacy', timeout=12)
print(s.status, s.partial_reason, s.launches_instrumented, s.records, s.errors[:3])"
stamp "multistream (every callback logged)"
REUSELENS_DEBUG=1 python3 -c "
from collector.launcher import profile, MIN_BUFFER_BYTES
s = profile(['build/gpu/apps', 'multistream', '2'], run_dir='$R/multistream', write_traces=True, buffer_bytes=MIN_BUFFER_BYTES, timeout=18)
print(s.status, s.partial_reason, s.launches_instrumented, s.records, s.errors[:3])" &
sleep 12
pid=$(pgrep -f "build/gpu/apps multistream" | head -1)
if [ -n "$pid" ]; then
  stamp "still running: backtraces of $pid"
  timeout 8 cuda-gdb -batch -p "$pid" -ex "thread apply 1 2 bt 25" -ex "info threads" 2>&1 | grep -E "^#|^Thread|^\*? +[0-9]+ " | head -80
fi
wait
tail -n 15 "$R/multistream/collector.log"
stamp "overhead"
timeout ${OVH_S:-30} python3 benchmarks/overhead.py --build build/gpu --repeat 1 --apps "${APPS:-multistream,vecadd_1M,matmul_256,stencil_20}" --work /tmp/ovh --json "$R/overhead.json"
stamp "done"
