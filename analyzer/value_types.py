"""Whether a load's value is a float, a double or an integer, from the SASS that uses it (value mode's
approximate redundancy; docs/engine.md "Value redundancy").

A GPU load instruction has no type (LDG.E moves 32 bits), so the engine counts approximate equality on every 4-
and 8-byte load as if it held a float or a double (`approx_value` on the edges). This module reads the type off the
instructions that consume the loaded register: FFMA, FADD, FSETP ... read a float, DFMA, DADD ... a double,
IMAD, LOP3, ISETP or an address a 32-bit integer. Only loads of one floating-point type, at their width, keep
their approximate counts: an integer counter that grew by one (1000000 -> 1000001) reads, as a float, as two
denormals 1e-6 apart, which is no approximate redundancy.

The scan follows the straight-line code after the load (at most SCAN_INSTRUCTIONS, up to a branch or the end of
the function), through moves and selects, until every register holding the value has been overwritten. A load
whose consumers disagree (a float whose sign bit is tested with integer instructions) or that only moves or
stores its value gets no type: no approximate finding for it.

Public API: :func:`value_type`, :func:`attach_value_types`.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from reuselens.analyzer.errors import ReuseLensError

FLOAT, DOUBLE, INT = "float", "double", "int"
SCAN_INSTRUCTIONS = 64
INSTRUCTION_BYTES = 16  # sm_70 and later

_PREDICATE = re.compile(r"^@!?U?P[0-7T]\s+")
_REGISTER = re.compile(r"(?<![\w.])R(\d+)\b")
_FLOAT_OPS = {
    "FADD", "FMUL", "FFMA", "FSETP", "FSET", "FMNMX", "FCHK", "FRND", "FSEL", "FSWZADD", "MUFU",
    "FADD32I", "FMUL32I", "FFMA32I", "F2FP",
}  # fmt: skip
_DOUBLE_OPS = {"DADD", "DMUL", "DFMA", "DSETP", "DSET", "DMNMX"}
_CONVERTS = {"F2F", "F2I"}  # the source type is the last F16/F32/F64 suffix (F32 when none is written)
_INT_OPS = {
    "IADD3", "IADD", "IADD32I", "IMAD", "IMAD32I", "IMUL", "IMUL32I", "ISETP", "ISET", "ISCADD", "LOP3", "LOP",
    "LOP32I", "SHF", "SHL", "SHR", "LEA", "IMNMX", "VIMNMX", "IABS", "POPC", "FLO", "BREV", "BMSK", "SGXT", "I2F",
    "I2I", "I2IP", "IDP", "VIADD", "BFE", "BFI", "PRMT", "REDUX",
}  # fmt: skip
_MOVES = {"MOV", "SEL", "SHFL", "MOV32I"}  # the destination holds the value too (SEL: one of its sources)
_STORES = {"STG", "STS", "ST", "STL", "RED", "REDG", "STSM"}  # every operand is a source; no destination
_ENDS = {"BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BREAK", "KILL"}


def _split(text: str) -> tuple[str, str, list[str]]:
    """(opcode base, full opcode, operands) of one instruction's text."""
    body = _PREDICATE.sub("", text.strip().rstrip(";").strip())
    opcode, _, rest = body.partition(" ")
    operands = [part.strip() for part in rest.split(",")] if rest.strip() else []
    return opcode.split(".")[0], opcode, operands


def _registers(operand: str) -> set[int]:
    return {int(n) for n in _REGISTER.findall(operand)}


def _convert_source(opcode: str) -> str:
    types = [part for part in opcode.split(".")[1:] if part in ("F16", "F32", "F64")]
    source = types[-1] if types else "F32"
    return {"F64": DOUBLE, "F32": FLOAT}.get(source, "other")


