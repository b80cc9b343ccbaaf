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

import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict
from urllib.parse import quote, urlsplit

import requests

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
)
from exporter.publish.github_auth import (
    DEFAULT_API_URL,
    TOKEN_HINT,
    github_host,
    is_enterprise,
    resolve_github_token,
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
#: Wait GitHub recommends for a secondary limit that names no time.
SECONDARY_LIMIT_WAIT = 60.0
#: Read timeout for bodies over 1 MB: GitHub is slow to accept big gists.
LARGE_BODY_TIMEOUT = 120.0
_MAYBE_CREATED = (
    "Creating the gist failed ({reason}) after GitHub may already have received it; not "
    "retrying, so that no second copy is made. Check your secret gists on "
    "https://gist.github.com/ before sharing again."
)


# --------------------------------------------------------------------------- model


class GistFile(TypedDict):
    """What we keep of a gist file: enough for viewers and size warnings."""

    raw_url: str
    size: int
    truncated: bool


@dataclass(frozen=True)
class Gist:
    """A created or updated gist; URLs come from GitHub's answer, never built by us."""

    id: str
    html_url: str
    files: dict[str, GistFile] = field(default_factory=dict)
    public: bool = False
    description: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Gist:
        """Parse a ``gist`` / ``gist-simple`` body; raise ``PublishError`` if it isn't one."""
        if not isinstance(data, dict) or not data.get("id"):
            raise PublishError("GitHub returned an unexpected answer (no gist id in the response).")
        files: dict[str, GistFile] = {}
        raw_files = data.get("files")
        if isinstance(raw_files, dict):
            for name, info in raw_files.items():
                if isinstance(info, dict):
                    files[str(name)] = GistFile(
                        raw_url=str(info.get("raw_url") or ""),
                        size=_size(info.get("size")),
                        truncated=bool(info.get("truncated", False)),
                    )
        return cls(
            id=str(data["id"]),
            html_url=str(data.get("html_url") or ""),
            files=files,
            public=bool(data.get("public", False)),
            description=str(data.get("description") or ""),
        )


# --------------------------------------------------------------------------- client


def _size(value: Any) -> int:
    """A file size from the answer; anything but a sane number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and 0 <= value < 2**53 else 0


def _maybe_received(exc: Exception) -> bool:
    """False only when the connection was never made (the request cannot have arrived)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return False
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    # urllib3's NewConnectionError (by name: urllib3 is requests' dependency, not ours)
    return not any(kind.__name__ == "NewConnectionError" for kind in type(reason).__mro__)


def _format_wait(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, math.ceil(seconds))} s"
    if seconds < 90 * 60:
        return f"{math.ceil(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _format_local_time(moment: datetime, now: datetime) -> str:
    """Local clock time; the date is added only when it isn't today."""
    fmt = "%H:%M:%S" if moment.date() == now.date() else "%Y-%m-%d %H:%M:%S"
    zone = moment.strftime("%Z")
    return f"{moment.strftime(fmt)} {zone}".strip()


