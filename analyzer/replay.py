"""Replay recorded traces (``RUN/traces/*.rltrace``) through the C++ analysis engine.

The engine is the same library the collector runs online (docs/engine.md); this module reads ``run.json`` (through
analyzer.rundir) and the trace files (docs/trace-format.md, docs/run-directory.md), validates them, feeds the
records in launch order and returns the engine's aggregates as a dict (docs/report-format.md,
nodes/edges/barriers), with function ids resolved to the mangled names that ``run.json`` lists.

Public API: :data:`RECORD_DTYPE`, :data:`HEADER_DTYPE`, :func:`read_trace`, :func:`replay_run`,
:func:`analyze_records`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from reuselens.analyzer import engine_result, replay_manifest
from reuselens.analyzer.errors import TraceError
from reuselens.analyzer.names import resolve_names
from reuselens.analyzer.replay_manifest import Allocation
from reuselens.analyzer.rundir import MANIFEST, inside_run, open_run

TRACE_MAGIC = b"RLTRACE\0"
TRACE_VERSION = 3  # 3: uniform companions; 2: value companions (docs/trace-format.md); 1 and 2 are read alike
TRACE_MIN_VERSION = 1
HEADER_BYTES = 64
RECORD_BYTES = 288
FLAG_COMPLETE = 0x1
CHUNK_RECORDS = 1 << 16
# A MEM record's flags that only records the engine queue hands the online engine carry (trace_format.h:
# RL_FLAG_ONE_ADDRESS, RL_FLAG_ONE_STRIDE): the engine would read one or two of its lanes' slots alone.
QUEUE_ONLY_FLAGS = 0x30

# Built from the offsets in docs/trace-format.md; tests/engine/test_layout.py checks them against the C++ header.
RECORD_DTYPE = np.dtype(
    {
        "names": [
            "type",
            "space",
            "access",
            "flags",
            "size",
            "warp",
            "function_id",
            "active_mask",
            "pc",
            "block",
            "addr",
        ],
        "formats": ["u1", "u1", "u1", "u1", "<u2", "<u2", "<u4", "<u4", "<u8", "<u8", ("<u8", (32,))],
        "offsets": [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
        "itemsize": RECORD_BYTES,
    }
)
HEADER_DTYPE = np.dtype(
    {
        "names": [
            "magic",
            "version",
            "header_bytes",
            "record_bytes",
            "flags",
            "launch_id",
            "record_count",
            "kernel_function_id",
            "reserved",
        ],
        "formats": ["S8", "<u4", "<u4", "<u4", "<u4", "<u8", "<u8", "<u4", ("u1", (20,))],
        "offsets": [0, 8, 12, 16, 20, 24, 32, 40, 44],
        "itemsize": HEADER_BYTES,
    }
)


@dataclass(frozen=True)
class Trace:
    """One validated trace file: its header fields and a read-only memory map of its whole records."""

    path: Path
    launch_id: int
    kernel_function_id: int
    complete: bool  # the COMPLETE flag was set and the file holds exactly record_count records
    records: np.ndarray  # RECORD_DTYPE, memory-mapped
    partial_reason: str | None


def _engine_module():
    try:
        from reuselens.analyzer import _engine
    except ImportError as exc:  # a broken install, not a user mistake in the run directory
        raise RuntimeError(
            "reuselens.analyzer._engine is not built; run `pip install --no-build-isolation -e .`"
        ) from exc
    return _engine


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Validate one ``.rltrace`` file and memory-map its records.

    Raises TraceError (naming the file) for a wrong magic, another version, a foreign record size, or a record
    count that disagrees with the file size in a file marked complete. A file of a crashed run (COMPLETE not set)
    whose last record is cut short is accepted: the whole records are analysed and the trace is marked partial.
    """
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block the read or never end
            raise TraceError(f"{path}: not a trace file (not a regular file)")
        size = info.st_size
        with open(path, "rb") as f:
            raw = f.read(HEADER_BYTES)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace ({exc.strerror})") from exc
    if len(raw) < HEADER_BYTES:
        raise TraceError(f"{path}: truncated trace header ({len(raw)} of {HEADER_BYTES} bytes)")
    h = np.frombuffer(raw, dtype=HEADER_DTYPE)[0]
    if bytes(h["magic"]).ljust(8, b"\0") != TRACE_MAGIC:
        raise TraceError(f"{path}: not a ReuseLens trace (bad magic)")
    if not TRACE_MIN_VERSION <= int(h["version"]) <= TRACE_VERSION:
        raise TraceError(
            f"{path}: trace format version {int(h['version'])}, this build reads versions {TRACE_MIN_VERSION} to "
            f"{TRACE_VERSION}; re-record it"
        )
    if int(h["header_bytes"]) != HEADER_BYTES or int(h["record_bytes"]) != RECORD_BYTES:
        raise TraceError(
            f"{path}: header says {int(h['header_bytes'])}-byte header and {int(h['record_bytes'])}-byte records, "
            f"expected {HEADER_BYTES} and {RECORD_BYTES}"
        )
    body = size - HEADER_BYTES
    whole, tail = divmod(body, RECORD_BYTES)
    declared = int(h["record_count"])
    flagged_complete = bool(int(h["flags"]) & FLAG_COMPLETE)
    reason = None
    if flagged_complete and (tail or whole != declared):
        cut = f" and {tail} bytes of a cut-off one" if tail else ""
        raise TraceError(
            f"{path}: corrupt or truncated trace: the header says {declared} records, the file holds "
            f"{whole} whole {RECORD_BYTES}-byte records{cut}"
        )
    if not flagged_complete:
        reason = f"trace of launch {int(h['launch_id'])} is incomplete ({whole} whole records"
        reason += ", last record cut short)" if tail else ")"
    records = (
        np.memmap(path, dtype=RECORD_DTYPE, mode="r", offset=HEADER_BYTES, shape=(whole,))
        if whole
        else np.zeros(0, dtype=RECORD_DTYPE)
    )
    return Trace(path, int(h["launch_id"]), int(h["kernel_function_id"]), flagged_complete, records, reason)


