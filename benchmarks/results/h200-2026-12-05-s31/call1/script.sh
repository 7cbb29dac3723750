#!/usr/bin/env bash
# Prepared in session 31 for the next session's first device call (sessions 30 and 31 had no device machine). Checks
# main with sessions 30 and 31's engine changes (`engine.patch` = `git diff f94d1c8 HEAD -- analyzer/engine` at
# session 31's end: session 30's irregular-access changes, docs/engine.md "Irregular access"; session 31's shared
# shapes met again, "Per-lane cost", and first touches that write before they read, "Shadow memory"), which analyse
# online inside the collector and have never run on the GPU:
# 1. GPU tests and fidelity against ncu on main. 2. The engine before both sessions built beside (engine.patch taken
# back). 3. engine.py's gather (256 MB), sgemm (the recorded cuBLAS slice, the PyTorch loop's records) and transpose
# patterns at 1 and 12 workers under both engines.
# Then, as calls of their own: `next/script2.sh` (scalars, strided at two row pitches, SHOC BFS's traces replayed by
# both engines and checked equal), the suite (`source benchmarks/device_call.sh; short_suite 2`), and last session
# 29's `next/script.sh` (the ring patches' pairing; whether it made session 30's machine stop answering is not known).
#   bash benchmarks/results/h200-2026-12-05-s31/call1/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s31/next
stamp "the engine before sessions 30 and 31 (in the background)"
timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/before -R > /tmp/before.txt 2>&1 &
BUILD=$!
gpu_tests
fidelity_against_ncu
wait $BUILD  # the pid: a bare `wait` also waits for the log's tee
BEFORE=$(grep "_engine" /tmp/before.txt)
[ -n "$BEFORE" ] || { tail -20 /tmp/before.txt; exit 1; }
engine_pairs "$BEFORE" gather sgemm transpose
stamp done
