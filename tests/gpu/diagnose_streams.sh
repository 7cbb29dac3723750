#!/usr/bin/env bash
# One short device call for the multi-stream hang (docs/collector.md, "Known problem"). Builds the collector and
# the tests/gpu programs, profiles `apps multistream 2` once per experiment switch (each under its own timeout,
# its leftover processes killed before the next), prints one line per switch:
#   VERDICT <switch>: WORKED|HUNG|FAILED status=... instrumented=<n>/<seen> complete=<n> records=<n> ...
# then measures the overhead of every app (benchmarks/overhead.py, one app per call, each under a timeout) with
# the first switch that worked. The whole script stays within BUDGET_S seconds (default 135): a step that would
# not fit is skipped and says so.
#   run:  bash tests/gpu/diagnose_streams.sh          (on the device, from the repository root)
#   env:  BUDGET_S, TRIAL_S, STACKS (below); SKIP_BUILD=1 reuses build/device and build/gpu; BUILD_S (100)
# Output in $OUT: log.txt, verdicts.txt, overhead/<app>.json, streams.tgz (run directories, collector logs,
# main-thread stacks of the first hung trials).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
OUTDIR=${OUT:-/tmp/reuselens-out}; R=/tmp/rl-streams; rm -rf "$R" /tmp/rl-ovh; mkdir -p "$R" "$OUTDIR/overhead"
exec > >(tee "$OUTDIR/log.txt") 2>&1
: > "$OUTDIR/verdicts.txt"
BUDGET=${BUDGET_S:-135}      # seconds for the whole script
TRIAL_S=${TRIAL_S:-8}        # launcher timeout of one trial (the app needs about 1 s when it works)
STACKS=${STACKS:-2}          # hung trials whose main-thread stack is taken (gdb, host frames only)
T0=$(date +%s)
now() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( BUDGET - $(now) )); }
stamp() { echo "== [$(now) s] $*"; }
pack() { tar czf "$OUTDIR/streams.tgz" -C "$R" . 2>/dev/null; }
trap pack EXIT

