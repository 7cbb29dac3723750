"""The loops of a kernel's functions, read off their SASS: which PCs one loop's iterations run.

The trace says how often each PC ran, not in which loop, and a reload's register advice hinges on it: a load that
re-reads, in one loop, the values an earlier loop of the same thread loaded (PolyBench gramschmidt's second pass
`a[i][j] -= q[i][k] * r[k][j]` over the `a[i][j]` the first pass summed) would need one register per iteration of
that earlier loop. A loop in SASS is a backward branch: the branch at PC b to a target t <= b repeats [t, b]
(nvdisasm prints the target as a label, which lineinfo.sass renames after its offset: `.L_0x01e0`). A branch to
itself (the `BRA` trap after a kernel's EXIT) is no loop. Nested loops are nested intervals; a PC's innermost loop
is the shortest interval holding it. An unrolled loop's copies share one back edge; a fully unrolled loop has none.

SASS needs nvdisasm, which the post-run analysis otherwise does without (its cost: docs/engine.md, "Post-run
cost"). So only functions whose reloads have the shape of a second loop over an earlier loop's values are
disassembled (_candidates), and without nvdisasm nothing is: the report then has no `loops`, and the rules give the
advice they gave before.

Public API: :func:`loops_in`, :func:`innermost`, :func:`attach_loops`.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from reuselens.analyzer.errors import ReuseLensError

INSTRUCTION_BYTES = 16  # sm_70 and later
MAX_INSTRUCTIONS = 1 << 20  # a function's code is far shorter; a bound on the scan, not a limit met in practice

_PREDICATE = re.compile(r"^@!?U?P[0-7T]\s+")
_TARGET = re.compile(r"\.L_0x([0-9a-fA-F]+)")


def loops_in(sass_at: Callable[[int], str | None]) -> list[tuple[int, int]]:
    """(head, back edge) PCs of every loop of one function, whose instructions `sass_at(pc)` gives (None past its
    end), in order of the back edge."""
    loops = []
    for index in range(MAX_INSTRUCTIONS):
        pc = index * INSTRUCTION_BYTES
        text = sass_at(pc)
        if text is None:
            break
        body = _PREDICATE.sub("", text.strip())
        if body.split(" ", 1)[0].split(".")[0] != "BRA":
            continue
        target = _TARGET.search(body)
        if target is not None and int(target.group(1), 16) < pc:
            loops.append((int(target.group(1), 16), pc))
    return loops


def innermost(loops: list[tuple[int, int]] | list[list[int]], pc: int) -> tuple[int, int] | None:
    """The shortest loop holding `pc`, or None outside every loop."""
    holding = [(int(head), int(back)) for head, back in loops if int(head) <= pc <= int(back)]
    return min(holding, key=lambda loop: loop[1] - loop[0]) if holding else None


# A reload of an earlier loop's values matters to the rules (patterns/redundant.py) only when the origins ran at
# least this many times per warp: fewer values fit in registers.
MIN_VALUES = 16


def warps_launched(kernel: dict[str, Any]) -> int:
    """Warps over all the kernel's launches (each configuration's blocks times its warps per block; a report without
    configurations: the kernel's grid and block for each launch)."""
    configurations = kernel.get("configurations") or [
        {"grid": kernel.get("grid"), "block": kernel.get("block"), "launches": kernel.get("launches") or [0]}
    ]
    total = 0
    for config in configurations:
        blocks = threads = 1
        for extent in config.get("grid") or [0]:
            blocks *= int(extent)
        for extent in config.get("block") or [0]:
            threads *= int(extent)
        total += len(config.get("launches") or []) * blocks * -(-threads // 32)
    return total


# An origin this much first touch streams through its data (each execution a new value), as an earlier loop's
# loads do; a loop's own accumulator (`c[i][j] +=`, reloaded every iteration) is no first touch.
STREAMING_ORIGIN = 0.9


def _streams(node: dict[str, Any]) -> bool:
    metrics = node.get("metrics") or {}
    total = float(metrics.get("W_total") or 0)
    return total > 0 and float((metrics.get("W_out") or {}).get("cold") or 0) >= STREAMING_ORIGIN * total


def _candidates(kernel: dict[str, Any]) -> set[str]:
    """Functions of the kernel where a thread re-reads, at least MIN_VALUES times per warp, values that loads or
    stores streaming through their data (first touches) produced at least MIN_VALUES times per warp: the shape of
    a second loop over an earlier loop's values. Only these are disassembled (nvdisasm costs 0.1-0.5 s a module,
    more than the rest of a small app's analysis); a reload in its origin's loop pays for it too, and keeps its
    advice."""
    nodes = {node.get("id"): node for node in kernel.get("nodes") or []}
    origins: dict[str, dict[Any, int]] = {}
    reloads: dict[str, dict[Any, int]] = {}
    for edge in kernel.get("edges") or []:
        if edge.get("label") != "thread" or edge.get("from") == edge.get("to"):
            continue
        if not (edge.get("rar") or edge.get("raw")):
            continue
        u, v = nodes.get(edge.get("from")) or {}, nodes.get(edge.get("to")) or {}
        function = u.get("function")
        if u.get("type") != "read" or not isinstance(function, str) or function != v.get("function") or not _streams(v):
            continue
        origins.setdefault(function, {})[v.get("id")] = int(v.get("executions") or 0)
        reloads.setdefault(function, {})[u.get("id")] = int(u.get("executions") or 0)
    floor = MIN_VALUES * warps_launched(kernel)
    return {
        function
        for function, runs in origins.items()
        if floor > 0 and sum(runs.values()) >= floor and sum(reloads[function].values()) >= floor
    }


def attach_loops(mapper: Any, kernels: list[dict[str, Any]]) -> None:
    """Sets each kernel's `loops` ({function: [[head, back edge], ...]}, docs/report-format.md) for the functions
    with same-thread re-reads between two PCs, from their SASS (one nvdisasm run per module). Without nvdisasm, or
    where a module's SASS cannot be had, the kernel gets no `loops` for that function."""
    from reuselens.analyzer.lineinfo.sass import find_nvdisasm

    wanted = {id(kernel): _candidates(kernel) for kernel in kernels}
    if not any(wanted.values()) or find_nvdisasm() is None:
        return
    functions_of: dict[str, set[str]] = {}
    for kernel in kernels:
        if wanted[id(kernel)] and isinstance(kernel.get("module"), str):
            functions_of.setdefault(kernel["module"], set()).update(wanted[id(kernel)])
    mapper.prepare_sass(functions_of)
    for kernel in kernels:
        module = kernel.get("module")
        found: dict[str, list[list[int]]] = {}
        for function in sorted(wanted[id(kernel)]):

            def sass_at(pc: int, module: Any = module, function: str = function) -> str | None:
                try:
                    return mapper.sass(module, function, pc)
                except ReuseLensError:  # the module's CUBIN is missing or unreadable: no loops known
                    return None

            if sass_at(0) is None:
                continue
            found[function] = [[head, back] for head, back in loops_in(sass_at)]
        if found:
            kernel["loops"] = found
