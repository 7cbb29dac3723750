"""A slice of one recorded launch, small enough to commit, for engine benchmarks and tests on real shapes: the records
of the launch's first blocks (by block index), in trace order, and what replaying them needs (tests/data/real_launches,
whose README describes the format). `benchmarks/engine.py --slice PATH` copies a slice into a full grid whose
resident blocks interleave as the recorded launch's did.

The run must have been recorded with traces (`reuselens profile --no-analyze --traces --launch-range A:B ...`; the
online engine may be off: `REUSELENS_ONLINE_ANALYSIS=0`). A slice holds no source and no machine code: record kinds,
masks, PCs (offsets into the kernel's code) and addresses.

Usage: python benchmarks/launch_slice.py RUN_DIR --launch ID [--blocks 12] --out DIR/NAME
       (writes DIR/NAME.json and DIR/NAME.records.zst; --launch largest: the launch with the most records)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from reuselens.analyzer import replay_manifest
from reuselens.analyzer.errors import RunDirectoryError, TraceError
from reuselens.analyzer.replay import read_trace
from reuselens.analyzer.rundir import MANIFEST, inside_run, open_run

SLICE_FORMAT, SLICE_VERSION = "reuselens-real-launch-slice", 1
WINDOW = 4096  # records per window when counting the blocks that interleave


def resident_blocks(blocks: np.ndarray) -> int:
    """The median number of distinct blocks among WINDOW consecutive records of the whole launch: how many blocks'
    records interleave, as the GPU's resident blocks did (engine.py lays its copies out so)."""
    counts = [len(np.unique(blocks[i : i + WINDOW])) for i in range(0, max(1, len(blocks) - WINDOW + 1), WINDOW)]
    return int(np.median(counts)) if counts else 1


def launch_slice(run_dir: Path, launch_id: str, keep_blocks: int) -> tuple[dict, np.ndarray]:
    """The slice's description and its records. Raises SystemExit with one line for what cannot be sliced."""
    run = open_run(run_dir)
    manifest = run.path / MANIFEST
    launches = [launch for launch in replay_manifest.launches(manifest, run.manifest) if launch.trace]
    if not launches:
        raise SystemExit(f"{run_dir}: no launch has a trace (record with --traces)")
    if launch_id != "largest":
        launches = [launch for launch in launches if str(launch.id) == launch_id]
        if not launches:
            raise SystemExit(f"{run_dir}: launch {launch_id} has no trace (record it with --traces)")
    traces = {}
    for launch in launches:
        try:
            traces[launch.id] = read_trace(inside_run(run.path, launch.trace, "launches.trace"))
        except TraceError as exc:  # `largest` goes on without a damaged trace; a launch asked for by id does not
            if launch_id != "largest":
                raise
            print(f"launch_slice: skipped: {exc}", file=sys.stderr)
    if not traces:
        raise SystemExit(f"{run_dir}: no trace could be read")
    chosen = max((launch for launch in launches if launch.id in traces), key=lambda x: len(traces[x.id].records))
    trace = traces[chosen.id]
    if trace.launch_id != chosen.id:
        raise SystemExit(f"{trace.path}: holds launch {trace.launch_id}, run.json says launch {chosen.id}")
    records = np.asarray(trace.records)
    if len(records) == 0:
        raise SystemExit(f"{run_dir}: launch {chosen.id} recorded no records")
    kept = np.unique(records["block"])[:keep_blocks]
    sliced = np.ascontiguousarray(records[np.isin(records["block"], kept)])
    live = [
        [a.address, a.size]
        for a in replay_manifest.allocations(manifest, run.manifest)
        if a.allocated_before_launch <= chosen.id and (a.freed_after_launch is None or a.freed_after_launch > chosen.id)
    ]
    meta = {
        "format": SLICE_FORMAT,
        "version": SLICE_VERSION,
        "kernel": run.function_names().get(chosen.function_id, ""),
        "launch": chosen.id,
        "grid": list(chosen.grid),
        "block": list(chosen.block),
        "dynamic_shared_bytes": chosen.dynamic_shared_bytes,
        "blocks_kept": [int(b) for b in kept],
        "records": len(sliced),
        "launch_records": len(records),
        "resident_blocks": resident_blocks(records["block"]),
        "allocations": live,
    }
    return meta, sliced


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--launch", required=True, help="launch id, or `largest`")
    ap.add_argument("--blocks", type=int, default=12, help="how many blocks to keep (the lowest indices)")
    ap.add_argument("--out", type=Path, required=True, help="DIR/NAME: writes NAME.json and NAME.records.zst")
    args = ap.parse_args()
    if args.blocks < 1:
        ap.error("--blocks: at least 1")
    import zstandard  # a test dependency, as slices are test data

    try:
        meta, sliced = launch_slice(args.run_dir, args.launch, args.blocks)
    except (RunDirectoryError, TraceError) as exc:
        print(f"launch_slice: {exc}", file=sys.stderr)
        return 1
    payloads = {
        Path(f"{args.out}.records.zst"): zstandard.ZstdCompressor(level=19).compress(sliced.tobytes()),
        Path(f"{args.out}.json"): (json.dumps(meta, indent=1) + "\n").encode(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for path, data in payloads.items():  # both written beside, then renamed: never one without the other
        path.with_name(path.name + ".part").write_bytes(data)
    for path in payloads:
        path.with_name(path.name + ".part").replace(path)
    print(
        f"{args.out}: launch {meta['launch']} ({meta['kernel'][:60]}), {meta['records']:,} of "
        f"{meta['launch_records']:,} records, blocks {meta['blocks_kept'][0]}-{meta['blocks_kept'][-1]}, "
        f"about {meta['resident_blocks']} blocks interleaved"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