# Kill what a step left behind, by process id: the profiled app's process group (the launcher starts the app in
# its own session; its pid is in RUN/.collector.pid) and any of our built programs still running.
reap() {
  local dir=${1:-} pid
  if [ -n "$dir" ] && [ -f "$dir/.collector.pid" ]; then
    pid=$(cat "$dir/.collector.pid" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "   reaping app $pid"; kill -KILL -- "-$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null
    fi
  fi
  for pid in $(pgrep -f "^$PWD/build/gpu/" 2>/dev/null); do
    echo "   reaping leftover $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-80) ($pid)"
    kill -KILL "$pid" 2>/dev/null
  done
}

if [ "${SKIP_BUILD:-0}" = 1 ] && [ -f build/device/libreuselens_collector.so ]; then
  stamp "build skipped (SKIP_BUILD=1, a warm machine's build/device and build/gpu are reused)"
else
  stamp "build (collector + tests/gpu programs, in parallel)"
  timeout -s KILL "${BUILD_S:-100}" bash -c 'cmake -S collector/native -B build/device -DCMAKE_BUILD_TYPE=Release > "$0/cmake.txt" 2>&1 &&
    cmake --build build/device -j12 > "$0/build.txt" 2>&1' "$R" &
  BPID=$!
  timeout -s KILL "${BUILD_S:-100}" make -j4 -C tests/gpu BUILD="$PWD/build/gpu" > "$R/make.txt" 2>&1 || { echo "make: exit $? (see make.txt)"; tail -5 "$R/make.txt"; }
  wait $BPID || { echo "collector build failed"; tail -n 30 "$R/cmake.txt" "$R/build.txt"; exit 1; }
fi
[ -x build/gpu/apps ] || { echo "build/gpu/apps was not built"; exit 1; }
export REUSELENS_COLLECTOR_LIB=$PWD/build/device/libreuselens_collector.so
grep -h "ReuseLens collector:" "$R/cmake.txt" 2>/dev/null | head -3
GDB=$(command -v gdb || command -v cuda-gdb || echo gdb)

# trial NAME [VAR=VALUE ...]: profile `apps multistream 2` with these variables set; verdict line; exit 0 = worked.
WORKED=""; WORKED_ENV=()
trial() {
  local name=$1; shift
  if [ "$(left)" -lt $((TRIAL_S + 12)) ]; then
    echo "VERDICT $name: SKIPPED (device budget)" | tee -a "$OUTDIR/verdicts.txt"; return
  fi
  local dir="$R/$name"
  stamp "trial $name: ${*:-(defaults)}"
  env "$@" timeout -s KILL $((TRIAL_S + 8)) python3 - "$dir" "$TRIAL_S" "$name" > "$R/$name.verdict" 2>&1 <<'EOF' &
import json, sys
from collector.launcher import profile
run_dir, limit, name = sys.argv[1], float(sys.argv[2]), sys.argv[3]
try:
    s = profile(["build/gpu/apps", "multistream", "2"], run_dir=run_dir, timeout=limit)
except Exception as error:  # CollectorError (no GPU, library missing, ...): one line, not a traceback
    print(f"VERDICT {name}: FAILED to start: {error}")
    sys.exit(4)
try:
    launches = json.load(open(f"{run_dir}/run.json")).get("launches", [])
except (OSError, ValueError):
    launches = []
inst = [l for l in launches if l.get("instrumented")]
done = sum(1 for l in inst if l.get("status") == "complete")
# `apps multistream 2` makes 8 launches of stream_work; every instrumented launch must be complete.
worked = s.status == "complete" and s.launches_instrumented >= 8 and done == len(inst) and s.records > 0
hung = (s.partial_reason or "").startswith("timeout")
word = "WORKED" if worked else "HUNG" if hung else "FAILED"
print(f"VERDICT {name}: {word} status={s.status} instrumented={s.launches_instrumented}/{s.launches_seen} "
      f"complete={done} records={s.records} wall={s.wall_seconds:.1f}s exit={s.exit_code} "
      f"reason={s.partial_reason!r} errors={len(s.errors)} {s.errors[:2] if s.errors else ''}")
sys.exit(0 if worked else 3)
EOF
  local py=$!
  if [ "$STACKS" -gt 0 ]; then
    local i=0 apid
    while [ $i -lt $(( 2 * (TRIAL_S - 4) )) ] && kill -0 "$py" 2>/dev/null; do sleep 0.5; i=$((i + 1)); done
    apid=$(cat "$dir/.collector.pid" 2>/dev/null)
    if kill -0 "$py" 2>/dev/null && [ -n "$apid" ] && kill -0 "$apid" 2>/dev/null; then
      STACKS=$((STACKS - 1))
      echo "   still running after $((TRIAL_S - 4)) s: main-thread stack of $apid"
      timeout -s KILL 12 "$GDB" -batch -nx -p "$apid" -ex "thread apply 1 bt 30" > "$dir.stack.txt" 2>&1
      grep -E "^#" "$dir.stack.txt" | sed -E 's/0x[0-9a-f]+ in //; s/ \(\) from / /' | head -24
    fi
  fi
  wait "$py"; local rc=$?
  grep -q "^VERDICT" "$R/$name.verdict" ||
    echo "VERDICT $name: HUNG (the launcher itself was killed, exit $rc)" >> "$R/$name.verdict"
  grep -v "^kernel_ms" "$R/$name.verdict" | tail -n 8 | tee -a "$OUTDIR/verdicts.txt"
  grep -E "experiments|patch loaded|not loaded yet|patched|error" "$dir/collector.log" 2>/dev/null | head -6 | sed 's/^/   log: /'
  reap "$dir"
  if [ "$rc" -eq 0 ] && [ -z "$WORKED" ]; then WORKED=$name; WORKED_ENV=("$@"); fi
  return 0
}

# Most likely first; the order is also the preference for the overhead run.
trial patch_load_context        REUSELENS_PATCH_LOAD=context
trial patch_load_context_eager  REUSELENS_PATCH_LOAD=context REUSELENS_EAGER_PATCH=1
trial patch_load_api            REUSELENS_PATCH_LOAD=api
trial context_finish_drain      REUSELENS_PATCH_LOAD=context REUSELENS_FINISH=drain
trial module_loading_eager      REUSELENS_MODULE_LOADING=eager REUSELENS_EAGER_PATCH=1
trial module_loading_eager_lazy REUSELENS_MODULE_LOADING=eager
trial all_combined              REUSELENS_MODULE_LOADING=eager REUSELENS_EAGER_PATCH=1 REUSELENS_PATCH_LOAD=context REUSELENS_FINISH=drain
trial sanitizer_serial_launches SANITIZER_DISABLE_PARALLEL_LAUNCHES=1
trial sanitizer_no_lazy_funcs   SANITIZER_DISABLE_FUNCTION_LAZY_LOADING=1
trial baseline

if [ -z "$WORKED" ]; then
  stamp "no switch worked: no overhead run (stacks of hung trials: *.stack.txt in streams.tgz)"
  exit 0
fi
stamp "overhead with $WORKED (${WORKED_ENV[*]}), one app per call"
for app in trivial many_launches matmul_256 stencil_20 demo multistream microbench vecadd_1M; do
  l=$(left)
  if [ "$l" -lt 12 ]; then echo "$app: SKIPPED (device budget)"; continue; fi
  t=$(( l - 6 < 40 ? l - 6 : 40 ))
  env "${WORKED_ENV[@]}" timeout -s KILL "$t" python3 benchmarks/overhead.py --build build/gpu --repeat 1 \
    --apps "$app" --work /tmp/rl-ovh --json "$OUTDIR/overhead/$app.json" 2>&1 | grep -v "^ *$"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 137 ] && echo "$app: killed after $t s"
  reap
done
stamp "done"
