"""The engine's result document (format `reuselens-engine`, docs/engine.md and docs/report-format.md).

Two sources: RUN/analysis.json, which the collector's online engine writes at exit, and the same JSON from
the engine binding after a replay. Only this module parses it.

Public API: :data:`FORMAT`, :data:`VERSION`, :data:`ONLINE_ANALYSIS`, :func:`load`, :func:`from_engine`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from reuselens.analyzer.errors import TraceError
from reuselens.analyzer.schema import (
    U32,
    U64,
    Bool,
    Enum,
    Int,
    JsonError,
    List,
    Maybe,
    Obj,
    SchemaError,
    Spec,
    Str,
    check,
    decode,
    field_error,
)

FORMAT = "reuselens-engine"
VERSION = 2  # the C++ side's RL_ENGINE_JSON_VERSION (tests/engine/test_format_readers.py keeps them equal)
# Version 1 had one entry per kernel and launch configuration, with no "configurations" list; it is still read
# (each entry gets its one configuration, see with_configurations) so recorded runs stay usable.
READABLE_VERSIONS = (1, 2)
ONLINE_ANALYSIS = "analysis.json"
# Which allocations each analysed launch read and wrote (docs/memory.md, "Object touches"); written next to it.
OBJECT_TOUCHES = "object_touches.json"


COLD_NODE = 0
LABELS = ("cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid")
MAX_BLOCK_THREADS = 1024  # CUDA's limit on threads per block, on every architecture

COUNT = Int(0, U64 - 1)
FUNCTION_ID = Int(0, U32 - 1)
NODE_ID = Int(0, U32 - 1)
DIMS = List(Int(1, U32 - 1), length=3)
# A distribution: [value, count] pairs (docs/engine.md).
DISTRIBUTION = List(List(COUNT, length=2))
DISTRIBUTIONS = ("lanes", "addresses", "sectors", "sectors_ideal", "wavefronts", "wavefronts_ideal")


def _block_threads(kernel: dict[str, Any]) -> SchemaError | None:
    places = [("block", kernel)] if "block" in kernel else []
    places += [(f"configurations[{i}].block", c) for i, c in enumerate(kernel.get("configurations") or [])]
    for name, holder in places:
        x, y, z = holder["block"]
        if x * y * z > MAX_BLOCK_THREADS:
            return field_error(name, f"{x}x{y}x{z} threads per block, CUDA allows at most {MAX_BLOCK_THREADS}")
    return None


def with_configurations(kernel: dict[str, Any]) -> dict[str, Any]:
    """A version-1 kernel entry (one launch configuration, no "configurations" list) gets the list version 2
    has; entries that have one, or lack the fields to build it, are returned as they are."""
    if (
        "configurations" in kernel
        or not isinstance(kernel.get("grid"), list)
        or not isinstance(kernel.get("block"), list)
    ):
        return kernel
    configuration = {"grid": kernel["grid"], "block": kernel["block"]}
    for name in ("dynamic_shared_bytes", "launches", "records"):
        if name in kernel:
            configuration[name] = kernel[name]
    return {**kernel, "configurations": [configuration]}


def kernel_rule(kernel: dict[str, Any]) -> SchemaError | None:
    """Node ids are unique, every node but Cold Miss has a pc, every edge and barrier span joins two nodes (node 0
    included), and the block has at most the hardware's threads."""
    ids: set[int] = set()
    for index, node in enumerate(kernel.get("nodes") or []):
        if node["id"] in ids:
            return field_error(f"nodes[{index}].id", f"{node['id']} is the id of an earlier node too")
        if node["id"] != COLD_NODE and node.get("pc") is None:
            return field_error(f"nodes[{index}].pc", "missing: every node but 0 (Cold Miss) is an instruction")
        ids.add(node["id"])
    for index, edge in enumerate(kernel.get("edges") or []):
        for end in ("from", "to"):
            if edge[end] not in ids:
                return field_error(f"edges[{index}].{end}", f"{edge[end]} is not a node id of this kernel")
    for b, barrier in enumerate(kernel.get("barriers") or []):
        for s, span in enumerate(barrier.get("spans") or []):
            for end in ("from", "to"):
                if span[end] not in ids:
                    return field_error(
                        f"barriers[{b}].spans[{s}].{end}", f"{span[end]} is not a node id of this kernel"
                    )
    return _block_threads(kernel)


