"""Mechanical source edits behind the quick fixes, each offered only when it is certain to compile.

Every function takes the file's current lines and the finding's (current, 1-based) line and returns either
an Edit or a sentence explaining why no edit is offered. The checks are deliberately conservative: an edit
is refused whenever a use of the touched name could stop compiling or change meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

IDENT = r"[A-Za-z_]\w*"
_SHARED_2D = re.compile(
    rf"^(\s*__shared__\s+(?:[\w:]+\s+)*?[\w:]+\s+)({IDENT})\s*\[([^\]]+)\]\s*\[\s*([^\[\]]*?)\s*\]\s*;"
)
_DEVICE_CONST = re.compile(
    rf"^(\s*)(?:static\s+)?(__device__)(\s+)(?=.*\bconst\b)(?:[\w:]+\s+)*?({IDENT})\s*\[\s*(\d*)\s*\]\s*="
)
# A statement that is only a barrier call: __syncthreads(), __syncwarp(mask), __barrier_sync(id), and the
# cooperative-groups forms cg::sync(g) / g.sync() (the cuda-samples write `cg::sync(cta)`).
_SYNC_LINE = re.compile(
    rf"^\s*(?:__syncthreads\s*\(\s*\)|__syncwarp\s*\([^;()]*\)|__barrier_sync\s*\([^;()]*\)|"
    rf"(?:{IDENT}::)*sync\s*\(\s*{IDENT}\s*\)|{IDENT}\s*\.\s*sync\s*\(\s*\))\s*;\s*(//.*)?$"
)
_TYPE_BYTES = {
    "float": 4,
    "int": 4,
    "unsigned": 4,
    "double": 8,
    "char": 1,
    "short": 2,
    "long": 8,
    "int32_t": 4,
    "uint32_t": 4,
    "int64_t": 8,
    "uint64_t": 8,
    "half": 2,
    "__half": 2,
}


@dataclass(frozen=True)
class Edit:
    """Replace characters [start, end) of 1-based `line` with `text` (end=None: the whole line incl. newline)."""

    line: int
    start: int
    end: int | None
    text: str
    title: str


_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?", re.DOTALL)


def _blank(match: re.Match) -> str:
    text = match.group(0)
    if text[0] in "\"'":  # keep the quotes, blank the contents
        inner = "".join("\n" if c == "\n" else " " for c in text[1:-1]) if len(text) > 1 else ""
        return text[0] + inner + (text[-1] if len(text) > 1 else "")
    return "".join("\n" if c == "\n" else " " for c in text)


def code_only(lines: list[str]) -> list[str]:
    """The lines with comments, string and character literals blanked out (same length, same columns), so
    a name mentioned in a comment is not mistaken for a use."""
    return _NOT_CODE.sub(_blank, "\n".join(lines)).split("\n")


def _words(lines: list[str], name: str):
    """(line index, match) for every whole-word use of `name` in `lines` (pass code_only lines)."""
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for i, text in enumerate(lines):
        for match in pattern.finditer(text):
            yield i, match


def _names_on(line_text: str) -> set[str]:
    return set(re.findall(IDENT, line_text))


def padding(lines: list[str], line: int) -> Edit | str:
    """`__shared__ T a[R][C]` -> `[R][C+1]`, for the one 2-D shared array used on `line`, when every use of
    it in the file is a double subscript `a[i][j]` (then the padding changes addresses, never the code). C is
    a number or a constant expression (a macro, a template or constexpr name): a __shared__ dimension must be
    one, so `C + 1` compiles too; an expression other than one name is parenthesised first."""
    lines = code_only(lines)
    used = _names_on(lines[line - 1]) if 0 < line <= len(lines) else set()
    declarations = [(i, m) for i, text in enumerate(lines) if (m := _SHARED_2D.match(text)) and m.group(2) in used]
    # Each kernel of a file may declare its own `tile`: the one in scope is the last declaration above the line,
    # and its uses run up to the next declaration of that name.
    in_scope = {}
    for i, m in declarations:
        if i < line:
            in_scope[m.group(2)] = (i, m)
    if len(in_scope) != 1:
        return (
            "no single statically sized 2-D __shared__ array is used on this line; pad the array's inner "
            "dimension by one element (e.g. [32][32] -> [32][33]) or swizzle the index"
        )
    ((decl_index, match),) = in_scope.values()
    name, columns = match.group(2), match.group(4).strip()
    if not columns:
        return f"{name} has no inner size to pad (extern or unsized); pad its rows by hand"
    scope_end = min((i for i, m in declarations if m.group(2) == name and i > decl_index), default=len(lines))
    double = re.compile(rf"\b{re.escape(name)}\s*\[[^\[\]]*\]\s*\[")
    for i, use in _words(lines, name):
        if i == decl_index or not decl_index < i < scope_end:
            continue
        if not double.match(lines[i], use.start()):
            return (
                f"{name} is used other than as {name}[i][j] on line {i + 1} (e.g. passed by pointer), so "
                f"changing its row length could break that use; pad it by hand"
            )
        if lines[i][: use.start()].rstrip().endswith("&"):
            return (
                f"the address of an element of {name} is taken on line {i + 1}; pointer arithmetic across "
                f"rows would change meaning with padded rows, so pad it by hand"
            )
    if columns.isdigit():
        padded = str(int(columns) + 1)
    elif re.fullmatch(IDENT, columns):
        padded = f"{columns} + 1"
    else:
        padded = f"({columns}) + 1"
    start, end = match.start(4), match.end(4)
    return Edit(
        decl_index + 1,
        start,
        end,
        padded,
        f"Pad {name} to [{match.group(3).strip()}][{padded}] against bank conflicts",
    )


def barrier_removal(lines: list[str], line: int, all_removable: bool) -> Edit | str:
    """Delete a line that is only a barrier call (`__syncthreads();`, `__syncwarp();`, `cg::sync(cta);`, …) when
    every barrier compiled from it is spanned by no
    cross-thread reuse edge, and the previous statement ends so that deleting it changes no control flow."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if not all_removable:
        return "another barrier instance on this line orders cross-thread reuse; keep it"
    if not _SYNC_LINE.match(text):
        return "the barrier is not alone on its line; remove the barrier call by hand"
    previous = next((l.split("//")[0].rstrip() for l in reversed(lines[: line - 1]) if l.split("//")[0].strip()), "")
    if previous.endswith("\\") or text.rstrip().endswith("\\"):
        return "the barrier is inside a macro; edit the macro by hand"
    if previous and previous[-1] not in ";{}":
        return (
            "the barrier is the body of a statement that ends on the previous line (e.g. an if without "
            "braces); removing the line would change what that statement controls"
        )
    return Edit(line, 0, None, "", "Remove the barrier: no cross-thread reuse crosses it")


