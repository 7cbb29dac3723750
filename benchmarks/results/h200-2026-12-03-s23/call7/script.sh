#!/usr/bin/env bash
# Session 23, call 7: issue 14's irregular-access engine target on the H200 host, last measured on the 2-core
# development machine only: benchmarks/engine.py --pattern gather and strided (256 MB footprint, about 1 M records,
# 33.6 M lane-accesses), 1 and 12 workers, cold and warm, best of 2.
# Run from the repository root with .whl/ carried:
#   bash benchmarks/results/h200-2026-12-03-s23/call7/script.sh
source benchmarks/device_call.sh
for p in gather strided; do
  stamp "engine.py --pattern $p"
  timeout 200 python3 benchmarks/engine.py --pattern $p --workers 1,12 --repeat 2 2>&1 | grep -v "^ *ms per step, mean\|hand-over"
done
stamp done
