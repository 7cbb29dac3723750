"""Reading and checking trace files (docs/trace-format.md) in the collector tests."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np

from reuselens.analyzer.replay import read_trace as _read

# tests/gpu/zero_fill.cu: 4 blocks of two warps; lanes 0-19 copy from a source, the others pass a null one, and the
# second warp of the last block has no lane with a source; its kernel sourced_vectors gives every lane a source.
ZERO_FILL_BLOCKS, ZERO_FILL_VALID = 4, 20


def zero_fill_sourced_lanes(block: int, warp: int, kernel: str = "") -> int:
    """The lanes of tests/gpu/zero_fill.cu's warp that copy from a source (its cp.async global half's lanes)."""
    if "sourced_vectors" in kernel:
        return 0xFFFFFFFF
    return 0 if (block == ZERO_FILL_BLOCKS - 1 and warp == 1) else (1 << ZERO_FILL_VALID) - 1


def cp_async_halves(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The global and the shared halves of a launch's cp.async records (ASYNC_COPY MEM records)."""
    copies = records[(records["type"] == 1) & ((records["flags"] & 0x1) != 0)]
    return copies[copies["space"] == 1], copies[copies["space"] == 2]


def recorded_launches(run_dir: Path, recorded_by: str) -> dict[str, tuple[dict, np.ndarray]]:
    """kernel -> (launch, records) of a run committed as a fixture; the test fails, saying how it is recorded, when
    the run is missing."""
    if not (run_dir / "run.json").is_file():
        import pytest  # noqa: PLC0415  (only the tests that read a fixture need it)

        pytest.fail(f"the recorded run is missing: {run_dir} ({recorded_by})")
    manifest = json.loads((run_dir / "run.json").read_text())
    return {launch["kernel"]: (launch, read_trace(run_dir / launch["trace"])) for launch in manifest["launches"]}


def read_trace(path: Path) -> np.ndarray:
    """The records of one trace file, read by the replay side's parser (analyzer.replay.read_trace)."""
    return _read(path).records


@functools.lru_cache(maxsize=None)
def fidelity_table(run_dir: Path) -> tuple[list[dict], int]:
    """benchmarks/fidelity.py's comparison of a recorded run with the Nsight Compute CSV kept beside it
    (RUN/ncu.csv): the table rows and the number of mismatches."""
    spec = importlib.util.spec_from_file_location(
        "fidelity", Path(__file__).resolve().parents[2] / "benchmarks/fidelity.py"
    )
    fid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fid)
    return fid.compare([fid.parse_ncu(run_dir / "ncu.csv")], [("trace", fid.run_counts(run_dir))])


def check_run(run_dir: Path) -> list[str]:
    """Everything the collector promises about a run directory it wrote; returns the problems found."""
    problems: list[str] = []
    m = json.loads((run_dir / "run.json").read_text())
    if m.get("format") != "reuselens-run" or m.get("version") != 1:
        problems.append("not a version-1 run manifest")
    for module in m["modules"]:
        data = (run_dir / module["path"]).read_bytes()
        if hashlib.sha256(data).hexdigest() != module["sha256"]:
            problems.append(f"{module['path']}: content does not match its sha256")
        if data[:4] != b"\x7fELF":
            problems.append(f"{module['path']}: not an ELF CUBIN")
    functions = {f["id"]: f for f in m["functions"]}
    modules = {mod["sha256"] for mod in m["modules"]}
    for f in functions.values():
        if f["module"] not in modules:
            problems.append(f"function {f['id']} names unknown module")
    for launch in m["launches"]:
        if not launch.get("trace"):
            continue
        trace = _read(run_dir / launch["trace"])
        records = trace.records
        complete = launch["status"] == "complete"
        if trace.complete != complete:
            problems.append(f"launch {launch['id']}: COMPLETE flag {trace.complete} vs status {launch['status']}")
        if trace.launch_id != launch["id"] or trace.kernel_function_id != launch["function_id"]:
            problems.append(f"launch {launch['id']}: header ids")
        if complete and len(records) != launch["records"]:
            problems.append(f"launch {launch['id']}: {len(records)} records, run.json says {launch['records']}")
        if not set(np.unique(records["type"])) <= {1, 2, 3}:
            problems.append(f"launch {launch['id']}: unknown record type")
        mem = records[records["type"] == 1]
        if not set(np.unique(mem["space"])) <= {1, 2, 3} or not set(np.unique(mem["size"])) <= {1, 2, 4, 8, 16}:
            problems.append(f"launch {launch['id']}: bad space or size")
        # Only a cp.async's global half may have no lane: every lane was a zero fill (docs/trace-format.md).
        zero_fill_half = (mem["space"] == 1) & ((mem["flags"] & 0x1) != 0)
        if ((mem["active_mask"] == 0) & ~zero_fill_half).any():
            problems.append(f"launch {launch['id']}: MEM record without active lanes")
        no_lanes = bool((records["active_mask"][records["type"] != 1] == 0).any())
        if no_lanes:
            problems.append(f"launch {launch['id']}: BARRIER/BLOCK_EXIT record without lanes")
        lanes = ((records["active_mask"][:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)
        if (records["addr"][~lanes] != 0).any():
            problems.append(f"launch {launch['id']}: inactive lane with an address")
        for fid in np.unique(records["function_id"]):
            f = functions.get(int(fid))
            if f is None:
                problems.append(f"launch {launch['id']}: unknown function id {fid}")
                continue
            pcs = records["pc"][records["function_id"] == fid]
            if pcs.max() > f["size"]:
                problems.append(f"launch {launch['id']}: pc {pcs.max()} beyond {f['name']} ({f['size']} bytes)")
        grid = int(np.prod(launch["grid"]))
        if len(records) and records["block"].max() >= grid:
            problems.append(f"launch {launch['id']}: block index beyond the grid")
        if complete and len(records) and not no_lanes:
            # Every thread of every block passes one BLOCK_EXIT (possibly in several converged groups).
            exits = records[records["type"] == 3]
            per_block = np.zeros(grid, dtype=np.int64)
            np.add.at(per_block, exits["block"].astype(np.int64), lanes[records["type"] == 3].sum(axis=1))
            if (per_block != int(np.prod(launch["block"]))).any():
                problems.append(f"launch {launch['id']}: BLOCK_EXIT lanes do not add up to the block size")
        warps = (int(np.prod(launch["block"])) + 31) // 32
        if len(records) and records["warp"].max() >= warps:
            problems.append(f"launch {launch['id']}: warp index beyond the block")
    return problems
