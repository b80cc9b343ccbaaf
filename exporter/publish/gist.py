"""Share an export as a secret GitHub gist through the REST API (``requests``).

Why the REST API and not ``gh gist create``: it works with a plain token (CI,
GitHub Enterprise, machines without ``gh``), lets us update the same gist on
re-share, and gives precise errors. ``gh`` is still used, when present, as one
place to find a token.

Contract (see docs: REST "Gists", "Rate limits for the REST API"):
``POST /gists`` -> 201, ``PATCH /gists/{id}`` -> 200, ``DELETE /gists/{id}`` -> 204.
The token is sent only in the ``Authorization`` header and never appears in a
message, exception, log line or repr.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote, urlsplit

import requests
import urllib3.exceptions

from exporter.formatting import escape_surrogates, one_line
from exporter.publish.errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    NoTokenError,
    PublishError,
    RateLimitError,
    ValidationError,
    bounded_wait,
    clean_token,
    hidden,
    host_for_messages,
)
from exporter.publish.gist_answers import (
    Gist,
    GistFile,
    connection_reason,
    format_local_time,
    format_wait,
    maybe_received,
    proxy_failed,
    proxy_for,
    proxy_refused,
    proxy_shown,
    raw_rate_limit_wait,
    server_message,
    sso_required,
)
from exporter.publish.github_auth import (
    DEFAULT_API_URL,
    github_host,
    is_enterprise,
    resolve_github_token,
    token_hint,
    token_source_fix,
)

try:
    from exporter import __version__ as _VERSION
except ImportError:  # pragma: no cover - only while the package is half-built
    _VERSION = "0"

__all__ = [
    "DEFAULT_API_URL",
    "GIST_WARN_BYTES",
    "Gist",
    "GistClient",
    "GistFile",
    "InterruptedRequest",
    "gists_page",
    "github_host",
    "is_enterprise",
    "resolve_github_token",
]

log = logging.getLogger(__name__)

API_VERSION = "2022-11-28"

#: The API returns at most 1 MB of content per file; beyond it viewers must
#: follow ``raw_url`` (gisthost does, gistpreview does not).
GIST_WARN_BYTES = 1024 * 1024

#: Longest rate-limit wait we sit out automatically (once) instead of failing.
MAX_AUTO_WAIT = 60.0
#: Read timeout for bodies over 1 MB: GitHub is slow to accept big gists.
LARGE_BODY_TIMEOUT = 120.0
#: The slowest upload a share waits for: the answer's wait is at least one second per this
#: many bytes sent (at most 15 min). The system hands a body of up to a few MB to its send
#: buffer at once, and the wait for the answer (30 s) began while it still went out:
#: 900 KB at 25 KB/s failed, said as "GitHub may have received it".
SLOW_UPLINK_BYTES_PER_SECOND = 10_000
#: Longest the answer may take to arrive whole once its headers are in (seconds): the read
#: timeout is per gap between bytes, so a server or proxy sending a byte every few seconds
#: held a share (and the share state's lock) forever. Then the try counts as timed out
#: (retried, or said). The upload is not counted: an answer that came whole after a slow
#: upload was thrown away (and a create not retried: a gist made, said as failed).
REQUEST_DEADLINE = 300.0
#: The same for a body over 1 MB, whose answer echoes its files (up to 1 MB each).
LARGE_BODY_DEADLINE = 900.0
_MAYBE_CREATED = (
    "creating the gist failed ({reason}) after GitHub may already have received it; not "
    "retrying, so that no second copy is made. Check your secret gists {gists} before "
    "sharing again."
)

#: Ctrl-C with a create or update on its way (review s45 #6): said as the 5xx and timeout
#: paths say it, since GitHub may have received it all the same.
_INTERRUPTED_CREATE = (
    "interrupted while creating the gist: GitHub may already have received it, and "
    "sharing again makes a new gist. Check your secret gists {gists} before sharing again."
)
_INTERRUPTED_UPDATE = (
    "interrupted while updating gist {gist_id}: GitHub may already have received the "
    "change, or not; sharing again updates the same gist."
)


#: A call's operation as an answer to it is named ("the answer to creating the gist").
_DOING = {"create": "creating", "update": "updating", "get": "reading", "delete": "deleting"}


class AnswerTooSlow(requests.exceptions.ReadTimeout):
    """An answer not whole within the deadline (``REQUEST_DEADLINE``) after its headers came."""


class InterruptedRequest(KeyboardInterrupt):
    """Ctrl-C while a gist create or update was on its way to GitHub; ``str()`` says what
    may have happened and what to check. Still a ``KeyboardInterrupt`` for any caller."""


#: Where GitHub Enterprise Server serves its REST API, under the host's own web root.
_GHES_API_PATH = "/api/v3"


def gists_page(api_url: str) -> str | None:
    """Where a person sees their gists: https://gist.github.com/ for github.com, and
    ``<scheme>://HOST/gist/`` for GitHub Enterprise Server (``--api-url
    <scheme>://HOST/api/v3``, the scheme kept: an http test or intranet host has no https).
    None where it cannot be known (another API root, GHE.com): a made-up address sent
    people to a page that does not exist."""
    if github_host(api_url) == "github.com":
        return "https://gist.github.com/"
    parts = urlsplit(api_url.strip())
    host = parts.hostname or ""  # without a user:password@ part, which may hold the token
    path = parts.path.rstrip("/")
    if not host or not path.endswith(_GHES_API_PATH):
        return None
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    port = f":{parts.port}" if parts.port else ""
    root = path[: -len(_GHES_API_PATH)]
    return f"{parts.scheme.lower()}://{host}{port}{root}/gist/"


class GistClient:
    """Minimal GitHub gist client with retries, rate-limit handling and clear errors.

    ``sleep`` and ``clock`` are injectable so tests run instantly; ``session``
    lets callers share a ``requests.Session``.
    """

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        token: str | None = None,
        *,
        timeout: float = 30,
        max_tries: int = 3,
        sleep: Callable[[float], None] | None = None,
        user_agent: str | None = None,
        clock: Callable[[], float] = time.time,
        session: requests.Session | None = None,
        notify: Callable[[str], None] | None = None,
        deadline: float | None = None,
        token_source: str | None = None,
    ) -> None:
        cleaned = clean_token(token, "GitHub", source=token_source)
        if cleaned is None:
            raise NoTokenError(f"no GitHub token given: {token_hint(api_url)}.")
        self.api_url = api_url.rstrip("/")
        self._token = cleaned
        #: Where the token was found (``FoundToken.source``), said when it is refused.
        self._token_source = token_source
        self.timeout = float(timeout)
        self.max_tries = max(1, int(max_tries))
        #: Longest one try may take (``REQUEST_DEADLINE``, read now: a test's patch holds).
        self.deadline = float(REQUEST_DEADLINE if deadline is None else deadline)
        self.user_agent = user_agent or f"pi-session-export/{_VERSION}"
        self._sleep = sleep or time.sleep  # looked up now, not at import: a test's patch holds
        self._clock = clock
        self._session = session or requests.Session()
        self._notify = notify or (lambda message: log.info("%s", message))
        self._where = host_for_messages(self.api_url)
        #: The last request was retried after a try that may have done it (its answer lost,
        #: a 5xx): a delete's 404 then may be its own work (see ``delete``).
        self._earlier_try_may_have_landed = False
        page = gists_page(self.api_url)
        # where a person sees their gists, said where it is known (``gists_page``)
        self._gists_at = f"on {page}" if page else f"(on {github_host(self.api_url)})"

    def __repr__(self) -> str:
        return f"GistClient(api_url={host_for_messages(self.api_url)!r})"

    def close(self) -> None:
        """Release pooled connections."""
        self._session.close()

    def __enter__(self) -> GistClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public API ---------------------------------------------------------------

    def create(self, files: Mapping[str, str], description: str, public: bool = False) -> Gist:
        """Create a gist (secret unless ``public``); 404 here means the token lacks gist rights."""
        body = {
            "description": description,
            "public": bool(public),
            "files": {name: {"content": content} for name, content in files.items()},
        }
        said = _INTERRUPTED_CREATE.format(gists=self._gists_at)
        resp = self._request("POST", "/gists", body=body, interrupted=said)
        if resp.status_code not in (200, 201):
            self._raise_for(resp, operation="create")
        try:
            data = resp.json()
        except ValueError:
            return self._created_unread(resp, "its body is not JSON, or was cut off")
        try:
            gist = Gist.from_json(data)
        except PublishError:
            return self._created_unread(resp, "it names no usable gist")
        return self._checked(gist, "create")

    def update(
        self,
        gist_id: str,
        files: Mapping[str, str],
        description: str | None = None,
        remove: Iterable[str] = (),
    ) -> Gist:
        """Replace the named files (others stay, except those in ``remove``) and the
        description; id and URLs stay stable."""
        body: dict[str, Any] = {
            "files": {name: {"content": content} for name, content in files.items()}
        }
        body["files"].update(dict.fromkeys(remove))  # null deletes a file
        if description is not None:
            body["description"] = description
        said = self._scrub(_INTERRUPTED_UPDATE.format(gist_id=gist_id))
        resp = self._request("PATCH", self._gist_path(gist_id), body=body, interrupted=said)
        if resp.status_code not in (200, 201):
            self._raise_for(resp, operation="update", gist_id=gist_id)
        try:
            data = resp.json()
        except ValueError:
            return self._updated_unread(resp, gist_id, "its body is not JSON, or was cut off")
        try:
            gist = Gist.from_json(data)
        except PublishError:
            return self._updated_unread(resp, gist_id, "it names no usable gist")
        return self._checked(gist, "update")

    def _updated_unread(self, resp: requests.Response, gist_id: str, reason: str) -> Gist:
        """An update GitHub took (200) whose answer cannot be read: said as a failure, the
        share state kept the gist's earlier content and policy although the gist held the
        new files, so a later weaker share went through unrefused. Said as taken, and the
        gist read back (to be recorded); the gist, as known, when that read fails too."""
        self._notify(
            self._scrub(
                f"warning: GitHub received the update of gist {gist_id} (HTTP "
                f"{resp.status_code}), but its answer could not be read ({reason}); the gist "
                "now holds this share"
            )
        )
        try:
            return self.get(gist_id)
        except PublishError:  # it was taken: recorded all the same, with its address
            return Gist(id=gist_id, html_url=self._gist_page(gist_id))

    def _created_unread(self, resp: requests.Response, reason: str) -> Gist:
        """A gist GitHub made (201) whose answer cannot be read (cut off, no id): said as
        a failure, it was not recorded, and sharing again made a second secret gist. Its
        id is taken from the ``Location`` header when there (then the gist is read back,
        to be recorded); else the error says to check the secret gists (review s60 #4)."""
        gist_id = _id_in_location(resp.headers.get("location") or "")
        if gist_id is not None and self._holds_token(gist_id):  # not GitHub's: not used
            gist_id = None
        if gist_id is None:
            raise PublishError(
                f"GitHub created the gist (HTTP {resp.status_code}) but its answer could not "
                f"be read ({reason}), so it is not recorded and sharing again makes another; "
                f"check your secret gists {self._gists_at} before sharing again.",
                status=resp.status_code,
            )
        self._notify(
            f"warning: GitHub created gist {gist_id}, but its answer could not be read "
            f"({reason}); the gist is taken from the answer's Location header"
        )
        try:
            return self.get(gist_id)
        except PublishError:  # it exists: recorded all the same, with the address it has
            return Gist(id=gist_id, html_url=self._gist_page(gist_id))

    def _gist_page(self, gist_id: str) -> str:
        """The gist's own page, for an answer that gave none (an empty ``Gist:`` line was
        printed): https://gist.github.com/ID, ``HOST/gist/ID`` on GitHub Enterprise Server,
        else its API address (without a user part, which may hold a token)."""
        page = gists_page(self.api_url)
        if page:
            return f"{page}{gist_id}"
        parts = urlsplit(self.api_url)  # (nor a query or a fragment: a token may be there)
        plain = parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="")
        plain = plain.geturl().rstrip("/")
        return f"{plain}{self._gist_path(gist_id)}"

    def _with_address(self, gist: Gist) -> Gist:
        return gist if gist.html_url else replace(gist, html_url=self._gist_page(gist.id))

    def _holds_token(self, text: str) -> bool:
        """Whether ``text`` holds the token, or a head of it (``hidden``'s rule)."""
        return self._scrub(text) != text

    def _checked(self, gist: Gist, operation: str) -> Gist:
        """The gist an answer named, with no trace of the token: a server that echoes it
        (not GitHub) had it printed in the Gist and View lines and the --delete hint, and
        kept in the share state. A gist id holding it is refused (the id is what is kept
        and printed); an address holding it is replaced by one built from the id, a file
        named with it or a raw address holding it left out."""
        if self._holds_token(gist.id):
            doing = _DOING.get(operation, operation)
            check = (
                f" Check your secret gists {self._gists_at} before sharing again."
                if operation == "create"
                else ""
            )
            raise PublishError(
                f"the answer to {doing} the gist holds the token where the gist's id goes: "
                f"it is not used, printed or recorded.{check}"
            )
        html_url = gist.html_url
        if self._holds_token(html_url):
            html_url = ""
            self._notify(
                f"warning: the answer's address of gist {gist.id} holds the token: not used"
            )
        files = {
            name: GistFile(
                raw_url="" if self._holds_token(held["raw_url"]) else held["raw_url"],
                size=held["size"],
                truncated=held["truncated"],
                sha256=held["sha256"],
            )
            for name, held in gist.files.items()
            if not self._holds_token(name)
        }
        described = self._scrub(gist.description)
        return self._with_address(
            replace(gist, html_url=html_url, files=files, description=described)
        )

    def get(self, gist_id: str) -> Gist:
        """Fetch a gist (mainly to check sizes/``truncated`` after upload)."""
        resp = self._request("GET", self._gist_path(gist_id))
        return self._gist_or_raise(resp, operation="get", gist_id=gist_id)

    def delete(self, gist_id: str) -> None:
        """Delete a gist; ``NotFoundError`` if it is already gone. A 404 to a retry after a
        try that may have done it (its answer lost, a 5xx) is that try's work when a read
        finds the gist gone: it was said "already gone on GitHub", exit 2, though this
        call deleted it."""
        resp = self._request("DELETE", self._gist_path(gist_id))
        if resp.status_code == 404 and self._earlier_try_may_have_landed and self._gone(gist_id):
            return
        if resp.status_code not in (204, 200):
            self._raise_for(resp, operation="delete", gist_id=gist_id)

    def download(self, url: str) -> requests.Response:
        """A gist file's raw address, read without the token (it is another host's), its
        answer bounded in time as an API call's: read under the share state's lock, a
        trickle held every share on the machine."""
        resp = requests.get(
            url, timeout=self.timeout, headers={"User-Agent": self.user_agent}, stream=True
        )
        _read_by(resp, time.monotonic() + self.deadline, self.deadline)
        return resp

    def _gone(self, gist_id: str) -> bool:
        """A read of the gist is answered 404 (any other failure says nothing)."""
        try:
            self.get(gist_id)
        except NotFoundError as error:
            return error.status == 404
        except PublishError:
            return False
        return False

    # -- internals ------------------------------------------------------------------

    @staticmethod
    def _gist_path(gist_id: str) -> str:
        # Quote so an id from a tampered state file can't escape the /gists/ path.
        return f"/gists/{quote(str(gist_id), safe='')}"

    def _headers(self, has_body: bool) -> dict[str, str]:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": self.user_agent,
            "Authorization": f"Bearer {self._token}",
        }
        if has_body:
            headers["Content-Type"] = "application/json; charset=utf-8"
        return headers

    def _scrub(self, text: str) -> str:
        """Belt and braces: hide the token should a server ever echo it back (its head too,
        where the message was cut inside it)."""
        return hidden(text, self._token)

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        interrupted: str | None = None,
    ) -> requests.Response:
        """Send one API call, retrying transport errors/5xx and one short rate limit.
        ``interrupted``: what a Ctrl-C while it is on its way means (``InterruptedRequest``);
        None for a call that changes nothing."""
        url = f"{self.api_url}{path}"
        payload = None if body is None else _json_bytes(body)
        headers = self._headers(payload is not None)
        timeout, deadline = self.timeout, self.deadline
        if payload is not None and len(payload) > GIST_WARN_BYTES:
            timeout = max(timeout, LARGE_BODY_TIMEOUT)
            deadline = max(deadline, LARGE_BODY_DEADLINE)
        if payload is not None:  # (the upload's tail may still be on its way, from the
            # system's send buffer, when the wait for the answer begins)
            timeout = max(timeout, min(len(payload) / SLOW_UPLINK_BYTES_PER_SECOND, 900.0))

        failures = 0
        waited_for_rate_limit = False
        self._earlier_try_may_have_landed = False
        while True:
            try:
                resp = self._session.request(
                    method,
                    url,
                    # (a file, sent in blocks: bytes went in one sendall, which the timeout
                    # bounds whole, so a big page on a slow link failed after 30 s or 2 min
                    # however steadily it went, said as "GitHub may have received it")
                    data=None if payload is None else io.BytesIO(payload),
                    headers=headers,
                    timeout=timeout,  # (waiting for the headers: the deadline is not begun)
                    # a redirected POST or PATCH went on as a GET (requests' rule for 301
                    # and 302), and its 404 was said as a missing gist scope: only a read
                    # follows one (review s60 #3)
                    allow_redirects=method == "GET",
                    stream=True,  # the body is read by ``_read_by``, bounded in time
                )
                # (here the headers are in: the deadline bounds reading the answer alone)
                _read_by(resp, time.monotonic() + deadline, deadline)
            except KeyboardInterrupt:
                if interrupted is None:
                    raise
                raise InterruptedRequest(interrupted) from None
            except requests.exceptions.SSLError as exc:
                raise NetworkError(
                    f"TLS error talking to {self._where}; check the --api-url and your "
                    "certificates (REQUESTS_CA_BUNDLE)."
                ) from exc
            except (
                requests.exceptions.Timeout,
                requests.exceptions.ConnectionError,
                requests.exceptions.ChunkedEncodingError,
            ) as exc:
                failures += 1
                proxy = proxy_for(self._session, url)
                reason = (
                    str(exc)
                    if isinstance(exc, AnswerTooSlow)
                    else connection_reason(exc, timeout, proxy)
                )
                if proxy_refused(exc):  # a 407 or 403 from the proxy comes again: not retried
                    raise NetworkError(
                        f"nothing was sent to GitHub at {self._where} ({reason}); "
                        f"{_what_to_check(exc, proxy)}, then try again."
                    ) from exc
                received = maybe_received(exc)
                if method == "POST" and received:
                    said = _MAYBE_CREATED.format(reason=reason, gists=self._gists_at)
                    raise NetworkError(said) from exc
                self._earlier_try_may_have_landed |= received
                if failures < self.max_tries:
                    self._backoff(failures, reason)
                    continue
                raise NetworkError(
                    f"could not reach GitHub at {self._where} after {failures} "
                    f"{'try' if failures == 1 else 'tries'} ({reason}); "
                    f"{_what_to_check(exc, proxy)}, then try again."
                ) from exc
            except requests.RequestException as exc:
                # the rest (a redirect loop, an answer that cannot be decoded, a redirect
                # to ftp://) went out as requests' own words, exit 2: never retried (the
                # same answer comes back), said in ours (requests' may quote the token)
                proxy = proxy_for(self._session, url)
                reason = connection_reason(exc, timeout, proxy)
                if not maybe_received(exc):  # (no SOCKS support, a proxy address unusable)
                    raise NetworkError(
                        f"nothing was sent to GitHub at {self._where} ({reason}); "
                        f"{_what_to_check(exc, proxy)}, then try again."
                    ) from exc
                if method == "POST":
                    said = _MAYBE_CREATED.format(reason=reason, gists=self._gists_at)
                    raise NetworkError(said) from exc
                raise NetworkError(
                    f"the request to GitHub at {self._where} failed ({reason}); check your "
                    "network and --api-url, then try again."
                ) from exc

            if 300 <= resp.status_code < 400 and method != "GET":
                raise self._redirect_error(resp, method)

            if resp.status_code >= 500:
                failures += 1
                self._earlier_try_may_have_landed = True  # (a 5xx may come after the work)
                if method == "POST":  # GitHub may have created it anyway: never create twice
                    raise NetworkError(
                        _MAYBE_CREATED.format(
                            reason=f"HTTP {resp.status_code}", gists=self._gists_at
                        ),
                        status=resp.status_code,
                    )
                if failures < self.max_tries:
                    self._backoff(failures, f"HTTP {resp.status_code}")
                    continue
                # an upload's failure may be its size; a read's or a delete's is not, and
                # Hugging Face is no way out of reading or deleting a gist
                upload = (
                    " or the upload is too big. Try again later, or publish to Hugging Face "
                    "instead."
                    if method == "PATCH"
                    else ". Try again later."
                )
                raise NetworkError(
                    f"GitHub answered HTTP {resp.status_code} {failures} "
                    f"{'time' if failures == 1 else 'times'} in a row; it may be having "
                    f"problems{upload}",
                    status=resp.status_code,
                )

            if resp.status_code in (403, 429):
                wait = self._rate_limit_wait(resp)
                if wait is not None:
                    if not waited_for_rate_limit and wait <= MAX_AUTO_WAIT:
                        waited_for_rate_limit = True
                        self._notify(
                            f"GitHub rate limit hit; waiting {format_wait(wait)} before one retry"
                        )
                        self._sleep(wait)
                        continue
                    raise self._rate_limit_error(resp, wait)
            return resp

    def _redirect_error(self, resp: requests.Response, method: str) -> PublishError:
        """A 3xx to a create, update or delete, which GitHub's API never answers: not
        followed, and said with where it pointed (a wrong --api-url, a proxy)."""
        where = _plain_line(resp.headers.get("location") or "")
        to = f" to {where}" if where else ""
        doing = {"POST": "creating", "PATCH": "updating", "DELETE": "deleting"}.get(
            method, "sending"
        )
        text = (
            f"{self._where} answered HTTP {resp.status_code} (a redirect{to}) to {doing} the "
            "gist, which GitHub's API does not do; it was not followed: check --api-url "
            "(and any proxy in the way)"
        )
        if method == "POST":
            text += f". Check your secret gists {self._gists_at} before sharing again"
        return PublishError(self._scrub(text + "."), status=resp.status_code)

    def _backoff(self, failures: int, reason: str) -> None:
        delay = float(min(2 ** (failures - 1), 30))
        self._notify(
            f"GitHub request failed ({reason}), try {failures}/{self.max_tries}; "
            f"retrying in {delay:g} s"
        )
        self._sleep(delay)

    def _rate_limit_wait(self, resp: requests.Response) -> float | None:
        """Seconds to wait if this 403/429 is a rate limit, else None (a permission error);
        a nonsense header (``inf``, a reset centuries away) counts as a day."""
        wait = raw_rate_limit_wait(resp, self._clock())
        if wait is None:
            return None
        return bounded_wait(wait)

    def _rate_limit_error(self, resp: requests.Response, wait: float) -> RateLimitError:
        now_ts = self._clock()
        now = datetime.fromtimestamp(now_ts, tz=timezone.utc).astimezone()
        retry_at = datetime.fromtimestamp(now_ts + wait, tz=timezone.utc).astimezone()
        message, _ = server_message(resp)
        detail = f": {message}" if message else ""
        return RateLimitError(
            self._scrub(
                f"GitHub rate limit reached (HTTP {resp.status_code}{detail}); try again in "
                f"{format_wait(wait)}, after {format_local_time(retry_at, now)}."
            ),
            wait_seconds=wait,
            retry_at=retry_at,
            status=resp.status_code,
        )

    def _gist_or_raise(
        self, resp: requests.Response, *, operation: str, gist_id: str | None = None
    ) -> Gist:
        if resp.status_code not in (200, 201):
            self._raise_for(resp, operation=operation, gist_id=gist_id)
        try:
            data = resp.json()
        except ValueError:
            raise PublishError(
                f"GitHub returned HTTP {resp.status_code} with a body that is not JSON.",
                status=resp.status_code,
            ) from None
        return self._checked(Gist.from_json(data), operation)

    def _raise_for(
        self, resp: requests.Response, *, operation: str, gist_id: str | None = None
    ) -> None:
        """Turn a non-success answer into the matching one-line ``PublishError``."""
        status = resp.status_code
        message, details = server_message(resp)
        said = f": {message}" if message else ""
        if not message and not _is_json(resp):
            page = _page_text(resp)
            said = f': "{page}"' if page else ""
        if status == 401:
            fix = (
                token_source_fix(self._token_source)
                if self._token_source
                else f"use a new one: {token_hint(self.api_url)}"
            )
            text = _joined(
                f"GitHub rejected the token (401){said}",
                f"it is invalid, expired or revoked. {fix[0].upper()}{fix[1:]}.",
            )
            raise AuthError(self._scrub(text), status=status)
        sso, sso_url = sso_required(resp) if status in (403, 404) else (False, None)
        if sso:  # not a missing scope: the organization wants the token authorized for it
            raise AuthError(self._scrub(self._sso_text(operation, status, sso_url)), status=status)
        if status == 404 and operation == "create":
            text = (
                "GitHub answered 404 to creating a gist: token cannot create gists "
                '(missing gist scope?); fine-grained tokens need "Gists: read and write", '
                "and GitHub App installation tokens cannot use gists."
            )
            raise AuthError(self._with_source(text), status=status)
        if status == 404 and operation in ("update", "delete"):
            # GitHub hides a gist the token may not write behind a 404 (no gist scope,
            # another account's gist), and a secret gist reads fine by its id alone
            way_out = (
                "share with --new for a gist of your own"
                if operation == "update"
                else "delete it on GitHub's site if it is still there"
            )
            text = (
                f"GitHub answered 404 to {operation.removesuffix('e')}ing gist {gist_id}: it "
                "is gone, or this token may not write it (a classic token needs the gist "
                f"scope; the gist may be another account's); {way_out}."
            )
            raise NotFoundError(self._scrub(self._with_source(text)), status=status)
        if status == 404:  # a gist that cannot be found: exit 2, as a missing file
            text = f"gist {gist_id} was not found (deleted, or not visible to this token)"
            raise NotFoundError(self._scrub(text), status=status, exit_code=2)
        if status == 403 and not _is_json(resp):
            # GitHub's API answers a token's 403 in JSON; a page (a proxy's, a firewall's,
            # a sign-on's, GitHub's "administrative rules") is something else: its words
            # are said, and no missing gist scope is guessed (review s45 #5)
            answer = "a page, not GitHub's JSON" if said else "an empty answer"
            text = _joined(
                f"{self._where} refused to {operation} the gist (HTTP 403, {answer}){said}",
                "a proxy, firewall or sign-on page may be in the way: check your network "
                "and --api-url.",
            )
            raise AuthError(self._scrub(text), status=status)
        if status == 403:
            text = _joined(
                f"GitHub refused to {operation} the gist (403){said}",
                "the token lacks permission (classic tokens need the gist scope, fine-grained "
                'ones "Gists: read and write").',
            )
            raise AuthError(self._scrub(self._with_source(text)), status=status)
        if status == 407:  # an http:// --api-url through a proxy (no tunnel to refuse)
            proxy = proxy_shown(proxy_for(self._session, resp.url or self.api_url))
            text = (
                f"the proxy {proxy or 'in use'} asked for authentication (HTTP 407) and did "
                f"not pass the request on to {self._where}; check the proxy setting "
                "(HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) and its user and password."
            )
            raise NetworkError(self._scrub(text))
        if status == 422:
            extra = f" ({'; '.join(details)})" if details else ""
            # ("Validation Failed. (files: …)." was said: its stop goes before the details)
            said = said.removesuffix(".") if extra else said
            text = _joined(f"GitHub rejected the gist (422){said}{extra}")
            raise ValidationError(self._scrub(text), status=status)
        text = _joined(f"GitHub API error on gist {operation}: HTTP {status}{said}")
        raise PublishError(self._scrub(text), status=status)

    def _with_source(self, text: str) -> str:
        """A refusal of the token, with where it came from and what gives another one."""
        if not self._token_source:
            return text
        fix = token_source_fix(self._token_source)
        return f"{text} {fix[0].upper()}{fix[1:]}."

    def _sso_text(self, operation: str, status: int, url: str | None) -> str:
        """What a SAML single sign-on refusal means and where to fix it: the hint about the
        gist scope sent people to make a new token, when this one only needs authorizing."""
        where = (
            f"open {url} (signed in to GitHub) to authorize it"
            if url
            else "authorize it for the organization on GitHub (Settings > Developer settings "
            "> Personal access tokens > Configure SSO)"
        )
        return (
            f"GitHub refused to {operation} the gist (HTTP {status}): an organization enforces "
            "SAML single sign-on and this token is not authorized for it yet; "
            f"{where}, then try again."
        )


