"""Hover on a load/store line: a Markdown table per instruction (PC) with its reuse-scope shares, reuse
origins as file:line links, and lanes / sectors / wavefronts against their ideal (paper section 3.2.2)."""

from __future__ import annotations

import os
from collections import defaultdict

from reuselens.analyzer import configurations
from reuselens.analyzer.patterns.text import format_share
from reuselens.analyzer.value_types import approximate_applies
from reuselens.analyzer.values import approximate, temporal
from reuselens.lsp_server import markdown as md
from reuselens.lsp_server.format import SCOPE_GROUPS, format_bytes, mean
from reuselens.lsp_server.model import NodeRef, RunResults
from reuselens.lsp_server.paths import path_to_uri

# A line can hold a hundred PCs (a comparator inlined into every unrolled step of several kernels: 123 on one
# line of the cuda-samples sorting networks, an 80 KB hover). The hover shows each kernel's heaviest PCs and
# sums the rest, names at most this many origins per PC, and details at most this many kernels.
MAX_PC_ROWS = 6
MAX_ORIGINS = 3
MAX_KERNELS = 4
# Inline chains through template libraries (libcu++'s cuda::pipeline, CUB) name functions of several KB each: a line
# of cuda-samples globalToShmemAsyncCopy drew a 22 KB hover from four chains (session 45, the breadth set), over
# the 20 KB issue 14 allows. A chain names each function by its first characters, and a hover shows a few chains.
MAX_CHAINS = 3
MAX_FRAME_NAME = 100


def _pct(part: int, total: int) -> str:
    return f"{100 * part / total:.0f}%" if total and part else "–"


def _avg(distribution) -> str:
    value = mean(distribution)
    return "–" if value is None else f"{value:.1f}"


def _line_link(where: tuple[str, int]) -> str:
    """`file:line` as a Markdown link to that line."""
    return f"[{md.text(os.path.basename(where[0]))}:{where[1]}]({path_to_uri(where[0])}#L{where[1]})"


def _first_links(links: list[str], total: int | None = None) -> str:
    """The first MAX_ORIGINS links, and how many more there are (of `total`, when only the first were made)."""
    total = len(links) if total is None else total
    more = f" +{total - MAX_ORIGINS} more" if total > MAX_ORIGINS else ""
    return ", ".join(links[:MAX_ORIGINS]) + more


def _origin_links(ref: NodeRef, results: RunResults) -> str:
    # Weighed by place, and only the places shown made into links: a PC of a sorting network has dozens of
    # origin edges, and writing each one's link was most of a hover's time (sortingNetworks, session 59).
    weights: dict[tuple[str, int], int] = defaultdict(int)
    for edge in results.edges_from(ref.kernel, ref.node["id"]):
        if edge.get("to") in (0, None):
            continue
        origin = results.node(ref.kernel, edge["to"])
        where = results.place(origin.get("source")) if origin else None
        if where:
            weights[where] += int(edge.get("bytes", 0))
    ranked = sorted(weights, key=lambda k: -weights[k])
    return _first_links([_line_link(where) for where in ranked[:MAX_ORIGINS]], len(ranked)) or "–"


def _rest_row(rest: list[NodeRef], columns: int) -> str:
    """One row summing the PCs left out of the table."""
    executions = sum(int(r.node.get("executions", 0)) for r in rest)
    nbytes = sum(int(r.node.get("bytes", 0)) for r in rest)
    cells = [f"+{len(rest)} more PCs", "", str(executions), format_bytes(nbytes)] + [""] * (columns - 4)
    return "| " + " | ".join(cells) + " |"


def _scope_cells(ref: NodeRef, results: RunResults) -> list[str]:
    by_label: dict[str, int] = defaultdict(int)
    for edge in results.edges_from(ref.kernel, ref.node["id"]):
        by_label[edge.get("label")] += int(edge.get("bytes", 0))
    total = sum(by_label.values())
    return [_pct(sum(by_label[l] for l in labels), total) for _, labels in SCOPE_GROUPS]


