#!/usr/bin/env bash
# Session 26, call 1: session 25's prepared script (../../h200-2026-12-04-s25/next/script.sh) with its patch applied
# (queue_unpack.patch: packed records unpacked by the engine queue's copy threads; REUSELENS_QUEUE_UNPACK=0 leaves
# them to the engine's workers), minus its second pairing (engine unpacking, measured in session 25).
#   bash benchmarks/results/h200-2026-12-04-s26/call1/script.sh
# 1. The packed == full GPU test. 2. Fidelity against ncu with packing on. 3. Paired: full (A) / packed with the
# queue unpacking (B), eight apps, 3 rounds. 4. SHOC BFS (UIUC), packed and full records compared, findings diffed.
# 5. The PyTorch loop, 40 steps: native, full, packed.
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU test: packed == full"
timeout 120 python3 -m pytest -q tests/collector/test_gpu_packed.py 2>&1 | grep "passed\|failed\|Error" | tail -5
REUSELENS_PACKED_RECORDS=1 fidelity_against_ncu
stamp "paired: full / packed, the queue unpacking"
timeout 200 python3 benchmarks/ab_collector.py --a full=installed --b queue=installed,REUSELENS_PACKED_RECORDS=1 --apps $SHORT --rounds 3 --out /tmp/ab_q --build /tmp/rb 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_q/ab_collector.json $OUT/ab_queue_unpack.json 2>/dev/null
# SHOC BFS (UIUC) gave 41 findings in every packed run of session 25 (seven) and 40 in every full one of session 24
# (five), with the same record count: are its records the same, lane for lane (then the difference is their order,
# i.e. the kernels' timing), and which finding differs?
stamp "shoc_bfs_uiuc: packed and full records compared, findings diffed"
B=/tmp/rb/shoc_bfs_uiuc; ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'shoc_bfs_uiuc')))")
for P in 0 1; do (cd /tmp/rb && REUSELENS_PACKED_RECORDS=$P timeout 60 reuselens profile --traces --run-dir /tmp/bfsu$P -- $B $ARGS > /tmp/bfsu$P.log 2>&1); done
PYTHONPATH=tests/collector:tests timeout 120 python3 - <<'PY'
import json, sys
sys.path.insert(0, "tests/collector")
from test_gpu_packed import _canonical
full, packed = _canonical(__import__("pathlib").Path("/tmp/bfsu0")), _canonical(__import__("pathlib").Path("/tmp/bfsu1"))
same = sum(full.get(k) == v for k, v in packed.items())
print(f"launches with the same records: {same} of {len(packed)} (full has {len(full)})")
def findings(run):
    r = json.load(open(f"{run}/report.json"))
    return {(k.get("name") or k.get("mangled"), f["pattern"], f["id"]) for k in r["kernels"] for f in k["findings"]}
a, b = findings("/tmp/bfsu0"), findings("/tmp/bfsu1")
print("findings full / packed:", len(a), len(b), "only full:", sorted(a - b)[:5], "only packed:", sorted(b - a)[:5])
PY
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
for P in 0 1; do
  stamp "PyTorch loop, 40 steps, collect, REUSELENS_PACKED_RECORDS=$P"
  REUSELENS_PACKED_RECORDS=$P timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_$P --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
  grep -h "engine steps\|launch ends waited\|queue" /tmp/pt_$P/runs/*/collector.log 2>/dev/null | tail -4 | cut -c1-400
  cp /tmp/pt_$P/pytorch_overhead.json $OUT/pytorch_collect_packed$P.json 2>/dev/null
done
stamp done