#: Token shapes hidden from a server's page we quote (the client's own token is too).
_TOKEN_LIKE = re.compile(r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{8,}")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG_OR_SCRIPT = re.compile(
    r"<(script|style)\b.*?</\1\s*>|<!--.*?-->|<[^>]*>", re.IGNORECASE | re.DOTALL
)
#: How much of a server's page an error quotes.
PAGE_TEXT_LIMIT = 120


#: Where GitHub's 201 says the new gist is: ``{api}/gists/<id>``.
_LOCATION_ID = re.compile(r"/gists/([0-9A-Za-z]+)/?")


def _id_in_location(location: str) -> str | None:
    """The gist id in a 201's ``Location`` header, or None."""
    try:
        path = urlsplit(location.strip()).path
    except ValueError:
        return None
    found = _LOCATION_ID.search(path)
    if found is None or not path.endswith(found.group(0)) or not found.group(1).isascii():
        return None
    return found.group(1)


def _joined(theirs: str, ours: str = "") -> str:
    """What GitHub said (``theirs``, perhaps ending in its own full stop) and then what we
    add (``ours``), as one sentence or two: "Validation Failed.." and "…personal access
    token.; the token lacks…" were said. Ends in a full stop."""
    theirs = theirs.rstrip()
    stopped = theirs.endswith((".", "!", "?"))
    if not ours:
        return theirs if stopped else f"{theirs}."
    if stopped:
        return f"{theirs} {ours[0].upper()}{ours[1:]}"
    return f"{theirs}; {ours}"


