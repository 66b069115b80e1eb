"""The app server exits after SIGTERM even when a client has stopped reading a response: uvicorn,
left unbounded by Streamlit, would wait for that response without limit (labs/ui/server_exit.py)."""

import pathlib
import signal
import socket
import subprocess

import pytest
import streamlit

from harness import browser as bs
from labs.ui.server_exit import GRACEFUL_SHUTDOWN_S

_missing = bs.chromium_missing_reason()
if _missing and not bs.in_ci():
    pytest.skip(f"browser tests skipped: {_missing}", allow_module_level=True)

# The server's static root, and its largest file (megabytes): far more than the socket buffers hold.
STATIC_ROOT = pathlib.Path(streamlit.__file__).parent / "static"
LARGEST_STATIC_FILE = max(STATIC_ROOT.rglob("*.js"), key=lambda path: path.stat().st_size)


def stalled_download(server: bs.Server) -> socket.socket:
    """A connection that asks for the largest file and never reads a byte of the answer."""
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
    path = LARGEST_STATIC_FILE.relative_to(STATIC_ROOT).as_posix()
    client.sendall(f"GET /{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n".encode())
    # Wait until the answer has started (peeking reads nothing): a SIGTERM that came before the server
    # took the request would find no response in flight, and the shutdown would have nothing to time out.
    client.settimeout(60)
    client.recv(1, socket.MSG_PEEK)
    return client


def test_sigterm_exits_although_a_client_stopped_reading():
    if _missing:
        pytest.fail(f"CI=true but the browser cannot run: {_missing}")
    server = bs.start_server()
    try:
        page = bs.shared_browser().new_page(viewport=bs.VIEWPORT)
        try:
            bs.open_app_page(page, server.url)  # a session has run the router
            with stalled_download(server):
                server.process.send_signal(signal.SIGTERM)
                try:
                    server.process.wait(timeout=GRACEFUL_SHUTDOWN_S + 60)
                except subprocess.TimeoutExpired:
                    pytest.fail(f"no exit {GRACEFUL_SHUTDOWN_S + 60:.0f} s after SIGTERM:\n{server.log_tail()}")
        finally:
            page.close()
        log = server.log_tail(20_000)
    finally:
        bs.stop_server(server)
    # uvicorn cancelled the stalled response (and logs the cancelled task's stack: its own message).
    assert "timeout graceful shutdown exceeded" in log, log
