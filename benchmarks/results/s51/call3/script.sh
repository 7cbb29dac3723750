#!/usr/bin/env bash
# Session 51, call 3, with the 278 s of device time three failed starts left: the GPU tests on the final engine
# (wide units per allocation, 8b49eb3), then PolyBench mvt natively and collected with REUSELENS_ENGINE_WIDE_UNITS=1
# and 0, one round each, and the collectors' wide-batch counts.
#   LIMIT=150 bash benchmarks/results/s51/call3/script.sh   (carry .whl, benchmarks/realapps/src)
source benchmarks/device_call.sh
LIMIT=${LIMIT:-150}
left() { echo $((LIMIT - $(date +%s) + T0)); }
nvidia-smi --query-gpu=name --format=csv,noheader
gpu_tests
stamp "clean install"
timeout 60 bash benchmarks/clean_install.sh /tmp/clean | tail -1
[ -x /tmp/clean/bin/reuselens ] || { echo "clean install failed"; exit 1; }
for wide in native 1 0; do
  [ "$(left)" -gt 20 ] || break
  if [ $wide = native ]; then modes=native; else modes=collect; export REUSELENS_ENGINE_WIDE_UNITS=$wide; fi
  stamp "mvt $modes (wide units $wide)"
  timeout $(($(left) - 5)) python3 benchmarks/realapps.py --src benchmarks/realapps/src --out "/tmp/mvt_$wide" \
    --build /tmp/mvt-build --rounds 1 --modes $modes --jobs 16 --reuselens /tmp/clean/bin/reuselens --apps pb_mvt \
    > "$OUT/mvt_$wide.txt" 2>&1
  grep "$modes " "$OUT/mvt_$wide.txt"
  log=$(ls /tmp/mvt_$wide/runs/r0/*-collect/collector.log 2>/dev/null) && cp "$log" "$OUT/mvt_$wide.log" &&
    grep -h "engine steps\|launch ends waited" "$log" | sed 's/.*exit: //'
done
stamp done
