"""The Helix and Emacs snippets of docs/lsp.md, checked against the server without those editors (none is
installed on the test machines): the Helix snippet's command and settings, answered the way Helix answers
workspace/configuration (from `config`), give the lens titles as inlay hints to a client without code lenses."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from lsp_helpers import lines_of, open_doc, wait_until
from lsprotocol import types

pytestmark = [pytest.mark.filterwarnings("error::pytest_lsp.LspSpecificationWarning")]

DOCS = (Path(__file__).parents[2] / "docs" / "lsp.md").read_text()


def snippet(name: str, language: str) -> str:
    found = re.search(rf"<!-- {name}-snippet -->\s*```{language}\n(.*?)```", DOCS, re.DOTALL)
    assert found, f"docs/lsp.md has no {name} snippet"
    return found.group(1)


HELIX = tomllib.loads(snippet("helix", "toml"))
HELIX_SERVER = HELIX["language-server"]["reuselens"]


def test_snippets_start_the_reuselens_server() -> None:
    assert [HELIX_SERVER["command"], *HELIX_SERVER["args"]] == ["reuselens", "lsp"]
    assert "reuselens" in HELIX["language"][0]["language-servers"]
    assert '"reuselens" "lsp"' in snippet("emacs", "elisp")


@pytest.mark.lsp_client("emacs@v29.1")
@pytest.mark.lsp_settings(HELIX_SERVER["config"]["reuselens"])
@pytest.mark.asyncio
async def test_helix_settings_give_inlay_hints(client, workspace):
    # The snippet maps /build/app to ${workspaceFolder}; the fixture run was built in /build/app.
    uri = open_doc(client, workspace / "stencil.cu")
    await wait_until(lambda: lines_of(client, uri) == [15, 24, 24, 26])
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(types.Position(0, 0), types.Position(40, 0)),
        )
    )
    assert [(h.position.line + 1, h.label) for h in hints][:1] == [(11, "reuse 100% cold · 8.4 MB")]
