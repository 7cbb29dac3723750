#!/usr/bin/env bash
# Session 26, call 2: d484645 (packed records on by default, queue unpacking; the engine labelling a shared
# footprint whose words hold one entry once). 1. The engine before d484645 built beside the installed one
# (engine.patch taken back). 2. One step of the PyTorch loop recorded with traces (engine off), replayed by both
# engines at 12 and 1 workers with every result checked equal (replay_speed --check-equal). 3. Two of its cuBLAS
# launches' traces brought back compressed, for profiling on the development machine. 4. The 40-step loop
# collected online. 5. SHOC BFS (UIUC), twice packed and twice full: its findings, and the reuse ratios of
# Frontier_copy's subgraphs (the one finding that differed in session 25 and call 1).
#   bash benchmarks/results/h200-2026-12-04-s26/call2/script.sh
source benchmarks/device_call.sh
D=benchmarks/results/h200-2026-12-04-s26/call2
REPO=$PWD
stamp "the engine before d484645"
OLD=$(timeout 240 bash benchmarks/build_revision.sh --patch $D/engine.patch /tmp/old -R 2> /tmp/old.txt | grep "_engine") || { tail -20 /tmp/old.txt; }
echo "old engine: $OLD"
stamp "PyTorch loop, 1 step, traces, engine off"
(cd /tmp && REUSELENS_ONLINE_ANALYSIS=0 timeout 150 reuselens profile --no-analyze --traces --run-dir /tmp/pt_tr -- python3 $REPO/benchmarks/pytorch_memory_step.py 1 > /tmp/pt_tr.log 2>&1); tail -2 /tmp/pt_tr.log
du -sh /tmp/pt_tr/traces
python3 - <<'PY'
import json
run = json.load(open("/tmp/pt_tr/run.json"))
rows = sorted(((l.get("records", 0), i, l.get("kernel", "")[:90]) for i, l in enumerate(run["launches"])), reverse=True)
print(len(rows), "launches,", sum(r[0] for r in rows), "records; largest:")
for r in rows[:8]: print("  ", r)
PY
stamp "replays: old / new engine, 12 and 1 workers, results checked equal"
[ -n "$OLD" ] && timeout 200 python3 benchmarks/replay_speed.py /tmp/pt_tr --workers 12,1 --repeat 2 --engine $OLD,installed --check-equal
stamp "two cuBLAS launches compressed"
cp /tmp/pt_tr/run.json $OUT/pt_run.json
python3 - <<'PY' > /tmp/pick.txt
import json
run = json.load(open("/tmp/pt_tr/run.json"))
gemm = [(l.get("records", 0), l["trace"]) for l in run["launches"] if l.get("trace") and "gemm" in l.get("kernel", "")]
small = [g for g in sorted(gemm, reverse=True) if g[0] <= 700_000][:2]
print(" ".join(t for _, t in small))
PY
for t in $(cat /tmp/pick.txt); do
  n=$(basename $t); timeout 60 zstd -q -19 -T16 -f /tmp/pt_tr/$t -o $OUT/pt_$n.zst 2>/dev/null || timeout 60 xz -T16 -6 -c /tmp/pt_tr/$t > $OUT/pt_$n.xz
done
ls -la $OUT
stamp "PyTorch loop, 40 steps, native"
timeout 45 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_native --steps 40 --rounds 1 --modes native --timeout 40 2>&1 | grep "native:"
stamp "PyTorch loop, 40 steps, collect"
timeout 110 python3 benchmarks/pytorch_overhead.py --out /tmp/pt_c --steps 40 --rounds 1 --modes collect --timeout 105 2>&1 | grep "collect:"
grep -h "engine steps\|launch ends waited" /tmp/pt_c/runs/*/collector.log 2>/dev/null | tail -2 | cut -c1-400
cp /tmp/pt_c/pytorch_overhead.json $OUT/pytorch_collect.json 2>/dev/null
stamp "shoc_bfs_uiuc: twice full, twice packed"
timeout 150 python3 benchmarks/realapps.py --src benchmarks/realapps/src --out /tmp/rv --rounds 1 --modes native --jobs 16 --apps shoc_bfs_uiuc > /dev/null 2>&1
ARGS=$(python3 -c "import json; print(' '.join(next(a['args'] for a in json.load(open('benchmarks/realapps/manifest.json'))['apps'] if a['name'] == 'shoc_bfs_uiuc')))")
for i in 1 2; do for P in 0 1; do (cd /tmp/rv/build && REUSELENS_PACKED_RECORDS=$P timeout 60 reuselens profile --run-dir /tmp/bfsu$P$i -- ./shoc_bfs_uiuc $ARGS > /dev/null 2>&1); done; done
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
        ratios = [({s: round(v, 4) for s, v in g["reuse_ratio"].items()}, g["nodes"]) for g in k.get("subgraphs", [])]
        print(f"{run} ({'packed' if run[5] == '1' else 'full'}): {total} findings; Frontier_copy {pats}; subgraphs {ratios}")
PY
stamp done
