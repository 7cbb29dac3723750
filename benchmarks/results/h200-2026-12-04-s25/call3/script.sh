#!/usr/bin/env bash
# Session 25, call 3: packed records, each worker unpacking the pieces it takes in phase 1 (call 1 unpacked on the
# consuming thread alone, call 2 in a round of the workers of its own; the engine fell behind the GPU both times).
# 1. The packed == full GPU test on four programs. 2. The collector paired with itself, records full / packed, eight
# apps, 3 rounds. 3. The suite, 2 rounds, from a user's install, with each collect run's launch span, waits, the
# engine's finish after the exit and bytes per record.
#   bash benchmarks/results/h200-2026-12-04-s25/call3/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU test: packed == full"
timeout 240 python3 -m pytest -q tests/collector/test_gpu_packed.py 2>&1 | grep -v "Warning\|warn\|^$\|asyncio\|Docs:" | tail -25
stamp "paired: full / packed records"
timeout 200 python3 benchmarks/ab_collector.py --a full=installed,REUSELENS_PACKED_RECORDS=0 --b packed=installed --apps $SHORT --rounds 3 --out /tmp/ab_packed --build /tmp/rb 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_packed/ab_collector.json $OUT/ab_packed.json 2>/dev/null
short_suite 2 --keep-runs --build /tmp/rb
stamp "launch ends' waits and slots per collect run"
for d in /tmp/rf/runs/r1/*-collect; do
  python3 - "$d/collector.log" "$(basename $d)" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
stamps = [float(m[1]) for m in re.finditer(r"^\[\s*([0-9.]+)\] launch \d+: ", log, re.M)]
recs = sum(int(m[1]) for m in re.finditer(r"launch \d+: (\d+) records in", log))
slots = sum(int(m[1]) for m in re.finditer(r"records in (\d+) slots", log))
ends = re.search(r"exit: launch ends waited ([0-9.]+) s for their kernels and ([0-9.]+) s", log)
eng = re.search(r"exit: engine finished in ([0-9.]+) s", log)
span = stamps[-1] - stamps[0] if stamps else 0
print(f"{sys.argv[2]:24s} launches {len(stamps):5d}, span {span:.3f} s; waits: kernels {ends[1] if ends else '-'} s, "
      f"last records {ends[2] if ends else '-'} s; engine after exit {eng[1] if eng else '-'} s; "
      f"{recs} records, {32 * slots / max(recs, 1):.1f} bytes each")
PY
done
mkdir -p $OUT/logs; for a in cs_transpose pb_fdtd2d; do cp /tmp/rf/runs/r1/$a-collect/collector.log $OUT/logs/$a-collect.log 2>/dev/null; done
stamp done
