"""What GitHub's gist API answers, read defensively: the gist itself, error messages, rate
limit waits and transport failures, each as plain data or one short token-free line.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict
from urllib.parse import urlsplit

import requests

from exporter.publish.errors import PublishError

#: Wait GitHub recommends for a secondary limit that names no time.
SECONDARY_LIMIT_WAIT = 60.0


class GistFile(TypedDict):
    """What we keep of a gist file: enough for viewers and size warnings."""

    raw_url: str
    size: int
    truncated: bool
    sha256: str | None  # of the content the answer carried whole (None when truncated)


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
        # what is printed, kept and offered back (`share --delete ID`): a gist's id and an
        # http(s) address, or the answer is not GitHub's (an `{"x": 1}` id was suggested
        # back as `--delete {'x': 1}`; an address holding a terminal escape was printed)
        gist_id, html_url = data["id"], data.get("html_url") or ""
        if not (isinstance(gist_id, str) and gist_id.isascii() and gist_id.isalnum()):
            raise PublishError("GitHub returned an unexpected answer (its gist id is not one).")
        if not isinstance(html_url, str) or (html_url and not _WEB_ADDRESS.fullmatch(html_url)):
            raise PublishError(
                "GitHub returned an unexpected answer (its gist address is not a web address)."
            )
        files: dict[str, GistFile] = {}
        raw_files = data.get("files")
        if isinstance(raw_files, dict):
            for name, info in raw_files.items():
                if isinstance(info, dict):
                    truncated = bool(info.get("truncated", False))
                    content = info.get("content")
                    whole = isinstance(content, str) and not truncated
                    files[str(name)] = GistFile(
                        raw_url=str(info.get("raw_url") or ""),
                        size=_size(info.get("size")),
                        truncated=truncated,
                        sha256=_sha256(content) if whole else None,
                    )
        return cls(
            id=gist_id,
            html_url=html_url,
            files=files,
            public=bool(data.get("public", False)),
            description=str(data.get("description") or ""),
        )


#: An http(s) address as GitHub gives one: no space, control character or non-ASCII
_WEB_ADDRESS = re.compile(r"https?://[!-~]+")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _size(value: Any) -> int:
    """A file size from the answer; anything but a sane number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) if math.isfinite(value) and 0 <= value < 2**53 else 0


def maybe_received(exc: Exception) -> bool:
    """False only when the request cannot have arrived: the connection was never made, the
    proxy could not be reached or would not connect (a proxy failure is raised only before
    anything went through it), or the request could not even be started (no SOCKS support,
    an address that cannot be used: a create follows no redirect, so it is not a
    redirect's). A proxy failure was said as "GitHub may already have received it", and
    the create was not retried."""
    if isinstance(
        exc,
        (
            requests.exceptions.ConnectTimeout,
            requests.exceptions.ProxyError,
            requests.exceptions.InvalidURL,
        ),
    ):
        return False
    if _missing_socks(exc):
        return False
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    # urllib3's NewConnectionError (by name: urllib3 is requests' dependency, not ours)
    return not any(kind.__name__ == "NewConnectionError" for kind in type(reason).__mro__)


def _missing_socks(exc: Exception) -> bool:
    """requests' refusal of a ``socks5://`` proxy without PySocks installed, raised before
    anything is sent."""
    return isinstance(exc, requests.exceptions.InvalidSchema) and "socks" in str(exc).lower()


def proxy_for(session: requests.Session, url: str) -> str | None:
    """The proxy ``session`` sends a request to ``url`` through (its own, else the
    environment's HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, minus NO_PROXY), or None: to say a
    proxy's failure as one."""
    proxies = dict(session.proxies or {})
    try:
        if session.trust_env:
            for scheme, address in requests.utils.get_environ_proxies(url).items():
                proxies.setdefault(scheme, address)
        return requests.utils.select_proxy(url, proxies) or None
    except ValueError:  # an address the bypass check cannot read
        return None


def proxy_shown(proxy: str | None) -> str:
    """A proxy's host and port for a message, never its ``user:password@`` (a proxy URL
    often holds a password); "" when it has none that can be read."""
    if not proxy:
        return ""
    try:
        parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return ""
    host = f"[{host}]" if ":" in host else host
    shown = f"{host}:{port}" if host and port else host
    return shown if shown.isascii() and shown.isprintable() and " " not in shown else ""


def proxy_failed(exc: Exception, proxy: str | None) -> bool:
    """Whether the failure was the proxy's (unreachable, refusing, unusable, unsupported)."""
    return _proxy_reason(exc, proxy) is not None


def proxy_refused(exc: Exception) -> bool:
    """Whether the proxy answered ``CONNECT`` with a refusal (407: it wants a user and
    password; 403: not allowed): the same answer comes again, so it is not retried."""
    if not isinstance(exc, requests.exceptions.ProxyError):
        return False
    refused = _TUNNEL_REFUSED.search(str(exc))
    return refused is not None and refused.group(1).startswith("4")


#: What a proxy answered to ``CONNECT`` when it would not open the tunnel (urllib3's words).
_TUNNEL_REFUSED = re.compile(r"tunnel connection failed: (\d{3})", re.IGNORECASE)


def _proxy_reason(exc: Exception, proxy: str | None) -> str | None:
    """What a failure of the proxy itself was, or None when it was not one."""
    the_proxy = f"the proxy {proxy_shown(proxy)}".rstrip()
    if _missing_socks(exc):
        return (
            "a SOCKS proxy is set, but PySocks, which requests needs for one, is not "
            "installed: pip install 'requests[socks]'"
        )
    if isinstance(exc, requests.exceptions.ProxyError):
        refused = _TUNNEL_REFUSED.search(str(exc))
        if refused is None:
            return f"{the_proxy} could not be reached"
        status = refused.group(1)
        why = ": proxy authentication required" if status == "407" else ""
        return f"{the_proxy} answered HTTP {status} instead of connecting to GitHub{why}"
    if proxy and isinstance(exc, requests.exceptions.InvalidURL):
        return "the proxy's address is not a usable URL"
    return None


