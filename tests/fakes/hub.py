"""A loopback fake of the Hugging Face Hub for the real ``huggingface_hub`` 2.4 client (stdlib).

It speaks the contract of ``publish-apis.md`` §4.2 for dataset repos: create, info, tree,
preupload, commit, validate-yaml, resolve (HEAD/GET) and whoami. Repos live in memory with a
snapshot per commit sha; every request and commit is recorded; failures can be injected.

Preupload answers ``regular`` (bytes travel base64 in the NDJSON commit, Xet is never
contacted) unless the LFS mode is on (``lfs_threshold``; the ``fake_lfs_hub`` fixture, which
also turns Xet off in the client, §2.4): then a file over the threshold is ``lfs`` and goes
as the Hub takes it without Xet: the LFS batch endpoint, a PUT of its bytes, a verify POST,
and an ``lfsFile`` commit line. Such a file is stored as LFS, which the Hub's answers show:
in the tree its ``oid`` is its pointer file's git id and ``lfs`` holds its SHA-256, size and
pointer size; preupload's ``oid`` and resolve's ``X-Linked-Etag`` are its SHA-256. In that
mode a file is stored as LFS exactly when it is over the threshold: the commit refuses a
``file`` line over it (the Hub refuses regular files over 10 MiB) and an ``lfsFile`` line
under it.

Usage::

    with FakeHub() as fake:                       # or the ``fake_hub`` fixture
        api = HfApi(endpoint=fake.url, token=fake.token)
        fake.fail(503, path="/commit/")            # next commit gets HTTP 503
        fake.rate_limit(path="/commit/")           # 429 + RateLimit "api";r=0;t=0
        fake.drop_commits_after(2)                 # the 3rd commit from now: connection dropped
        fake.drop_commits_after(2, applied=True)   # ... applied, then the answer is lost
        fake.fail(503, path="/commit/", applied=True)  # commit applied, then answered 503
        fake.files("alice/sessions"), fake.commits, fake.routes("POST"), fake.received_bytes()
        FakeHub(lfs_threshold=50_000)                 # files over 50 kB stored as LFS
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import json
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest
import yaml

from tests.fakes.loopback import LoopbackFake, QuietHandler

__all__ = [
    "READ_TOKEN",
    "TOKEN",
    "Account",
    "Failure",
    "FakeHub",
    "fake_hub_fixture",
    "fake_lfs_hub_fixture",
    "git_oid",
    "isolate_hub",
    "lfs_pointer",
]

TOKEN = "hf_fakewritetoken0123456789abcdefgh"
READ_TOKEN = "hf_fakereadtoken0123456789abcdefghi"
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
_REPO_API = re.compile(
    r"/api/(dataset|model|space)s/([^/]+/[^/]+)(?:/(\w[\w-]*)(?:/([^/]+)(/.*)?)?)?"
)
_RESOLVE = re.compile(r"/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)")
_LFS_BATCH = re.compile(r"/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch")
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: The LFS mode's threshold in tests: small files, fast tests (the Hub's is 10 MiB).
LFS_TEST_THRESHOLD = 50_000


def git_oid(data: bytes) -> str:
    """The git blob SHA-1 the Hub reports as a regular file's ``oid``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(data: bytes) -> bytes:
    """The git-LFS pointer file git keeps for ``data`` (its git id is the tree's ``oid``)."""
    digest = hashlib.sha256(data).hexdigest()
    spec = "version https://git-lfs.github.com/spec/v1"
    return f"{spec}\noid sha256:{digest}\nsize {len(data)}\n".encode()


@dataclass
class Account:
    name: str
    role: str = "write"  # "write" or "read"
    orgs: tuple[str, ...] = ()


@dataclass
class Request:
    method: str
    route: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any = None