def _read_by(resp: requests.Response, ends: float, deadline: float) -> None:
    """Read ``resp``'s body (a ``stream=True`` answer) as it comes, until the monotonic
    time ``ends``: then ``AnswerTooSlow``. A watchdog shuts the connection's socket at that
    moment: a check between reads alone let a trickle inside one read (a gzip comment, a
    chunk's extension, trailers) go on for days. Errors are requests' own, as for a body
    read whole. (``read1`` is urllib3's from 2.2 on, which pyproject.toml requires.)"""
    guard = threading.Lock()
    state = {"late": False, "done": False}

    def cut() -> None:
        with guard:
            if state["done"]:
                return
            state["late"] = True
        _shut(resp)

    watchdog = threading.Timer(max(0.0, ends - time.monotonic()), cut)
    watchdog.daemon = True
    watchdog.start()
    too_slow = AnswerTooSlow(f"the answer did not arrive whole within {deadline:g} s")
    chunks: list[bytes] = []
    try:
        while True:
            if time.monotonic() > ends:
                raise too_slow
            chunk = resp.raw.read1(65536, decode_content=True)
            if not chunk:
                break
            chunks.append(chunk)
    except AnswerTooSlow:
        resp.close()
        raise
    except Exception as error:
        if state["late"]:  # (the watchdog's shut socket, as whatever error the read gives)
            resp.close()
            raise too_slow from None
        said = _as_requests_error(error)
        if said is error:
            raise
        raise said from error
    finally:
        watchdog.cancel()
        with guard:
            state["done"] = True
    if state["late"]:  # (shut as it ended: what came may be cut short, as trailers are)
        resp.close()
        raise too_slow
    resp._content = b"".join(chunks)  # what ``resp.content`` and ``resp.json()`` give
    resp._content_consumed = True
    resp.raw.release_conn()


