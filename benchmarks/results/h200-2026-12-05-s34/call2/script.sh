#!/usr/bin/env bash
# Session 34, call 2: the engine alone on this host.
# 1. This session's closed forms of the shared replay (shared_closed_forms.patch = git diff f243ac0 6fcfa57 --
#    analyzer/engine: fragments that lanes read in pairs, found without a quadratic search since session 35; any
#    footprints that share no word, consecutive or not, labelled in one pass), the engine without them (built beside, the patch taken back) and with them, engine.py at 1 and 12
#    workers: gemm-pairs, fragments, fragments-swizzled (the shapes), sgemm (the recorded cuBLAS slice).
# 2. Session 33's hand-over on the engine alone: engine.py at twelve workers, records whole and as handed over
#    (bfs, strided); the unpacking's cost per record (unpack_speed.py).
#   bash benchmarks/results/h200-2026-12-05-s34/call2/script.sh   (carry .whl)
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-05-s34/call2
collector_beside $D/shared_closed_forms.patch /tmp/before_shared -R
beside_lib /tmp/before_shared || exit 1
BEFORE_ENGINE=$(grep -m1 "_engine" /tmp/before_shared.build.txt)
engine_pairs "$BEFORE_ENGINE" gemm-pairs fragments fragments-swizzled sgemm
for pattern in bfs strided; do  # the engine alone at twelve workers, records whole and as handed over
  for how in "" --handed-over; do
    stamp "engine.py $pattern ${how:-whole}, 12 workers"
    timeout 60 python3 benchmarks/engine.py --pattern $pattern --workers 12 --repeat 2 $how \
      > $OUT/handed_$pattern${how:+_handed}.txt 2>&1
    grep -A2 '^warm' $OUT/handed_$pattern${how:+_handed}.txt | tail -2 | cut -c1-140
  done
done
stamp "unpack speed, one thread"
timeout 90 python3 benchmarks/unpack_speed.py > $OUT/unpack_speed.txt 2>&1; tail -8 $OUT/unpack_speed.txt
(cd $OUT && tar czf engine.tgz engine_*.txt handed_*.txt unpack_speed.txt && rm engine_*.txt handed_*.txt unpack_speed.txt)
stamp done
