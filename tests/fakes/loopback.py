"""What every loopback fake needs: a quiet threaded HTTP server on 127.0.0.1 whose requests
go to the fake's ``_handle(handler)``, and start/stop/``with`` around it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

__all__ = ["LoopbackFake", "QuietHandler"]

F = TypeVar("F", bound="LoopbackFake")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # don't wait for handlers hanging on purpose
    fake: Any

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (timeouts, drops) are expected here; stay quiet."""


class QuietHandler(BaseHTTPRequestHandler):
    """Hands GET to the fake; a fake's subclass adds the other methods it serves."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging to stderr."""

    def do_GET(self) -> None:
        self.server.fake._handle(self)


class LoopbackFake:
    """Serve ``handler`` on a free port of 127.0.0.1 in a daemon thread."""

    handler: type[QuietHandler] = QuietHandler
    _server: _Server | None = None
    _thread: threading.Thread | None = None

    def start(self: F) -> F:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread; returns the fake."""
        server = _Server(("127.0.0.1", 0), self.handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self: F) -> F:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, f"{type(self).__name__} is not running"
        return int(self._server.server_address[1])