def _address_links(ref: NodeRef, results: RunResults) -> str:
    """Links to the lines of the loads the access's address was computed from (`address_from`), or ''."""
    wanted = set(ref.node.get("address_from") or ())
    if not wanted:  # most accesses: no walk over the kernel's nodes on a hover
        return ""
    links: list[str] = []
    for node in ref.kernel.get("nodes") or []:
        if node.get("pc") in wanted and node.get("function") == ref.node.get("function"):
            where = results.place(node.get("source"))
            link = _line_link(where) if where else None
            if link and link not in links:
                links.append(link)
    return _first_links(links)


def _reuse_row(ref: NodeRef, results: RunResults) -> str:
    n = ref.node
    op = f"{n.get('space')} {n.get('type')} {n.get('size')} B" + (" (cp.async)" if n.get("async_copy") else "")
    if n.get("strong"):
        op += " volatile"
    if frame := n.get("frame"):  # a called function's register save or restore (analyzer/frame_saves.py)
        op += " register save" if frame == "save" else " register restore"
    if loaded := _address_links(ref, results):
        op += f", address from {loaded}"
    cells = [
        f"`{n.get('pc', 0):#06x}`",
        op,
        str(n.get("executions", 0)),
        format_bytes(n.get("bytes", 0)),
        *_scope_cells(ref, results),
        _origin_links(ref, results),
    ]
    return "| " + " | ".join(cells) + " |"


def _efficiency_row(n: dict) -> str:
    def versus(actual, ideal):
        return "–" if mean(actual) is None else f"{_avg(actual)} (ideal {_avg(ideal)})"

    cells = [
        f"`{n.get('pc', 0):#06x}`",
        _avg(n.get("lanes")),
        _avg(n.get("addresses")),
        versus(n.get("sectors"), n.get("sectors_ideal")),
        versus(n.get("wavefronts"), n.get("wavefronts_ideal")),
    ]
    return "| " + " | ".join(cells) + " |"


def _values_row(ref: NodeRef, results: RunResults) -> str | None:
    """Value redundancy of one PC (runs profiled with values), or None without values."""
    n, values = ref.node, ref.node.get("values")
    if not values:
        return None
    lanes = values.get("lanes") or 0
    reloaded = "–"
    if n.get("type") == "read":
        edges = results.edges_from(ref.kernel, n.get("id"))
        accesses, same, _scopes = temporal(edges)
        reloaded = _pct(int(same), int(accesses)) if accesses else "–"
        near = sum(approximate(edges).values()) if approximate_applies(n) else 0
        if accesses and near:  # a float (double) load: the approximate repeats too (docs/patterns.md approx-reload)
            share = format_share(float(ref.kernel.get("value_approx") or 0))
            reloaded += f" (+{_pct(int(near), int(accesses))} within {share})"
    silent = _pct(values.get("silent", 0), lanes) if n.get("type") == "write" else "–"
    uniform = _pct(values.get("uniform", 0), int(n.get("executions") or 0))
    cells = [f"`{n.get('pc', 0):#06x}`", reloaded, _pct(values.get("zero", 0), lanes), silent, uniform]
    return "| " + " | ".join(cells) + " |"


def _inline_chain(node: dict, results: RunResults) -> str:
    """ "inline chain: `poly` at helpers.cuh:9 ← `combine` at kernels.cu:8 ← `kernB` at kernels.cu:37": the
    innermost frame first, the call site in the owning function last (docs/lineinfo.md)."""
    steps = []
    for frame in (node.get("source") or {}).get("inline") or []:
        where = results.map_source(frame)
        place = (
            f"[{md.text(os.path.basename(where[0]))}:{where[1]}]({path_to_uri(where[0])}#L{where[1]})" if where else "?"
        )
        name = str(frame.get("function", "?"))
        name = name if len(name) <= MAX_FRAME_NAME else name[: MAX_FRAME_NAME - 1] + "…"
        steps.append(f"{md.code(name)} at {place}")
    return ("inline chain: " + " ← ".join(steps)) if steps else ""


