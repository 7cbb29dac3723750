"""Loops read off SASS (analyzer/loops.py): a recorded nvdisasm listing of tests/data/sass/loops.cu, and the
report field `loops` the post-run analysis sets from it for functions with same-thread reloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from reuselens.analyzer import loops as loops_module
from reuselens.analyzer.errors import ReuseLensError
from reuselens.analyzer.lineinfo.cubin import CubinLineTable
from reuselens.analyzer.lineinfo.sass import parse_listing
from reuselens.analyzer.loops import attach_loops, backward_branches, innermost, loops_in

DATA = Path(__file__).parents[1] / "data"
LISTING = parse_listing((DATA / "sass" / "loops.sm_90.sass").read_text())


def sass_of(function: str):
    section = f".text.{function}"
    return lambda pc: LISTING.get((section, pc))


def loads(function: str) -> list[int]:
    """PCs of the function's global loads, in order."""
    section = f".text.{function}"
    return sorted(pc for (s, pc), text in LISTING.items() if s == section and " LDG." in f" {text}")


def test_two_sibling_loops_are_two_disjoint_intervals_and_the_trap_branch_is_none():
    found = loops_in(sass_of("_Z10two_passesPKfPfi"))
    assert found == sorted(found, key=lambda loop: loop[1]) and all(head < back for head, back in found)
    first_pass, second_pass = loads("_Z10two_passesPKfPfi")[0], loads("_Z10two_passesPKfPfi")[-1]
    mine, theirs = innermost(found, second_pass), innermost(found, first_pass)
    assert mine is not None and theirs is not None and mine != theirs
    assert not mine[0] <= first_pass <= mine[1] and not theirs[0] <= second_pass <= theirs[1]
    # the kernel's last instruction is the BRA to itself that follows EXIT: no loop
    last = max(pc for (s, pc) in LISTING if s == ".text._Z10two_passesPKfPfi")
    assert all(back < last for _head, back in found)


def test_an_inner_loop_is_the_innermost_of_the_pcs_it_holds():
    found = loops_in(sass_of("_Z6nestedPKfPfii"))
    inner_load = loads("_Z6nestedPKfPfii")[0]
    holding = [loop for loop in found if loop[0] <= inner_load <= loop[1]]
    assert len(holding) >= 2  # the k loop inside the i loop
    assert innermost(found, inner_load) == min(holding, key=lambda loop: loop[1] - loop[0])
    assert innermost(found, 0) is None


class FakeMapper:
    """The source mapper's SASS side: the recorded listing for module "m"; other modules are unknown. Its CUBIN
    tables are unknown too unless `cubin` is given, so that the loops come from the listing (nvdisasm's way)."""

    def __init__(self, cubin: bytes | None = None):
        self.prepared: list[dict] = []
        self.cubin = cubin

    def table(self, module):
        if module != "m" or self.cubin is None:
            raise ReuseLensError("no CUBIN here")
        return CubinLineTable(self.cubin)

    def prepare_sass(self, functions_of):
        self.prepared.append({module: sorted(functions) for module, functions in functions_of.items()})

    def sass(self, module, function, pc):
        if module != "m":
            raise ReuseLensError("unknown module")
        return sass_of(function)(pc)


def kernel_with_reload(
    function: str, module: str = "m", kind: str = "rar", origin_runs: int = 16, first_touch: float = 1.0
) -> dict:
    """One block of one warp, a load re-reading (edge kind `kind`) what a load that ran `origin_runs` times read,
    `first_touch` of its bytes for the first time (an earlier loop's stream: 1)."""
    node = {"type": "read", "function": function, "executions": origin_runs}
    origin_metrics = {"W_out": {"cold": 4096 * first_touch, "thread": 4096 * (1 - first_touch)}, "W_total": 4096}
    edge = {"from": 2, "to": 1, "label": "thread", "bytes": 4096, "rar": 0, "raw": 0, kind: 1024}
    return {
        "module": module,
        "grid": [1, 1, 1],
        "block": [32, 1, 1],
        "launches": [0],
        "nodes": [{"id": 1, **node, "metrics": origin_metrics}, {"id": 2, **node}],
        "edges": [edge],
    }


