"""How ``publish`` talks through huggingface_hub's HTTP layer: waits after a 429, a time
limit on every request (huggingface_hub sends none), a bound on its endless retry of a
conflicting repo creation, and its log as our own one-line notes.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from exporter.publish.errors import bounded_wait

__all__ = [
    "CREATE_CONFLICT_WAITS",
    "HUB_TIMEOUT",
    "Answer",
    "HubCreateConflict",
    "HubRateLimited",
    "bound_timeouts",
    "bounded_create_conflicts",
    "forget_answers",
    "last_answer",
    "our_rate_limits",
    "rate_wait",
    "route_hub_log",
]


def _retry_after(headers: Any) -> float | None:
    """``Retry-After`` in seconds: a number or an HTTP date (huggingface_hub reads only
    the number); None when absent or unreadable."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():  # "²".isdigit() is True
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def rate_wait(headers: Any, attempt: int) -> float:
    """How long a 429 asks us to wait: the longer of ``Retry-After`` and the ``RateLimit``
    window's reset (when its quota is spent), else a growing default."""
    from huggingface_hub.utils import parse_ratelimit_headers

    told: list[float] = []
    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        told.append(info.reset_in_seconds + 1.0)
    after = _retry_after(headers)
    if after is not None:
        told.append(after)
    wait = max(told) if told else float(min(60, 2 ** (attempt + 1)))
    return bounded_wait(wait)


class HubRateLimited(Exception):
    """A 429 from the Hub, raised from inside huggingface_hub's HTTP client so that its
    own retry loop (``http_backoff``: preupload, LFS, tree pages, downloads) never sees it:
    ``HubRepo._call`` is the one layer that waits 429s out, as the answer says, bounded,
    and names the step. ``response`` is the answer (its request says which step)."""

    def __init__(self, response: Any) -> None:
        super().__init__("HTTP 429 Too Many Requests")
        self.response = response


_our_rate_limits = [0]


@contextlib.contextmanager
def our_rate_limits() -> Iterator[None]:
    """While inside, a 429 is raised as :class:`HubRateLimited` (not retried by
    huggingface_hub); outside (``whoami``, a test's own client) it is left to it."""
    _our_rate_limits[0] += 1
    try:
        yield
    finally:
        _our_rate_limits[0] -= 1


def _rate_limited_response(response: Any) -> None:
    """httpx response hook: see :class:`HubRateLimited`."""
    if response.status_code == 429 and _our_rate_limits[0] > 0:
        raise HubRateLimited(response)


@dataclass(frozen=True)
class Answer:
    """One answer the Hub (or the large-file storage) gave: which request, which status."""

    method: str
    url: str  # without its query (a storage address's query is its signature)
    status: int


_answers = threading.local()  # .last: the latest Answer this thread received


def _record_answer(response: Any) -> None:
    """httpx response hook: keep the latest answer of this thread. huggingface_hub reads
    some answers (validate-yaml, the LFS batch, a commit's) as JSON before or after it
    checks their status, and the ``JSONDecodeError`` of one that is not JSON (an HTML
    error page, an answer cut off) tells neither the request nor its status."""
    request = response.request
    url = str(request.url).split("?", 1)[0]
    _answers.last = Answer(str(request.method), url, int(response.status_code))


def last_answer() -> Answer | None:
    """The latest answer this thread received since :func:`forget_answers`."""
    return getattr(_answers, "last", None)


def forget_answers() -> None:
    """Start a new call: an answer to an earlier one is no clue to what fails next."""
    _answers.last = None


#: Seconds before each new try of a repo creation the Hub answered "another conflicting
#: operation is in progress" (it allows one creation at a time per user): huggingface_hub's
#: ``create_repo`` sends it again at once, forever (215 requests in 15 s, and a hang).
CREATE_CONFLICT_WAITS = (1.0, 2.0, 4.0, 8.0, 15.0)
_CREATE_CONFLICT = "Cannot create repo: another conflicting operation is in progress"


class HubCreateConflict(Exception):
    """The Hub kept answering a repo creation with its "conflicting operation" 409."""

    def __init__(self, tries: int, waited: float) -> None:
        super().__init__(f"{_CREATE_CONFLICT} ({tries} tries)")
        self.tries, self.waited = tries, waited


_create_tries: list[int | None] = [None]  # conflicts met by the creation under way, if any


