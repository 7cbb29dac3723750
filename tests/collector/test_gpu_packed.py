"""Packed records on the GPU (reuselens/packed_records.h, docs/trace-format.md "Packed records"): the device patch
chooses each record's form itself, so only a real GPU shows that the forms it writes give back every lane's address.
Each program runs twice, records packed (the default, REUSELENS_PACKED_RECORDS=1) and every record in the full form
(REUSELENS_PACKED_RECORDS=0); both runs must give the same records, lane for lane, and the packed run must
really pack (fewer slots than nine per record, as collector.log's slot counts show)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import reuselens.collector.launcher as launcher

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gpu

# (program, arguments): plain, shared and atomic accesses of every width; cp.async with zero fills; ldmatrix rows and
# bulk copies; the patterns of the suite (stencils, tiles, gathers)
PROGRAMS = [
    ("microbench", []),
    ("zero_fill", []),
    ("async_copies", []),
    ("pattern_suite", []),
]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu_packed")
    for name, _ in PROGRAMS:
        subprocess.run(
            ["nvcc", "-O3", "-lineinfo", "-arch=sm_90", "-o", str(out / name), str(REPO / "tests/gpu" / f"{name}.cu")],
            check=True,
        )
    return out


def _canonical(run: Path) -> dict[tuple[int, str], bytes]:
    """Each launch's records, order-free (warps race for slots): sorted raw records, with every global address
    rewritten as (allocation index, offset) so that two processes' allocations compare."""
    from collector_traces import read_trace  # noqa: PLC0415

    manifest = json.loads((run / "run.json").read_text())
    bases = sorted((int(a["address"]), int(a["size"]), i) for i, a in enumerate(manifest.get("allocations", [])))
    starts = np.array([b for b, _, _ in bases], dtype=np.uint64)
    out = {}
    for n, launch in enumerate(manifest["launches"]):
        if not launch.get("trace"):
            continue
        recs = read_trace(run / launch["trace"]).copy()
        glob = (recs["type"] == 1) & (recs["space"] == 1)
        addr = recs["addr"][glob]
        if len(starts):
            where = np.searchsorted(starts, addr, side="right") - 1
            inside = (where >= 0) & (addr != 0)
            offset = addr - starts[np.clip(where, 0, None)]
            addr = np.where(inside, (where.astype(np.uint64) << np.uint64(40)) | offset, addr)
        recs["addr"][glob] = addr
        rows = sorted(r.tobytes() for r in recs)
        out[(n, launch["kernel"])] = b"".join(rows)
    return out


def _slots(run: Path) -> tuple[int, int]:
    """(records, slots) the run's launches drained, from collector.log's per-launch lines."""
    manifest = json.loads((run / "run.json").read_text())
    records = sum(int(l["records"]) for l in manifest["launches"] if l.get("instrumented"))
    log = (run / "collector.log").read_text()
    slots = sum(int(s) for s in re.findall(r"records in (\d+) slots", log))
    return records, slots


@pytest.mark.parametrize("name,args", PROGRAMS, ids=[p for p, _ in PROGRAMS])
def test_packed_records_equal_full_records(programs, tmp_path, name, args):
    runs = {}
    for packed in ("1", "0"):
        run = tmp_path / f"packed{packed}"
        summary = launcher.profile(
            [str(programs / name), *args],
            run_dir=run,
            write_traces=True,
            timeout=300,
            env={"REUSELENS_PACKED_RECORDS": packed},
        )
        assert summary.status == "complete", summary.partial_reason
        manifest = json.loads((run / "run.json").read_text())
        assert manifest["collector"]["packed_records"] is (packed == "1")
        assert not manifest.get("errors"), manifest.get("errors")
        runs[packed] = run
    packed, full = _canonical(runs["1"]), _canonical(runs["0"])
    assert packed.keys() == full.keys() and packed
    for key in packed:
        assert packed[key] == full[key], f"launch {key}: packed records differ from the full ones"
    records, slots = _slots(runs["1"])
    records_full, slots_full = _slots(runs["0"])
    assert records == records_full > 0
    assert slots_full == 9 * records_full
    assert slots < 9 * records  # the packed run wrote fewer bytes