def _shut(resp: requests.Response) -> None:
    """Shut the socket ``resp`` is read from: a read blocked in it ends at once."""
    connection = getattr(resp.raw, "connection", None) or getattr(resp.raw, "_connection", None)
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _as_requests_error(error: Exception) -> Exception:
    """urllib3's error of a body read, as requests says it reading a body whole."""
    if isinstance(error, urllib3.exceptions.ProtocolError):  # (as iter_content says them)
        return requests.exceptions.ChunkedEncodingError(error)
    if isinstance(error, urllib3.exceptions.DecodeError):
        return requests.exceptions.ContentDecodingError(error)
    if isinstance(error, urllib3.exceptions.ReadTimeoutError):
        return requests.exceptions.ReadTimeout(error)
    if isinstance(error, urllib3.exceptions.SSLError):
        return requests.exceptions.SSLError(error)
    return error


def _what_to_check(exc: Exception, proxy: str | None) -> str:
    """Where to look after a request failed: the proxy setting when the proxy failed (the
    --api-url is not the one in the way), else the network and the --api-url."""
    if proxy_failed(exc, proxy):
        return "check the proxy setting (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY)"
    return "check your network and --api-url"


def _is_json(resp: requests.Response) -> bool:
    try:
        resp.json()
    except ValueError:
        return False
    return True


