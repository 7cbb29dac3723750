#!/usr/bin/env bash
# Session 26, call 6 (the session's last device time, about 280 s): the engine folding a shared record's outcomes
# per record in replay_shared_groups. 1. One step of the PyTorch loop recorded with traces and replayed at 12
# workers by the engine before the change (engine.patch taken back) and this one, every result checked equal.
# 2. The 40-step loop, native and collected.
#   bash benchmarks/results/h200-2026-12-04-s26/call6/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s26/call6
REPO=$PWD
stamp "the engine before the change"
OLD=$(timeout 120 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/old -R 2> /tmp/old.txt | grep "_engine") || tail -20 /tmp/old.txt
stamp "PyTorch loop, 1 step, traces, engine off"
(cd /tmp && REUSELENS_ONLINE_ANALYSIS=0 timeout 60 reuselens profile --no-analyze --traces --run-dir /tmp/pt_tr -- python3 $REPO/benchmarks/pytorch_memory_step.py 1 > /tmp/pt_tr.log 2>&1); tail -1 /tmp/pt_tr.log
stamp "replays at 12 workers, results checked equal"
[ -n "$OLD" ] && timeout 90 python3 benchmarks/replay_speed.py /tmp/pt_tr --workers 12 --repeat 2 --engine $OLD,installed --check-equal
stamp "PyTorch loop, 40 steps, native"
timeout 30 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 25 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 90 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect --timeout 85 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-330
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp done
