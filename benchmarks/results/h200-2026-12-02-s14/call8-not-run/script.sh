#!/usr/bin/env bash
# Session 14, call 8: value GPU tests on the final semantics; the value cases re-recorded; sampling effect again.
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; exit 1; }
stamp "gpu tests: values"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py 2>&1 | tail -2
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared replicated; do
  timeout 30 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || echo "FAIL $c"
done
cd - > /dev/null; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
stamp "sampling"
timeout 60 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ra --rounds 1 --modes native --jobs 16 --check-only --apps pb_fdtd2d,shoc_sort 2>&1 | grep -v " ok " | tail -2
python3 - 2>&1 <<'PY' | tee $OUT/sampling.txt
import json, subprocess, time
from reuselens.analyzer.values import program_summary
m = {a["name"]: a for a in json.load(open("benchmarks/realapps/manifest.json"))["apps"]}
for name in ["pb_fdtd2d", "shoc_sort"]:
    for label, extra in [("values", ["--values"]), ("values/4", ["--values", "--values-every", "4"])]:
        run = f"/tmp/s_{name}_{label.replace('/', '_')}"
        t0 = time.time()
        subprocess.run(["timeout", "60", "reuselens", "profile", "--no-analyze", *extra, "--run-dir", run, "--",
                        f"/tmp/ra/build/{name}", *m[name]["args"]], cwd="/tmp/ra/build", capture_output=True)
        collect = time.time() - t0
        subprocess.run(["reuselens", "analyze", run], capture_output=True)
        s = program_summary(json.load(open(f"{run}/report.json"))["kernels"])
        print(f"{name:12s} {label:9s} collect {collect:5.2f} s  " + "  ".join(f"{k} {v:.1%}" for k, v in (s or {}).items()), flush=True)
PY
stamp done