class _Allocations:
    """Feeds run.json allocations to the engine around launches (they only speed lookups up: addresses outside
    every known allocation are still tracked by the engine's sparse fallback, so labels never depend on this)."""

    def __init__(self, engine: Any, allocations: list[Allocation]):
        self.engine = engine
        self.pending = list(allocations)
        self.live: dict[int, Allocation] = {}

    def before_launch(self, launch_id: int) -> None:
        """Bring the engine's allocations to what was live when launch `launch_id` started. run.json counts
        launches: `allocated_before_launch: n` / `freed_after_launch: n` mean "after n launches had been seen",
        i.e. before launch id n (docs/run-directory.md), as the collector's online engine applied them."""
        for addr, a in list(self.live.items()):
            if a.freed_after_launch is not None and a.freed_after_launch <= launch_id:
                self.engine.free_allocation(addr)
                del self.live[addr]
        still = []
        for a in self.pending:
            if a.freed_after_launch is not None and a.freed_after_launch <= launch_id:
                continue  # freed before this launch (or never live during one)
            if a.allocated_before_launch > launch_id:
                still.append(a)
                continue
            try:
                self.engine.add_allocation(a.address, a.size)
                self.live[a.address] = a
            except Exception:  # overlaps a live allocation (a run.json edited by hand): after that one is freed
                still.append(a)
        self.pending = still


def _feed(engine: Any, records: np.ndarray, path: Path) -> None:
    for start in range(0, len(records), CHUNK_RECORDS):
        chunk = np.ascontiguousarray(records[start : start + CHUNK_RECORDS])
        queue_only = np.flatnonzero((chunk["type"] == 1) & (chunk["flags"] & QUEUE_ONLY_FLAGS != 0))
        if len(queue_only):
            i = int(queue_only[0])
            raise TraceError(
                f"{path}: record {start + i} has flags {int(chunk['flags'][i]):#x}: bits 0x{QUEUE_ONLY_FLAGS:x} mark "
                "records the collector hands its online engine, never a trace file's (docs/trace-format.md)"
            )
        try:
            engine.consume(chunk)
        except Exception as exc:  # EngineError: a malformed record or the shadow budget
            raise TraceError(f"{path}: {exc}") from exc