def test_loops_come_from_nvdisasm_only_for_undecoded_functions_with_reloads(monkeypatch):
    monkeypatch.setattr("reuselens.analyzer.lineinfo.sass.find_nvdisasm", lambda: "/usr/bin/nvdisasm")
    reloading = kernel_with_reload("_Z10two_passesPKfPfi")
    quiet = kernel_with_reload("_Z6nestedPKfPfii", kind="waw")  # a dead store is no reload
    unknown = kernel_with_reload("_Z6nestedPKfPfii", module="gone")  # its CUBIN cannot be read
    few = kernel_with_reload("_Z6nestedPKfPfii", origin_runs=15)  # 15 values per thread: registers hold them
    accumulator = kernel_with_reload("_Z6nestedPKfPfii", first_touch=0.5)  # `c[i][j] +=` reloaded in its own loop
    mapper = FakeMapper()
    attach_loops(mapper, [reloading, quiet, unknown, few, accumulator])
    assert "loops" not in few and "loops" not in accumulator
    assert mapper.prepared == [{"m": ["_Z10two_passesPKfPfi"], "gone": ["_Z6nestedPKfPfii"]}]
    assert reloading["loops"] == {"_Z10two_passesPKfPfi": [list(x) for x in loops_in(sass_of("_Z10two_passesPKfPfi"))]}
    assert "loops" not in quiet and "loops" not in unknown

    monkeypatch.setattr("reuselens.analyzer.lineinfo.sass.find_nvdisasm", lambda: None)
    again = kernel_with_reload("_Z10two_passesPKfPfi")
    attach_loops(FakeMapper(), [again])
    assert "loops" not in again  # no nvdisasm: the rules give the advice they gave before


@pytest.mark.parametrize(
    "text", ["@P0 BRA `(.L_0x0010) ;", "@!P1 BRA !P2, `(.L_0x0010) ;", "BRA.DIV UR4, `(.L_0x0010) ;"]
)
def test_backward_branches_of_every_form_are_loops(text):
    code = {
        0x0: "S2R R0, SR_TID.X ;",
        0x10: "LDG.E R2, desc[UR4][R2.64] ;",
        0x20: "IADD3 R0, R0, 0x1, RZ ;",
        0x30: text,
        0x40: "EXIT ;",
    }
    assert loops_in(code.get) == [(0x10, 0x30)]
    assert loops_module.innermost([[0x10, 0x30]], 0x20) == (0x10, 0x30)


def test_a_report_with_loops_loads_and_malformed_loops_are_named(tmp_path):
    import json

    from reuselens.analyzer import report
    from reuselens.analyzer.errors import ReportError

    def load(loops):
        path = tmp_path / "report.json"
        kernel = {"id": "k0", "nodes": [], "edges": [], "loops": loops}
        path.write_text(json.dumps({"format": "reuselens-report", "version": 2, "kernels": [kernel]}))
        return report.load(path)

    assert load({"_Z1fv": [[480, 880]]})["kernels"][0]["loops"] == {"_Z1fv": [[480, 880]]}
    for malformed in ([[-16, 880]], [[256]], [[256, 496, 768]], [[896, 640]]):
        with pytest.raises(ReportError, match="loops"):
            load({"_Z1fv": malformed})


def test_attach_loops_decodes_the_cubin_without_nvdisasm(monkeypatch):
    monkeypatch.setattr("reuselens.analyzer.lineinfo.sass.find_nvdisasm", lambda: None)
    kernel = kernel_with_reload("_Z10two_passesPKfPfi")
    mapper = FakeMapper(cubin=(DATA / "sass" / "loops.sm_90.cubin").read_bytes())
    attach_loops(mapper, [kernel])
    assert mapper.prepared == []  # no nvdisasm run: the branches were decoded from the bytes
    assert kernel["loops"] == {"_Z10two_passesPKfPfi": [list(x) for x in loops_in(sass_of("_Z10two_passesPKfPfi"))]}


