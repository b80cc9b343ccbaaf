"""The loopback HTTP server of `pi-session watch`: the session's current page at
``/<secret>/`` and its version at ``/<secret>/version``, which the page asks for to know
when to reload.

It listens on 127.0.0.1 only. It answers only requests addressed to that name (or
``localhost``) and port, so a web page elsewhere cannot read the session through a DNS name
it points at this machine; and only paths under a random secret (printed in the address),
so another user of the machine cannot read it either. It serves nothing else: no files,
no other paths, no writes.

It answers one request at a time, in the thread that runs it, and between requests calls
``idle`` (the watch's look at the file): one thread, so making a page may fork children as
`export` does. A request that comes while a page is being made waits for it; a client gets
``FIRST_BYTE_SECONDS`` to start its request and ``REQUEST_SECONDS`` in all, so a slow or
idle one cannot hold the thread long; the answer then goes out in parts, each of which the
client has ``WRITE_STALL_SECONDS`` to take (a big page over a slow link arrives whole; a
client that stops reading is let go). A request whose head is over ``REQUEST_BYTES`` (the
cookies other programs set for 127.0.0.1, which a browser sends to every port) is answered
431, saying why, and said once on stderr.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import socket
import sys
import time
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from exporter.watch import SessionWatch

__all__ = ["LiveServer", "url_secret"]

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
#: Seconds a client has, in all, to send its request line and headers.
REQUEST_SECONDS = 5.0
#: ...and to send its first byte: a connection opened and left idle (a browser's spare
#: one, any local program) held the one thread 5 s each, and five of them the page 25 s.
#: Over loopback a request comes at once; a closed spare is opened again when needed.
FIRST_BYTE_SECONDS = 1.0
#: Seconds a client has to take each part of an answer (the request's deadline cut a big
#: page short at ~5 s on a slow link, silently, and its live script with it).
WRITE_STALL_SECONDS = 30.0
#: The parts an answer is sent in: each has its own WRITE_STALL_SECONDS.
WRITE_PART_BYTES = 64 * 1024
#: The most a request's head may be, its blank last line included: a browser's GET is well
#: under 2 KB, but for the cookies other programs set for 127.0.0.1.
REQUEST_BYTES = 16_384
#: The most of a head over REQUEST_BYTES read (and dropped) to answer it: the client is
#: sending it still, and a connection closed on unread bytes is reset, the answer with it.
OVERSIZED_HEAD_BYTES = 1024 * 1024
#: A program that starts watches on one port again and again (Pi's /live-html, across /new)
#: keeps the page's address by passing its secret in this variable (not an argument: those
#: are visible to every user in the process list).
SECRET_VARIABLE = "PI_SESSION_WATCH_SECRET"
_SECRET = re.compile(r"[A-Za-z0-9_-]{16,64}")


def url_secret(environ: Mapping[str, str] = os.environ) -> str:
    """``$PI_SESSION_WATCH_SECRET`` when it is 16-64 URL-safe characters, else a new one
    (ValueError for a value that is set but not such)."""
    given = environ.get(SECRET_VARIABLE)
    if given is None or given == "":
        return secrets.token_urlsafe(18)
    if not _SECRET.fullmatch(given):
        raise ValueError(f"{SECRET_VARIABLE} must be 16-64 characters of A-Z a-z 0-9 _ -")
    return given


class LiveServer(HTTPServer):
    """Serves one :class:`SessionWatch`'s page; ``port`` 0 takes a free one; ``idle`` runs
    between requests (at least every ``serve_forever`` poll interval). The port is taken at
    once; ``watch`` may be set later, before serving."""

    # SO_REUSEADDR (as http.server sets it): a watch started again on its port must not wait
    # for the last one's closed connections; a port another program listens on stays an error
    allow_reuse_address = True

    def __init__(
        self,
        watch: SessionWatch | None,
        port: int = 0,
        idle: Callable[[], None] | None = None,
        secret: str | None = None,
    ) -> None:
        self.watch = watch
        self.idle = idle
        self.secret = secret or secrets.token_urlsafe(18)
        self.pages_served = 0  # answers of the page itself: whether a browser came (--open)
        self.oversized_said = False  # a request head over REQUEST_BYTES, said on stderr once
        super().__init__((HOST, port), LiveHandler)
        self.port = int(self.server_address[1])
        self.allowed_hosts = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        if self.port == 80:  # a browser leaves the default port out of Host
            self.allowed_hosts |= {HOST, "localhost"}

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/{self.secret}/"

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
    """GET and HEAD of the page (a query such as Pi's ``?targetId=`` allowed) and of its
    version; anything else is refused."""

    server: LiveServer
    server_version = "pi-session-watch"
    sys_version = ""
    # HTTP/1.0: one connection per request, so a stopped server leaves no kept-alive one
    # that goes on answering the page's polls, and no open connection holds the one thread
    protocol_version = "HTTP/1.0"

    def handle_one_request(self) -> None:
        """Read the request's head under one deadline for all of it (a socket timeout is per
        read: one byte every few seconds kept the only thread forever), then answer it; a
        head over REQUEST_BYTES is answered 431."""
        started = time.monotonic()
        deadline = started + REQUEST_SECONDS
        head = b""
        while (end := _head_end(head)) is None and len(head) <= REQUEST_BYTES:
            # never more than one byte past the limit: a head of REQUEST_BYTES passes, one
            # byte more does not (checked before each 4 KB read, heads of ~20 KB passed)
            chunk = self._receive(started, deadline, REQUEST_BYTES + 1 - len(head), head)
            if not chunk:
                self.close_connection = True
                return
            head += chunk
        if end is None or end > REQUEST_BYTES:
            self._refuse_oversized_head(started, deadline, head)
            return
        self.rfile = io.BytesIO(head)  # a GET has no body: the head is all there is to read
        self.connection.settimeout(WRITE_STALL_SECONDS)  # the answer's time is its own
        super().handle_one_request()

    def _receive(self, started: float, deadline: float, most: int, head: bytes) -> bytes:
        """The next bytes of the request, at most ``most``; b"" when the client closed, went
        quiet (FIRST_BYTE_SECONDS for its first byte) or ran out of time."""
        first_by = deadline if head else min(deadline, started + FIRST_BYTE_SECONDS)
        remaining = first_by - time.monotonic()
        if remaining <= 0:
            return b""
        self.connection.settimeout(remaining)
        try:
            return self.connection.recv(most)
        except (TimeoutError, ConnectionError):
            return b""

    def _refuse_oversized_head(self, started: float, deadline: float, head: bytes) -> None:
        """431, in plain text, for a head over REQUEST_BYTES. The rest of it is read first
        (up to OVERSIZED_HEAD_BYTES, within the request's time): closed on bytes not read,
        the connection is reset, and the browser shows an empty answer instead. Said once on
        stderr: the one at the terminal may be the one with such cookies."""
        self.close_connection = True
        seen, tail = len(head), head[-3:]  # (a blank line split between two reads is found)
        complete = _head_end(head) is not None
        while not complete and seen < OVERSIZED_HEAD_BYTES:
            chunk = self._receive(started, deadline, 64 * 1024, head)
            if not chunk:
                break
            seen += len(chunk)
            tail = tail[-3:] + chunk
            complete = _head_end(tail) is not None
        limit = REQUEST_BYTES // 1024
        if not self.server.oversized_said:
            self.server.oversized_said = True
            sys.stderr.write(
                f"pi-session: warning: a request for the page had over {limit} KB of headers "
                "(cookies other programs set for 127.0.0.1?) and was answered 431: clear "
                "the browser's cookies for 127.0.0.1, or use localhost in place of "
                "127.0.0.1 in the address\n"
            )
        body = (
            f"Request headers over {limit} KB: this page's server reads no more.\n"
            "Browsers send every cookie set for 127.0.0.1 to every port of it, so other "
            "programs' cookies may be the cause: clear the cookies for 127.0.0.1, or open "
            "this address with localhost in place of 127.0.0.1.\n"
        ).encode("ascii")
        self.request_version = self.protocol_version  # (no request line was parsed)
        self.command, self.requestline = "", ""
        self.connection.settimeout(WRITE_STALL_SECONDS)
        kind = "text/plain; charset=utf-8"
        self._send(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, kind, body, send_body=True)

    def end_headers(self) -> None:
        for name, value in COMMON_HEADERS.items():  # http.server's own error pages too
            self.send_header(name, value)
        super().end_headers()

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows what changed, not every poll."""

    def _answer(self, send_body: bool) -> None:
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.server.allowed_hosts:
            where = f"http://{HOST}:{self.server.port}/".encode()
            self._send(HTTPStatus.FORBIDDEN, "text/plain", b"only for " + where, send_body)
            return
        path = self.path.partition("?")[0]  # "//host/" is a path here, not an address
        base = f"/{self.server.secret}/"
        watch = self.server.watch
        if watch is not None and path == base[:-1]:  # the address typed without its "/"
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            query = self.path.partition("?")[2]  # (Pi's ?targetId=; one line: no CR or LF)
            self.send_header("Location", base + (f"?{query}" if query else ""))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if watch is None or path not in (base, base + "version"):
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found", send_body)
            return
        state = watch.state
        if path == base:
            self.server.pages_served += 1
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", state.page.html, send_body)
            return
        answer = {
            "version": state.page.version,
            "updated": state.page.updated_ms,
            "entries": state.page.entries,
            "problem": state.problem,
        }
        body = json.dumps(answer, ensure_ascii=True).encode("ascii")
        self._send(HTTPStatus.OK, "application/json", body, send_body)

    def _send(self, status: HTTPStatus, kind: str, body: bytes, send_body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            # part by part: a socket's timeout bounds one whole sendall, and a page of
            # megabytes over a slow link may take longer than any one bound
            whole = memoryview(body)
            for start in range(0, len(whole), WRITE_PART_BYTES):
                self.wfile.write(whole[start : start + WRITE_PART_BYTES])


def _head_end(data: bytes) -> int | None:
    """Where a request's head ends in ``data`` (just after its blank line), None before."""
    ends = [at + len(blank) for blank in (b"\r\n\r\n", b"\n\n") if (at := data.find(blank)) >= 0]
    return min(ends, default=None)
