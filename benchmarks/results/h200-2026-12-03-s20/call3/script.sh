#!/usr/bin/env bash
# Session 20, call 3: the engine queue's bound. The short apps are engine-bound (call 2), and a queue that never
# empties walks its whole 1 GiB ring, which streams through the host's 300 MiB L3 and evicts the shadow the engine
# works on. Paired with the default (1 GiB): the same collector with 256 MiB and 128 MiB queues on five apps
# (`ab_collector.py`, a side's settings after its library), then the PyTorch loop (10 steps) with 1 GiB and
# 128 MiB, alternating. Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s20/call3/script.sh
source benchmarks/device_call.sh
APPS=pb_fdtd2d,shoc_bfs,cs_transpose,cs_matrixMul,shoc_sort
for Q in 128 256; do
  stamp "collectors paired: queue 1 GiB, $Q MiB"
  timeout 150 python3 benchmarks/ab_collector.py --a q1g=installed --b q$Q=installed,REUSELENS_ENGINE_QUEUE_BYTES=$((Q << 20)) --apps $APPS --rounds 3 --out /tmp/ab$Q --build /tmp/ab/build 2>&1 | grep -v "^round \|^build "
done
stamp "PyTorch loop, 10 steps: native, then collect with 1 GiB and 128 MiB queues, twice"
timeout 60 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_n --steps 10 --rounds 1 --modes native --timeout 50 2>&1 | grep "native:"
for r in 1 2; do
  for Q in 1024 128; do
    REUSELENS_ENGINE_QUEUE_BYTES=$((Q << 20)) timeout 120 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_${Q}_$r --steps 10 --rounds 1 --modes collect --timeout 100 2>&1 | grep "collect:" | sed "s/^/queue $Q MiB, round $r: /"
  done
done
stamp done
