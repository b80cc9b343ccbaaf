"""A loopback fake of the GitHub gist REST API for tests (stdlib only).

It speaks the contract of docs/reference publish-apis.md §4.1: ``POST /gists`` (201),
``PATCH|GET|DELETE /gists/{id}`` (200/200/204, 404 if unknown) and the ``raw_url``
route, with the same paths also served under ``/api/v3`` (GitHub Enterprise Server).
As GitHub does (§1.1), an API request without a ``User-Agent`` gets 403 before any other check.
Gists live in memory; every request is recorded; failures can be injected.

Usage::

    with FakeGitHub() as fake:                      # or the ``fake_github`` fixture
        client = GistClient(fake.base_url, fake.token)
        fake.fail(500, times=2)                     # next two requests get HTTP 500
        fake.rate_limit(reset_in=30)                # primary limit: 403 + x-ratelimit-*
        fake.secondary_rate_limit(retry_after=5)    # 429 + retry-after
        fake.saml_enforced(org="acme")              # 403 + X-GitHub-SSO: required; url=...
        fake.drop_connection(times=1)               # close the socket without answering
        fake.hang(2.0)                              # answer nothing for 2 s, then drop
        fake.answer_create_oddly(cut=True)          # make the gist, answer half its JSON
        ...
        fake.requests[-1].method, .path, .route, .headers["user-agent"], .json
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from tests.fakes.loopback import LoopbackFake, QuietHandler

__all__ = [
    "DEFAULT_TOKEN",
    "NO_USER_AGENT_BODY",
    "Failure",
    "FakeGitHub",
    "OddCreate",
    "RecordedRequest",
    "closed_port_url",
    "fake_github_fixture",
]

DEFAULT_TOKEN = "ghp_fake_test_token_0123456789"
DOCS = "https://docs.github.com/rest"
CREATE_DOCS = "https://docs.github.com/rest/gists/gists#create-a-gist"
TRUNCATE_BYTES = 1024 * 1024
GHES_PREFIX = "/api/v3"
#: What GitHub answers (403, ``text/html``, not JSON) to an API request without a
#: ``User-Agent`` (publish-apis.md §1.1; docs.github.com "User agent required").
NO_USER_AGENT_BODY = (
    "Request forbidden by administrative rules. Please make sure your request has a "
    "User-Agent header (http://developer.github.com/v3/#user-agent-required). Check "
    "https://developer.github.com for other possible causes.\n"
)


@dataclass
class RecordedRequest:
    """One request as the fake saw it. Header names are lower-cased."""

    method: str
    path: str
    route: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any = None

    def header(self, name: str) -> str | None:
        """Case-insensitive header lookup."""
        return self.headers.get(name.lower())


@dataclass
class Failure:
    """An injected misbehaviour, used for the next ``times`` matching requests.

    ``action``: "respond" (send ``status``/``headers``/``body``), "drop" (close the
    connection without a response), "hang" (wait ``delay`` seconds, then drop) or
    "trickle" (a 200's headers, then one byte of its body every ``delay`` seconds, never
    all of it: a stalled server or proxy that each read timeout lets through).
    ``method``/``path`` restrict which requests match (``path`` is a regex searched
    in the route, i.e. the path without the ``/api/v3`` prefix).
    """

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    action: str = "respond"
    delay: float = 0.0
    times: int = 1
    method: str | None = None
    path: str | None = None

    def matches(self, method: str, route: str) -> bool:
        if self.times <= 0:
            return False
        if self.method and self.method.upper() != method:
            return False
        return not (self.path and not re.search(self.path, route))


@dataclass
class OddCreate:
    """How the next successful ``POST /gists`` is answered: the gist is made as always,
    then answered with ``body`` (None: its own JSON, without the ``drop`` keys), with the
    ``Location`` header or not; ``cut`` sends the first half of the body with no
    ``Content-Length`` and closes the connection (an answer cut off in transit)."""

    body: Any = None
    drop: tuple[str, ...] = ()
    location: bool = True
    cut: bool = False


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_type(name: str) -> tuple[str, str | None]:
    lower = name.lower()
    if lower.endswith((".html", ".htm")):
        return "text/html", "HTML"
    if lower.endswith(".md"):
        return "text/markdown", "Markdown"
    if lower.endswith(".json"):
        return "application/json", "JSON"
    return "text/plain", "Text"


class _Handler(QuietHandler):
    do_POST = do_PATCH = do_DELETE = do_PUT = QuietHandler.do_GET


class FakeGitHub(LoopbackFake):
    """In-memory gist API on 127.0.0.1 with request recording and failure injection."""

    handler = _Handler

    def __init__(
        self,
        tokens: tuple[str, ...] | list[str] = (DEFAULT_TOKEN,),
        *,
        no_scope_tokens: tuple[str, ...] | list[str] = (),
        login: str = "alice",
        max_body_bytes: int | None = None,
    ) -> None:
        self.tokens = set(tokens)
        self.token = next(iter(tokens), DEFAULT_TOKEN)
        #: Valid tokens without the gist scope: writes get 404, as on GitHub.
        self.no_scope_tokens = set(no_scope_tokens)
        self.login = login
        #: Requests with a larger body get HTTP 502 (what GitHub does for ~50 MB).
        self.max_body_bytes = max_body_bytes
        self.gists: dict[str, dict[str, Any]] = {}
        self.requests: list[RecordedRequest] = []
        self.failures: list[Failure] = []
        self.rate_remaining = 5000
        #: How the next creates are answered (``answer_create_oddly``), first first.
        self.odd_creates: list[OddCreate] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """API root that looks like api.github.com (no prefix)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ghes_url(self) -> str:
        """API root that looks like GitHub Enterprise Server (``/api/v3``)."""
        return f"{self.base_url}{GHES_PREFIX}"

    # -- failure injection --------------------------------------------------------------

    def inject(self, failure: Failure) -> Failure:
        """Queue a failure; the first matching queued failure wins."""
        with self._lock:
            self.failures.append(failure)
        return failure

    def fail(
        self,
        status: int,
        *,
        headers: dict[str, str] | None = None,
        body: Any = None,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> Failure:
        """Answer the next ``times`` matching requests with this status/headers/body.

        ``body`` may be a dict/list (sent as JSON), str or bytes; None sends
        GitHub's usual ``{"message": <reason>, "documentation_url": ...}``.
        """
        return self.inject(
            Failure(
                status=status,
                headers=dict(headers or {}),
                body=body,
                times=times,
                method=method,
                path=path,
            )
        )

    def drop_connection(
        self, *, times: int = 1, method: str | None = None, path: str | None = None
    ) -> Failure:
        """Close the connection without any response (client sees a connection error)."""
        return self.inject(Failure(action="drop", times=times, method=method, path=path))

    def hang(
        self,
        seconds: float,
        *,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> Failure:
        """Say nothing for ``seconds`` then drop: a client with a shorter timeout times out."""
        return self.inject(
            Failure(action="hang", delay=seconds, times=times, method=method, path=path)
        )

    def answer_create_oddly(
        self,
        *,
        body: Any = None,
        drop: tuple[str, ...] = (),
        location: bool = True,
        cut: bool = False,
    ) -> OddCreate:
        """Make the next created gist as usual but answer it oddly (see ``OddCreate``)."""
        odd = OddCreate(body=body, drop=tuple(drop), location=location, cut=cut)
        with self._lock:
            self.odd_creates.append(odd)
        return odd

    def rate_limit(
        self,
        *,
        reset_in: float = 30,
        status: int = 403,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> Failure:
        """Primary rate limit: ``x-ratelimit-remaining: 0`` and a reset ``reset_in`` s away."""
        reset = int(time.time() + reset_in)
        return self.fail(
            status,
            headers={
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-used": "5000",
                "x-ratelimit-reset": str(reset),
                "x-ratelimit-resource": "core",
            },
            body={
                "message": "API rate limit exceeded for user ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            },
            times=times,
            method=method,
            path=path,
        )

    def secondary_rate_limit(
        self,
        *,
        retry_after: int | str = 1,
        status: int = 429,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> Failure:
        """Secondary rate limit: ``retry-after`` seconds, remaining quota untouched."""
        return self.fail(
            status,
            headers={"retry-after": str(retry_after)},
            body={
                "message": "You have exceeded a secondary rate limit. Please wait a few "
                "minutes before you try again.",
                "documentation_url": DOCS,
            },
            times=times,
            method=method,
            path=path,
        )

    def saml_enforced(
        self,
        *,
        org: str = "acme",
        url: str | None = None,
        times: int = 1,
        method: str | None = None,
        path: str | None = None,
    ) -> Failure:
        """An organization enforcing SAML single sign-on on a token not authorized for it:
        GitHub's 403, its JSON message and ``X-GitHub-SSO: required; url=...``."""
        if url is None:
            url = f"https://github.com/orgs/{org}/sso?authorization_request=AB12CD34EF56GH78"
        return self.fail(
            403,
            headers={"X-GitHub-SSO": f"required; url={url}"},
            body={
                "message": "Resource protected by organization SAML enforcement. You must "
                "grant your Personal Access token access to this organization.",
                "documentation_url": "https://docs.github.com/articles/"
                "authenticating-to-a-github-organization-with-saml-single-sign-on/",
                "status": "403",
            },
            times=times,
            method=method,
            path=path,
        )

    # -- inspection ---------------------------------------------------------------------

    @property
    def last(self) -> RecordedRequest:
        """The most recent request."""
        return self.requests[-1]

    def requests_to(self, method: str | None = None, route: str | None = None) -> list[str]:
        """``"METHOD route"`` strings, handy for asserting call sequences."""
        return [
            f"{r.method} {r.route}"
            for r in self.requests
            if (method is None or r.method == method.upper())
            and (route is None or re.search(route, r.route))
        ]

    def content(self, gist_id: str, filename: str = "session.html") -> str:
        """Full stored content of one gist file."""
        return str(self.gists[gist_id]["files"][filename])

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- HTTP handling ----------------------------------------------------------------------

    def _handle(self, h: _Handler) -> None:
        parts = urlsplit(h.path)
        path = unquote(parts.path)
        route = path[len(GHES_PREFIX) :] if path.startswith(GHES_PREFIX + "/") else path
        prefix = path[: len(path) - len(route)]
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        parsed: Any = None
        if body:
            try:
                parsed = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                parsed = None
        record = RecordedRequest(
            method=h.command,
            path=path,
            route=route,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in h.headers.items()},
            body=body,
            json=parsed,
        )
        with self._lock:
            self.requests.append(record)
            failure = next((f for f in self.failures if f.matches(h.command, route)), None)
            if failure is not None:
                failure.times -= 1

        base = f"http://{h.headers.get('Host') or f'127.0.0.1:{self.port}'}"
        if failure is not None:
            self._apply_failure(h, failure)
            return
        status, payload, headers = self._route(record, base, prefix, body)
        odd = None
        if status == 201 and record.method == "POST":
            with self._lock:
                odd = self.odd_creates.pop(0) if self.odd_creates else None
        if odd is not None:
            self._send_odd_create(h, odd, payload, headers)
            return
        self._send(h, status, payload, headers)

    def _send_odd_create(
        self, h: _Handler, odd: OddCreate, payload: Any, headers: dict[str, str]
    ) -> None:
        if odd.body is not None:
            payload = odd.body
        elif isinstance(payload, dict):
            payload = {k: v for k, v in payload.items() if k not in odd.drop}
        if not odd.location:
            headers = {k: v for k, v in headers.items() if k.lower() != "location"}
        if not odd.cut:
            self._send(h, 201, payload, headers)
            return
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            h.send_response(201)
            for name, value in {**headers, "Content-Type": "application/json"}.items():
                h.send_header(name, value)
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.wfile.flush()
        except OSError:
            pass
        h.close_connection = True
        with contextlib.suppress(OSError):
            h.connection.shutdown(socket.SHUT_RDWR)

    def _apply_failure(self, h: _Handler, failure: Failure) -> None:
        if failure.action == "trickle":
            self._trickle(h, failure.delay)
            return
        if failure.delay:
            time.sleep(failure.delay)
        if failure.action in ("drop", "hang"):
            h.close_connection = True
            with contextlib.suppress(OSError):
                h.connection.shutdown(socket.SHUT_RDWR)
            return
        body = failure.body
        if body is None:
            try:
                reason = HTTPStatus(failure.status).phrase
            except ValueError:
                reason = "Error"
            body = {"message": reason, "documentation_url": DOCS}
        self._send(h, failure.status, body, failure.headers)

    @staticmethod
    def _trickle(h: _Handler, every: float, most: int = 600) -> None:
        """Headers of a 200 with a long body, then a byte of it every ``every`` seconds
        (at most ``most`` bytes) until the client hangs up."""
        h.send_response(200)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", "100000")
        h.end_headers()
        h.close_connection = True
        with contextlib.suppress(OSError):
            for _ in range(most):
                h.wfile.write(b" ")
                h.wfile.flush()
                time.sleep(every)

    def _rate_headers(self) -> dict[str, str]:
        with self._lock:
            self.rate_remaining = max(0, self.rate_remaining - 1)
            remaining = self.rate_remaining
        return {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-used": str(5000 - remaining),
            "x-ratelimit-reset": str(int(time.time()) + 3600),
            "x-ratelimit-resource": "core",
        }

    def _send(self, h: _Handler, status: int, payload: Any, headers: dict[str, str]) -> None:
        if isinstance(payload, bytes):
            data, ctype = payload, "application/octet-stream"
        elif isinstance(payload, str):
            data, ctype = payload.encode("utf-8"), "text/plain; charset=utf-8"
        elif payload is None:
            data, ctype = b"", ""
        else:
            data, ctype = (
                json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                "application/json; charset=utf-8",
            )
        merged = self._rate_headers()
        if ctype:
            merged["Content-Type"] = ctype
        merged.update(headers)
        try:
            h.send_response(status)
            for name, value in merged.items():
                h.send_header(name, value)
            if status not in (204, 304):
                h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if status not in (204, 304) and h.command != "HEAD":
                h.wfile.write(data)
        except OSError:
            h.close_connection = True

    # -- the API ---------------------------------------------------------------------------

    def _auth(self, record: RecordedRequest) -> tuple[str | None, bool]:
        """(token, header_present). Accepts ``Bearer`` and ``token`` schemes like GitHub."""
        value = record.header("authorization")
        if value is None:
            return None, False
        scheme, _, token = value.partition(" ")
        if scheme.lower() in ("bearer", "token") and token.strip() in self.tokens:
            return token.strip(), True
        return None, True

    def _route(
        self, r: RecordedRequest, base: str, prefix: str, body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        raw = re.fullmatch(r"/raw/([0-9a-f]+)/([0-9a-f]+)/(.+)", r.route)
        if raw and r.method == "GET":
            gist = self.gists.get(raw.group(1))
            name = raw.group(3)
            if gist is None or name not in gist["files"]:
                return 404, "404: Not Found", {}
            return 200, str(gist["files"][name]), {}

        if not (r.header("user-agent") or "").strip():  # GitHub's front end, before auth
            return 403, NO_USER_AGENT_BODY, {"Content-Type": "text/html", "Connection": "close"}

        if self.max_body_bytes is not None and len(body) > self.max_body_bytes:
            return 502, "<html><body><h1>502 Bad Gateway</h1></body></html>", {}

        token, has_header = self._auth(r)
        write = r.method in ("POST", "PATCH", "DELETE", "PUT")
        if has_header and token is None:
            return (
                401,
                {"message": "Bad credentials", "documentation_url": DOCS, "status": "401"},
                {},
            )
        if token is None and write:
            return 401, {"message": "Requires authentication", "documentation_url": DOCS}, {}
        not_found = {"message": "Not Found", "documentation_url": DOCS, "status": "404"}
        if write and token in self.no_scope_tokens:
            return 404, not_found, {}

        if r.route == "/gists" and r.method == "POST":
            return self._create(r, base, prefix)
        one = re.fullmatch(r"/gists/([^/]+)", r.route)
        if one:
            gist_id = one.group(1)
            with self._lock:
                gist = self.gists.get(gist_id)
            if gist is None:
                return 404, not_found, {}
            if r.method == "GET":
                return 200, self._render(gist, base, prefix), {}
            if r.method == "PATCH":
                return self._update(r, gist, base, prefix)
            if r.method == "DELETE":
                with self._lock:
                    self.gists.pop(gist_id, None)
                return 204, None, {}
        return 404, not_found, {}

    @staticmethod
    def _invalid(code: str = "missing_field", field_name: str = "files") -> tuple[int, Any, dict]:
        return (
            422,
            {
                "message": "Validation Failed",
                "errors": [{"resource": "Gist", "code": code, "field": field_name}],
                "documentation_url": CREATE_DOCS,
            },
            {},
        )

    def _create(self, r: RecordedRequest, base: str, prefix: str) -> tuple[int, Any, dict]:
        data = r.json
        if not isinstance(data, dict):
            return 400, {"message": "Problems parsing JSON", "documentation_url": DOCS}, {}
        files = data.get("files")
        if not isinstance(files, dict) or not files:
            return self._invalid()
        contents: dict[str, str] = {}
        for name, spec in files.items():
            content = spec.get("content") if isinstance(spec, dict) else None
            if not isinstance(content, str) or not content:
                return self._invalid()
            contents[str(name)] = content
        public = data.get("public", False)
        if public in ("true", "false"):
            public = public == "true"
        if not isinstance(public, bool):
            return self._invalid("invalid", "public")
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            return self._invalid("invalid", "description")
        now = _now_iso()
        gist_id = secrets.token_hex(16)
        gist = {
            "id": gist_id,
            "public": public,
            "description": description or "",
            "files": contents,
            "created_at": now,
            "updated_at": now,
            "history": [{"version": secrets.token_hex(20), "committed_at": now}],
        }
        with self._lock:
            self.gists[gist_id] = gist
        headers = {"Location": f"{base}{prefix}/gists/{gist_id}"}
        return 201, self._render(gist, base, prefix), headers

    def _update(
        self, r: RecordedRequest, gist: dict[str, Any], base: str, prefix: str
    ) -> tuple[int, Any, dict]:
        data = r.json
        if not isinstance(data, dict) or not ("files" in data or "description" in data):
            return self._invalid()
        files = dict(gist["files"])
        changes = data.get("files") or {}
        if not isinstance(changes, dict):
            return self._invalid("invalid")
        for name, spec in changes.items():
            if spec is None:
                files.pop(name, None)
                continue
            if not isinstance(spec, dict):
                return self._invalid("invalid")
            new_name = spec.get("filename") or name
            content = spec.get("content", files.get(name))
            if not isinstance(content, str) or not content:
                return self._invalid()
            files.pop(name, None)
            files[str(new_name)] = content
        if not files:
            return self._invalid()
        now = _now_iso()
        with self._lock:
            gist["files"] = files
            if "description" in data:
                gist["description"] = str(data["description"] or "")
            gist["updated_at"] = now
            gist["history"].insert(0, {"version": secrets.token_hex(20), "committed_at": now})
        return 200, self._render(gist, base, prefix), {}

    def _render(self, gist: dict[str, Any], base: str, prefix: str) -> dict[str, Any]:
        """The gist JSON GitHub returns, with 1 MiB truncation of file content."""
        gist_id = gist["id"]
        rev = gist["history"][0]["version"]
        files = {}
        for name, content in gist["files"].items():
            raw = content.encode("utf-8")
            truncated = len(raw) > TRUNCATE_BYTES
            shown = raw[:TRUNCATE_BYTES].decode("utf-8", errors="ignore") if truncated else content
            mime, language = _file_type(name)
            files[name] = {
                "filename": name,
                "type": mime,
                "language": language,
                "raw_url": f"{base}/raw/{gist_id}/{rev}/{name}",
                "size": len(raw),
                "truncated": truncated,
                "content": shown,
            }
        user = {"login": self.login, "id": 1}
        return {
            "id": gist_id,
            "url": f"{base}{prefix}/gists/{gist_id}",
            "html_url": f"{base}/gist-html/{gist_id}",
            "git_pull_url": f"{base}/{gist_id}.git",
            "git_push_url": f"{base}/{gist_id}.git",
            "public": gist["public"],
            "description": gist["description"],
            "owner": user,
            "files": files,
            "created_at": gist["created_at"],
            "updated_at": gist["updated_at"],
            "comments": 0,
            "truncated": False,
            "forks": [],
            "history": [
                {"version": h["version"], "committed_at": h["committed_at"], "user": user}
                for h in gist["history"]
            ],
        }


def closed_port_url() -> str:
    """URL of a 127.0.0.1 port nothing listens on (bind, read the port, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(name="fake_github")
def fake_github_fixture() -> Iterator[FakeGitHub]:
    """A running FakeGitHub per test, as fixture ``fake_github``.

    Import ``fake_github_fixture`` into a test module (or conftest) to make it available.
    """
    with FakeGitHub() as fake:
        yield fake
