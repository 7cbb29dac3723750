"""Register saves of called functions, read off the CUBIN (analyzer/frame_saves.py): every local store and load of
tests/data's CUBINs decoded as nvdisasm lists it, and the saves and restores of a recursive function told from a
kernel's local array."""

from __future__ import annotations

import re
import struct

import pytest

from benchmarks.sass_decoder_check import listed_instructions
from reuselens.analyzer.frame_saves import FRAME_INSTRUCTIONS, attach_frame_saves, frame_slots
from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from tests.analyzer.sass_listings import DATA, OneCubinMapper, listed_cubins

FRAMES = DATA / "sass" / "frames.sm_90.cubin"
KERNEL = "_Z14recursive_sumsPKfiPf"
CALLEE = "$_Z14recursive_sumsPKfiPf$_Z8tree_sumPKfiif"
HISTOGRAM = "_Z15local_histogramPKiiPi"
_STORE = re.compile(r"STL(?:\.\w+)* \[R(\d+)(?:\+(-?0x[0-9a-f]+))?\], (R\d+|RZ)")
_LOAD = re.compile(r"LDL(?:\.\w+)* (R\d+), \[R(\d+)(?:\+(-?0x[0-9a-f]+))?\]")


def _listings():
    return [*listed_cubins(), (FRAMES, (DATA / "sass" / "frames.sm_90.sass").read_text())]


def _register(name: str) -> int:
    return 255 if name == "RZ" else int(name[1:])


@pytest.mark.parametrize("cubin, listing", _listings(), ids=lambda value: getattr(value, "name", ""))
def test_local_accesses_decode_as_nvdisasm_lists_them(cubin, listing):
    decoded = 0
    for _function, _pc, text, lo, _hi in listed_instructions(cubin, listing):
        opcode, base, offset = lo & 0xFFF, (lo >> 24) & 0xFF, (lo >> 40) & 0xFFFFFF
        offset -= (offset >> 23) << 24  # signed
        if (store := _STORE.search(text)) and opcode == 0x387:
            assert (base, offset, (lo >> 32) & 0xFF) == (
                int(store[1]),
                int(store[2] or "0", 16),
                _register(store[3]),
            ), text
            decoded += 1
        elif (load := _LOAD.search(text)) and opcode == 0x983:
            assert (base, offset, (lo >> 16) & 0xFF) == (int(load[2]), int(load[3] or "0", 16), _register(load[1]))
            decoded += 1
        else:  # no other instruction has these opcodes, and every STL and LDL has them
            assert opcode not in (0x387, 0x983) and not re.search(r"\b(STL|LDL)\b", text), text
    if cubin == FRAMES:
        assert decoded == 36


def _span(function: str) -> tuple[bytes, int]:
    """The function's code and where it starts in its section (the callee follows its kernel in one section)."""
    table = CubinLineTable(FRAMES.read_bytes())
    symbol = table.function_symbol(function)
    data = table.elf.section_data(table.elf.sections[symbol.shndx])
    return data[symbol.value : symbol.value + symbol.size], symbol.value


def _local_instructions() -> list[tuple[str, int, str]]:
    """(function, section offset, text) of every STL and LDL of frames.cu, the callee's told from its kernel's."""
    listing = (DATA / "sass" / "frames.sm_90.sass").read_text()
    callee_code, callee_start = _span(CALLEE)
    found = []
    for function, pc, text, _lo, _hi in listed_instructions(FRAMES, listing):
        if re.search(r"\b(STL|LDL)\b", text):
            inside = callee_start <= pc < callee_start + len(callee_code)
            found.append((CALLEE if function == KERNEL and inside else function, pc, text))
    return found


def test_a_recursive_functions_saves_and_restores_are_found_and_a_local_array_is_not():
    # GIVEN tree_sum, recursive and not inlined: 13 STL [R1+o], Rk on entry (R2, R16-R27) and the 13 LDL back
    code, start = _span(CALLEE)
    texts = {pc - start: text for function, pc, text in _local_instructions() if function == CALLEE}
    slots = frame_slots(code)
    assert sorted(slots) == sorted(texts)  # every local access of the callee is a save or a restore
    for pc, kind in slots.items():
        assert ("STL" if kind == "save" else "LDL") in texts[pc]
    assert list(slots.values()).count("save") == list(slots.values()).count("restore") == 13
    # THEN the histogram's zeroing stores (RZ), its data-indexed LDL/STL [R9] and its reads of its own array are none
    assert frame_slots(_span(HISTOGRAM)[0]) == {}


def test_nodes_of_called_functions_are_marked_and_the_kernels_own_are_not():
    nodes = [
        {"id": i + 1, "function": function, "pc": pc, "space": "local", "type": "write" if "STL" in text else "read"}
        for i, (function, pc, text) in enumerate(_local_instructions())
    ]
    kernels = [
        {"module": "m", "mangled": KERNEL, "nodes": [n for n in nodes if n["function"] != HISTOGRAM]},
        {"module": "m", "mangled": HISTOGRAM, "nodes": [n for n in nodes if n["function"] == HISTOGRAM]},
    ]
    attach_frame_saves(OneCubinMapper(FRAMES), kernels)
    marked = {(n["function"], n["type"], n.get("frame")) for n in nodes}
    assert marked == {
        (CALLEE, "write", "save"),
        (CALLEE, "read", "restore"),
        (HISTOGRAM, "write", None),
        (HISTOGRAM, "read", None),
    }
    # a module the mapper cannot read leaves every node as it was
    for node in nodes:
        node.pop("frame", None)
    for kernel in kernels:
        kernel["module"] = "unknown"
    attach_frame_saves(OneCubinMapper(FRAMES), kernels)
    assert not any("frame" in n for n in nodes)


def _stl(offset: int, register: int) -> int:
    return 0x387 | 1 << 24 | register << 32 | offset << 40  # STL [R1+offset], Rregister


def _ldl(offset: int, register: int) -> int:
    return 0x983 | register << 16 | 1 << 24 | offset << 40  # LDL Rregister, [R1+offset]


def _function(*words: int) -> bytes:
    return b"".join(struct.pack("<QQ", lo, 0) for lo in words)


NOP, RET = 0x918, 0x950


def test_a_spill_and_fill_in_the_body_is_no_frame_save():
    # GIVEN a function that stores R16 on entry and loads it back just before its RET (a save), and stores the
    # argument R4 deep in its body and loads it back far from any RET (register pressure, not the call's frame)
    # and one more saved register (R17) that the body loads back too, far from the RET: only the epilogue's restores
    body = [NOP] * FRAME_INSTRUCTIONS
    code = _function(
        _stl(0x0, 16), _stl(0x8, 17), *body, _stl(0x4, 4), _ldl(0x8, 17), *body, _ldl(0x4, 4), *body, _ldl(0x0, 16), RET
    )
    slots = frame_slots(code)
    assert slots == {0: "save", 16: "save", (5 + 3 * FRAME_INSTRUCTIONS) * 16: "restore"}
