"""A server ended by a signal stops the commands it started first: builds and profilers run in their own
process groups, so they (and the profiled app) would otherwise outlive it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_helpers import FIXTURES, STANDIN, frame

HOLD_APP = (
    "import os, pathlib, sys, time; d = pathlib.Path(sys.argv[1]); (d / 'pid').write_text(str(os.getpid()));"
    "time.sleep(300)"
)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, "stdin closed"])
def test_signal_to_the_server_stops_the_profiler_and_the_app(tmp_path, sig):
    """Also when the editor goes away without a signal: its end of the server's stdin closes."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = {
        "profile": {"command": [sys.executable, "-c", HOLD_APP, str(tmp_path)]},
        "profiler": {"command": [sys.executable, str(STANDIN), "--recorded", str(FIXTURES / "run2")]},
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "reuselens.lsp_server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    app_pid = None
    try:
        server.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": os.getpid(),
                        "rootUri": ws.as_uri(),
                        "capabilities": {},
                        "initializationOptions": {"workspaceTrusted": True, "settings": settings},
                    },
                }
            )
        )
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        server.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "workspace/executeCommand",
                    "params": {"command": "reuselens.profile", "arguments": []},
                }
            )
        )
        server.stdin.flush()
        deadline = time.monotonic() + 30
        while not ((tmp_path / "pid").exists() and (tmp_path / "pid").read_text()):
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.05)
        app_pid = int((tmp_path / "pid").read_text())
        # WHEN the server is told to stop while the app runs
        if sig == "stdin closed":
            server.stdin.close()
            assert server.wait(timeout=30) == 0
        else:
            server.send_signal(sig)
            # THEN it ends with the signal's usual effect
            assert server.wait(timeout=30) == -sig
        # and the app it started ended first
        assert not alive(app_pid)
    finally:
        if server.poll() is None:
            server.kill()
        if app_pid is not None and alive(app_pid):
            os.kill(app_pid, signal.SIGKILL)  # an orphan must not outlive the test
