#!/usr/bin/env python3
"""How evenly the engine's partition deals a recorded run's work to its workers, batch by batch (an analysis kept
with session 19's results, not a benchmark of the product).

Per batch of the engine's size (batch.h batch_records) and per worker: the records its blocks own (round robin on
the block index), the shared-memory lanes among them, and the global lane-granules its chunks own (the
multiplicative hash of addr >> 10), as analyzer/engine/src/batch.h deals them at 780904c; printed as the median
over the batches of the busiest worker's share over the mean.

    python3 partition_balance.py RUN_DIR [WORKERS]
"""

import pathlib
import sys

import numpy as np

from reuselens.analyzer.replay import read_trace
from reuselens.analyzer.rundir import open_run


def chunk_owner(chunk: np.ndarray, workers: int) -> np.ndarray:
    hashed = (chunk.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    return ((hashed * np.uint64(workers)) >> np.uint64(32)).astype(np.int64)


def main() -> None:
    run = pathlib.Path(sys.argv[1])
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    batch = min(32768, max(4096, 2048 * workers))
    for launch in open_run(run).manifest["launches"]:
        if not launch.get("trace"):
            continue
        r = read_trace(run / launch["trace"]).records
        lanes = np.unpackbits(r["active_mask"].astype("<u4").view(np.uint8).reshape(-1, 4), axis=1, bitorder="little")
        lanes = lanes.astype(bool)
        block_owner = (r["block"].astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.int64) % workers
        mem = r["type"] == 1
        glob, shared = mem & (r["space"] == 1), mem & (r["space"] == 2)
        shares = {"block records": [], "shared lanes": [], "global lane-granules": []}
        for start in range(0, len(r), batch):
            part = slice(start, start + batch)
            per = {
                "block records": np.bincount(block_owner[part], minlength=workers),
                "shared lanes": np.bincount(
                    block_owner[part][shared[part]], weights=lanes[part][shared[part]].sum(1), minlength=workers
                ),
            }
            g = np.where(glob[part])[0] + start
            owners = chunk_owner(r["addr"][g, :32] >> np.uint64(10), workers)
            per["global lane-granules"] = np.bincount(owners[lanes[g]], minlength=workers)
            for name, counts in per.items():
                if counts.sum():
                    shares[name].append(counts.max() / counts.mean())
        figures = ", ".join(f"{name} {np.median(v):.2f}" for name, v in shares.items() if v)
        print(f"{launch['kernel'][:48]:48} {len(r):>9,} records: busiest / mean worker, median of batches: {figures}")


if __name__ == "__main__":
    main()
