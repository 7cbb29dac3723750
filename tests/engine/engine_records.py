"""Builders of synthetic warp records (docs/trace-format.md) and trace files for the engine tests."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from reuselens.analyzer.replay import HEADER_BYTES, HEADER_DTYPE, RECORD_BYTES, RECORD_DTYPE

MEM, BARRIER, BLOCK_EXIT = 1, 2, 3
GLOBAL, SHARED, LOCAL = 1, 2, 3
BAR_BLOCK, BAR_WARP, BAR_MBARRIER = 1, 2, 3
READ, WRITE, ATOMIC = 0x1, 0x2, 0x3
ASYNC = 0x1

Lanes = Sequence[int | None] | Mapping[int, int]


def _lanes(addrs: Lanes) -> tuple[int, list[int]]:
    if isinstance(addrs, Mapping):
        items = dict(addrs)
    else:
        items = {i: a for i, a in enumerate(addrs) if a is not None}
    mask, out = 0, [0] * 32
    for lane, a in items.items():
        mask |= 1 << lane
        out[lane] = a
    return mask, out


def mem(
    pc: int,
    addrs: Lanes,
    *,
    space: int = GLOBAL,
    access: int = READ,
    size: int = 4,
    warp: int = 0,
    block: int = 0,
    fid: int = 0,
    flags: int = 0,
) -> tuple:
    """One MEM record; ``addrs`` is a list (None = inactive lane) or a {lane: address} mapping."""
    mask, out = _lanes(addrs)
    return (MEM, space, access, flags, size, warp, fid, mask, pc, block, out)


def barrier(pc: int, *, warp: int = 0, block: int = 0, kind: int = BAR_BLOCK, fid: int = 0) -> tuple:
    return (BARRIER, kind, 0, 0, 0, warp, fid, 0xFFFFFFFF, pc, block, [0] * 32)


def block_exit(*, warp: int = 0, block: int = 0, fid: int = 0, lanes: int = 0xFFFFFFFF) -> tuple:
    return (BLOCK_EXIT, 0, 0, 0, 0, warp, fid, lanes, 0, block, [0] * 32)


def records(rows: Iterable[tuple]) -> np.ndarray:
    return np.array(list(rows), dtype=RECORD_DTYPE)


def warp_addrs(base: int, stride: int = 4, lanes: int = 32) -> list[int | None]:
    return [base + i * stride if i < lanes else None for i in range(32)]


def write_trace(
    path: Path,
    recs: np.ndarray,
    *,
    launch_id: int = 0,
    kernel_function_id: int = 0,
    complete: bool = True,
    record_count: int | None = None,
    magic: bytes = b"RLTRACE\0",
    version: int = 1,
    record_bytes: int = RECORD_BYTES,
    tail: bytes = b"",
) -> Path:
    h = np.zeros(1, dtype=HEADER_DTYPE)
    h["magic"] = magic
    h["version"] = version
    h["header_bytes"] = HEADER_BYTES
    h["record_bytes"] = record_bytes
    h["flags"] = 1 if complete else 0
    h["launch_id"] = launch_id
    h["record_count"] = len(recs) if record_count is None else record_count
    h["kernel_function_id"] = kernel_function_id
    path.write_bytes(h.tobytes() + recs.tobytes() + tail)
    return path
