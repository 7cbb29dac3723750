"""Helpers shared by the language-server tests (fixtures live in conftest.py)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import IO

from lsprotocol import types
from pytest_lsp import LanguageClient

FIXTURES = Path(__file__).parent / "fixtures"
STANDIN = Path(__file__).parent / "standin_profiler.py"


async def wait_until(predicate, timeout=15.0, step=0.05):
    """Poll `predicate` until true; fail the test with its last value otherwise."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met within %.0f s" % timeout)
        await asyncio.sleep(step)


def open_doc(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="cuda-cpp", version=1, text=path.read_text())
        )
    )
    return uri


def lines_of(client: LanguageClient, uri: str, code: str | None = None) -> list[int]:
    """1-based lines of the diagnostics published for uri (optionally of one code)."""
    return sorted(d.range.start.line + 1 for d in client.diagnostics.get(uri, []) if code in (None, d.code))


def frame(message: dict) -> bytes:
    """One JSON-RPC message with its Content-Length header, for tests that talk to the server directly."""
    body = json.dumps(message).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_frame(stream: IO[bytes]) -> dict:
    length = None
    while line := stream.readline().strip():
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def inline_links(markdown: str) -> str:
    """A hover's Markdown with its reference links (`[text][n]`, `[n]: target` at the end: markdown.py's
    with_link_references) written inline again, `[text](target)`, as a Markdown renderer resolves them."""
    body, _, definitions = markdown.rpartition("\n\n")
    targets = dict(re.findall(r"^\[(\d+)\]: (\S+)$", definitions, re.M))
    if not targets:
        return markdown
    return re.sub(r"\]\[(\d+)\]", lambda m: f"]({targets[m.group(1)]})", body)
