#!/usr/bin/env bash
# Session 14, call 6: value mode again (replicated case, fixtures re-recorded), and value findings on real apps.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: values"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py 2>&1 | tail -8
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared replicated; do
  timeout 60 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || { echo "FAIL $c"; tail -3 /tmp/fx/$c.log; }
done
cd $REPO; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
stamp "real apps with values"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --check-only --apps cs_reduction,pb_lu,shoc_sort,cs_transpose,pb_fdtd2d,shoc_bfs_uiuc,cs_matrixMul 2>&1 | grep -v " ok " | tail -3
python3 - > $OUT/realapp_values.txt 2>&1 <<'PY'
import json, subprocess, sys, time
m = {a["name"]: a for a in json.load(open("benchmarks/realapps/manifest.json"))["apps"]}
for name in ["cs_reduction", "pb_lu", "shoc_sort", "cs_transpose", "pb_fdtd2d", "shoc_bfs_uiuc", "cs_matrixMul"]:
    run = f"/tmp/rv_{name}"
    t0 = time.time()
    p = subprocess.run(["timeout", "120", "reuselens", "profile", "--values", "--run-dir", run, "--", f"/tmp/ra/build/{name}", *m[name]["args"]],
                       cwd="/tmp/ra/build", capture_output=True, text=True)
    wall = time.time() - t0
    print(f"=== {name}: rc {p.returncode}, {wall:.2f} s")
    try:
        rep = json.load(open(f"{run}/report.json"))
    except Exception as e:
        print("no report", e, p.stderr[-500:]); continue
    loads = compared = same = lanes = zero = silent = stores = 0
    for k in rep["kernels"]:
        for n in k["nodes"]:
            v = n.get("values")
            if not v: continue
            if n["type"] == "read": lanes += v["lanes"]; zero += v["zero"]
            if n["type"] == "write": stores += v["lanes"]; silent += v["silent"]
        for e in k["edges"]:
            compared += e.get("value_loads", 0); same += e.get("same_value", 0)
            if k["nodes"][0] is not None: pass
        for f in k.get("findings", []):
            if f["pattern"] in ("value-reload", "silent-store", "zero-operands", "value-uniform"):
                ids = {n["id"]: n for n in k["nodes"]}
                src = ids[f["pcs"][0]].get("source") or {}
                loc = f"{str(src.get('file', '?')).rsplit('/', 1)[-1]}:{src.get('line')}"
                print(f"  {f['pattern']:14s} {str(f.get('scope')):13s} {k['mangled'][:40]:40s} {loc:28s} {f['message'][:170]}")
    print(f"  program: load lane-granules compared {compared}, same {same} ({same/max(compared,1):.1%}); zero loads {zero/max(lanes,1):.1%}; silent stores {silent/max(stores,1):.1%}")
PY
cat $OUT/realapp_values.txt | head -80
stamp done