def _page_text(resp: requests.Response) -> str:
    """What a non-JSON answer says, for an error line: an HTML page's title (else its
    text without tags), on one short line, with no terminal controls and no token."""
    data = resp.content[:65536]
    text: str | None
    try:  # UTF-8 first: requests takes text/* without a charset as Latin-1
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:  # (a character cut at the end of what is read: fine)
        text = data.decode("utf-8", "replace") if error.start >= len(data) - 3 else None
    if text is None:
        try:
            text = data.decode(resp.encoding or "latin-1", "replace")
        except LookupError:  # a charset Python does not know
            text = data.decode("latin-1")
    title = _TITLE.search(text)
    text = title.group(1) if title and title.group(1).strip() else _TAG_OR_SCRIPT.sub(" ", text)
    return _plain_line(html.unescape(text))


def _plain_line(text: str) -> str:
    """A server's words (a page's, a header's) on one short line for an error: no token
    shapes, no terminal controls or bidi marks, no double quotes (the error quotes it)."""
    text = _TOKEN_LIKE.sub("***", text)
    text = "".join(ch if ch.isprintable() else " " for ch in text)  # controls, bidi marks
    return one_line(text.replace('"', "'"), PAGE_TEXT_LIMIT)


def _json_bytes(body: dict[str, Any]) -> bytes:
    """The request body as UTF-8 JSON; a lone surrogate (valid in Pi's JSON, not in UTF-8)
    goes as a ``\\uXXXX`` escape instead of failing after other calls were made."""
    return escape_surrogates(json.dumps(body, ensure_ascii=False)).encode("utf-8")