def _configuration_lines(kernel: dict) -> list[str]:
    """The launch configurations a merged kernel entry adds up (largest first, at most five rows): the numbers
    below are their sum. Nothing for an entry of one configuration; `--per-configuration` splits them."""
    if not configurations.merges_several(kernel):
        return []
    shapes = configurations.configurations(kernel)
    launches = sum(len(c.get("launches") or ()) for c in shapes)
    lines = [
        f"Sum over {len(shapes)} launch configurations ({launches} launches):\n",
        "| grid | block | launches | records |",
        "|---|---|---|---|",
    ]
    lines.extend(
        f"| {grid} | {block} | {n} | {records:,} |" for grid, block, n, records in configurations.table(kernel, 5)
    )
    return [*lines, ""]


def markdown(results: RunResults, path: str, line: int) -> str | None:
    """The hover text for snapshot line `line` of `path`, or None when no memory instruction maps there."""
    refs = results.nodes_by_line.get(path, {}).get(line)
    if not refs:
        return None
    parts = []
    by_kernel: dict[str, list[NodeRef]] = defaultdict(list)
    for ref in sorted(refs, key=lambda r: (r.kernel.get("id", ""), r.node.get("pc", 0))):
        by_kernel[ref.kernel.get("id", "")].append(ref)
    groups = sorted(by_kernel.values(), key=lambda g: -sum(int(r.node.get("bytes", 0)) for r in g))
    for group in groups[:MAX_KERNELS]:
        kernel = group[0].kernel
        # the heaviest PCs, listed in PC order; the others summed in one row
        heaviest = sorted(group, key=lambda r: -int(r.node.get("bytes", 0)))
        shown = sorted(heaviest[:MAX_PC_ROWS], key=lambda r: r.node.get("pc", 0))
        rest = heaviest[MAX_PC_ROWS:]
        # A blank line ends the previous kernel's table: without it Markdown reads this header as a table row.
        parts.append(
            ("\n" if parts else "")
            + f"**ReuseLens** · {md.code(kernel.get('name') or kernel.get('mangled') or kernel.get('id'))} · "
            f"{md.text(os.path.basename(path))}:{line}\n"
        )
        parts.extend(_configuration_lines(kernel))
        scopes = " | ".join(g for g, _ in SCOPE_GROUPS)
        parts.append(f"| PC | access | executions | bytes | {scopes} | reuse origins |")
        parts.append("|" + "---|" * (5 + len(SCOPE_GROUPS)))
        parts.extend(_reuse_row(ref, results) for ref in shown)
        if rest:
            parts.append(_rest_row(rest, 5 + len(SCOPE_GROUPS)))
        parts.append("\n| PC | lanes | addresses | sectors | wavefronts |\n|---|---|---|---|---|")
        parts.extend(_efficiency_row(ref.node) for ref in shown)
        value_rows = [row for row in (_values_row(ref, results) for ref in shown) if row]
        if value_rows:
            parts.append("\n| PC | reloaded unchanged | zero | silent stores | warp-uniform |\n|---|---|---|---|---|")
            parts.extend(value_rows)
        chains = sorted({_inline_chain(r.node, results) for r in shown} - {""})
        parts.extend(f"\n{chain}" for chain in chains[:MAX_CHAINS])
        if len(chains) > MAX_CHAINS:
            parts.append(f"\n(+{len(chains) - MAX_CHAINS} more inline chains)")
        texts = [(r.node.get("pc", 0), results.sass.text(r.kernel, r.node, wait=False)) for r in shown]
        sass = [f"/*{pc:04x}*/ {text}" for pc, text in texts if text]
        if sass:
            parts.append("\n" + md.code_block("\n".join(sass), "sass"))
        elif results.sass.busy():
            parts.append("\n" + md.text("SASS: the run's modules are being disassembled; hover again in a moment."))
        elif why := results.sass.why_missing():
            parts.append("\n" + md.text(f"No SASS: {why[0]}"))
    if len(groups) > MAX_KERNELS:
        others = ", ".join(
            md.code(g[0].kernel.get("name") or g[0].kernel.get("mangled") or "?") for g in groups[MAX_KERNELS:]
        )
        parts.append(f"\nAlso on this line: {others}.")
    findings = [f for f in results.findings_by_file.get(path, []) if f.line == line]
    if findings:
        parts.append(
            "\n"
            + "\n".join(
                f"- **{md.text(f.finding.get('pattern'))}**: {md.text(f.finding.get('message'))}" for f in findings
            )
        )
    return "\n".join(parts)
