"""The loopback HTTP server of `pi-session watch`: the session's current page at ``/`` and
its version at ``/version``, which the page asks for to know when to reload.

It listens on 127.0.0.1 only and answers only requests addressed to that name (or
``localhost``) and port, so a web page elsewhere cannot read the session through a DNS name
it points at this machine. It serves nothing else: no files, no other paths, no writes.

It answers one request at a time, in the thread that runs it, and between requests calls
``idle`` (the watch's look at the file): one thread, so making a page may fork children as
`export` does. A request that comes while a page is being made waits for it.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from exporter.watch import SessionWatch

__all__ = ["LiveServer"]

HOST = "127.0.0.1"
#: Sent with every answer: nothing cached, nothing sniffed, no framing by other pages.
COMMON_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class LiveServer(HTTPServer):
    """Serves one :class:`SessionWatch`'s page; ``port`` 0 takes a free one; ``idle`` runs
    between requests (at least every ``serve_forever`` poll interval)."""

    # SO_REUSEADDR (as http.server sets it): a watch started again on its port must not wait
    # for the last one's closed connections; a port another program listens on stays an error
    allow_reuse_address = True

    def __init__(
        self, watch: SessionWatch, port: int = 0, idle: Callable[[], None] | None = None
    ) -> None:
        self.watch = watch
        self.idle = idle
        super().__init__((HOST, port), LiveHandler)
        self.port = int(self.server_address[1])
        self.allowed_hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def service_actions(self) -> None:
        if self.idle is not None:
            self.idle()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that closed the connection mid-answer (a reload) is not an error; any
        other failure is one line on stderr, never a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, socket.timeout)):
            return
        sys.stderr.write(f"pi-session: warning: a request failed: {error!r}\n")


class LiveHandler(BaseHTTPRequestHandler):
    """GET and HEAD of ``/`` (the page, a query such as Pi's ``?targetId=`` allowed) and
    ``/version``; anything else is refused."""

    server: LiveServer
    server_version = "pi-session-watch"
    sys_version = ""
    # HTTP/1.0: one connection per request, so a stopped server leaves no kept-alive one
    # that goes on answering the page's polls, and no open connection holds the one thread
    protocol_version = "HTTP/1.0"
    timeout = 10  # seconds a client may take to send its request: it holds the only thread

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows what changed, not every poll."""

    def _answer(self, send_body: bool) -> None:
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.server.allowed_hosts:
            self._send(HTTPStatus.FORBIDDEN, "text/plain", b"only for " + self.server.url.encode())
            return
        path = self.path.partition("?")[0]  # "//host/" is a path here, not an address
        state = self.server.watch.state
        if path == "/":
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", state.page.html, send_body)
        elif path == "/version":
            answer = {
                "version": state.page.version,
                "updated": state.page.updated_ms,
                "entries": state.page.entries,
                "problem": state.problem,
            }
            body = json.dumps(answer, ensure_ascii=True).encode("ascii")
            self._send(HTTPStatus.OK, "application/json", body, send_body)
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found", send_body)

    def _send(self, status: HTTPStatus, kind: str, body: bytes, send_body: bool = True) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in COMMON_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            self.wfile.write(body)