def replay_run(
    run_dir: str | os.PathLike[str],
    workers: int | None = None,
    shadow_budget_bytes: int = 8 << 30,
    split_configurations: bool = False,
    object_touches_to: Path | None = None,
) -> dict[str, Any]:
    """Replay every trace of a run directory, in launch order, and return the engine's result: one entry per
    kernel, or per kernel and launch configuration with ``split_configurations``. With ``object_touches_to``, the
    engine's object touches (which allocations each launch read and wrote) are written there too.

    The dict is the engine JSON (docs/engine.md) with names resolved: each kernel gains ``mangled`` and
    ``module``, each node and barrier ``function``, each prior-kernel origin ``kernel`` and ``function``.
    Launches whose trace is incomplete are listed in the kernel's ``partial_launches`` and in ``partial``.
    """
    run_dir = Path(run_dir)
    run = open_run(run_dir).manifest
    manifest = run_dir / MANIFEST
    functions = replay_manifest.functions(manifest, run)
    launches = replay_manifest.launches(manifest, run)
    engine = _engine_module().Engine(
        workers=workers or (os.cpu_count() or 1),
        shadow_budget_bytes=shadow_budget_bytes,
        split_configurations=split_configurations,
        values=bool((run.get("collector") or {}).get("values")),  # value companions among the records
        # the share the online engine used (runs recorded before it existed counted no approximate redundancy)
        value_approx=float((run.get("collector") or {}).get("values_approx") or 0.0),
    )
    allocations = _Allocations(engine, replay_manifest.allocations(manifest, run))
    partial: list[dict[str, Any]] = []
    notes: list[str] = []
    for launch in launches:
        if not launch.trace:
            continue
        # run.json is data: a trace path must stay inside the run directory (no /dev/zero, no ../../)
        trace = read_trace(inside_run(run_dir, launch.trace, f"the trace of launch {launch.id}"))
        if trace.launch_id != launch.id or trace.kernel_function_id != launch.function_id:
            raise TraceError(
                f"{trace.path}: belongs to launch {trace.launch_id} (function {trace.kernel_function_id}), "
                f"run.json expects launch {launch.id} (function {launch.function_id})"
            )
        allocations.before_launch(launch.id)
        engine.begin_launch(
            launch.id, launch.function_id, list(launch.grid), list(launch.block), launch.dynamic_shared_bytes
        )
        _feed(engine, trace.records, trace.path)
        reason = trace.partial_reason
        if launch.status != "complete":  # faulted / incomplete per the collector: say so first
            reason = f"launch {launch.id} {launch.status}" + (f"; {reason}" if reason else "")
        engine.end_launch(complete=reason is None)
        if reason:
            partial.append({"launch": launch.id, "reason": reason})
    result = engine_result.from_engine(engine)
    resolve_names(result, functions, notes)
    if object_touches_to is not None:
        try:
            _write_atomic(object_touches_to, engine.object_touches_json())
        except OSError as error:  # a read-only run directory: the reuse analysis does not need the file
            notes.append(f"object touches not written: {error.strerror or error}: {object_touches_to}")
    result["partial"] = partial
    result["notes"] = notes
    return result


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def analyze_records(
    launches: Iterable[tuple[dict[str, Any], np.ndarray]],
    workers: int = 1,
    allocations: Iterable[tuple[int, int]] = (),
    shadow_budget_bytes: int = 8 << 30,
    split_configurations: bool = False,
    values: bool = False,
    chunk_records: int = CHUNK_RECORDS,
    value_approx: float = 0.0,
) -> dict[str, Any]:
    """Run the engine on in-memory record arrays (tests, benchmarks); no names are resolved.

    ``launches`` yields ``(launch, records)`` with launch keys ``id``, ``function_id``, ``grid``, ``block`` and
    optionally ``dynamic_shared_bytes`` and ``complete``. ``values``: the records carry value companions (value
    mode); ``chunk_records``: records per consume() call; ``value_approx``: the share of approximate value redundancy
    (docs/engine.md, "Value redundancy"; 0: not counted).
    """
    engine = _engine_module().Engine(
        workers=workers,
        shadow_budget_bytes=shadow_budget_bytes,
        split_configurations=split_configurations,
        values=values,
        value_approx=value_approx,
    )
    for address, size in allocations:
        engine.add_allocation(address, size)
    for launch, records in launches:
        engine.begin_launch(
            launch["id"],
            launch["function_id"],
            list(launch["grid"]),
            list(launch["block"]),
            launch.get("dynamic_shared_bytes", 0),
        )
        records = np.ascontiguousarray(records, dtype=RECORD_DTYPE)
        for start in range(0, len(records), chunk_records):
            engine.consume(records[start : start + chunk_records])
        engine.end_launch(complete=launch.get("complete", True))
    return engine_result.from_engine(engine)
