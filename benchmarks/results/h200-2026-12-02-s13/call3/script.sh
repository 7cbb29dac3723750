#!/usr/bin/env bash
# Session 13, call 3: the session's engine (HEAD) against session 12's last commit (20e50fa, built from
# benchmarks/.s13old) on the same machine: big apps collect, interleaved; engine patterns; GPU tests.
set -uo pipefail
export PYTHONUNBUFFERED=1
O=$OUT/s; mkdir -p $O/logs
exec > >(tee "$O/log.txt") 2>&1
T0=$(date +%s); stamp() { echo "== [$(( $(date +%s) - T0 )) s] $*"; }
stamp setup
source benchmarks/device_setup.sh > $O/setup.txt 2>&1 || { cat $O/setup.txt; exit 1; }
NEW_LIB=$REUSELENS_COLLECTOR_LIB
stamp "old build (20e50fa)"
timeout 240 python3 -m pip install -q --no-deps --no-build-isolation --no-cache-dir --target /tmp/oldpkg ./benchmarks/.s13old > $O/old_build.txt 2>&1 || tail -20 $O/old_build.txt
OLD_LIB=$(find /tmp/oldpkg -name libreuselens_collector.so | head -1); OLD_ENG=$(find /tmp/oldpkg -name "_engine*.so" | head -1)
NEW_ENG=$(python3 -c 'import reuselens.analyzer._engine as e; print(e.__file__)')
echo "old: $OLD_LIB $OLD_ENG"; echo "new: $NEW_LIB $NEW_ENG"
stamp "gpu tests (new)"
timeout 90 python3 -m pytest -q -p no:cacheprovider -rs tests/collector/test_gpu.py 2>&1 | tail -2
ab() {  # ab ROUND VARIANT APPS
  local lib=$NEW_LIB; [ $2 = old ] && lib=$OLD_LIB
  REUSELENS_COLLECTOR_LIB=$lib timeout 260 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ab_$1_$2 --build /tmp/abbuild --rounds 1 --modes native,collect --jobs 16 --apps $3 > $O/ab_$1_$2.txt 2>&1
  grep -E "^(cs_|pb_|shoc_)" $O/ab_$1_$2.txt | awk -v v=$2 -v r=$1 '{print r, v, $1, $2, $3}'
  for a in /tmp/ab_$1_$2/runs/r0/*-collect; do cp $a/collector.log $O/logs/$1_$2_$(basename $a).log 2>/dev/null; done
}
stamp "A/B round 1"
ab 1 old pb_gemm,cs_mergeSort,pb_mvt,cs_sortingNetworks,pb_fdtd2d,shoc_bfs
ab 1 new pb_gemm,cs_mergeSort,pb_mvt,cs_sortingNetworks,pb_fdtd2d,shoc_bfs
stamp "A/B round 2"
ab 2 new pb_gemm,cs_mergeSort,pb_fdtd2d,shoc_bfs,cs_matrixMul
ab 2 old pb_gemm,cs_mergeSort,pb_fdtd2d,shoc_bfs,cs_matrixMul
stamp "engine patterns A/B"
cat > /tmp/eng_ab.py <<'PY'
import sys, importlib.util, importlib.machinery
so = sys.argv[1]; sys.argv = [sys.argv[0]] + sys.argv[2:]
loader = importlib.machinery.ExtensionFileLoader("reuselens.analyzer._engine", so)
spec = importlib.util.spec_from_file_location("reuselens.analyzer._engine", so, loader=loader)
mod = importlib.util.module_from_spec(spec); loader.exec_module(mod)
sys.modules["reuselens.analyzer._engine"] = mod
import reuselens.analyzer; reuselens.analyzer._engine = mod
sys.path.insert(0, "benchmarks"); import runpy; runpy.run_path("benchmarks/engine.py", run_name="__main__")
PY
for p in matvec bitonic mix; do for v in old new; do eng=$NEW_ENG; [ $v = old ] && eng=$OLD_ENG
  timeout 45 python3 /tmp/eng_ab.py $eng --pattern $p --workers 1,12 --repeat 2 > $O/eng_${p}_$v.txt 2>&1
  grep "workers" $O/eng_${p}_$v.txt | sed "s/^/$p $v /" | cut -c1-110; done; done
stamp "full, short apps (new)"
timeout 100 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rc --build /tmp/abbuild --rounds 1 --modes native,full --jobs 16 --apps cs_transpose,cs_reduction,pb_lu,shoc_bfs_uiuc,shoc_sort,cs_matrixMul > $O/full_short.txt 2>&1; tail -9 $O/full_short.txt
stamp done
tar czf $OUT/res.tgz -C $O .
