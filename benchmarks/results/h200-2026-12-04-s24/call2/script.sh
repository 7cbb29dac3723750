#!/usr/bin/env bash
# Session 24, call 2: coalesced shadow segments (docs/engine.md, "Shadow memory"; REUSELENS_SHADOW_SEGMENTS=0 turns
# them off). 1. GPU tests. 2. Traces of five suite apps replayed with segments on and off at 12 workers: the
# results (every kernel, edge and distribution, and the object touches) must be equal. 3. Replay speed at 1 and
# 12 workers, on / off. 4. The collector paired with itself, segments off (A) / on (B), eight apps, 3 rounds.
# Run from the repository root with .whl/, .whl-lsp/ and benchmarks/realapps/src carried:
#   bash benchmarks/results/h200-2026-12-04-s24/call2/script.sh
source benchmarks/device_call.sh
SHORT=cs_matrixMul,cs_transpose,cs_reduction,pb_lu,pb_fdtd2d,shoc_bfs,shoc_bfs_uiuc,shoc_sort
stamp "GPU tests"
timeout 300 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py 2>&1 | tail -3
stamp "build the apps, record traces"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps $SHORT > /dev/null 2>&1
cd /tmp/rv/build || exit 1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/seg/pb_fdtd2d -- ./pb_fdtd2d > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:100 --run-dir /tmp/seg/cs_transpose -- ./cs_transpose -dimX=256 -dimY=256 > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:200 --run-dir /tmp/seg/pb_lu -- ./pb_lu > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:60 --run-dir /tmp/seg/cs_reduction -- ./cs_reduction --n=1048576 > /dev/null 2>&1
timeout 60 reuselens profile --no-analyze --traces --launch-range 0:10 --run-dir /tmp/seg/shoc_bfs_uiuc -- ./shoc_bfs_uiuc -s 4 --passes 1 --algo 2 > /dev/null 2>&1
cd - > /dev/null || exit 1
du -sh /tmp/seg/* | cat
cat > /tmp/replay_equal.py <<'PY'
import json, sys
from pathlib import Path
from reuselens.analyzer import replay
run, out = sys.argv[1], Path(sys.argv[2])
touches = out.with_suffix(".touches.json")
result = replay.replay_run(run, workers=12, object_touches_to=touches)
stats = result.pop("stats", None)
out.write_text(json.dumps({"result": result, "touches": json.loads(touches.read_text()), "stats": stats}, sort_keys=True))
PY
stamp "replays, segments on and off, 12 workers: equal results"
for R in /tmp/seg/*; do
  a=$(basename $R)
  timeout 120 python3 /tmp/replay_equal.py $R /tmp/eq_on_$a.json || echo "$a: replay (on) failed"
  REUSELENS_SHADOW_SEGMENTS=0 timeout 120 python3 /tmp/replay_equal.py $R /tmp/eq_off_$a.json || echo "$a: replay (off) failed"
  python3 - /tmp/eq_on_$a.json /tmp/eq_off_$a.json $a <<'PY'
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
same = on["result"] == off["result"] and on["touches"] == off["touches"]
s_on, s_off = on["stats"] or {}, off["stats"] or {}
print(f"{sys.argv[3]:15s} equal: {same}; kernels {len(on['result']['kernels'])}, edges {sum(len(k['edges']) for k in on['result']['kernels'])}; "
      f"records {s_on.get('records')}, as segments on/off {s_on.get('segment_records')}/{s_off.get('segment_records')}; "
      f"peak shadow on/off {s_on.get('peak_shadow_bytes')}/{s_off.get('peak_shadow_bytes')}")
PY
done
stamp "replay speed, 1 and 12 workers, segments on / off"
for R in pb_fdtd2d cs_transpose pb_lu cs_reduction shoc_bfs_uiuc; do
  for S in 1 0; do
    echo "-- $R segments=$S"
    REUSELENS_SHADOW_SEGMENTS=$S timeout 150 python3 benchmarks/replay_speed.py /tmp/seg/$R --workers 1,12 --repeat 3 2>&1 | grep "workers\|launches"
  done
done
stamp "collectors paired: segments off (A) / on (B), 3 rounds"
timeout 220 python3 benchmarks/ab_collector.py --a off=installed,REUSELENS_SHADOW_SEGMENTS=0 --b on=installed --apps $SHORT --rounds 3 --out /tmp/ab_seg --build /tmp/rv/build 2>&1 | grep -v "^round \|^build "
cp /tmp/ab_seg/ab_collector.json $OUT/ab_segments.json
for d in /tmp/ab_seg/runs/r2/*-on; do echo "$(basename $d): $(grep -h "engine steps" $d/collector.log | sed "s/.*engine steps, //" | cut -c1-330)"; done
stamp done
