#!/usr/bin/env bash
# Session 15, call 5: why the LU store guard removed no store: the fixed kernel's SASS and silent counts, and a
# guard on the product instead, measured the same way.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
python3 - <<'PY'
import json, shutil, subprocess, sys
from pathlib import Path
sys.path.insert(0, "benchmarks")
import realapp_fixes as rf, realapps
from program_steps import ncu_measure
m = json.load(open("benchmarks/realapps/manifest.json"))
app = next(a for a in m["apps"] if a["name"] == "pb_lu")
src = Path("benchmarks/realapps/src").resolve()
fix = next(f for f in rf.VALUE_FIXES if f.name == "lu_guard_silent_store")
product = rf.Fix(**{**fix.__dict__, "name": "lu_guard_product", "patch": (rf.Replacement(
    "A[i*N + j] = A[i*N + j] - A[i*N + k] * A[k*N + j];",
    "const DATA_TYPE p = A[i*N + k] * A[k*N + j];\n\t\tif (p != 0.0f) A[i*N + j] = A[i*N + j] - p;"),)})
out = Path("/tmp/lu"); out.mkdir(exist_ok=True)
bins = {}
for label, f in [("original", None), ("guard", fix), ("product", product)]:
    tree = out / label / app["source"]
    shutil.copytree(src / app["source"], tree, dirs_exist_ok=True)
    if f: rf.fix_tree(tree, f)
    b = out / label / "pb_lu"; b.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(realapps.build_command(m, app, out / label, b), check=True, cwd=b.parent)
    bins[label] = b
    sass = subprocess.run(["cuobjdump", "-sass", "-fun", "_Z10lu_kernel2iPfi", str(b)], capture_output=True, text=True).stdout
    print("==", label, [l.strip()[:70] for l in sass.splitlines() if any(t in l for t in ("STG", "LDG", "FSETP", "FADD", "FFMA"))])
    r = ncu_measure("ncu", [str(b)], "lu_kernel2", out / f"{label}.csv", timeout=120, cwd=b.parent, window=(0, 40),
                    metrics=("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "gpu__time_duration.sum"))
    print("  ncu", r)
    run = out / label / "run"
    subprocess.run(["reuselens", "profile", "--values", "--kernel-filter", "lu_kernel2", "--run-dir", str(run), "--", str(b)], capture_output=True, cwd=b.parent)
    rep = json.loads((run / "report.json").read_text())
    for k in rep["kernels"]:
        for n in k["nodes"]:
            if n.get("type") == "write" and n.get("values"):
                print("  store", hex(n["pc"]), (n.get("source") or {}).get("line"), n["values"], "executions", n["executions"])
PY
