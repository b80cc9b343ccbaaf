"""Errors shared by both publishers (GitHub gists and Hugging Face datasets).

Each error carries a one-line, human message that the CLI prints as is, and the
process exit code to use, so the CLI never has to know which backend failed.
Messages must never contain a token: publishers build them from status codes,
server messages and hints only.
"""

from __future__ import annotations

import math
from datetime import datetime
from urllib.parse import urlsplit

__all__ = [
    "AuthError",
    "NetworkError",
    "NoTokenError",
    "NotFoundError",
    "PublishError",
    "RateLimitError",
    "TooLargeError",
    "ValidationError",
    "bounded_wait",
    "clean_token",
    "clipped",
    "hidden",
    "host_for_messages",
    "scrubbed",
]


def _one_line(message: str) -> str:
    """Collapse whitespace so a server message can never break the one-line contract."""
    return " ".join(message.split())


class PublishError(Exception):
    """A publish step failed; ``str(err)`` is the one-line message for the user.

    ``exit_code`` defaults to 3 (remote or auth failure); ``status`` is the HTTP
    status that caused it, when there was one.
    """

    exit_code: int = 3

    def __init__(
        self, message: str, *, status: int | None = None, exit_code: int | None = None
    ) -> None:
        self.message = _one_line(message)
        self.status = status
        self.partial: object | None = None  # what a publish did before it failed, if any
        self.landed: int | None = None  # of its commits, how many were made
        if exit_code is not None:
            self.exit_code = exit_code
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class NoTokenError(PublishError):
    """No credentials were found anywhere we looked."""


class AuthError(PublishError):
    """The server rejected the credentials, or they lack the needed permission."""


class RateLimitError(PublishError):
    """The server asked us to slow down for longer than we are willing to wait.

    ``wait_seconds`` is how long to wait (None if unknown) and ``retry_at`` the
    local, timezone-aware time after which a retry should succeed.
    """

    def __init__(
        self,
        message: str,
        *,
        wait_seconds: float | None = None,
        retry_at: datetime | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, status=status)
        self.wait_seconds = wait_seconds
        self.retry_at = retry_at


class NotFoundError(PublishError):
    """The remote object (gist, repo) does not exist or is not visible to us."""


class ValidationError(PublishError):
    """The server refused the payload (HTTP 422 and friends)."""


class NetworkError(PublishError):
    """The server could not be reached or kept failing (timeouts, refused, 5xx)."""


#: The HTTP clients' transport failures (httpx's, requests', the OS's), as a reader says them.
_TRANSPORT_WORDS = {
    "ConnectError": "connection failed",
    "ConnectionError": "connection failed",
    "ConnectionRefusedError": "connection refused",
    "ConnectionResetError": "connection closed by the server",
    "ConnectTimeout": "connection timed out",
    "ReadTimeout": "no answer in time",
    "WriteTimeout": "sending timed out",
    "PoolTimeout": "no free connection in time",
    "TimeoutException": "timed out",
    "TimeoutError": "timed out",
    "ReadError": "the connection broke while reading",
    "WriteError": "the connection broke while sending",
    "RemoteProtocolError": "the server broke off its answer",
    "LocalProtocolError": "the request could not be sent",
    "ProxyError": "the proxy failed",
    "NetworkError": "network error",
    "TransportError": "network error",
    "UnsupportedProtocol": "unsupported URL scheme",
    "OSError": "network error",
}


def transport_reason(error: BaseException) -> str:
    """A transport failure in words, ``connection failed`` for httpx's ``ConnectError``:
    the class is the library's name, not a reason a user can act on (an unknown one is
    said by its name)."""
    name = type(error).__name__
    return _TRANSPORT_WORDS.get(name, name)


class TooLargeError(PublishError):
    """The export is too big for this destination: input it cannot take, hence exit code 2."""

    exit_code = 2

    def __init__(
        self, message: str, *, size_bytes: int | None = None, limit_bytes: int | None = None
    ) -> None:
        super().__init__(message)
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes


#: Longest wait a rate-limit message names; longer or nonsense header values count as this.
MAX_REPORTED_WAIT = 24 * 3600.0


def bounded_wait(seconds: float) -> float:
    """A server-named wait that clocks and messages can use: ``inf`` or a reset centuries
    away (they would overflow ``datetime``) counts as a day."""
    return seconds if math.isfinite(seconds) and seconds <= MAX_REPORTED_WAIT else MAX_REPORTED_WAIT


def clean_token(token: str | None, service: str, source: str | None = None) -> str | None:
    """The token without surrounding whitespace; None when blank.

    Spaces or control characters inside (a pasted newline) would go into an HTTP header and
    the HTTP library's error would quote that header, token included: refuse them here with a
    message that never shows the token. Tokens are ASCII, and an HTTP header only takes
    Latin-1: other characters (a paste in the wrong script, curly quotes) failed later as
    "'latin-1' codec can't encode" or a failed dataset read. ``source``: where it came from
    (``--token`` or a variable's name), said: a token from GH_ENTERPRISE_TOKEN was told to
    be "passed again", though nothing was passed.
    """
    if token is None or not token.strip():
        return None
    token = token.strip()
    if source is None or source.startswith("--"):
        what, fix = f"the {service} token", "pass it again without them"
        if source:
            what = f"the {service} token passed with {source}"
    else:
        what = f"the {service} token in {source}"
        fix = f"set {source} again without them, or unset it"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in token):
        raise AuthError(
            f"{what} contains spaces or control characters (a pasted newline?); {fix}",
            exit_code=1,
        )
    if not token.isascii():
        raise AuthError(
            f"{what} contains non-ASCII characters, which no token has (a paste of the "
            f"wrong text?); {fix}",
            exit_code=1,
        )
    return token


#: A token's first characters that count as the token where a message was cut inside it.
SECRET_HEAD = 8


def hidden(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` (a token a server echoed back) as ``***``, and so any head
    of it of SECRET_HEAD characters or more: a message cut inside the token keeps one."""
    if not secret:
        return text
    text = text.replace(secret, "***")
    if len(secret) <= SECRET_HEAD:
        return text
    head, parts, start = secret[:SECRET_HEAD], [], 0
    while (at := text.find(head, start)) != -1:
        end = at + SECRET_HEAD
        while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
            end += 1
        parts.append(text[start:at] + "***")
        start = end
    return "".join(parts) + text[start:]


def clipped(text: str, limit: int, secret: str | None) -> str:
    """A server's ``text`` on one line and at most ``limit`` characters, ``secret`` hidden
    before the cut: cut first, the head of a token echoed across the cut was printed."""
    return hidden(_one_line(text), secret)[:limit]


def scrubbed(error: PublishError, secret: str | None) -> PublishError:
    """``error`` with ``secret`` (a token a server echoed back) hidden, heads of it too."""
    message = hidden(error.message, secret)
    if message != error.message:
        error.message = message
        error.args = (error.message,)
    return error


def host_for_messages(url: str) -> str:
    """Where an API is, for messages: ``user:pass@`` in an --api-url or --endpoint may hold
    the token, so it is shown as ``***@``."""
    parts = urlsplit(url)
    if not parts.netloc:
        return "***" if "@" in url else url
    host = parts.netloc.rpartition("@")[2]
    return f"***@{host}" if "@" in parts.netloc else host