@dataclass
class Commit:
    repo_id: str
    sha: str
    parent: str | None
    summary: str
    added: list[str]
    deleted: list[str]


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    private: bool
    sha: str
    files: dict[str, bytes]
    history: dict[str, dict[str, bytes]] = field(default_factory=dict)


@dataclass
class Failure:
    """The next ``times`` matching requests: answer ``status`` or ``drop`` the connection.

    ``applied``: handle the request normally first (a commit lands), then drop the connection
    (``action="drop"``: the answer is lost) or send ``status`` instead of the real answer
    (``action="respond"``: e.g. a 503 for a commit that did land, the case a client's retry
    must not resend).
    ``after_commits``: match only once that many commits exist in the fake.
    """

    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    action: str = "respond"
    times: int = 1
    method: str | None = None
    path: str | None = None
    after_commits: int = 0
    applied: bool = False

    def matches(self, method: str, route: str, commits: int) -> bool:
        if self.times <= 0 or commits < self.after_commits:
            return False
        if self.method and self.method.upper() != method:
            return False
        return not (self.path and not re.search(self.path, route))


class _Handler(QuietHandler):
    do_POST = do_HEAD = do_PUT = do_DELETE = QuietHandler.do_GET


class FakeHub(LoopbackFake):
    """In-memory Hub on 127.0.0.1 with request recording and failure injection."""

    handler = _Handler

    def __init__(
        self,
        accounts: dict[str, Account] | None = None,
        page_size: int = 1000,
        lfs_threshold: int | None = None,
    ):
        self.lfs_threshold = lfs_threshold  # None: no LFS mode
        self.lfs_objects: dict[str, bytes] = {}  # the LFS storage: SHA-256 -> bytes
        self.accounts = accounts or {
            TOKEN: Account("alice", "write", ("team",)),
            READ_TOKEN: Account("alice", "read"),
        }
        self.token = TOKEN
        self.page_size = page_size
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[Request] = []
        self.commits: list[Commit] = []
        self.failures: list[Failure] = []
        #: set: the LFS batch answers every object with this ``error`` (a per-object refusal)
        self.lfs_object_error: dict[str, Any] | None = None
        self._lock = threading.RLock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- failure injection -----------------------------------------------------------------

    def inject(self, failure: Failure) -> Failure:
        with self._lock:
            self.failures.append(failure)
        return failure

    def fail(self, status: int, *, headers: dict[str, str] | None = None, body: Any = None,
             **match: Any) -> Failure:  # fmt: skip
        """Answer the next matching requests (``times``, ``method``, ``path`` regex) with
        ``status``; the body defaults to JSON ``{"error": ...}``. With ``applied=True`` the
        request is handled first (a commit lands) and ``status`` replaces its answer."""
        return self.inject(Failure(status, dict(headers or {}), body, **match))

    def rate_limit(self, *, reset: int = 0, retry_after: int | None = None, **match: Any):
        """429 with the Hub's ``RateLimit`` headers (``t`` = seconds until the window resets)."""
        headers = {
            "RateLimit": f'"api";r=0;t={reset}',
            "RateLimit-Policy": '"fixed window";"api";q=1000;w=300',
        }
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        body = {"error": "You have exceeded our hourly quotas for action: commit."}
        return self.fail(429, headers=headers, body=body, **match)

    def drop_connection(self, **match: Any) -> Failure:
        """Close the connection without an answer (the client sees a network error)."""
        return self.inject(Failure(action="drop", **match))

    def drop_commits_after(self, n: int, *, applied: bool = False, times: int = 1) -> Failure:
        """Let ``n`` more commits through, then drop the connection of the next one(s)."""
        with self._lock:
            after = len(self.commits) + n
        failure = Failure(action="drop", times=times, method="POST", path=r"/commit/")
        failure.after_commits, failure.applied = after, applied
        return self.inject(failure)

    # -- inspection ------------------------------------------------------------------------

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        return self.repos[(repo_type, repo_id)]

    def files(self, repo_id: str, repo_type: str = "dataset") -> dict[str, bytes]:
        return dict(self.repo(repo_id, repo_type).files)

    def routes(self, method: str | None = None, route: str | None = None) -> list[str]:
        """``"METHOD route"`` strings for asserting call sequences."""
        return [
            f"{r.method} {r.route}"
            for r in self.requests
            if (method is None or r.method == method.upper())
            and (route is None or re.search(route, r.route))
        ]

    def received_bytes(self) -> bytes:
        """Every request body, plus the decoded base64 payloads (commit files, samples)."""
        chunks: list[bytes] = []
        for r in self.requests:
            chunks.append(r.body)
            for line in r.body.splitlines() if r.route.split("/")[-2:-1] == ["commit"] else []:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    chunks.append(base64.b64decode(json.loads(line)["value"]["content"]))
            for item in (r.json or {}).get("files", []) if isinstance(r.json, dict) else []:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    chunks.append(base64.b64decode(item["sample"]))
        return b"\n".join(chunks)

    def stores_as_lfs(self, data: bytes) -> bool:
        """In the LFS mode, is ``data`` (a file's bytes) stored as LFS?"""
        return self.lfs_threshold is not None and len(data) > self.lfs_threshold

    def lfs_files(self, repo_id: str, repo_type: str = "dataset") -> set[str]:
        """The paths of the repo's files stored as LFS."""
        return {p for p, data in self.files(repo_id, repo_type).items() if self.stores_as_lfs(data)}

    def _remote_oid(self, data: bytes) -> str:
        """The id preupload answers for a stored file: SHA-256 for LFS, else git's."""
        return hashlib.sha256(data).hexdigest() if self.stores_as_lfs(data) else git_oid(data)

    def clear_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    def new_repo(self, repo_id: str, *, private: bool = True, repo_type: str = "dataset") -> Repo:
        """A repo as the Hub creates it: one initial commit with ``.gitattributes``."""
        sha = secrets.token_hex(20)
        files = {".gitattributes": GITATTRIBUTES}
        repo = Repo(repo_id, repo_type, private, sha, files, {sha: dict(files)})
        with self._lock:
            self.repos[(repo_type, repo_id)] = repo
        return repo

    # -- HTTP ------------------------------------------------------------------------------

    def _read_body(self, h: _Handler) -> bytes:
        if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while (size := int(h.rfile.readline().strip() or b"0", 16)) > 0:
                data += h.rfile.read(size)
                h.rfile.readline()
            h.rfile.readline()
            return data
        length = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(length) if length else b""

    def _handle(self, h: _Handler) -> None:
        parts = urlsplit(h.path)
        body = self._read_body(h)
        parsed = None
        if body and "ndjson" not in (h.headers.get("Content-Type") or ""):
            with contextlib.suppress(UnicodeDecodeError, ValueError):
                parsed = json.loads(body)
        route = unquote(parts.path)
        r = Request(h.command, route, parse_qs(parts.query), dict(h.headers.items()), body, parsed)
        with self._lock:
            self.requests.append(r)
            failure = next(
                (f for f in self.failures if f.matches(h.command, route, len(self.commits))), None
            )
            if failure is not None:
                failure.times -= 1
        base = f"http://{h.headers.get('Host') or self.url.split('//', 1)[1]}"
        if failure is None or failure.applied:
            try:
                status, payload, headers = self._route(r, base)
            except Exception as error:  # a bug in the fake must show up as a 500, not a hang
                status, payload, headers = 500, {"error": f"fake hub bug: {error!r}"}, {}
            if failure is None:
                return self._send(h, status, payload, headers)
        # injected: instead of the answer (``applied``: after handling the request)
        if failure.action == "drop":
            return self._drop(h)
        # (a 403 without a body of its own is the Hub's refusal of the token, as its answer
        # to a token without rights reads: publish blames the token only for such words)
        default = "Forbidden (injected failure)" if failure.status == 403 else "injected failure"
        payload = failure.body if failure.body is not None else {"error": default}
        return self._send(h, failure.status, payload, failure.headers)

    @staticmethod
    def _drop(h: _Handler) -> None:
        h.close_connection = True
        with contextlib.suppress(OSError):
            h.connection.shutdown(socket.SHUT_RDWR)

    @staticmethod
    def _send(h: _Handler, status: int, payload: Any, headers: dict[str, str]) -> None:
        if isinstance(payload, str):  # an HTML error page (a proxy's)
            data, ctype = payload.encode(), "text/html; charset=utf-8"
        elif isinstance(payload, bytes):
            data, ctype = payload, "application/octet-stream"
        else:
            data, ctype = json.dumps(payload).encode(), "application/json; charset=utf-8"
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            for name, value in headers.items():
                h.send_header(name, value)
            if "Content-Length" not in headers:
                h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if h.command != "HEAD":
                h.wfile.write(data)
        except OSError:
            h.close_connection = True

    # -- routes ----------------------------------------------------------------------------

    def _account(self, r: Request) -> tuple[Account | None, bool]:
        """(account, bad_token): no header is anonymous; an unknown token is a 401."""
        value = r.headers.get("authorization") or r.headers.get("Authorization")
        if not value:
            return None, False
        token = value.partition(" ")[2].strip()
        return self.accounts.get(token), token not in self.accounts

    def _route(self, r: Request, base: str) -> tuple[int, Any, dict[str, str]]:
        account, bad = self._account(r)
        if bad:
            msg = "Invalid credentials in Authorization header"
            return 401, {"error": msg}, {"X-Error-Message": msg}
        if r.route == "/api/whoami-v2" and r.method == "GET":
            if account is None:
                return 401, {"error": "Invalid credentials in Authorization header"}, {}
            orgs = [{"name": o} for o in account.orgs]
            # as the Hub answers for a user access token (huggingface_hub's login reads
            # auth.accessToken.role and displayName)
            auth = {
                "type": "access_token",
                "accessToken": {"displayName": f"{account.name}-token", "role": account.role},
            }
            return 200, {"type": "user", "name": account.name, "orgs": orgs, "auth": auth}, {}
        if r.route == "/api/repos/create" and r.method == "POST":
            return self._create(r, account, base)
        if r.route == "/api/validate-yaml" and r.method == "POST":
            return self._validate_yaml(r)
        if match := _LFS_BATCH.fullmatch(r.route):
            kind = (match.group(1) or "models/").rstrip("s/")
            return self._lfs_batch(r, account, base, kind, match.group(2))
        if r.route.startswith("/lfs/") and r.method == "PUT" and self.lfs_threshold is not None:
            return self._lfs_put(r)
        if r.route == "/lfs-verify" and r.method == "POST" and self.lfs_threshold is not None:
            return self._lfs_verify(r)
        if match := _RESOLVE.fullmatch(r.route):
            kind = (match.group(1) or "models/").rstrip("s/")
            return self._resolve(r, account, kind, match.group(2), match.group(3), match.group(4))
        if match := _REPO_API.fullmatch(r.route):
            return self._repo_api(r, account, base, *match.groups())
        return 404, {"error": f"fake hub: no route for {r.method} {r.route}"}, {}

    def _visible(self, kind: str, repo_id: str, account: Account | None) -> Repo | None:
        repo = self.repos.get((kind, repo_id))
        if repo is None or (repo.private and not self._member(account, repo_id)):
            return None
        return repo

    @staticmethod
    def _member(account: Account | None, repo_id: str) -> bool:
        ns = repo_id.split("/", 1)[0]
        return account is not None and (ns == account.name or ns in account.orgs)

    @staticmethod
    def _not_found(what: str = "Repository") -> tuple[int, Any, dict[str, str]]:
        code = {"Repository": "RepoNotFound", "Revision": "RevisionNotFound"}.get(what)
        headers = {"X-Error-Code": code or "EntryNotFound", "X-Error-Message": f"{what} not found"}
        return 404, {"error": f"{what} not found"}, headers

    def _forbidden(
        self, account: Account | None, repo_id: str, *, repo_api: bool = False
    ) -> tuple[int, Any, dict] | None:
        """401 for an anonymous write, 403 for a read token or another namespace.

        On ``/api/{type}s/{id}/...`` (``repo_api``) the anonymous 401 carries ``X-Error-Code:
        RepoNotFound``: over https huggingface_hub maps any 401 there that is not "Invalid
        credentials in Authorization header" to ``RepositoryNotFoundError``, but only by URL,
        which an http:// fake never matches (publish-apis.md §2.5: "send X-Error-Code
        explicitly"). ``/api/repos/create`` is no such URL: its 401 keeps no code.
        """
        if account is None:
            msg = "You must be authenticated to write"
            headers = {"X-Error-Code": "RepoNotFound", "X-Error-Message": msg} if repo_api else {}
            return 401, {"error": msg}, headers
        if account.role != "write" or not self._member(account, repo_id):
            ns = repo_id.split("/", 1)[0]
            return 403, {"error": f"You don't have the rights to write to {ns}"}, {}
        return None

    def _create(self, r: Request, account: Account | None, base: str) -> tuple[int, Any, dict]:
        body = r.json or {}
        kind = body.get("type") or "model"
        ns = body.get("organization") or (account.name if account else "")
        repo_id = f"{ns}/{body.get('name')}"
        url = f"{base}/{'datasets/' if kind == 'dataset' else ''}{repo_id}"
        with self._lock:
            if (kind, repo_id) in self.repos and self._visible(kind, repo_id, account):
                return 409, {"error": "You already created this dataset repo", "url": url}, {}
            if denied := self._forbidden(account, repo_id):
                return denied
            self.new_repo(repo_id, private=body.get("visibility") != "public", repo_type=kind)
        return 200, {"url": url, "name": repo_id, "id": repo_id}, {}

    def _validate_yaml(self, r: Request) -> tuple[int, Any, dict]:
        text = (r.json or {}).get("content") or ""
        errors = []
        match = re.match(r"---\n(.*?)\n---\n", text, re.S)
        try:
            meta = yaml.safe_load(match.group(1)) if match else {}
        except yaml.YAMLError as error:
            errors.append({"message": f"YAML does not parse: {error}"})
            meta = {}
        for config in (meta or {}).get("configs") or []:
            if not isinstance(config, dict) or not isinstance(config.get("config_name"), str):
                errors.append({"message": '"configs" items need a config_name'})
            elif not config.get("data_files"):
                errors.append({"message": f"config {config['config_name']} has no data_files"})
        return (400 if errors else 200), {"errors": errors, "warnings": []}, {}

    def _revision(self, repo: Repo, rev: str) -> dict[str, bytes] | None:
        return repo.files if rev in ("main", repo.sha) else repo.history.get(rev)

    def _resolve(
        self, r: Request, account: Account | None, kind: str, repo_id: str, rev: str, path: str
    ) -> tuple[int, Any, dict]:
        repo = self._visible(kind, repo_id, account)
        if repo is None:
            return self._not_found()
        files = self._revision(repo, unquote(rev))
        if files is None:
            return self._not_found("Revision")
        sha = repo.sha if rev == "main" else rev
        if path not in files:
            status, body, headers = self._not_found("Entry")
            return status, body, {**headers, "X-Repo-Commit": sha}
        data = files[path]
        headers = {"X-Repo-Commit": sha, "ETag": f'"{git_oid(data)}"'}
        if self.stores_as_lfs(data):  # as the Hub answers for an LFS file (without Xet)
            headers["ETag"] = f'"{git_oid(lfs_pointer(data))}"'
            headers["X-Linked-Etag"] = f'"{hashlib.sha256(data).hexdigest()}"'
            headers["X-Linked-Size"] = str(len(data))
        if r.method == "HEAD":
            headers["Content-Length"] = str(len(data))
        return 200, data, headers

    def _repo_api(self, r: Request, account: Account | None, base: str, kind: str, repo_id: str,
                  action: str | None, rev: str | None, rest: str | None) -> Any:  # fmt: skip
        with self._lock:
            repo = self._visible(kind, repo_id, account)
            if repo is None:
                return self._not_found()
            write = action in ("preupload", "commit")
            if write and (denied := self._forbidden(account, repo_id, repo_api=True)):
                return denied
            if action is None or (action == "revision" and rev):
                files = self._revision(repo, unquote(rev or "main"))
                if files is None:
                    return self._not_found("Revision")
                sha = repo.sha if rev in (None, "main") else rev
                siblings = [{"rfilename": p} for p in sorted(files)]
                info = dict(id=repo_id, sha=sha, private=repo.private, siblings=siblings)
                return 200, {**info, "disabled": False, "gated": False}, {}
            if action == "tree" and rev:
                return self._tree(r, repo, base, unquote(rev), unquote(rest or "").lstrip("/"))
            if action == "preupload" and rev:
                return self._preupload(r, repo)
            if action == "xet-write-token":
                return 400, {"error": "fake hub: no Xet; set HF_HUB_DISABLE_XET (§2.4)"}, {}
            if action == "commit" and rev:
                return self._commit(r, repo, base)
        return 404, {"error": f"fake hub: no route for {r.method} {r.route}"}, {}

    def _tree(
        self, r: Request, repo: Repo, base: str, rev: str, prefix: str
    ) -> tuple[int, Any, dict[str, str]]:
        files = self._revision(repo, rev)
        if files is None:
            return self._not_found("Revision")
        recursive = (r.query.get("recursive") or ["false"])[0].lower() == "true"
        folder = prefix.rstrip("/") + "/" if prefix else ""
        entries: dict[str, dict[str, Any]] = {}
        for path in sorted(files):
            if not path.startswith(folder):
                continue
            parts = path[len(folder) :].split("/")
            for depth in range(1, len(parts)):
                sub = folder + "/".join(parts[:depth])
                entries.setdefault(
                    sub, {"type": "directory", "oid": git_oid(sub.encode()), "path": sub}
                )
                if not recursive:
                    break
            if recursive or len(parts) == 1:
                entries[path] = self._tree_file(path, files[path])
        listing = list(entries.values())
        start = int((r.query.get("cursor") or ["0"])[0])
        page = listing[start : start + self.page_size]
        headers: dict[str, str] = {}
        if start + self.page_size < len(listing):
            query = (
                f"recursive={str(recursive).lower()}&expand=false&cursor={start + self.page_size}"
            )
            headers["Link"] = f'<{base}{quote(r.route)}?{query}>; rel="next"'
        return 200, page, headers

    def _preupload(self, r: Request, repo: Repo) -> tuple[int, Any, dict]:
        """``lfs`` for a file over the LFS mode's threshold (never an empty one), else
        ``regular``; ``oid`` is the stored file's id as the client compares it."""
        answer = []
        for item in (r.json or {}).get("files") or []:
            path, size = item["path"], int(item["size"])
            lfs = self.lfs_threshold is not None and size > self.lfs_threshold
            oid = self._remote_oid(repo.files[path]) if path in repo.files else None
            mode = "lfs" if lfs else "regular"
            ignore = _gitignored(path, repo.files.get(".gitignore", b""))
            answer.append(dict(path=path, uploadMode=mode, shouldIgnore=ignore, oid=oid))
        return 200, {"files": answer}, {}

    def _tree_file(self, path: str, data: bytes) -> dict[str, Any]:
        """A file's tree entry: an LFS file by its pointer's git id, plus ``lfs``."""
        entry: dict[str, Any] = dict(type="file", oid=git_oid(data), size=len(data), path=path)
        if self.stores_as_lfs(data):
            pointer = lfs_pointer(data)
            entry["oid"] = git_oid(pointer)
            digest = hashlib.sha256(data).hexdigest()
            entry["lfs"] = {"oid": digest, "size": len(data), "pointerSize": len(pointer)}
        return entry

    def _lfs_batch(
        self, r: Request, account: Account | None, base: str, kind: str, repo_id: str
    ) -> tuple[int, Any, dict]:
        """git-LFS batch API (basic transfer): where to PUT each object not stored yet."""
        with self._lock:
            if self.lfs_threshold is None:
                return 404, {"error": "fake hub: the LFS mode is off"}, {}
            if self._visible(kind, repo_id, account) is None:
                return self._not_found()
            if denied := self._forbidden(account, repo_id):
                return denied
            body = r.json if isinstance(r.json, dict) else {}
            if body.get("operation") != "upload" or "basic" not in (body.get("transfers") or []):
                return 422, {"error": "fake hub: only basic uploads"}, {}
            answer = []
            for obj in body.get("objects") or []:
                oid, size = obj.get("oid"), obj.get("size")
                if not (isinstance(oid, str) and _SHA256.fullmatch(oid) and type(size) is int):
                    return 422, {"error": f"malformed LFS object {obj!r}"}, {}
                if self.lfs_object_error is not None:
                    answer.append({"oid": oid, "size": size, "error": self.lfs_object_error})
                    continue
                stored = self.lfs_objects.get(oid)
                if stored is not None and len(stored) == size:
                    answer.append({"oid": oid, "size": size})  # no actions: already there
                    continue
                actions = {"upload": {"href": f"{base}/lfs/{oid}"},
                           "verify": {"href": f"{base}/lfs-verify"}}  # fmt: skip
                answer.append({"oid": oid, "size": size, "actions": actions})
        return 200, {"transfer": "basic", "objects": answer}, {}

    def _lfs_put(self, r: Request) -> tuple[int, Any, dict]:
        """The storage's PUT of one object: its bytes must be those of its SHA-256."""
        oid = r.route.removeprefix("/lfs/")
        if hashlib.sha256(r.body).hexdigest() != oid:
            return 400, {"error": "fake hub: the bytes are not those of the oid"}, {}
        with self._lock:
            self.lfs_objects[oid] = r.body
        return 200, b"", {}

    def _lfs_verify(self, r: Request) -> tuple[int, Any, dict]:
        body = r.json if isinstance(r.json, dict) else {}
        stored = self.lfs_objects.get(str(body.get("oid")))
        if stored is None or len(stored) != body.get("size"):
            return 404, {"error": "fake hub: no such LFS object"}, {}
        return 200, {}, {}

    def _lfs_line(self, value: dict[str, Any]) -> tuple[bytes | None, str]:
        """An ``lfsFile`` commit line's bytes (from the LFS storage), or why it is refused."""
        if self.lfs_threshold is None:
            return None, "fake hub: LFS uploads are not supported (the LFS mode is off)"
        data = self.lfs_objects.get(value.get("oid", ""))
        if value.get("algo") != "sha256" or data is None or len(data) != value.get("size"):
            return None, f"LFS object {value.get('oid')} of {value.get('path')} was not uploaded"
        if not self.stores_as_lfs(data):
            return None, "fake hub: LFS files are stored only over the threshold"
        return data, ""

    def _commit(self, r: Request, repo: Repo, base: str) -> tuple[int, Any, dict]:
        lines = [json.loads(line) for line in r.body.splitlines() if line.strip()]
        header = next((x["value"] for x in lines if x.get("key") == "header"), {})
        parent = header.get("parentCommit")
        if parent and parent != repo.sha:
            return 412, {"error": "A commit has happened since. Please refresh and try again."}, {}
        files = dict(repo.files)
        added, deleted = [], []
        for item in lines:
            key, value = item.get("key"), item.get("value") or {}
            if key == "file":
                data = base64.b64decode(value["content"])
                if self.stores_as_lfs(data):  # the Hub: "files larger than 10 MiB" need LFS
                    return 400, {"error": f"{value['path']} is too large for a regular file"}, {}
                files[value["path"]] = data
                added.append(value["path"])
            elif key == "deletedFile":
                if files.pop(value["path"], None) is None:
                    return 404, {"error": "A file with this name doesn't exist"}, {}
                deleted.append(value["path"])
            elif key == "deletedFolder":
                gone = [p for p in files if p.startswith(value["path"].rstrip("/") + "/")]
                for path in gone:
                    del files[path]
                deleted += gone
            elif key == "lfsFile":
                data, refused = self._lfs_line(value)
                if data is None:
                    return 400, {"error": refused}, {}
                files[value["path"]] = data
                added.append(value["path"])
        sha = secrets.token_hex(20)
        repo.files, repo.sha = files, sha
        repo.history[sha] = dict(files)
        self.commits.append(
            Commit(repo.repo_id, sha, parent, header.get("summary", ""), added, deleted)
        )
        prefix = "datasets/" if repo.repo_type == "dataset" else ""
        url = f"{base}/{prefix}{repo.repo_id}/commit/{sha}"
        answer = dict(success=True, commitOid=sha, commitUrl=url, pullRequestUrl=None)
        return 200, {**answer, "hookOutput": ""}, {}


