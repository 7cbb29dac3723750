"""The launch configurations of a kernel entry (report and engine result, version 2).

An entry merges every launch of its kernel by default, whatever their grids; `configurations` lists each
distinct (grid, block, dynamic shared memory) with its launches and records. Entries of version 1 had one
configuration in top-level fields; the readers upgrade them (engine_result.with_configurations), and these
helpers accept both shapes.
"""

from __future__ import annotations

from typing import Any

from reuselens.analyzer.engine_result import with_configurations


def configurations(kernel: dict[str, Any]) -> list[dict[str, Any]]:
    return list(with_configurations(kernel).get("configurations") or [])


def merges_several(kernel: dict[str, Any]) -> bool:
    """The entry adds up launches of more than one configuration (only --per-configuration can split it)."""
    return len(configurations(kernel)) > 1


def _dims(values: Any) -> str:
    return "x".join(str(v) for v in values or [])


def _product(values: Any) -> int:
    count = 1
    for value in values or [1]:
        count *= int(value)
    return max(count, 1)


def identity(kernel: dict[str, Any]) -> str:
    """The configuration part of a kernel's identity across runs: "grid|block|dyn" for an entry of one
    configuration (as version 1 had, so finding ids stay stable), "*" for an entry merging several."""
    shapes = configurations(kernel)
    if len(shapes) != 1:
        return "*"
    shape = shapes[0]
    return f"{_dims(shape.get('grid'))}|{_dims(shape.get('block'))}|{shape.get('dynamic_shared_bytes') or 0}"


def block_instances(kernel: dict[str, Any]) -> int:
    """Thread blocks run over the entry's launches: each configuration's grid size times its launches."""
    total = sum(_product(c.get("grid")) * max(len(c.get("launches") or ()), 1) for c in configurations(kernel))
    return max(total, 1)


def largest_block(kernel: dict[str, Any]) -> int:
    """The most threads per block of any of the entry's configurations; 0 without the shapes to tell."""
    return max((_product(c["block"]) for c in configurations(kernel) if c.get("block")), default=0)


def threads_launched(kernel: dict[str, Any]) -> int:
    """Threads run over the entry's launches: each configuration's blocks times its threads per block, times its
    launches; 0 without the shapes to tell."""
    return sum(
        _product(c["grid"]) * _product(c["block"]) * max(len(c.get("launches") or ()), 1)
        for c in configurations(kernel)
        if c.get("grid") and c.get("block")
    )


def warps_launched(kernel: dict[str, Any]) -> int:
    """Warps run over the entry's launches: each configuration's blocks times its warps per block, times its
    launches (as block_instances counts them); 0 without the shapes to tell."""
    total = 0
    for config in configurations(kernel):
        if config.get("grid") and config.get("block"):
            warps = -(-_product(config["block"]) // 32)
            total += _product(config["grid"]) * warps * max(len(config.get("launches") or ()), 1)
    return total


def summary(kernel: dict[str, Any]) -> str:
    """`<<<grid, block>>>` of the entry; with several configurations, what differs is counted instead of listed
    (`<<<255 grids, 16x16x1>>>`): the hover's configuration table has the details."""
    shapes = configurations(kernel)
    if not shapes:
        return "<<<?>>>"
    grids = {_dims(c.get("grid")) for c in shapes}
    blocks = {_dims(c.get("block")) for c in shapes}
    grid = next(iter(grids)) if len(grids) == 1 else f"{len(grids)} grids"
    block = next(iter(blocks)) if len(blocks) == 1 else f"{len(blocks)} block shapes"
    return f"<<<{grid}, {block}>>>"


def table(kernel: dict[str, Any], limit: int = 8) -> list[tuple[str, str, int, int]]:
    """(grid, block, launches, records) per configuration, most records first, at most `limit` rows; the rest
    are summed into one last row named "… N more"."""
    rows = sorted(
        (
            (_dims(c.get("grid")), _dims(c.get("block")), len(c.get("launches") or ()), int(c.get("records") or 0))
            for c in configurations(kernel)
        ),
        key=lambda row: (-row[3], -row[2], row[0], row[1]),
    )
    if len(rows) <= limit:
        return rows
    rest = rows[limit - 1 :]
    return rows[: limit - 1] + [(f"… {len(rest)} more", "", sum(r[2] for r in rest), sum(r[3] for r in rest))]
