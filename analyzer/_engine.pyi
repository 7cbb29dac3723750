"""Type stub of the compiled module reuselens.analyzer._engine (analyzer/engine/src/bindings.cpp).

The replay side of the C++ analysis engine (docs/engine.md, "C++ API", its Python paragraph). tests/engine/test_engine_stub.py
checks that this stub names exactly what the compiled module exposes, with the same arguments.
"""

from collections.abc import Sequence
from typing import TypedDict

from typing_extensions import Buffer

RECORD_BYTES: int
"""Size of one trace record (RlRecord, docs/trace-format.md): 288."""
HEADER_BYTES: int
"""Size of the trace file header (RlTraceHeader)."""
TRACE_VERSION: int
"""Newest trace format version the engine reads (RL_TRACE_VERSION)."""
TRACE_MIN_VERSION: int
"""Oldest trace format version the engine reads (RL_TRACE_MIN_VERSION)."""
JSON_VERSION: int
"""Version of the engine JSON that Engine.to_json writes (RL_ENGINE_JSON_VERSION)."""
SLOT_BYTES: int
"""Size of one slot of a packed record stream (reuselens/packed_records.h, docs/trace-format.md): 32."""

def unpack_records(slots: Buffer, for_engine: bool = False) -> bytes:
    """The full 288-byte records of a packed stream (trace sink); for_engine: as the engine gets them (unwritten bytes 0xA5)."""

def record_layout() -> dict[str, tuple[int, int]]:
    """Field name -> (offset, size) in bytes of RlRecord, from the C++ header."""

def header_layout() -> dict[str, tuple[int, int]]:
    """Field name -> (offset, size) in bytes of RlTraceHeader, from the C++ header."""

def object_slice_bytes(size: int) -> int:
    """Bytes per slice of an object of `size` bytes, by the one slice rule (reuselens/object_touches.h)."""

class EngineError(RuntimeError):
    """A one-line engine error: budget exceeded, protocol misuse, a malformed record or launch."""

class _EngineStats(TypedDict):
    records: int
    lane_accesses: int
    shadow_bytes: int
    peak_shadow_bytes: int
    phase_seconds: tuple[float, float, float, float, float]
    phase_cpu_seconds: tuple[float, float, float, float, float]
    consume_seconds: float

class Engine:
    """Topological Distance and PCDepGraph from warp records; calls follow engine.h's protocol, from one thread."""

    def __init__(
        self,
        workers: int = 1,
        shadow_budget_bytes: int = 8589934592,
        split_configurations: bool = False,
        inline_batch_records: int = 2048,
        values: bool = False,
        value_approx: float = 0.0,
    ) -> None:
        """An engine with `workers` threads (0 = 1, at most 64), a shadow budget in bytes, small batches inline."""

    def add_allocation(self, address: int, size: int) -> None:
        """Declares a device allocation (cudaMalloc seen); overlapping or wrapping ranges raise EngineError."""

    def free_allocation(self, address: int) -> None:
        """Drops the allocation starting at `address`; an unknown address raises EngineError."""

    def begin_launch(
        self,
        launch_id: int,
        kernel_function_id: int,
        grid: Sequence[int],
        block: Sequence[int],
        dynamic_shared_bytes: int = 0,
    ) -> None:
        """Opens a launch; `grid` and `block` are three dimensions each (run.json launches[])."""

    def consume(self, records: Buffer) -> None:
        """Feeds a C-contiguous buffer of 288-byte records of the open launch, in drain order (GIL released)."""

    def consume_packed(self, slots: Buffer) -> None:
        """Feeds the open launch's records as a packed stream of 32-byte slots, whole records (GIL released)."""

    def end_launch(self, complete: bool = True) -> None:
        """Closes the open launch; complete=False marks it partial (faulted or cut short)."""

    def to_json(self) -> str:
        """The engine result as JSON text (docs/report-format.md, "engine part"); no launch may be open."""

    def object_touches_json(self) -> str:
        """Which allocations each finished launch read and wrote, as JSON text (docs/memory.md, "Object touches")."""

    def stats(self) -> _EngineStats:
        """Records, lane accesses, shadow bytes now and at peak, and consume()'s time per step."""