def format_wait(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, math.ceil(seconds))} s"
    if seconds < 90 * 60:
        return f"{math.ceil(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def format_local_time(moment: datetime, now: datetime) -> str:
    """Local clock time; the date is added only when it isn't today."""
    fmt = "%H:%M:%S" if moment.date() == now.date() else "%Y-%m-%d %H:%M:%S"
    zone = moment.strftime("%Z")
    return f"{moment.strftime(fmt)} {zone}".strip()


def connection_reason(exc: Exception, timeout: float, proxy: str | None = None) -> str:
    """Short, token-free reason for a transport failure; ``proxy``: the one the request
    went through (``proxy_for``), named by host and port when it failed."""
    said = _proxy_reason(exc, proxy)
    if said is not None:
        return said
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return "connection timed out"
    if isinstance(exc, requests.exceptions.Timeout):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "connection closed in the middle of the answer"
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return "redirected too many times"
    if isinstance(exc, requests.exceptions.ContentDecodingError):
        return "an answer that could not be decoded"
    if isinstance(exc, requests.exceptions.InvalidSchema):
        return "redirected to an address that is not http(s)"
    if not isinstance(exc, requests.exceptions.ConnectionError):
        # (what requests says may quote a header or an address: never repeated)
        return "the request could not be completed"
    text = str(exc).lower()
    if "refused" in text:
        return "connection refused"
    if any(s in text for s in ("name or service", "nodename", "getaddrinfo", "resolve")):
        return "host name could not be resolved"
    if any(s in text for s in ("remotedisconnected", "aborted", "reset by peer", "closed")):
        return "connection closed by the server"
    return "connection failed"


def server_message(resp: requests.Response) -> tuple[str, list[str]]:
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


#: Longest sign-on address an error quotes (GitHub's are ~150 characters).
SSO_URL_LIMIT = 500


def sso_required(resp: requests.Response) -> tuple[bool, str | None]:
    """Whether this answer is GitHub's SAML single sign-on enforcement (an organization
    refuses a token not yet authorized for it), and the address where it is authorized.

    GitHub says so in ``X-GitHub-SSO: required; url=https://github.com/orgs/ORG/sso?...``
    (and in the message "Resource protected by organization SAML enforcement..."). The
    address is no secret, but it comes from the network: it is given only when it is one
    plain https URL (no spaces, no controls, not too long), else None.
    """
    header = resp.headers.get("x-github-sso") or ""
    parts = [part.strip() for part in header.split(";")]
    required = parts[0].lower() == "required"
    message = server_message(resp)[0].lower()
    if not required and "saml enforcement" not in message:
        return False, None
    url = next((part[4:].strip() for part in parts[1:] if part.lower().startswith("url=")), "")
    plain = (
        url.startswith("https://")
        and len(url) <= SSO_URL_LIMIT
        and url.isascii()
        and all(ch.isprintable() and not ch.isspace() for ch in url)
        and not any(ch in url for ch in "\"<>`'")
    )
    return True, url if plain else None


#: Farthest an answer's ``Date`` may be from the local clock to be believed (seconds): one
#: in 1970 made a reset 30 s away "try again in 24 h", one in year 9999 a wait of 1 s.
MAX_CLOCK_SKEW = 12 * 3600.0


def _http_date(text: str) -> float:
    """An HTTP date's moment (epoch seconds); one without a zone is UTC, not local time."""
    moment = parsedate_to_datetime(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _server_now(resp: requests.Response, now: float) -> float:
    """The time the answer was sent, by its ``Date`` header; ``now`` without a usable one,
    or with one more than ``MAX_CLOCK_SKEW`` from this machine's clock (``time.time()``:
    ``now`` is the client's clock, which a caller may fix at any moment). A date without a
    zone ("-0000" too) is UTC, as HTTP dates are: it was read as local time."""
    try:
        sent = _http_date(resp.headers.get("date") or "")
    except (TypeError, ValueError, OverflowError):
        return now
    believed = math.isfinite(sent) and abs(sent - time.time()) <= MAX_CLOCK_SKEW
    return sent if believed else now


def raw_rate_limit_wait(resp: requests.Response, now: float) -> float | None:
    """Seconds GitHub asks us to wait (``Retry-After``, an exhausted limit, a secondary
    limit), or None when the answer is no rate limit at all. A moment (a reset epoch, an
    HTTP date) is counted from the answer's ``Date`` when it has one, not from ``now``: a
    local clock some minutes off had the wait said minutes too long or too short (no
    wait at all, and a retry refused again)."""
    now = _server_now(resp, now)
    retry_after = resp.headers.get("retry-after")
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                return max(0.0, _http_date(retry_after) - now)
            except (TypeError, ValueError, OverflowError):
                return SECONDARY_LIMIT_WAIT
    if resp.headers.get("x-ratelimit-remaining") == "0":
        try:
            reset = float(resp.headers.get("x-ratelimit-reset", ""))
        except ValueError:
            return SECONDARY_LIMIT_WAIT
        # +1 s: the reset epoch is whole seconds and clocks drift a little.
        return max(0.0, reset - now) + 1.0
    if resp.status_code == 429 or "rate limit" in server_message(resp)[0].lower():
        return SECONDARY_LIMIT_WAIT
    return None
