"""After `shutdown` the server answers requests with InvalidRequest (LSP: "any further request ... should
error with InvalidRequest") instead of leaving the client waiting, and still exits on `exit`."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from lsp_helpers import frame, read_frame

INVALID_REQUEST = -32600


def test_request_after_shutdown_gets_invalid_request(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "reuselens.lsp_server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    replies: dict = {}

    def read() -> None:
        while True:
            message = read_frame(server.stdout)
            if "id" in message and "method" not in message:
                replies[message["id"]] = message
            if message.get("id") == 3:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        for message in (
            {
                "id": 1,
                "method": "initialize",
                "params": {"processId": os.getpid(), "capabilities": {}, "rootUri": tmp_path.as_uri()},
            },
            {"method": "initialized", "params": {}},
            {"id": 2, "method": "shutdown"},
            {
                "id": 3,
                "method": "textDocument/hover",
                "params": {
                    "textDocument": {"uri": (tmp_path / "k.cu").as_uri()},
                    "position": {"line": 0, "character": 0},
                },
            },
        ):
            server.stdin.write(frame({"jsonrpc": "2.0", **message}))
        server.stdin.flush()
        reader.join(timeout=20)
        assert replies.get(2, {}).get("result", "missing") is None
        assert replies.get(3, {}).get("error", {}).get("code") == INVALID_REQUEST, replies
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()
        assert server.wait(timeout=10) == 0
    finally:
        if server.poll() is None:
            server.kill()