NODE_FIELDS: dict[str, Spec] = {
    "id": NODE_ID,
    "function_id": Maybe(FUNCTION_ID),
    "pc": Maybe(COUNT),
    "space": Maybe(Enum("global", "shared", "local")),
    "type": Maybe(Enum("read", "write", "atomic")),
    "size": COUNT,
    "async_copy": Bool(),
    "executions": COUNT,
    "bytes": COUNT,
    **{name: DISTRIBUTION for name in DISTRIBUTIONS},
}
EDGE_FIELDS: dict[str, Spec] = {
    "from": NODE_ID,
    "to": NODE_ID,
    "label": Enum(*LABELS),
    **{name: COUNT for name in ("bytes", "accesses", "rar", "raw", "war", "waw", "synced", "synced_bytes")},
    "prior_kernel": Maybe(
        Obj(
            {"kernel_function_id": FUNCTION_ID, "function_id": FUNCTION_ID, "pc": COUNT, "bytes": COUNT},
            required=("kernel_function_id", "function_id", "pc", "bytes"),
        )
    ),
}
# Optional node fields: absent where zero, and in results from before they existed.
OPTIONAL_NODE_FIELDS: dict[str, Spec] = {
    "irregular": COUNT,  # global executions whose lanes follow no stride (docs/report-format.md)
}
# Value mode's fields (docs/engine.md, "Value redundancy"): present only where there is something to say.
VALUE_NODE_FIELDS: dict[str, Spec] = {
    "values": Obj(
        {name: COUNT for name in ("lanes", "zero", "silent", "uniform", "spatial")},
        required=("lanes", "zero", "silent", "uniform", "spatial"),
    )
}
VALUE_EDGE_FIELDS: dict[str, Spec] = {"value_loads": COUNT, "same_value": COUNT, "approx_value": COUNT}
SPAN = Obj(
    {"from": NODE_ID, "to": NODE_ID, "label": Enum(*LABELS), "accesses": COUNT, "bytes": COUNT}, required=("from", "to")
)
BARRIER_FIELDS: dict[str, Spec] = {
    "function_id": FUNCTION_ID,
    "pc": COUNT,
    "kind": Enum("block", "warp", "mbarrier"),
    **{name: COUNT for name in ("executions", "spanned_cross_thread_edges", "spanned_accesses", "spanned_bytes")},
    "spans": List(SPAN),
}
CONFIGURATION_FIELDS: dict[str, Spec] = {
    "grid": DIMS,
    "block": DIMS,
    "dynamic_shared_bytes": Int(0, U32 - 1),
    "launches": List(COUNT),
    "records": COUNT,
}
KERNEL_FIELDS: dict[str, Spec] = {
    "id": Str(256),
    "kernel_function_id": FUNCTION_ID,
    "function_id": FUNCTION_ID,
    # The entry's configuration when its launches share one (docs/report-format.md); "configurations" always.
    "grid": DIMS,
    "block": DIMS,
    "dynamic_shared_bytes": Int(0, U32 - 1),
    "configurations": List(Obj(CONFIGURATION_FIELDS, required=("grid", "block"))),
    "launches": List(COUNT),
    "partial_launches": List(COUNT),
    "records": COUNT,
}
# The engine writes every field of its entries, so a file of its format must have them all.
ENGINE_SCHEMA = Obj(
    {
        "kernels": List(
            Obj(
                {
                    **KERNEL_FIELDS,
                    "nodes": List(
                        Obj({**NODE_FIELDS, **OPTIONAL_NODE_FIELDS, **VALUE_NODE_FIELDS}, required=NODE_FIELDS)
                    ),
                    "edges": List(Obj({**EDGE_FIELDS, **VALUE_EDGE_FIELDS}, required=EDGE_FIELDS)),
                    "barriers": List(Obj(BARRIER_FIELDS, required=BARRIER_FIELDS)),
                },
                required=("kernel_function_id", "configurations", "nodes", "edges", "barriers"),
                rule=kernel_rule,
            )
        ),
        "partial": List(Obj({"launch": COUNT, "reason": Str()})),
        "notes": List(Str()),
    },
    required=("kernels",),
)


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """RUN/analysis.json, checked: a JSON object of format reuselens-engine, version 2 (or 1, upgraded by
    :func:`with_configurations`), whose kernels have the
    fields, types and limits of :data:`ENGINE_SCHEMA` (docs/engine.md), node ids unique and edges between them.

    Raises TraceError naming the file otherwise; without the file the analyzer replays the traces instead,
    which the message says."""
    path = Path(path)
    try:
        data = decode(path.read_bytes())
    except OSError as error:
        raise TraceError(f"{path}: unreadable online analysis ({error.strerror}); delete it to replay traces") from None
    except JsonError as error:
        raise TraceError(f"{path}: unreadable online analysis ({error.detail}); delete it to replay traces") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != FORMAT
        or data.get("version") not in READABLE_VERSIONS
        or not isinstance(data.get("kernels"), list)
    ):
        raise TraceError(f"{path}: not a version-{VERSION} ReuseLens engine result; delete it to replay traces")
    data["kernels"] = [with_configurations(k) if isinstance(k, dict) else k for k in data["kernels"]]
    try:
        check(data, ENGINE_SCHEMA)
    except SchemaError as error:
        raise TraceError(f"{path}: {error} (delete it to replay traces)") from None
    return data


def from_engine(engine: Any) -> dict[str, Any]:
    """The result of a replay engine (an `_engine.Engine` after its last launch). Not checked like a file: the
    binding is part of this build, and its JSON version is tested against :data:`VERSION`."""
    return json.loads(engine.to_json())
