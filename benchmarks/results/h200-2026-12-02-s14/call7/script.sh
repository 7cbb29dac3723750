#!/usr/bin/env bash
# Session 14, call 7: value mode with launch sampling (--values-every) on the GPU; its effect on time and fractions.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: values"
timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -4
stamp "sampling effect"
timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --check-only --apps pb_fdtd2d,cs_matrixMul,shoc_sort,shoc_bfs 2>&1 | grep -v " ok " | tail -3
python3 - 2>&1 <<'PY' | tee $OUT/sampling.txt
import json, subprocess, time
from reuselens.analyzer.values import program_summary
m = {a["name"]: a for a in json.load(open("benchmarks/realapps/manifest.json"))["apps"]}
for name in ["pb_fdtd2d", "cs_matrixMul", "shoc_sort", "shoc_bfs"]:
    for label, extra in [("collect", []), ("values", ["--values"]), ("values/4", ["--values", "--values-every", "4"])]:
        run = f"/tmp/s_{name}_{label.replace('/', '_')}"
        t0 = time.time()
        p = subprocess.run(["timeout", "120", "reuselens", "profile", "--no-analyze", *extra, "--run-dir", run, "--",
                            f"/tmp/ra/build/{name}", *m[name]["args"]], cwd="/tmp/ra/build", capture_output=True, text=True)
        collect = time.time() - t0
        line = f"{name:14s} {label:9s} collect {collect:6.2f} s"
        if extra:
            t1 = time.time()
            subprocess.run(["reuselens", "analyze", run], capture_output=True, text=True)
            rep = json.load(open(f"{run}/report.json"))
            s = program_summary(rep["kernels"])
            line += f"  analyze {time.time() - t1:5.2f} s  " + "  ".join(f"{k} {v:.1%}" for k, v in (s or {}).items())
        print(line, flush=True)
PY
stamp done