def _connection_reason(exc: Exception, timeout: float) -> str:
    """Short, token-free reason for a transport failure."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "connection closed in the middle of the answer"
    text = str(exc).lower()
    if "refused" in text:
        return "connection refused"
    if any(s in text for s in ("name or service", "nodename", "getaddrinfo", "resolve")):
        return "host name could not be resolved"
    if any(s in text for s in ("remotedisconnected", "aborted", "reset by peer", "closed")):
        return "connection closed by the server"
    return "connection failed"


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
        sleep: Callable[[float], None] = time.sleep,
        user_agent: str | None = None,
        clock: Callable[[], float] = time.time,
        session: requests.Session | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        cleaned = clean_token(token, "GitHub")
        if cleaned is None:
            raise NoTokenError(f"no GitHub token given: {TOKEN_HINT}.")
        self.api_url = api_url.rstrip("/")
        self._token = cleaned
        self.timeout = float(timeout)
        self.max_tries = max(1, int(max_tries))
        self.user_agent = user_agent or f"pi-session-export/{_VERSION}"
        self._sleep = sleep
        self._clock = clock
        self._session = session or requests.Session()
        self._notify = notify or (lambda message: log.info("%s", message))
        self._where = urlsplit(self.api_url).netloc or self.api_url

    def __repr__(self) -> str:
        return f"GistClient(api_url={self.api_url!r})"

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
        resp = self._request("POST", "/gists", body=body)
        return self._gist_or_raise(resp, operation="create")

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
        resp = self._request("PATCH", self._gist_path(gist_id), body=body)
        return self._gist_or_raise(resp, operation="update", gist_id=gist_id)

    def get(self, gist_id: str) -> Gist:
        """Fetch a gist (mainly to check sizes/``truncated`` after upload)."""
        resp = self._request("GET", self._gist_path(gist_id))
        return self._gist_or_raise(resp, operation="get", gist_id=gist_id)

    def delete(self, gist_id: str) -> None:
        """Delete a gist; ``NotFoundError`` if it is already gone."""
        resp = self._request("DELETE", self._gist_path(gist_id))
        if resp.status_code not in (204, 200):
            self._raise_for(resp, operation="delete", gist_id=gist_id)

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
        """Belt and braces: hide the token should a server ever echo it back."""
        return text.replace(self._token, "***") if self._token else text

    def _request(
        self, method: str, path: str, *, body: dict[str, Any] | None = None
    ) -> requests.Response:
        """Send one API call, retrying transport errors/5xx and one short rate limit."""
        url = f"{self.api_url}{path}"
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = self._headers(payload is not None)
        timeout = self.timeout
        if payload is not None and len(payload) > GIST_WARN_BYTES:
            timeout = max(timeout, LARGE_BODY_TIMEOUT)

        failures = 0
        waited_for_rate_limit = False
        while True:
            try:
                resp = self._session.request(
                    method, url, data=payload, headers=headers, timeout=timeout
                )
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
                reason = _connection_reason(exc, timeout)
                if method == "POST" and _maybe_received(exc):
                    raise NetworkError(_MAYBE_CREATED.format(reason=reason)) from exc
                if failures < self.max_tries:
                    self._backoff(failures, reason)
                    continue
                raise NetworkError(
                    f"could not reach GitHub at {self._where} after {failures} "
                    f"{'try' if failures == 1 else 'tries'} ({reason}); check your network "
                    "and --api-url, then try again."
                ) from exc

            if resp.status_code >= 500:
                failures += 1
                if method == "POST":  # GitHub may have created it anyway: never create twice
                    raise NetworkError(
                        _MAYBE_CREATED.format(reason=f"HTTP {resp.status_code}"),
                        status=resp.status_code,
                    )
                if failures < self.max_tries:
                    self._backoff(failures, f"HTTP {resp.status_code}")
                    continue
                raise NetworkError(
                    f"GitHub answered HTTP {resp.status_code} {failures} "
                    f"{'time' if failures == 1 else 'times'} in a row; it may be having "
                    "problems or the upload is too big. Try again later, or publish to "
                    "Hugging Face instead.",
                    status=resp.status_code,
                )

            if resp.status_code in (403, 429):
                wait = self._rate_limit_wait(resp)
                if wait is not None:
                    if not waited_for_rate_limit and wait <= MAX_AUTO_WAIT:
                        waited_for_rate_limit = True
                        self._notify(
                            f"GitHub rate limit hit; waiting {_format_wait(wait)} before one retry"
                        )
                        self._sleep(wait)
                        continue
                    raise self._rate_limit_error(resp, wait)
            return resp

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
        wait = self._raw_rate_limit_wait(resp)
        if wait is None:
            return None
        return bounded_wait(wait)

    def _raw_rate_limit_wait(self, resp: requests.Response) -> float | None:
        retry_after = resp.headers.get("retry-after")
        if retry_after:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                try:
                    moment = parsedate_to_datetime(retry_after)
                    return max(0.0, moment.timestamp() - self._clock())
                except (TypeError, ValueError):
                    return SECONDARY_LIMIT_WAIT
        if resp.headers.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(resp.headers.get("x-ratelimit-reset", ""))
            except ValueError:
                return SECONDARY_LIMIT_WAIT
            # +1 s: the reset epoch is whole seconds and clocks drift a little.
            return max(0.0, reset - self._clock()) + 1.0
        if resp.status_code == 429 or "rate limit" in self._server_message(resp)[0].lower():
            return SECONDARY_LIMIT_WAIT
        return None

    def _rate_limit_error(self, resp: requests.Response, wait: float) -> RateLimitError:
        now_ts = self._clock()
        now = datetime.fromtimestamp(now_ts, tz=timezone.utc).astimezone()
        retry_at = datetime.fromtimestamp(now_ts + wait, tz=timezone.utc).astimezone()
        message, _ = self._server_message(resp)
        detail = f": {message}" if message else ""
        return RateLimitError(
            self._scrub(
                f"GitHub rate limit reached (HTTP {resp.status_code}{detail}); try again in "
                f"{_format_wait(wait)}, after {_format_local_time(retry_at, now)}."
            ),
            wait_seconds=wait,
            retry_at=retry_at,
            status=resp.status_code,
        )

    def _server_message(self, resp: requests.Response) -> tuple[str, list[str]]:
        """GitHub's ``message`` and flattened ``errors`` from an error body, if it is JSON."""
        try:
            data = resp.json()
        except ValueError:
            return "", []
        if not isinstance(data, dict):
            return "", []
        message = str(data.get("message") or "")[:300]
        details: list[str] = []
        errors = data.get("errors")
        if isinstance(errors, list):
            for err in errors[:5]:
                if isinstance(err, dict):
                    text = err.get("message") or " ".join(
                        str(err[k]) for k in ("resource", "field", "code") if err.get(k)
                    )
                    details.append(str(text)[:200])
                elif err:
                    details.append(str(err)[:200])
        return message, details

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
        return Gist.from_json(data)

    def _raise_for(
        self, resp: requests.Response, *, operation: str, gist_id: str | None = None
    ) -> None:
        """Turn a non-success answer into the matching one-line ``PublishError``."""
        status = resp.status_code
        message, details = self._server_message(resp)
        said = f": {message}" if message else ""
        if status == 401:
            text = (
                f"GitHub rejected the token (401){said}; it is invalid, expired or revoked. "
                f"Use a new one: {TOKEN_HINT}."
            )
            raise AuthError(self._scrub(text), status=status)
        if status == 404 and operation == "create":
            text = (
                "GitHub answered 404 to creating a gist: token cannot create gists "
                '(missing gist scope?); fine-grained tokens need "Gists: read and write", '
                "and GitHub App installation tokens cannot use gists."
            )
            raise AuthError(text, status=status)
        if status == 404:
            text = f"Gist {gist_id} was not found (deleted, or not visible to this token)."
            raise NotFoundError(self._scrub(text), status=status)
        if status == 403:
            text = (
                f"GitHub refused to {operation} the gist (403){said}; the token lacks "
                'permission (classic tokens need the gist scope, fine-grained ones "Gists: '
                'read and write").'
            )
            raise AuthError(self._scrub(text), status=status)
        if status == 422:
            extra = f" ({'; '.join(details)})" if details else ""
            text = f"GitHub rejected the gist (422){said}{extra}."
            raise ValidationError(self._scrub(text), status=status)
        raise PublishError(
            self._scrub(f"GitHub API error on gist {operation}: HTTP {status}{said}."),
            status=status,
        )
