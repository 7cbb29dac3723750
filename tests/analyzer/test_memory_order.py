"""Strong (volatile, relaxed, acquire) global accesses read off the CUBIN (analyzer/memory_order.py), and what the
reload rule makes of them: tests/data/sass/volatile.cu's kernels against nvdisasm's listings."""

from __future__ import annotations

import pytest

from benchmarks.sass_decoder_check import listed_instructions, ordering_agrees
from reuselens.analyzer.memory_order import attach_strong_accesses
from reuselens.analyzer.patterns.redundant import find as find_reloads
from reuselens.analyzer.patterns.view import KernelView
from tests.analyzer.sass_listings import DATA, OneCubinMapper, listed_cubins

VOLATILE = DATA / "sass" / "volatile.sm_90.cubin"


@pytest.mark.parametrize("cubin, listing", listed_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_strong_exactly_where_nvdisasm_says_strong(cubin, listing):
    verdicts = [ordering_agrees(text, lo, hi) for _f, _pc, text, lo, hi in listed_instructions(cubin, listing)]
    assert False not in verdicts
    if cubin.name.startswith("volatile"):
        assert verdicts.count(True) == 13  # its 13 LDG, STG, LD and ST, weak, strong and read-only


def global_node(pc, type_, function="_Z15volatile_reloadPViPKiPi", size=4):
    return {"id": pc + 1, "pc": pc, "function": function, "space": "global", "type": type_, "size": size}


def test_volatile_and_scoped_accesses_are_marked_and_no_other():
    reload = [global_node(pc, "read") for pc in (0xA0, 0xC0, 0x100)] + [global_node(0x130, "write")]
    scoped = [global_node(pc, "read", "_Z12scoped_loadsPiS_") for pc in (0x90, 0xA0, 0xB0)]
    kernels = [{"module": "m", "nodes": reload + scoped}, {"module": "gone", "nodes": [global_node(0xC0, "read")]}]
    attach_strong_accesses(OneCubinMapper(VOLATILE), kernels)
    strong = {(n["function"][:6], n["pc"]) for k in kernels for n in k["nodes"] if n.get("strong")}
    # cost[i] twice (LDG.E.STRONG.SYS); the relaxed device-scope and block-scope loads (LD.E.STRONG.GPU, .SM)
    assert strong == {("_Z15vo", 0xC0), ("_Z15vo", 0x100), ("_Z12sc", 0x90), ("_Z12sc", 0xB0)}


def reload_kernel(strong: bool):
    """A load (pc 0x40) re-read by the same thread at 0xc0, a store through another pointer at 0x80 between them."""
    nodes = [
        {**global_node(0x40, "read", "k"), "executions": 64, "lanes": [[32, 64]]},
        {**global_node(0x80, "write", "k"), "executions": 64, "lanes": [[32, 64]]},
        {
            **global_node(0xC0, "read", "k"),
            "executions": 64,
            "lanes": [[32, 64]],
            "source": {"file": "/s/bfs.cu", "line": 9},
        },
    ]
    if strong:
        nodes[0]["strong"] = nodes[2]["strong"] = True
    edges = [
        {"from": 0x41, "to": 0, "label": "cold", "bytes": 8192, "accesses": 64},
        {"from": 0x81, "to": 0, "label": "cold", "bytes": 8192, "accesses": 64},
        {"from": 0xC1, "to": 0x41, "label": "thread", "bytes": 8192, "accesses": 64},
    ]
    return {"module": "m", "mangled": "k", "nodes": [{"id": 0}, *nodes], "edges": edges}


def test_a_volatile_reload_is_the_programs_not_the_compilers():
    (weak,) = find_reloads(KernelView(reload_kernel(False)), {})
    (strong,) = find_reloads(KernelView(reload_kernel(True)), {})
    assert weak.fix_kind == "register-promotion" and "__restrict__" in weak.message
    assert strong.fix_kind == "none" and "__restrict__" not in strong.message
    assert "a volatile (strong) load: every read reaches memory by design" in strong.message
    assert "the reload is the point" in strong.explanation
    assert strong.metrics["strong"] is True and strong.metrics["alias_pcs"] == []
