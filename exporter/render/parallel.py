"""Render a big transcript on several CPUs: forked children and this process take stripes of
the items from a shared queue until none is left.

Forking (not spawning) is what makes this cheap: a child starts with the loaded session,
the plan and the compiled templates already in memory, and sends back only HTML strings.
Anything unusual (no fork, other threads running, a child that fails or dies) falls back
to rendering in this process, so the page is the same either way; only the time differs.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_WORKERS = 8
MIN_ITEMS_PER_WORKER = 150  # below this a fork costs more than it saves
STRIPE = 32  # items are handed out in stripes of neighbours
# The whole queue (4 bytes a stripe) is written before any worker starts, so it must fit in
# the pipe at once: 4,000 bytes fit even a one-page pipe (Linux gives those under pressure).
MAX_STRIPES = 1000


def available_workers(requested: int | None) -> int:
    """``requested`` processes, or the CPUs this process may use when None/0 (max 8)."""
    if requested:
        return max(1, requested)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def can_fork() -> bool:
    """Fork only where it is safe: Linux, and no other thread that a child would lose."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


@dataclass
class _Child:
    pid: int
    read_fd: int


@dataclass
class ForkedMap(Generic[T]):
    """``render`` over ``items``, started in children now, collected by :meth:`results`.

    The items are cut into stripes, and a pipe holds the stripe numbers as a queue: every
    worker (the children, then this process once it has built the rest of the page) takes
    the next stripe until none is left, so whoever is free does the work, however uneven
    the items and whatever else this process had to do first. The caller goes on with
    other work in between (the header, tables, outline). Calling ``gc.freeze()`` first
    (render_session does) keeps the children's cyclic GC away from the shared objects,
    so their memory pages stay shared.
    """

    render: Callable[[T], str]
    items: Sequence[T]
    workers: int = 1
    _children: list[_Child] = field(default_factory=list)
    _queue: int | None = None  # read end of the stripe queue; None: all is rendered here
    _stripe: int = STRIPE

    def start(self) -> ForkedMap[T]:
        """Fork ``workers - 1`` children (none for small inputs); this process is the last."""
        count = min(self.workers, len(self.items) // MIN_ITEMS_PER_WORKER)
        if count < 2 or not can_fork():
            return self
        self._stripe = max(STRIPE, -(-len(self.items) // MAX_STRIPES))
        self._queue = _stripe_queue(-(-len(self.items) // self._stripe))
        if self._queue is None:
            return self
        for _ in range(count - 1):
            child = self._fork()
            if child is not None:
                self._children.append(child)
        return self

    def _fork(self) -> _Child | None:
        try:
            read_fd, write_fd = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: render stripes, send them, and leave without cleanup
            for fd in (read_fd, *(child.read_fd for child in self._children)):
                os.close(fd)  # a sibling's pipe held open here would never see its reader go
            self._child_main(write_fd)
        os.close(write_fd)
        return _Child(pid, read_fd)

    def _child_main(self, write_fd: int) -> None:
        status = 0
        try:
            gc.disable()  # short-lived: the cyclic GC would only copy shared pages
            done = [(stripe, self._render_stripe(stripe)) for stripe in self._take()]
            payload = pickle.dumps(done, pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(payload)
        except BaseException:  # the parent renders the stripes this child took
            status = 1
        finally:
            os._exit(status)

    def _take(self) -> Iterator[int]:
        """The next stripe numbers from the queue, until it is empty. All of it was written
        before any worker started, so each 4-byte read returns one whole number."""
        while self._queue is not None:
            data = os.read(self._queue, 4)
            if len(data) < 4:
                return
            yield int.from_bytes(data, "little")

    def _range(self, stripe: int) -> range:
        return range(stripe * self._stripe, min((stripe + 1) * self._stripe, len(self.items)))

    def _render_stripe(self, stripe: int) -> list[str]:
        return [str(self.render(self.items[i])) for i in self._range(stripe)]

    def results(self) -> list[str]:
        """Every item's HTML in order; stripes whose child failed are rendered here."""
        done: dict[int, str] = {}
        for stripe in self._take():  # while the children finish theirs
            done.update(zip(self._range(stripe), self._render_stripe(stripe), strict=True))
        self._close_queue()
        for child in self._children:
            for stripe, html in self._collect(child) or ():
                if len(html) == len(self._range(stripe)):
                    done.update(zip(self._range(stripe), html, strict=True))
        self._children = []
        return [
            done[i] if i in done else str(self.render(item)) for i, item in enumerate(self.items)
        ]

    def _close_queue(self) -> None:
        if self._queue is not None:
            with contextlib.suppress(OSError):
                os.close(self._queue)
            self._queue = None

    @staticmethod
    def _collect(child: _Child) -> list[tuple[int, list[str]]] | None:
        try:
            with os.fdopen(child.read_fd, "rb") as pipe:
                data = pipe.read()
        except OSError:
            data = b""
        try:
            _, status = os.waitpid(child.pid, 0)
        except ChildProcessError:
            status = 1
        if status != 0 or not data:
            return None
        try:
            done = pickle.loads(data)
        except Exception:  # a truncated payload: render its stripes here
            return None
        if not isinstance(done, list):
            return None
        return [
            (stripe, html)
            for stripe, html in done
            if isinstance(stripe, int) and isinstance(html, list)
        ]

    def close(self) -> None:
        """Reap children that were started but not collected (an error in the caller)."""
        self._close_queue()
        for child in self._children:  # closing every pipe first unblocks every writer
            with contextlib.suppress(OSError):
                os.close(child.read_fd)
        for child in self._children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
        self._children = []


def _stripe_queue(stripes: int) -> int | None:
    """A pipe holding ``0..stripes-1`` (4 bytes each), its write end closed: the read end,
    or None when it cannot be made. ``stripes`` <= MAX_STRIPES, so it never blocks."""
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        return None
    try:
        os.set_blocking(write_fd, False)  # a full pipe fails here instead of waiting forever
        data = b"".join(n.to_bytes(4, "little") for n in range(stripes))
        while data:
            data = data[os.write(write_fd, data) :]
    except OSError:  # BlockingIOError included
        os.close(read_fd)
        return None
    finally:
        os.close(write_fd)
    return read_fd
