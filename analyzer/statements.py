"""Where a statement that spans several source lines starts, read off the source text.

The line table places each instruction on the line of its own sub-expression, so one statement written over three
lines (Tango AlexNet's `product += (R * w_r)` / `+ (G * w_g)` / `+ (B * w_b);`, the RGB channels of one pixel) puts
its three loads on three lines, and every rule that takes one line for one access gave three identical findings
(poor-coalescing, hierarchical-reuse-grid, constant-region, broadcasting: session 56's review, 8 findings). The
pipeline marks such a node's source with `statement_line`, the statement's first line (docs/report-format.md), and
patterns/view.line_key groups by it, as it groups the accesses of a statement written on one line.

The text is read, not parsed: going up from the line, the statement goes on while the line above ends inside an
expression. A line above ends the previous statement (and the walk) when, without its trailing `//` comment, it is
empty, a preprocessor directive or a comment, ends with `;`, `{`, `}` or `:` (a label, `case`, an access
specifier), or is a control header (`for (...)`, `if (...)`, `while (...)`, `switch (...)`, `else`, `do`), whose
body is a statement of its own. A line that begins with a brace begins a statement (a function's
body after its signature). An unreadable line ends the walk too, and so does MAX_LINES: a statement is never
taken to start further up than the text shows, so accesses are merged only where the text says they are one
statement.

Public API: :func:`statement_line`.
"""

from __future__ import annotations

import re
from typing import Callable

# The furthest up a statement's first line is looked for: longer expressions are rare, and a wrong guess merges
# accesses of two statements.
MAX_LINES = 8

_CONTROL = re.compile(r"^(?:\}\s*)?(?:(?:for|if|while|switch)\s*\(.*\)|else(?:\s+if\s*\(.*\))?|do)$")
_ENDS = (";", "{", "}", ":")


def _code(text: str) -> str:
    """The line without a trailing `//` comment (one outside string and character literals) and surrounding blanks."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote and text[index - 1] != "\\":
                quote = ""
        elif char in "\"'":
            quote = char
        elif text.startswith("//", index):
            return text[:index].strip()
    return text.strip()


def _ends_statement(text: str) -> bool:
    code = _code(text)
    if not code or code.startswith(("#", "/*", "*")) or code.endswith("*/"):
        return True
    return code.endswith(_ENDS) or _CONTROL.match(code) is not None


def statement_line(get_line: Callable[[str, int], str | None], path: str, line: int) -> int | None:
    """The first line of the statement holding `line` of `path` (get_line(path, n) reads line n, None when it cannot),
    or None when the line itself cannot be read."""
    if get_line(path, line) is None:
        return None
    start = line
    while start > 1 and line - start < MAX_LINES:
        if _code(get_line(path, start) or "").startswith(("{", "}")):
            break  # a block's brace begins a statement of its own, whatever the line above (a function's signature)
        above = get_line(path, start - 1)
        if above is None or _ends_statement(above):
            break
        start -= 1
    return start
