#!/usr/bin/env bash
# Session 31's second prepared call (after next/script.sh): engine.py's scalars and strided patterns (256 MB) at 1 and
# 12 workers under main's engine and the engine before sessions 30 and 31; strided at 256 and 250 MB, one worker
# (session 23 measured strided at half the gather's rate there: is a power-of-two row pitch, a warp's 32 shadow lines
# in one cache set, the reason?); SHOC BFS's traces replayed from memory by both engines at 12 and 1 workers, results
# checked equal (97% broadcasts: session 30's broadcast prefetch); the sgemm pattern at 1, 12 and 16 workers against
# as many independent engines (issue 14's scaling target, on the PyTorch loop's records).
#   bash benchmarks/results/h200-2026-12-05-s31/call4/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s31/next
stamp "the engine before sessions 30 and 31"
timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/before -R > /tmp/before.txt 2>&1
BEFORE=$(grep "_engine" /tmp/before.txt)
[ -n "$BEFORE" ] || { tail -20 /tmp/before.txt; exit 1; }
engine_pairs "$BEFORE" scalars strided
for mb in 256 250; do
  stamp "engine.py --pattern strided --footprint-mb $mb, after, one worker"
  timeout 60 python3 benchmarks/engine.py --pattern strided --footprint-mb $mb --workers 1 --repeat 2 \
    > $OUT/engine_strided_${mb}mb.txt 2>&1
  grep -E "^  workers|slowest" $OUT/engine_strided_${mb}mb.txt | head -4
done
# Issue 14's scaling target on the PyTorch loop's records: 16 workers against 16 independent one-worker engines.
stamp "engine.py --pattern sgemm, scaling against independent engines"
timeout 150 python3 benchmarks/engine.py --pattern sgemm --workers 1,12,16 --independent 1,12,16 --repeat 2 \
  > $OUT/engine_sgemm_scaling.txt 2>&1
grep -E "^  workers|^  engines" $OUT/engine_sgemm_scaling.txt
stamp "build SHOC BFS"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/nat --build /tmp/rb --rounds 1 \
  --modes native --jobs 16 --apps shoc_bfs > /tmp/nat.txt 2>&1 || tail -5 /tmp/nat.txt
stamp "SHOC BFS with traces, replayed from memory by both engines at 12 and 1 workers"
ARGS=$(manifest_args shoc_bfs)
(cd /tmp/rb && REUSELENS_ONLINE_ANALYSIS=0 timeout 90 reuselens profile --no-analyze --traces --run-dir /tmp/tr_bfs -- ./shoc_bfs $ARGS > /dev/null 2>&1)
timeout 200 python3 benchmarks/replay_speed.py /tmp/tr_bfs --workers 12,1 --repeat 1 \
  --engine $BEFORE,installed --check-equal 2>&1 | tee $OUT/replay_bfs.txt | tail -9
stamp done
