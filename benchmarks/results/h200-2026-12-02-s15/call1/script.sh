#!/usr/bin/env bash
# Session 15, call 1: session 14's final engine on the GPU (value tests, cases re-recorded, sampling), the value
# cost over the suite, and value reports of the apps (for the fixes and the approximate typing).
set -uo pipefail
export PYTHONUNBUFFERED=1
exec > >(tee "$OUT/log.txt") 2>&1
REPO=$PWD
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > /tmp/setup.txt 2>&1 || { tail -30 /tmp/setup.txt; tail -40 $OUT/pip_build.txt; exit 1; }
stamp "gpu tests: values + collector"
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu_values.py tests/collector/test_gpu.py 2>&1 | tail -15
stamp "fixtures"
nvcc -O3 -lineinfo -arch=sm_90 -o /tmp/vr tests/gpu/value_redundancy.cu
mkdir -p /tmp/fx && cd /tmp/fx
for c in reload reload_poked table table_rewritten flags_silent flags_changed sparse vector shared replicated; do
  timeout 60 reuselens profile --values --traces --no-analyze --run-dir /tmp/fx/$c -- /tmp/vr $c > /tmp/fx/$c.log 2>&1 || { echo "FAIL $c"; tail -3 /tmp/fx/$c.log; }
done
cd $REPO; tar czf $OUT/value_fixtures.tgz -C /tmp/fx --exclude='*.log' .
stamp "suite: collect vs values"
timeout 300 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 2 --modes native,collect,values --jobs 16 --apps cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort 2>&1 | tee $OUT/realapps_values.txt | grep -v "^build\|^round" | tail -16
cp /tmp/rv/realapps.json $OUT/ 2>/dev/null
grep -h "exit: engine: engine steps" /tmp/rv/runs/r1/*-values/collector.log | cut -c1-300
stamp "sampling"
python3 - 2>&1 <<'PY' | tee $OUT/sampling.txt
import json, subprocess, time
from reuselens.analyzer.values import program_summary
m = {a["name"]: a for a in json.load(open("benchmarks/realapps/manifest.json"))["apps"]}
for name in ["pb_fdtd2d", "shoc_sort"]:
    for label, extra in [("values", ["--values"]), ("values/4", ["--values", "--values-every", "4"])]:
        run = f"/tmp/s_{name}_{label.replace('/', '_')}"
        t0 = time.time()
        subprocess.run(["timeout", "60", "reuselens", "profile", "--no-analyze", *extra, "--run-dir", run, "--",
                        f"/tmp/rv/build/{name}", *m[name]["args"]], cwd="/tmp/rv/build", capture_output=True)
        collect = time.time() - t0
        subprocess.run(["reuselens", "analyze", run], capture_output=True)
        s = program_summary(json.load(open(f"{run}/report.json"))["kernels"])
        print(f"{name:12s} {label:9s} collect {collect:5.2f} s  " + "  ".join(f"{k} {v:.1%}" for k, v in (s or {}).items()), flush=True)
PY
stamp "value reports + SASS of the apps"
mkdir -p /tmp/vrep
for name in cs_matrixMul cs_transpose cs_reduction pb_lu pb_fdtd2d shoc_bfs shoc_bfs_uiuc shoc_sort pb_gemm pb_mvt; do
  args=$(python3 -c "import json;print(' '.join(next(a for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name']=='$name')['args']))")
  [ -x /tmp/rv/build/$name ] || timeout 120 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --check-only --apps $name > /dev/null 2>&1
  (cd /tmp/rv/build && timeout 60 reuselens profile --values --run-dir /tmp/vrep/$name -- ./$name $args > /tmp/vrep/$name.log 2>&1) || { echo "FAIL $name"; tail -3 /tmp/vrep/$name.log; }
  for c in /tmp/vrep/$name/modules/*.cubin; do [ -f "$c" ] && nvdisasm -c -g "$c" > "$c.sass" 2>/dev/null; done
done
du -sh /tmp/vrep; ls /tmp/vrep/pb_lu
tar czf $OUT/value_reports.tgz -C /tmp/vrep --exclude='traces' --exclude='*.trace*' .
ls -la $OUT
stamp done
