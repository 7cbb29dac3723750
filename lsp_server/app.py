"""The language server as editors start it: a ReuseLensServer with every feature and command registered."""

from __future__ import annotations

from reuselens.lsp_server import handlers
from reuselens.lsp_server.server import ReuseLensServer
from reuselens.lsp_server.settings import KernelFilterCheck


def build_server(check_kernel_filter: KernelFilterCheck | None = None) -> ReuseLensServer:
    """`check_kernel_filter`: how reuselens.kernelFilter is checked (settings.KernelFilterCheck)."""
    server = ReuseLensServer()
    server.check_kernel_filter = check_kernel_filter
    handlers.register(server)
    return server
