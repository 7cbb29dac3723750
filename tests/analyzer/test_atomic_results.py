"""Atomics that return their old value, read off the CUBIN (analyzer/atomic_results.py): every atomic of tests/data's
CUBINs against nvdisasm's listings, and the node attribute the privatization advice reads."""

from __future__ import annotations

import pytest

from benchmarks.sass_decoder_check import listed_instructions, result_agrees
from reuselens.analyzer.atomic_results import attach_atomic_results
from tests.analyzer.sass_listings import DATA, OneCubinMapper, listed_cubins

GATHERS = DATA / "sass" / "gathers.sm_90.cubin"


@pytest.mark.parametrize("cubin, listing", listed_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_returns_exactly_where_nvdisasm_names_a_destination(cubin, listing):
    verdicts = [result_agrees(text, lo, hi) for _f, _pc, text, lo, hi in listed_instructions(cubin, listing)]
    assert False not in verdicts
    if cubin.name.startswith("gathers"):
        assert verdicts.count(True) == 7  # its ATOMG and ATOMS that return, and the five REDG that do not


def test_slots_are_marked_and_statement_updates_are_not():
    # GIVEN gathers.cu's atomics: atomicAdd slots whose old value indexes a store (ATOMG, ATOMS with a destination)
    # and atomicMin statements (REDG)
    listing = (DATA / "sass" / "gathers.sm_90.sass").read_text()
    atomics = {
        (function, pc): text
        for function, pc, text, _lo, _hi in listed_instructions(GATHERS, listing)
        if text.split()[-1] and any(op in text for op in ("ATOMG", "ATOMS", "REDG"))
    }
    nodes = [
        {"id": i + 1, "function": function, "pc": pc, "space": "global", "type": "atomic"}
        for i, (function, pc) in enumerate(sorted(atomics))
    ]
    attach_atomic_results(OneCubinMapper(GATHERS), [{"module": "m", "nodes": nodes}])
    # THEN exactly the ones nvdisasm shows writing a register are marked
    assert [bool(n.get("returns")) for n in nodes].count(True) == 2
    for node in nodes:
        assert node.get("returns", False) == ("REDG" not in atomics[(node["function"], node["pc"])])


def test_only_adds_hand_out_slots():
    # GIVEN gathers.cu's returning atomics (atomicAdd slots, ATOMG and ATOMS) and nvdisasm's names for every atomic
    # of tests/data's CUBINs: fetch_add is set exactly on the returning ones nvdisasm calls ADD
    listing = (DATA / "sass" / "gathers.sm_90.sass").read_text()
    atomics = {
        (function, pc): text
        for function, pc, text, _lo, _hi in listed_instructions(GATHERS, listing)
        if any(op in text for op in ("ATOMG", "ATOMS", "REDG"))
    }
    nodes = [
        {"id": i + 1, "function": function, "pc": pc, "space": "global", "type": "atomic"}
        for i, (function, pc) in enumerate(sorted(atomics))
    ]
    attach_atomic_results(OneCubinMapper(GATHERS), [{"module": "m", "nodes": nodes}])
    for node in nodes:
        text = atomics[(node["function"], node["pc"])]
        assert node.get("fetch_add") == (".ADD" in text if node.get("returns") else None), text


@pytest.mark.parametrize("cubin, listing", listed_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_the_operation_field_is_zero_exactly_on_returning_adds(cubin, listing):
    from reuselens.analyzer.atomic_results import fetch_adds, returns_old_value

    for _f, _pc, text, lo, hi in listed_instructions(cubin, listing):
        if returns_old_value(lo, hi):
            operation = text.split()[0 if not text.startswith("@") else 1].split(".")
            assert fetch_adds(lo, hi) == ("ADD" in operation), text
