#!/usr/bin/env bash
# Session 26, call 3: b215b39 (packed records on by default, unpacked by the queue's copy threads; the engine's
# shared footprints labelled whole, two-way edge buffer, wide word window). 1. GPU tests and fidelity against ncu
# with the new default. 2. One step of the PyTorch loop recorded with traces, replayed by the engine of 08c6240
# (engine.patch taken back) and this one at 12 and 1 workers, every result checked equal. 3. The first 1.2 M records
# of its two largest launches brought back compressed (for profiling on the development machine). 4. The 40-step
# loop collected online. 5. SHOC BFS (UIUC) twice packed, twice full: findings and Frontier_copy's reuse ratios.
# 6. The eight short apps, two rounds, from a user's install.
#   bash benchmarks/results/h200-2026-12-04-s26/call3/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s26/call3
REPO=$PWD
stamp "the engine of 08c6240"
OLD=$(timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/old -R 2> /tmp/old.txt | grep "_engine") || tail -20 /tmp/old.txt
echo "old engine: $OLD"
stamp "GPU tests"
timeout 240 python3 -m pytest -q tests/collector/test_gpu.py tests/collector/test_gpu_configurations.py tests/collector/test_gpu_values.py tests/memory/test_memory_gpu.py tests/collector/test_gpu_packed.py 2>&1 | tail -3
fidelity_against_ncu
stamp "PyTorch loop, 1 step, traces, engine off"
(cd /tmp && REUSELENS_ONLINE_ANALYSIS=0 timeout 150 reuselens profile --no-analyze --traces --run-dir /tmp/pt_tr -- python3 $REPO/benchmarks/pytorch_memory_step.py 1 > /tmp/pt_tr.log 2>&1); tail -1 /tmp/pt_tr.log
stamp "replays: 08c6240 / b215b39 engines, 12 and 1 workers, results checked equal"
[ -n "$OLD" ] && timeout 200 python3 benchmarks/replay_speed.py /tmp/pt_tr --workers 12,1 --repeat 2 --engine $OLD,installed --check-equal
stamp "slices of the two largest launches"
cp /tmp/pt_tr/run.json $OUT/pt_run.json
timeout 120 python3 - <<'PY'
import json, struct, subprocess
run = json.load(open("/tmp/pt_tr/run.json"))
big = sorted(((l.get("records", 0), l["trace"]) for l in run["launches"] if l.get("trace")), reverse=True)[:2]
for n, t in big:
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
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-400
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
short_suite 2 --build /tmp/rb
stamp "shoc_bfs_uiuc: twice full, twice packed"
ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'shoc_bfs_uiuc')))")
for i in 1 2; do for P in 0 1; do (cd /tmp/rb && REUSELENS_PACKED_RECORDS=$P timeout 60 reuselens profile --run-dir /tmp/bfsu$P$i -- ./shoc_bfs_uiuc $ARGS > /dev/null 2>&1); done; done
timeout 60 python3 - <<'PY'
import json
for run in ("bfsu01", "bfsu11", "bfsu02", "bfsu12"):
    try:
        r = json.load(open(f"/tmp/{run}/report.json"))
    except OSError as e:
        print(run, "no report:", e); continue
    total = sum(len(k["findings"]) for k in r["kernels"])
    for k in r["kernels"]:
        if "Frontier_copy" not in (k.get("name") or k.get("mangled", "")): continue
        pats = sorted(f["pattern"] for f in k["findings"])
        ratios = [({s: v if v is None else round(v, 4) for s, v in g["reuse_ratio"].items()}, g["nodes"]) for g in k.get("subgraphs", [])]
        print(f"{run} ({'packed' if run[5] == '1' else 'full'}): {total} findings; Frontier_copy {pats}; subgraphs {ratios}")
PY
stamp done