@contextlib.contextmanager
def bounded_create_conflicts() -> Iterator[None]:
    """While inside (one ``create_repo``), its "conflicting operation" answers are tried
    again after CREATE_CONFLICT_WAITS, then raised as :class:`HubCreateConflict`."""
    _create_tries[0] = 0
    try:
        yield
    finally:
        _create_tries[0] = None


def _create_conflict_response(response: Any) -> None:
    """httpx response hook: see :func:`bounded_create_conflicts`."""
    tries = _create_tries[0]
    request = response.request
    if tries is None or response.status_code != 409 or request.method != "POST":
        return
    if not request.url.path.endswith("/api/repos/create"):
        return
    response.read()
    if _CREATE_CONFLICT not in response.text:
        return  # "You already created this dataset repo": create_repo takes that itself
    if tries >= len(CREATE_CONFLICT_WAITS):
        raise HubCreateConflict(tries + 1, sum(CREATE_CONFLICT_WAITS))
    _create_tries[0] = tries + 1
    time.sleep(CREATE_CONFLICT_WAITS[tries])


#: Seconds a Hub request may wait to connect, or between two reads or writes.
HUB_TIMEOUT = 60.0
_RETRY_NOTE = re.compile(r"(?:Retrying in|Waiting) (\d+(?:\.\d+)?)s.*\[Retry (\d+)/(\d+)\]")


class _HubLogLines(logging.Handler):
    """huggingface_hub's log as our own lines: a retry becomes one ``pi-session:`` line
    (it printed "HTTP Error 503 thrown while requesting POST <url>" and "Retrying in 8s
    [Retry 4/5]" for each try), errors pass as one line, other warnings are dropped."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.notify: Callable[[str], None] = lambda _: None

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        retry = _RETRY_NOTE.search(text)
        if retry:
            wait, number, most = retry.groups()
            self.notify(
                f"the Hub is busy or failed; retrying in {float(wait):g} s ({number}/{most})"
            )
        elif record.levelno >= logging.ERROR:
            self.notify(f"huggingface_hub: {' '.join(text.split())[:300]}")


_HUB_LOG = _HubLogLines()


def route_hub_log(notify: Callable[[str], None]) -> None:
    """Send huggingface_hub's log through ``notify`` instead of its own stderr handler."""
    _HUB_LOG.notify = notify
    logger = logging.getLogger("huggingface_hub")
    for handler in list(logger.handlers):
        if handler is not _HUB_LOG:
            logger.removeHandler(handler)
    if _HUB_LOG not in logger.handlers:
        logger.addHandler(_HUB_LOG)
    logger.propagate = False


_timeout_limit = [HUB_TIMEOUT]


def _bounded_request(request: Any) -> None:
    """httpx request hook: huggingface_hub sends ``timeout=None`` (wait forever) on every
    call, so a server that takes the connection and never answers hung the publish."""
    given = request.extensions.get("timeout") or {}
    limit = _timeout_limit[0]
    request.extensions["timeout"] = {
        phase: limit if given.get(phase) is None else given[phase]
        for phase in ("connect", "read", "write", "pool")
    }


def _with_bounded_requests(client: Any) -> Any:
    """The client with our hooks: a time limit on each request, a note of each answer, our
    handling of a 429 and of a repo creation that keeps conflicting."""
    hooks = client.event_hooks
    if _bounded_request not in hooks["request"]:
        hooks = {**hooks, "request": [*hooks["request"], _bounded_request]}
    for hook in (_record_answer, _rate_limited_response, _create_conflict_response):
        if hook not in hooks["response"]:
            hooks = {**hooks, "response": [*hooks["response"], hook]}
    client.event_hooks = hooks
    return client


_factory_installed = [False]


def bound_timeouts(limit: float) -> None:
    """:func:`_bounded_request` on every client huggingface_hub uses: the shared one now, and
    (through its client factory) the new one it makes after a connection error, which lost
    the limit when only the old client had it."""
    from huggingface_hub import get_session, set_client_factory

    _timeout_limit[0] = limit
    if not _factory_installed[0]:
        module = importlib.import_module("huggingface_hub.utils._http")
        base = getattr(module, "default_client_factory", None)  # not public: checked
        if callable(base):
            set_client_factory(lambda: _with_bounded_requests(base()))
            _factory_installed[0] = True
    _with_bounded_requests(get_session())
