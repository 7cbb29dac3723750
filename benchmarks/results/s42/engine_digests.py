"""The engine's JSON (timings removed), hashed, for benchmarks/engine.py's patterns and recorded slices, at several
worker counts and batch sizes, under one engine module: equal hashes mean equal results.
    python3 engine_digests.py ENGINE.so mix,gather,tests/data/real_launches/shoc_bfs [whole|handed] [1,5,12] [32768]"""

import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import engine as eb  # noqa: E402  (benchmarks/engine.py)

TIMINGS = ("stats", "phase_us", "phase_cpu_us", "consume_us", "seconds")


def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in TIMINGS}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o


so, items = sys.argv[1], sys.argv[2].split(",")
handed = len(sys.argv) > 3 and sys.argv[3] == "handed"
workers = tuple(int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "1,2,3").split(","))
batch = int(sys.argv[5]) if len(sys.argv) > 5 else 1 << 15
mod = eb.engine_module(so)
for item in items:
    sl = item if "/" in item else None
    pattern = "slice" if sl else item
    recs = eb.generate(2048, pattern, 64, sl)
    if handed:
        recs = eb.handed_over(mod, recs)
    threads = eb.threads_per_block(pattern, sl)
    out = []
    for w in workers:
        e = mod.Engine(workers=w)
        for base in (eb.A, eb.B, eb.C):
            e.add_allocation(base, 1 << 30)
        for launch in range(2):
            e.begin_launch(launch, 0, [eb.grid_blocks(recs), 1, 1], [threads, 1, 1], 0)
            for s in range(0, len(recs), batch):
                e.consume(recs[s : s + batch])
            e.end_launch()
        j = strip(json.loads(e.to_json()))
        out.append(hashlib.sha1(json.dumps(j, sort_keys=True).encode()).hexdigest()[:12])
    print(f"{item.split('/')[-1]:40s} {' '.join(out)}")
