# Sourced first by a device call's script (benchmarks/results/*/callN/script.sh), from the repository root on the GPU
# machine: strict mode, everything printed also kept in $OUT/log.txt, `stamp` for the elapsed seconds of each step,
# and benchmarks/device_setup.sh (the package built and installed); the call ends here when the build fails.
# At exit every other file under $OUT goes into $OUT/results.tgz: only 8 files come back from a call, and session
# 37's calls lost their logs and half their outputs to that limit (`tar xzf results.tgz` here).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s)
pack_outputs() {
  local list
  list=$(mktemp)
  (cd "$OUT" && find . -type f ! -path ./log.txt ! -path ./results.tgz | sort > "$list" &&
    if [ -s "$list" ]; then tar czf results.tgz --remove-files -T "$list" && find . -mindepth 1 -type d -empty -delete; fi)
  rm -f "$list"
}
trap pack_outputs EXIT
DEVICE_CALL_REPO=$PWD
stamp() { echo "== [$(($(date +%s) - T0)) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
rm -f "$OUT/pip_build.txt"

# The checks every stop's closing note reports, for a call's script to run in one line each (sessions 22-24 wrote
# them out in each call's script).
# fidelity_against_ncu: the collector's counts side by side with ncu's (three ncu runs) on the microbenchmark and
# zero_fill, with the default and the smallest buffers; each table's summary and its non-ok rows printed, the JSON in
# $OUT/fid_P.json.
fidelity_against_ncu() {
  mkdir -p /tmp/zf
  local p
  rm -rf /tmp/fid_microbench /tmp/fid_zero_fill  # a warm machine keeps an earlier call's: fidelity.py refuses them
  for p in microbench zero_fill; do nvcc -O3 -lineinfo -arch=sm_90 -o "/tmp/zf/$p" "tests/gpu/$p.cu" || return 1; done
  for p in microbench zero_fill; do
    stamp "fidelity: $p (ncu x3)"
    timeout 100 python3 benchmarks/fidelity.py --bench "/tmp/zf/$p" --work "/tmp/fid_$p" --ncu-runs 3 \
      --json "$OUT/fid_$p.json" 2>&1 | grep -v " ok$" | tail -6
  done
}
# short_suite ROUNDS [realapps.py options...]: the eight short apps natively, under `profile --no-analyze` and under
# `profile`, from a user's install (clean_install.sh), ROUNDS rounds; the table in $OUT/realapps_full_clean.txt and
# .json.
short_suite() {
  local rounds=$1 clean
  shift
  stamp "clean install"
  clean=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; return 1; }
  stamp "eight short apps, native/collect/full, $rounds rounds, clean install"
  timeout 280 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --rounds "$rounds" \
    --modes native,collect,full --jobs 16 --reuselens "$clean" "$@" \
    --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort \
    > "$OUT/realapps_full_clean.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_full_clean.txt" | tail -12
  cp /tmp/rf/realapps.json "$OUT/realapps_full_clean.json"
}
# long_apps SECONDS: the suite's four long apps natively, under `profile --no-analyze` and under `profile`, one round,
# from the user's install short_suite made (/tmp/clean), within SECONDS; the table in $OUT/realapps_long.txt and .json.
long_apps() {
  stamp "the four long apps: native, collect, full, one round, clean install"
  timeout "$1" python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rl --rounds 1 \
    --modes native,collect,full --jobs 16 --reuselens /tmp/clean/bin/reuselens \
    --apps cs_mergeSort,pb_gemm,pb_mvt,cs_sortingNetworks > "$OUT/realapps_long.txt" 2>&1
  grep -v "^build\|^round" "$OUT/realapps_long.txt" | tail -9
  cp /tmp/rl/realapps.json "$OUT/realapps_long.json" 2>/dev/null
}
# score_suite ROUND: the suite's full-profile reports (the short apps' round ROUND, the long apps' one round) against
# the answer key (benchmarks/score_findings.py; $OUT/score.txt and .json), the reports themselves in
# $OUT/suite_reports.tgz (no modules), and per report the GPU's L2 and the global requests whose lanes follow no
# stride (the engine's `irregular`). Sessions 46-47 wrote this block into each call's script.
score_suite() {
  stamp "findings against the answer key"
  rm -rf /tmp/score && mkdir -p /tmp/score
  local d
  for d in "/tmp/rf/runs/r$1"/*-full /tmp/rl/runs/r0/*-full; do
    [ -f "$d/report.json" ] && ln -sfn "$d" "/tmp/score/$(basename "$d")"
  done
  timeout 10 python3 benchmarks/score_findings.py --key tests/realapps/answer_key.json --runs /tmp/score \
    --json "$OUT/score.json" > "$OUT/score.txt" 2>&1
  grep -A8 OVERALL "$OUT/score.txt"
  (cd /tmp && find -L score/ -maxdepth 2 -name report.json -size -6M | tar czhf "$OUT/suite_reports.tgz" -T -)
  python3 - /tmp/score <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*/report.json")):
    r = json.loads(p.read_text())
    nodes = [n for k in r["kernels"] for n in k["nodes"] if n.get("space") == "global"]
    irregular = sum(n.get("irregular", 0) for n in nodes)
    requests = sum(c for n in nodes for _v, c in n.get("sectors") or ())
    print(f"{p.parent.name:24s} l2 {r['run']['gpu'].get('l2_bytes')}  irregular {irregular:,} of {requests:,} global requests")
PY
}
# breadth_set SECONDS [realapps.py options...]: the breadth set (benchmarks/realapps/breadth.json, staged in
# benchmarks/realapps/breadth-src; BREADTH_MANIFEST and BREADTH_SRC name another set and its staged sources)
# natively and under `profile`, one round, from the user's install (/tmp/clean), within SECONDS; then
# benchmarks/breadth_check.py names every defect. Its outputs in $OUT/breadth_*, the run directories' logs and
# reports (no modules: third-party builds stay out of git) in $OUT/breadth_runs.tgz.
breadth_set() {
  local seconds=$1
  shift
  stamp "the breadth set ${BREADTH_MANIFEST:-benchmarks/realapps/breadth.json}: native, full profile, 1 round"
  timeout "$seconds" python3 benchmarks/realapps.py --manifest "${BREADTH_MANIFEST:-benchmarks/realapps/breadth.json}" \
    --src "${BREADTH_SRC:-benchmarks/realapps/breadth-src}" --out /tmp/breadth --modes native,full --rounds 1 --timeout 60 --jobs 16 \
    --reuselens /tmp/clean/bin/reuselens "$@" > "$OUT/breadth_realapps.txt" 2>&1
  echo "realapps.py exit $?"
  grep -v "^round" "$OUT/breadth_realapps.txt" | tail -45
  stamp "defects"
  python3 benchmarks/breadth_check.py /tmp/breadth --json "$OUT/breadth_check.json" > "$OUT/breadth_check.txt" 2>&1
  cat "$OUT/breadth_check.txt"
  cp /tmp/breadth/realapps.json "$OUT/breadth_realapps.json" 2>/dev/null
  (cd /tmp/breadth && find runs -type f \( -name collector.log -o -name run.json -o -name '*.log' -o -name report.json \) \
    -size -3M | tar czf "$OUT/breadth_runs.tgz" -T -)
}
# gpu_tests: the GPU pytest files every stop's closing note reports (online results against replays included).
gpu_tests() {
  stamp "GPU tests"
  timeout 180 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py \
    tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py \
    tests/collector/test_gpu_graphs.py 2>&1 | tail -2
}
# manifest_args APP: the app's arguments from benchmarks/realapps/manifest.json, for running it by hand (from any folder).
manifest_args() {
  python3 -c "import json, sys; print(' '.join(next(a['args'] for a in json.load(open(sys.argv[1]))['apps'] if a['name'] == sys.argv[2])))" \
    "$DEVICE_CALL_REPO/benchmarks/realapps/manifest.json" "$1"
}
# engine_pairs BEFORE PATTERN...: benchmarks/engine.py's patterns at 1 and 12 workers (2 runs each, the best printed)
# under the engine module BEFORE (a _engine*.so built beside by build_revision.sh) and under the installed one, in
# turn; each output in $OUT/engine_PATTERN_{before,after}.txt, its worker and step lines printed.
engine_pairs() {
  local before=$1 pattern engine name
  shift
  for pattern in "$@"; do
    for engine in "$before" installed; do
      name=$([ "$engine" = installed ] && echo after || echo before)
      stamp "engine.py --pattern $pattern, $name"
      timeout 80 python3 benchmarks/engine.py --pattern "$pattern" --workers 1,12 --repeat 2 --engine "$engine" \
        > "$OUT/engine_${pattern}_${name}.txt" 2>&1
      grep -E "^  workers|slowest" "$OUT/engine_${pattern}_${name}.txt" | head -8
    done
  done
}
# collector_beside PATCH DIR [-R]: the package of the working tree with PATCH applied (-R: taken back) built into DIR
# by build_revision.sh, in the background; then `beside_lib DIR` waits for it and sets BESIDE_LIB to its tool
# library's path (called as it is, not in $(...): only this shell can wait for the build), or prints the build's tail
# and fails.
collector_beside() {
  local patch=$1 dir=$2
  shift 2
  stamp "the collector with $(basename "$patch")${1:+ taken back} (in the background)"
  timeout 300 bash benchmarks/build_revision.sh --patch "$patch" "$dir" "$@" > "$dir.build.txt" 2>&1 &
  BESIDE_PID=$!
}
beside_lib() {
  wait "$BESIDE_PID"  # the pid: a bare `wait` also waits for the log's tee
  BESIDE_LIB=$(grep -m1 libreuselens_collector "$1.build.txt")
  [ -n "$BESIDE_LIB" ] || { tail -n 20 "$1.build.txt"; return 1; }
}
# pytorch_loop STEPS: the PyTorch training loop (benchmarks/pytorch_overhead.py) natively, then under `reuselens
# profile --no-analyze`, one round each; the engine's and the drain's lines of its collector.log, and its JSON in
# $OUT/pytorch_collect.json.
pytorch_loop() {
  stamp "PyTorch loop, $1 steps, native"
  timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps "$1" --rounds 1 --modes native \
    --timeout 40 2>&1 | grep "native:"
  stamp "PyTorch loop, $1 steps, collect"
  timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps "$1" --rounds 1 --modes collect \
    --timeout 105 2>&1 | grep "collect:"
  grep -h "engine steps\|launch ends waited\|drain thread" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-400
  cp /tmp/pt_c/pytorch_overhead.json "$OUT/pytorch_collect.json" 2>/dev/null
}