def value_type(sass_at: Callable[[int], str | None], pc: int, size: int) -> str | None:
    """FLOAT, DOUBLE or INT: how the instructions after the load at `pc` (`sass_at(pc)`: an instruction's text,
    None outside the function) use its `size`-byte value; None when they disagree, only move or store it, or the
    load is not a plain register load."""
    base, _opcode, operands = _split(sass_at(pc) or "")
    if not base.startswith("LD") or not operands or size not in (4, 8):
        return None
    first = _registers(operands[0])
    if len(first) != 1:
        return None
    low = first.pop()
    held = {low} if size == 4 else {low, low + 1}  # a 64-bit value: a register pair
    pair_base = low if size == 8 else None
    seen: set[str] = set()
    for step in range(1, SCAN_INSTRUCTIONS + 1):
        text = sass_at(pc + step * INSTRUCTION_BYTES)
        if text is None:
            break
        base, opcode, operands = _split(text)
        if base in _ENDS:
            break
        if not operands:
            continue
        stores = base in _STORES
        sources = operands if stores else operands[1:]
        target = set() if stores else _registers(operands[0].split("[")[0])
        # a register inside [...] is (part of) an address: an integer, whatever the instruction
        addressed = set().union(*(_registers(s) for s in sources if "[" in s)) & held if sources else set()
        read = set().union(*(_registers(s) for s in sources if "[" not in s)) & held if sources else set()
        if addressed:
            seen.add(INT)
        if read:
            if base in _DOUBLE_OPS:
                seen.add(DOUBLE if pair_base is not None and pair_base in read else "other")
            elif base in _FLOAT_OPS:
                seen.add(FLOAT)
            elif base in _CONVERTS:
                kind = _convert_source(opcode)
                seen.add(kind if (kind == DOUBLE) == (pair_base is not None and pair_base in read) else "other")
            elif base in _INT_OPS:
                seen.add(INT)
            elif base in _MOVES and size == 4:
                held |= target  # the copy holds the value; overwritten below only if it is also a source
                target = set()
            elif not stores:  # a store only copies the value; anything else is a use we cannot type
                seen.add("other")
        held -= target
        if not held:
            break
    if len(seen) != 1:
        return None
    kind = seen.pop()
    return kind if kind in (FLOAT, DOUBLE, INT) else None


def approximate_applies(node: dict[str, Any]) -> bool:
    """Whether a load node's approximate counts mean something: its value is a float (4 bytes) or a double (8)."""
    return (node.get("size"), node.get("value_type")) in ((4, FLOAT), (8, DOUBLE))


def attach_value_types(mapper: Any, kernels: list[dict[str, Any]], notes: list[str]) -> None:
    """Sets `value_type` on the load nodes whose out-edges counted approximate redundancy (report.json, docs/
    report-format.md), from the SASS of their functions (one nvdisasm run per module, only in value mode and only
    when such counts exist). Without nvdisasm, a note says that approximate redundancy was left out."""
    wanted: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for kernel in kernels:
        approx_from = {e.get("from") for e in kernel.get("edges", []) if e.get("approx_value")}
        for node in kernel.get("nodes", []):
            if node.get("id") in approx_from and node.get("type") == "read" and node.get("size") in (4, 8):
                wanted.append((kernel, node))
    if not wanted:
        return
    functions_of: dict[str, set[str]] = {}
    for kernel, node in wanted:
        if isinstance(kernel.get("module"), str) and isinstance(node.get("function"), str):
            functions_of.setdefault(kernel["module"], set()).add(node["function"])
    mapper.prepare_sass(functions_of)
    untyped = 0
    for kernel, node in wanted:
        module, function = kernel.get("module"), node.get("function")

        def sass_at(pc: int, module: Any = module, function: Any = function) -> str | None:
            try:
                return mapper.sass(module, function, pc)
            except ReuseLensError:  # the module's CUBIN is missing or unreadable: the load stays untyped
                return None

        if sass_at(int(node["pc"])) is None:
            untyped += 1
            continue
        kind = value_type(sass_at, int(node["pc"]), int(node["size"]))
        if kind is not None:
            node["value_type"] = kind
    if untyped:
        notes.append(
            f"approximate value redundancy left out for {untyped} load PC(s): their SASS is needed to tell float "
            "loads from integer ones (install nvdisasm: pip install nvidia-cuda-nvdisasm)"
        )
