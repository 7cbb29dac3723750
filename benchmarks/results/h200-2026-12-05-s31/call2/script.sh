#!/usr/bin/env bash
# Session 31's call 2: call 1 put one worker's block step of the transpose and sgemm patterns 30-40% higher under
# main's engine than under the engine before sessions 30 and 31, run one after the other. Alternating three engines
# (before both sessions: engine.patch taken back; before session 31: session31.patch taken back; main) for three
# rounds tells host drift from a change, and which session's.
#   bash benchmarks/results/h200-2026-12-05-s31/call2/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s31/next
stamp "the engines before sessions 30-31 and before session 31"
timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/before -R > /tmp/before.txt 2>&1 &
B1=$!
timeout 240 bash benchmarks/build_revision.sh --patch $D/session31.patch /tmp/mid -R > /tmp/mid.txt 2>&1 &
B2=$!
wait $B1
wait $B2
BEFORE=$(grep "_engine" /tmp/before.txt)
MID=$(grep "_engine" /tmp/mid.txt)
[ -n "$BEFORE" ] && [ -n "$MID" ] || { tail -20 /tmp/before.txt /tmp/mid.txt; exit 1; }
for round in 1 2 3; do
  for pattern in transpose sgemm; do
    for engine in "$BEFORE" "$MID" installed; do
      name=$([ "$engine" = installed ] && echo main || { [ "$engine" = "$MID" ] && echo s30 || echo before; })
      timeout 60 python3 benchmarks/engine.py --pattern $pattern --workers 1 --repeat 2 --engine "$engine" \
        > $OUT/ab_${pattern}_${name}_$round.txt 2>&1
      echo "$pattern $name r$round: $(grep -E '^  workers' $OUT/ab_${pattern}_${name}_$round.txt | awk '{print $3}' | tr '\n' ' ')| $(grep slowest $OUT/ab_${pattern}_${name}_$round.txt | sed 's/.*route *\([0-9.]*\) *blocks *\([0-9.]*\) *global *\([0-9.]*\)/route \1 blocks \2 global \3/' | tr '\n' ' ')"
    done
  done
done
stamp done