def constant_promotion(lines: list[str], line: int, capacity: int) -> Edit | str:
    """`__device__ const T a[N] = {...}` at file scope -> `__constant__ const T a[N] = {...}`: const means no
    code writes it, an initializer means no host copy is needed, and the size must fit the constant bank."""
    lines = code_only(lines)
    used = _names_on(lines[line - 1]) if 0 < line <= len(lines) else set()
    for i, text in enumerate(lines):
        match = _DEVICE_CONST.match(text)
        if not match or match.group(4) not in used or match.group(1):
            continue
        element = next((b for t, b in _TYPE_BYTES.items() if re.search(rf"\b{t}\b", text[: match.start(4)])), None)
        count = int(match.group(5)) if match.group(5) else None
        if element is None or count is None:
            return (
                f"the size of {match.group(4)} is not a literal array of a basic type; declare it __constant__ by hand"
            )
        if element * count > capacity:
            return f"{match.group(4)} ({element * count} bytes) does not fit the {capacity}-byte constant bank"
        return Edit(
            i + 1,
            match.start(2),
            match.end(2),
            "__constant__",
            f"Declare {match.group(4)} __constant__ (broadcast reads go through the constant cache)",
        )
    return (
        "the broadcast data is not a file-scope `__device__ const` array with an initializer in this file: "
        "copy it into a `__constant__` array (cudaMemcpyToSymbol) and read that instead"
    )
