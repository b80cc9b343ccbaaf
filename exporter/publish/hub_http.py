"""How ``publish`` talks through huggingface_hub's HTTP layer: waits after a 429, a time
limit on every request (huggingface_hub sends none), and its log as our own one-line notes.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from typing import Any

from exporter.publish.errors import bounded_wait

__all__ = ["HUB_TIMEOUT", "bound_timeouts", "rate_wait", "route_hub_log"]


def rate_wait(headers: Any, attempt: int) -> float:
    from huggingface_hub.utils import parse_ratelimit_headers

    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        wait = info.reset_in_seconds + 1.0
    else:
        value = (headers.get("retry-after") or "").strip()
        numeric = value.isascii() and value.isdigit()  # "²".isdigit() is True
        wait = float(value) if numeric else float(min(60, 2 ** (attempt + 1)))
    return bounded_wait(wait)


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
    hooks = client.event_hooks
    if _bounded_request not in hooks["request"]:
        client.event_hooks = {**hooks, "request": [*hooks["request"], _bounded_request]}
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