@pytest.fixture(name="fake_hub")
def fake_hub_fixture() -> Iterator[FakeHub]:
    """A running FakeHub per test (import ``fake_hub_fixture`` into a test module)."""
    with FakeHub() as fake:
        yield fake


@pytest.fixture(name="fake_lfs_hub")
def fake_lfs_hub_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A FakeHub in the LFS mode (over LFS_TEST_THRESHOLD bytes), with the client's Xet off
    (it would ask for a Xet token instead, which the fake does not speak)."""
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_XET", True)
    with FakeHub(lfs_threshold=LFS_TEST_THRESHOLD) as fake:
        yield fake


def isolate_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An isolated HF home and cache, no telemetry or offline mode, the `publish` command
    loadable, and no DNS but loopback: a test reaches only its fake."""
    import huggingface_hub.constants as hf_constants

    from exporter.cli import LAZY_COMMANDS

    home = tmp_path / "hf-home"
    home.mkdir()
    for name, value in {
        "HF_HOME": str(home),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # the local publish key
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }.items():
        monkeypatch.setenv(name, value)
    for name in (
        "HF_HUB_OFFLINE", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT",
        "PI_SESSION_PUBLISH_KEY",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hf_constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setattr(hf_constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(hf_constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setitem(LAZY_COMMANDS, "publish", ("exporter.publish_cli", "publish_command"))
    real = socket.getaddrinfo

    def loopback_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in ("127.0.0.1", "localhost", "::1", None):
            raise OSError(f"test tried to reach {host}")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)


def _gitignored(path: str, gitignore: bytes) -> bool:
    """Whether the dataset's ``.gitignore`` matches ``path``: the real Hub's preupload answers
    such a file ``shouldIgnore`` (and huggingface_hub leaves it out of the commit). Enough
    of gitignore for the tests: a name or path glob, and ``dir/``."""
    patterns = [line.strip() for line in gitignore.decode("utf-8", "replace").splitlines()]
    for pattern in (p for p in patterns if p and not p.startswith("#")):
        if pattern.endswith("/") and (path.startswith(pattern) or f"/{pattern}" in f"/{path}"):
            return True
        name = path.rsplit("/", 1)[-1]
        if fnmatch.fnmatch(path, pattern.lstrip("/")) or fnmatch.fnmatch(name, pattern):
            return True
    return False
