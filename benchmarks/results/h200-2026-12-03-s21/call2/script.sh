#!/usr/bin/env bash
# Session 21, call 2: the object-level cost (issue 18) from a user's install, next to the GPU image's interpreter.
# benchmarks/clean_install.sh builds the wheel and installs it into a fresh virtual environment (no .pth start-up
# hooks: call 1 measured the image's at ~70 ms of every Python start). Code: call 1's plus main() no longer
# configuring logging before the app starts (f8d5cf3).
# 1. realapps.py --modes native,objects,intra, 3 rounds, twelve apps, the clean install's console script;
# 2. the same, native,objects, 2 rounds, the image's (editable) install, as calls before;
# 3. launcher_phases.py on pb_lu with the clean install; the interpreters' start-up;
# 4. the eight short apps, native,collect,full, 2 rounds, clean install (issue 14's figures from a user's install).
# Run from the repository root with .whl/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-03-s21/call2/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}; $(ls reuselens/cli/__pycache__ 2>/dev/null | wc -l) pyc in the checkout's reuselens/cli"
stamp "clean install"
CLEAN=$(timeout 200 bash benchmarks/clean_install.sh /tmp/clean | tail -1) || { echo "clean install failed"; exit 1; }
echo "$CLEAN"
stamp "interpreters' start-up (median of 15, ms)"
for py in python3 /tmp/clean/bin/python; do $py - "$py" <<'PY'
import statistics, subprocess, sys, time
for label, cmd in [("bare", ["-c", "pass"]), ("reuselens.cli.main", ["-c", "import reuselens.cli.main"])]:
    ts = []
    for _ in range(15):
        t = time.perf_counter(); subprocess.run([sys.executable, *cmd], cwd="/"); ts.append(time.perf_counter() - t)
    print(f"{statistics.median(ts) * 1000:7.1f} ms  {sys.argv[1]} {label}")
PY
done
stamp "object-level and intra-object, twelve apps, 3 rounds, clean install"
timeout 240 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rc --rounds 3 --modes native,objects,intra --jobs 16 --reuselens "$CLEAN" > $OUT/realapps_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_clean.txt | tail -16
cp /tmp/rc/realapps.json $OUT/realapps_clean.json
stamp "object-level, twelve apps, 2 rounds, the image's install"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/ri --build /tmp/rc/build --rounds 2 --modes native,objects --jobs 16 > $OUT/realapps_image.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_image.txt | tail -16
stamp "launcher phases, pb_lu, clean install"
(cd /tmp/rc/build && timeout 60 /tmp/clean/bin/python $OLDPWD/benchmarks/launcher_phases.py --rounds 3 -- ./pb_lu 2>&1 | grep -v "^run written")
stamp "eight short apps, native/collect/full, 2 rounds, clean install"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rf --build /tmp/rc/build --rounds 2 --modes native,collect,full --jobs 16 --apps $SHORT --reuselens "$CLEAN" > $OUT/realapps_full_clean.txt 2>&1; grep -v "^build\|^round" $OUT/realapps_full_clean.txt | tail -12
stamp done
