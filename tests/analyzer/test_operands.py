"""Global loads' and stores' address operands read off the CUBIN (analyzer/operands.py): the decoder against nvdisasm's
listings of every recorded CUBIN (sm_80, sm_90, sm_120, relocatable device code, tests/data/sass), and which nodes
of a report get an `address`: tests/data/sass/elements.cu's structures read member by member."""

from __future__ import annotations

import re

import pytest

from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.lineinfo.sass import parse_listing
from reuselens.analyzer.operands import attach_operands, global_operand
from tests.analyzer.sass_listings import DATA, OneCubinMapper, listed_cubins

ELEMENTS = DATA / "sass" / "elements.sm_90.cubin"
# nvdisasm's memory operand: `desc[UR4][R2.64+0xc]`, `[R4.64+-0x10]`, `[RZ]`
_OPERAND = re.compile(r"\b(?:LDG|STG)(?:\.[A-Z0-9]+)*\s.*?\[(R\d+|RZ)(?:\.64)?(?:\+(-?0x[0-9a-f]+))?\]")


@pytest.mark.parametrize("cubin, listing", listed_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_every_global_load_and_store_decodes_as_nvdisasm_lists_it(cubin, listing):
    table = CubinLineTable(cubin.read_bytes())
    decoded = 0
    for (section, pc), text in parse_listing(listing).items():
        symbol = table.function_symbol(section.removeprefix(".text."))
        if symbol is None:
            continue
        data = table.elf.section_data(table.elf.sections[symbol.shndx])
        operand = global_operand(int.from_bytes(data[symbol.value + pc : symbol.value + pc + 8], "little"))
        listed = _OPERAND.search(text)
        if listed is None or listed.group(1) == "RZ":
            assert operand is None, text
            continue
        assert operand == (int(listed.group(1)[1:]), int(listed.group(2) or "0", 16)), text
        decoded += 1
    if table.arch != 89:  # the sm_89 fixture (-G) has no global access
        assert decoded > 0


def node(pc: int, type_: str = "read", sectors: int = 16, line: int = 14, function: str = "_Z10copy_quadsPK4QuadPS_i"):
    return {
        "id": pc,
        "pc": pc,
        "function": function,
        "space": "global",
        "type": type_,
        "size": 4,
        "sectors": [[sectors, 64]],
        "sectors_ideal": [[4, 64]],
        "source": {"file": "/src/elements.cu", "line": line},
    }


def test_wasteful_accesses_sharing_a_statement_get_their_address():
    quads = [node(pc) for pc in (0xC0, 0xD0, 0xE0, 0xF0)]
    alone = node(0x110, "write", line=15)  # wasteful, but alone on its statement: nothing to compare it with
    coalesced = [node(pc, "write", sectors=4, line=16) for pc in (0x120, 0x130)]  # no waste: not read
    kernel = {"module": "m", "nodes": [*quads, alone, *coalesced]}
    attach_operands(OneCubinMapper(ELEMENTS), [kernel])
    assert [(n["address"]["register"], n["address"]["offset"]) for n in quads] == [(2, o) for o in (0, 4, 8, 12)]
    # one register, set once before the four loads (elements.sm_90.sass: the IMAD.WIDE of R2 at 0xb0)
    assert {n["address"]["defined_at"] for n in quads} == {0xB0}
    assert all("address" not in n for n in (alone, *coalesced))
    elsewhere = {"module": "gone", "nodes": [node(0xC0), node(0xD0)]}
    attach_operands(OneCubinMapper(ELEMENTS), [elsewhere])  # its CUBIN cannot be read: no address, no error
    assert all("address" not in n for n in elsewhere["nodes"])
    odd = {"module": "m", "nodes": [node(0xC4), node(0xD0, function="_Z3nonev")]}  # no instruction there
    attach_operands(OneCubinMapper(ELEMENTS), [odd])
    assert all("address" not in n for n in odd["nodes"])


def test_a_report_with_addresses_loads_and_a_malformed_one_is_named(tmp_path):
    import json

    from reuselens.analyzer import report
    from reuselens.analyzer.errors import ReportError

    def load(address):
        path = tmp_path / "report.json"
        nodes = [{"id": 0}, {"id": 1, "function": "_Z1fv", "pc": 16, "space": "global", "address": address}]
        path.write_text(
            json.dumps({"format": "reuselens-report", "version": 2, "kernels": [{"id": "k0", "nodes": nodes}]})
        )
        return report.load(path)

    assert load({"register": 4, "offset": -16})["kernels"][0]["nodes"][1]["address"] == {"register": 4, "offset": -16}
    for malformed in ({"register": 4}, {"register": 255, "offset": 0}, {"register": 4, "offset": 1 << 23}, [4, 0]):
        with pytest.raises(ReportError, match="address"):
            load(malformed)


def test_a_statement_over_several_lines_shares_its_first_line():
    # GIVEN the four loads of one statement written over four lines (statement_line 14 on the last three): one
    # statement, as on one line, so each gets its address
    quads = [node(pc, line=14 + i) for i, pc in enumerate((0xC0, 0xD0, 0xE0, 0xF0))]
    for quad in quads[1:]:
        quad["source"]["statement_line"] = 14
    attach_operands(OneCubinMapper(ELEMENTS), [{"module": "m", "nodes": quads}])
    assert [n["address"]["offset"] for n in quads] == [0, 4, 8, 12]
