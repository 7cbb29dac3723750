"""How a load's value is typed from the SASS that consumes it (analyzer/value_types.py): on the recorded nvdisasm
listing of tests/gpu/value_redundancy.cu, and on short listings for the cases that listing lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from reuselens.analyzer.lineinfo.sass import parse_listing
from reuselens.analyzer.value_types import DOUBLE, FLOAT, INT, approximate_applies, value_type

RUNS = Path(__file__).resolve().parents[1] / "data" / "value_runs"


@pytest.fixture(scope="module")
def listing():
    (path,) = RUNS.glob("*.sass")
    return parse_listing(path.read_text())


def loads_of(listing, function: str) -> list[int]:
    section = f".text.{function}"
    return sorted(pc for (sec, pc), text in listing.items() if sec == section and text.startswith("LDG"))


@pytest.mark.parametrize(
    "function, size, expected",
    [
        ("_Z5relaxPfS_f", 4, FLOAT),  # v * 0.5f + 1.0f, v * factor
        ("_Z12relax_doublePdS_d", 8, DOUBLE),  # the same in double
        ("_Z9relax_intPiS_", 4, INT),  # v - i, v + 1
    ],
)
def test_relaxation_loads_are_typed_by_their_consumers(listing, function, size, expected):
    (pc,) = loads_of(listing, function)
    assert value_type(lambda at: listing.get((f".text.{function}", at)), pc, size) == expected


def sass_of(*lines: str):
    table = {16 * i: text for i, text in enumerate(lines)}
    return lambda pc: table.get(pc)


def test_a_value_moved_then_used_as_a_float_is_a_float():
    at = sass_of("LDG.E R4, desc[UR4][R2.64] ;", "MOV R7, R4 ;", "FMUL R9, R7, 2 ;", "EXIT ;")
    assert value_type(at, 0, 4) == FLOAT


def test_a_float_whose_bits_are_also_tested_as_an_integer_gets_no_type():
    at = sass_of("LDG.E R4, desc[UR4][R2.64] ;", "FADD R5, R4, 1 ;", "LOP3.LUT R6, R4, 0x7fffffff, RZ, 0xc0, !PT ;")
    assert value_type(at, 0, 4) is None


def test_a_value_used_as_an_address_is_an_integer():
    at = sass_of("LDG.E R4, desc[UR4][R2.64] ;", "LDG.E R6, desc[UR4][R4.64] ;", "EXIT ;")
    assert value_type(at, 0, 4) == INT


def test_a_value_only_copied_gets_no_type():
    at = sass_of("LDG.E R4, desc[UR4][R2.64] ;", "STG.E desc[UR4][R6.64], R4 ;", "EXIT ;")
    assert value_type(at, 0, 4) is None


def test_the_scan_stops_where_the_register_is_overwritten():
    # R4 is reloaded before the integer use: that use is of another value
    at = sass_of(
        "LDG.E R4, desc[UR4][R2.64] ;", "FFMA R5, R4, R4, R5 ;", "MOV R4, 0x1 ;", "IADD3 R6, R4, 1, RZ ;", "EXIT ;"
    )
    assert value_type(at, 0, 4) == FLOAT


def test_two_floats_in_a_64_bit_load_are_no_double():
    at = sass_of("LDG.E.64 R4, desc[UR4][R2.64] ;", "FADD R8, R4, R5 ;", "EXIT ;")
    assert value_type(at, 0, 8) == FLOAT
    assert not approximate_applies({"size": 8, "value_type": FLOAT})
    assert approximate_applies({"size": 8, "value_type": DOUBLE}) and approximate_applies(
        {"size": 4, "value_type": FLOAT}
    )


def test_not_a_load_or_an_odd_width_gets_no_type():
    assert value_type(sass_of("FADD R4, R4, R5 ;"), 0, 4) is None
    assert value_type(sass_of("LDG.E.128 R4, desc[UR4][R2.64] ;", "FADD R8, R4, R5 ;"), 0, 16) is None
