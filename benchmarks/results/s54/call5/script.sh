#!/usr/bin/env bash
# Session 54, call 5: issue 14's two ingestion figures on the final engine (unchanged since session 52): the 40-step
# PyTorch training loop natively and under `profile --no-analyze` (records per second end to end), and the random
# gather over a 256 MB table at one and twelve engine workers (M lane-accesses per second per worker).
#   bash benchmarks/results/s54/call5/script.sh   (carry .whl)
source benchmarks/device_call.sh
pytorch_loop 40
stamp "engine.py --pattern gather, 256 MB, 1 and 12 workers"
timeout 120 python3 benchmarks/engine.py --pattern gather --workers 1,12 --repeat 2 > "$OUT/engine_gather.txt" 2>&1
grep -E "^cold|^warm|workers|slowest" "$OUT/engine_gather.txt" | cut -c1-170
stamp done
