#!/usr/bin/env bash
# Session 31's call 6: the 40-step PyTorch training loop (issue 14: <= 3x native), natively and under
# `reuselens profile --no-analyze`, one round each, as session 27's call 1 ran it (6.1x then), with the engine of
# sessions 30 and 31 (the shared shapes cut its cuBLAS SGEMM records' routing step by half).
#   bash benchmarks/results/h200-2026-12-05-s31/call6/script.sh
source benchmarks/device_call.sh
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native \
  --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect \
  --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited\|drain thread" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -3 | cut -c1-400
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp done
