#!/usr/bin/env python3
"""One-off repair of runs recorded on 2026-11-30 by collector commit 2355353, whose device patch wrote
active_mask = 0 into BARRIER and BLOCK_EXIT records (fixed in collector/native/src/patch.cu since). Memory
records are untouched. A BARRIER / BLOCK_EXIT record gets the mask of all lanes its warp has in the block
only where that is provable from the trace itself:

  * BLOCK_EXIT: the (block, warp) has exactly one BLOCK_EXIT record, so the whole warp exited at once;
  * BARRIER: every (block, warp) of the launch holds the same number of records at that pc, so no warp
    split at the barrier.

Anything else is left as recorded and listed. The run's run.json gets a `fixture_repairs` note.

    python3 tests/data/runs/repair_masks.py RUN_DIR...
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests/collector"))
from collector_traces import RECORD  # noqa: E402


def warp_mask(threads: int, warp: int) -> int:
    lanes = max(0, min(32, threads - 32 * warp))
    return (1 << lanes) - 1 if lanes < 32 else 0xFFFFFFFF


def repair(run_dir: Path) -> list[str]:
    manifest = json.loads((run_dir / "run.json").read_text())
    if "fixture_repairs" in manifest:
        return ["already repaired"]
    notes = []
    for launch in manifest["launches"]:
        if not launch.get("trace"):
            continue
        path = run_dir / launch["trace"]
        raw = bytearray(path.read_bytes())
        records = np.frombuffer(raw, RECORD, offset=64)  # a view: edits land in raw
        threads = int(np.prod(launch["block"]))
        fixed = left = 0
        exits = records["type"] == 3
        per_warp = Counter(zip(records["block"][exits].tolist(), records["warp"][exits].tolist()))
        barriers = records["type"] == 2
        per_pc: dict[int, Counter] = {}
        for b, w, pc in zip(records["block"][barriers].tolist(), records["warp"][barriers].tolist(),
                            records["pc"][barriers].tolist()):
            per_pc.setdefault(pc, Counter())[(b, w)] += 1
        warps_in_launch = int(np.prod(launch["grid"])) * ((threads + 31) // 32)
        for i in np.nonzero((exits | barriers) & (records["active_mask"] == 0))[0]:
            r = records[i]
            key = (int(r["block"]), int(r["warp"]))
            if r["type"] == 3:
                ok = per_warp[key] == 1
            else:
                counts = per_pc[int(r["pc"])]
                ok = len(counts) == warps_in_launch and len(set(counts.values())) == 1
            if ok:
                records["active_mask"][i] = warp_mask(threads, key[1])
                fixed += 1
            else:
                left += 1
        path.write_bytes(bytes(raw))
        notes.append(f"launch {launch['id']}: {fixed} BARRIER/BLOCK_EXIT masks repaired, {left} left as recorded")
    manifest["fixture_repairs"] = [
        "recorded by collector commit 2355353, whose patch wrote active_mask 0 into BARRIER and BLOCK_EXIT "
        "records; masks restored by tests/data/runs/repair_masks.py where the trace proves the warp was whole",
        *notes]
    (run_dir / "run.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return notes


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        for line in repair(Path(arg)):
            print(f"{arg}: {line}")
