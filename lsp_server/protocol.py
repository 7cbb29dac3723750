"""The JSON-RPC protocol of the server: pygls' own, except after `shutdown`.

pygls drops every request that arrives after `shutdown` without a reply, so a client awaiting one waits
forever. The LSP specification asks for an InvalidRequest error instead; notifications are still dropped.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol


class ReuseLensProtocol(LanguageServerProtocol):
    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            error = JsonRpcInvalidRequest(f"{method}: the server is shutting down").to_response_error()
            self._send_response(message.id, error=error)
            return
        super().handle_message(message)
