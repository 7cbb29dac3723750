#!/usr/bin/env bash
# Session 26, call 4: d0f4813 (the engine as in call 3). 1. One step of the PyTorch loop recorded with traces; the
# first 1.2 M records of its largest launch (the 64x64-tile cuBLAS SGEMM, 59% of the step's records) brought back
# compressed, for profiling on the development machine (call 3 brought more files than come back, and lost it).
# 2. The 40-step loop collected online with the default split of the cores (12 engine workers, 4 queue copy
# threads) and with 14 and 2, alternating, twice each: with packed records the copy threads unpack as well as copy.
#   bash benchmarks/results/h200-2026-12-04-s26/call4/script.sh
source benchmarks/device_call.sh
REPO=$PWD
stamp "PyTorch loop, 1 step, traces, engine off"
(cd /tmp && REUSELENS_ONLINE_ANALYSIS=0 timeout 150 reuselens profile --no-analyze --traces --run-dir /tmp/pt_tr -- python3 $REPO/benchmarks/pytorch_memory_step.py 1 > /tmp/pt_tr.log 2>&1); tail -1 /tmp/pt_tr.log
cp /tmp/pt_tr/run.json $OUT/pt_run.json
timeout 120 python3 - <<'PY'
import json, struct, subprocess
run = json.load(open("/tmp/pt_tr/run.json"))
n, t = max((l.get("records", 0), l["trace"]) for l in run["launches"] if l.get("trace"))
with open(f"/tmp/pt_tr/{t}", "rb") as f:
    head = f.read(64)
    hb, rb = struct.unpack_from("<II", head, 12)
    f.seek(0)
    hdr = bytearray(f.read(hb))
    keep = min(n, 1_200_000)
    struct.pack_into("<Q", hdr, 32, keep)
    body = f.read(keep * rb)
name = t.split("/")[-1]
open(f"/tmp/slice_{name}", "wb").write(bytes(hdr) + body)
subprocess.run(f"xz -T16 -6 -c /tmp/slice_{name} > $OUT/slice_{name}.xz", shell=True, check=True)
print(name, n, "records, kept", keep)
PY
ls -la $OUT
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
for i in 1 2; do
  for split in 12,4 14,2; do
    stamp "PyTorch loop, 40 steps, collect, engine workers / copy threads $split"
    REUSELENS_ENGINE_WORKERS=${split%,*} REUSELENS_QUEUE_COPY_THREADS=${split#*,} timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_${i}_${split/,/_} --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
    grep -h "engine steps\|launch ends waited" /tmp/pt_${i}_${split/,/_}/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-330
  done
done
stamp done