def recorded_cubins() -> list[tuple[Path, str]]:
    """Every CUBIN of the fixtures with nvdisasm's listing of it: tests/data/cubins (sm_80, sm_89, sm_90, sm_120,
    -G, relocatable device code linked) and tests/data/sass."""
    import gzip

    found = [
        (path, gzip.open(path.with_name(path.name.replace(".cubin", ".gi.txt.gz")), "rt").read())
        for path in sorted((DATA / "cubins").glob("*.cubin"))
    ]
    found.append((DATA / "sass" / "loops.sm_90.cubin", (DATA / "sass" / "loops.sm_90.sass").read_text()))
    return found


@pytest.mark.parametrize("cubin, listing", recorded_cubins(), ids=lambda value: getattr(value, "name", ""))
def test_branches_decoded_from_the_cubin_are_the_loops_nvdisasm_lists(cubin, listing):
    table = CubinLineTable(cubin.read_bytes())
    sass = parse_listing(listing)
    functions = [symbol for symbol in table.symbols if symbol.type == 2 and symbol.size > 0]  # STT_FUNC with code
    assert functions
    loops = 0
    for symbol in functions:
        section = table.elf.sections[symbol.shndx]
        code = table.elf.section_data(section)[symbol.value : symbol.value + symbol.size]
        start = symbol.value
        listed = loops_in(lambda pc, name=section.name, start=start: sass.get((name, start + pc)), start)
        assert backward_branches(code, table.arch) == listed, symbol.name
        loops += len(listed)
    assert loops > 0


def test_an_unknown_architecture_or_a_branch_out_of_the_function_is_not_decoded():
    bra_back = (0x947 | (((1 << 48) - 4) << 34)).to_bytes(16, "little")  # BRA to itself, -16 bytes (sm_8x)
    assert backward_branches(bytes(16) + bra_back, 80) == []
    assert backward_branches(bytes(16) + bra_back, 75) is None  # Turing: not checked against nvdisasm
    far = (0x947 | (1 << 40)).to_bytes(16, "little")  # forward, far past the end
    assert backward_branches(far, 90) is None


def test_nvdisasm_loops_of_a_function_end_where_the_function_does(monkeypatch):
    # a device function placed in its kernel's section (cubins' call_kernel and its slow path), read from nvdisasm's
    # listing (an architecture the decoder does not know): the listing runs on into the next function, whose loops
    # are not this one's
    import gzip

    from reuselens.analyzer.lineinfo.mapper import SourceMapper

    cubin = (DATA / "cubins" / "kernels.sm_90.lineinfo.cubin").read_bytes()
    listing = parse_listing(gzip.open(DATA / "cubins" / "kernels.sm_90.lineinfo.gi.txt.gz", "rt").read())
    function = "$_Z11call_kernelPfPKfi$_Z6slowfnf"
    mapper = SourceMapper({"m": cubin})
    table = mapper.table("m")
    symbol = table.function_symbol(function)
    section = table.elf.sections[symbol.shndx].name
    after = symbol.value + symbol.size + 0x40  # an instruction of the next function, branching back within it
    listing[(section, after)] = f"BRA `(.L_{symbol.value + symbol.size:#06x}) ;"
    monkeypatch.setattr(table, "arch", 75)  # not decoded: nvdisasm's way
    monkeypatch.setattr("reuselens.analyzer.lineinfo.sass.find_nvdisasm", lambda: "/usr/bin/nvdisasm")
    module = mapper._module("m")
    module.sass.update(listing)
    module.sass_sections.add(symbol.shndx)
    monkeypatch.setattr(mapper, "prepare_sass", lambda functions_of: None)
    kernel = kernel_with_reload(function)
    attach_loops(mapper, [kernel])
    loops = kernel["loops"][function]
    code = table.elf.section_data(table.elf.sections[symbol.shndx])[symbol.value : symbol.value + symbol.size]
    # as section offsets, like node PCs (docs/report-format.md)
    assert loops == [[head + symbol.value, back + symbol.value] for head, back in backward_branches(code, 90)] and loops
    assert all(symbol.value <= head <= back < symbol.value + symbol.size for head, back in loops)
