"""The language server as editors start it: a ReuseLensServer with every feature and command registered."""

from __future__ import annotations

from reuselens.lsp_server import handlers
from reuselens.lsp_server.server import ReuseLensServer


def build_server() -> ReuseLensServer:
    server = ReuseLensServer()
    handlers.register(server)
    return server
