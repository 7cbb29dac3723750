"""The entries of run.json that replay hands to the engine (launches, allocations, functions), checked.

run.json is written by the collector, but a run directory can come from anywhere: a field of the wrong type or
out of range must end in one line naming run.json and the field (docs/run-directory.md gives the fields), not
in a KeyError, a C++ conversion error or an engine that is fed values it cannot represent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import RunDirectoryError

U32 = 1 << 32
U64 = 1 << 64
MAX_BLOCK_THREADS = 1024  # CUDA's limit on threads per block, on every architecture


@dataclass(frozen=True)
class Launch:
    id: int
    function_id: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared_bytes: int
    trace: str | None
    status: str


@dataclass(frozen=True)
class Allocation:
    address: int
    size: int
    allocated_before_launch: int  # live from launch n on
    freed_after_launch: int | None  # gone from launch n on


class _Fields:
    """Reads fields of one entry of a run.json list, naming `list[index].field` in every error."""

    def __init__(self, manifest: Path, where: str, entry: Any):
        self.manifest, self.where = manifest, where
        if not isinstance(entry, dict):
            self.fail(f"{where}: expected an object, found {_kind(entry)}")
        self.entry = entry

    def fail(self, message: str) -> None:
        raise RunDirectoryError(f"{self.manifest}: {message}")

    def integer(self, name: str, limit: int, default: int | None = None, low: int = 0) -> int:
        """An integer in [low, limit); `default` stands for a missing or null field (None: required)."""
        value = self.entry.get(name)
        if value is None and default is not None:
            return default
        return self.check_integer(f"{self.where}.{name}", value, low, limit)

    def check_integer(self, label: str, value: Any, low: int, limit: int) -> int:
        if value is None:
            self.fail(f"{label} is missing")
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"{label}: expected an integer, found {_kind(value)}")
        if not low <= value < limit:
            self.fail(f"{label}: {value} is out of range ({low} to {limit - 1})")
        return value

    def dims(self, name: str, low: int) -> tuple[int, int, int]:
        value = self.entry.get(name)
        label = f"{self.where}.{name}"
        if not isinstance(value, list) or len(value) != 3:
            self.fail(f"{label}: expected a list of 3 integers, found {_kind(value)}")
        x, y, z = (self.check_integer(f"{label}[{d}]", v, low, U32) for d, v in enumerate(value))
        return x, y, z


def launches(manifest: Path, run: dict[str, Any]) -> list[Launch]:
    """run.json `launches`, sorted by id."""
    out = []
    for index, entry in enumerate(_list(manifest, run, "launches")):
        fields = _Fields(manifest, f"launches[{index}]", entry)
        block = fields.dims("block", 1)
        if block[0] * block[1] * block[2] > MAX_BLOCK_THREADS:
            fields.fail(
                f"launches[{index}].block: {block[0]}x{block[1]}x{block[2]} threads per block, "
                f"CUDA allows at most {MAX_BLOCK_THREADS}"
            )
        trace = entry.get("trace")
        if trace is not None and not isinstance(trace, str):
            fields.fail(f"launches[{index}].trace: expected a path, found {_kind(trace)}")
        status = entry.get("status", "complete")
        out.append(
            Launch(
                id=fields.integer("id", U64),
                function_id=fields.integer("function_id", U32),
                grid=fields.dims("grid", 1),
                block=block,
                dynamic_shared_bytes=fields.integer("dynamic_shared_bytes", U32, default=0),
                trace=trace or None,
                status=status if isinstance(status, str) else str(status),
            )
        )
    return sorted(out, key=lambda launch: launch.id)


def allocations(manifest: Path, run: dict[str, Any]) -> list[Allocation]:
    """run.json `allocations` of a positive size; an allocation must end within the 64-bit address space."""
    out = []
    for index, entry in enumerate(_list(manifest, run, "allocations")):
        fields = _Fields(manifest, f"allocations[{index}]", entry)
        address = fields.integer("address", U64)
        size = fields.integer("size", U64, default=0)
        if address + size > U64:
            fields.fail(
                f"allocations[{index}].size: {size} bytes at address {address:#x} run past the end of the "
                "64-bit address space"
            )
        allocated = fields.integer("allocated_before_launch", U64, default=0)
        freed = entry.get("freed_after_launch")
        if freed is not None:
            freed = fields.integer("freed_after_launch", U64)
        if size:
            out.append(Allocation(address, size, allocated, freed))
    return out


def functions(manifest: Path, run: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """run.json `functions` by id."""
    out = {}
    for index, entry in enumerate(_list(manifest, run, "functions")):
        out[_Fields(manifest, f"functions[{index}]", entry).integer("id", U32)] = entry
    return out


def _list(manifest: Path, run: dict[str, Any], name: str) -> list[Any]:
    value = run.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise RunDirectoryError(f"{manifest}: {name}: expected a list, found {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__} {value!r}"[:80]
    return type(value).__name__
