#!/usr/bin/env bash
# Session 31, call 7: the 40-step PyTorch loop, native and collect interleaved, 2 rounds.
source benchmarks/device_call.sh
stamp "PyTorch loop, 40 steps, native and collect interleaved, 2 rounds"
timeout 400 python3 benchmarks/pytorch_overhead.py --out /tmp/pt2 --steps 40 --rounds 2 --modes native,collect --timeout 110 2>&1 | tail -6
cp /tmp/pt2/pytorch_overhead.json $OUT/ 2>/dev/null
stamp done
