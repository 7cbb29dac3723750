"""Putting report data (kernel and function names, file paths, messages) into Markdown as literal text.

A report is workspace data: a name holding `](javascript:…)`, `|` or a backtick would otherwise add links,
break the hover's tables or end a code span early.
"""

from __future__ import annotations

import re

# What gives inline text a meaning: emphasis, code, links, HTML, entities, table cells, strikethrough. ( ) and !
# only matter next to a bracket, which is escaped; # + - . only at the start of a line, where none of this goes.
_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~])")


def text(value: object) -> str:
    """`value` as literal inline Markdown text."""
    return _SPECIAL.sub(r"\\\1", str(value)).replace("\n", " ")


def code(value: object) -> str:
    """`value` as an inline code span, fenced with more backticks than it contains in a row."""
    value = str(value).replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code_block(body: str, language: str = "") -> str:
    """A fenced block that a line of ``` inside `body` cannot close."""
    fence = "`" * max(3, max((len(run) + 1 for run in re.findall(r"`{3,}", body)), default=3))
    return f"{fence}{language}\n{body}\n{fence}"


# An inline link to a file position, as hover.py and memory_hover.py write them (`[name:line](file:///…#Ln)`):
# path_to_uri percent-encodes parentheses and spaces, so the target ends at the first `)`.
_FILE_LINK = re.compile(r"\]\((file://[^)\s]+)\)")


def with_link_references(text: str) -> str:
    """`text` with each inline link to a file turned into a numbered reference link, every target defined once at
    the end. A reuse table links the same few lines from each of its rows, and each `file://` URI of an app's
    source is 100-200 characters: sortingNetworks' largest hover goes from 15.6 to 10.3 KB."""
    targets: dict[str, int] = {}

    def reference(match: re.Match[str]) -> str:
        return f"][{targets.setdefault(match.group(1), len(targets) + 1)}]"

    body = _FILE_LINK.sub(reference, text)
    if not targets:
        return text
    return body + "\n\n" + "\n".join(f"[{n}]: {target}" for target, n in targets.items())
