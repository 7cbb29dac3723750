"""benchmarks/engine.py with the slice copies' blocks as they were before session 38 (copy k's block j at grid index
12 k + j, unturned): at twelve workers each owner then gets runs of consecutive records in the batch (every resident
copy of one slice block in turn) instead of one record in twelve. Set against the turned copies in the same call, it
says how much of the block step's cost at twelve workers is the owner's records lying scattered over the batch.
    python3 benchmarks/results/h100-2026-12-05-s38/next/owner_runs.py ENGINE.PY ARGS...
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
import engine as eb  # noqa: E402


def unturned_slice_records(blocks: int, path: Path) -> np.ndarray:
    meta, one = eb.launch_slice(path)
    per_copy = int(one["block"].max()) + 1
    copies = max(1, 64 * blocks // len(one))
    wave = max(1, eb.slice_resident(meta) // per_copy)
    out = []
    for first in range(0, copies, wave):
        k = np.arange(first, min(copies, first + wave), dtype=np.uint64)
        r = np.repeat(one, len(k))
        r["block"] += np.tile(k, len(one)) * np.uint64(per_copy)
        out.append(r)
    return np.concatenate(out)


eb.slice_records = unturned_slice_records
sys.argv = sys.argv[1:]
sys.exit(eb.main())
