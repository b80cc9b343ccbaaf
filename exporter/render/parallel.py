"""Render a big transcript on several CPUs: forked children each render a share of the items.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

MAX_WORKERS = 8
MIN_ITEMS_PER_WORKER = 150  # below this a fork costs more than it saves
STRIPE = 32  # items are dealt out in stripes, which evens out slow stretches
# This process is one of the workers, but it also builds the rest of the page meanwhile
# and compresses the embedded copy: with a smaller share it finishes with the children
# (25 MB session, 2 CPUs: 0.6 is ~0.1 s faster than 0.8; no difference on small pages).
PARENT_WEIGHT = 0.6


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
    indices: list[int]


@dataclass
class ForkedMap(Generic[T]):
    """``render`` over ``items``, started in children now, collected by :meth:`results`.

    The caller goes on with other work in between (the header, tables, outline). Calling
    ``gc.freeze()`` first (render_session does) keeps the children's cyclic GC away from the
    shared objects, so their memory pages stay shared.
    """

    render: Callable[[T], str]
    items: Sequence[T]
    workers: int = 1
    _children: list[_Child] = field(default_factory=list)
    _own: list[int] | None = None  # this process's share; None = everything

    def start(self) -> ForkedMap[T]:
        """Fork ``workers - 1`` children (none for small inputs); this process is the last."""
        count = min(self.workers, len(self.items) // MIN_ITEMS_PER_WORKER)
        if count < 2 or not can_fork():
            return self
        shares = _deal(len(self.items), [PARENT_WEIGHT] + [1.0] * (count - 1))
        self._own = shares[0]
        for indices in shares[1:]:
            child = self._fork(indices)
            if child is not None:
                self._children.append(child)
        return self

    def _fork(self, indices: list[int]) -> _Child | None:
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
        if pid == 0:  # the child: render its share, send it, and leave without cleanup
            for fd in (read_fd, *(child.read_fd for child in self._children)):
                os.close(fd)  # a sibling's pipe held open here would never see its reader go
            self._child_main(indices, write_fd)
        os.close(write_fd)
        return _Child(pid, read_fd, indices)

    def _child_main(self, indices: list[int], write_fd: int) -> None:
        status = 0
        try:
            gc.disable()  # short-lived: the cyclic GC would only copy shared pages
            payload = pickle.dumps(
                [str(self.render(self.items[i])) for i in indices], pickle.HIGHEST_PROTOCOL
            )
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(payload)
        except BaseException:  # the parent renders this share itself
            status = 1
        finally:
            os._exit(status)

    def results(self) -> list[str]:
        """Every item's HTML in order; shares whose child failed are rendered here."""
        done: dict[int, str] = {}
        for index in self._own or ():  # while the children finish theirs
            done[index] = str(self.render(self.items[index]))
        for child in self._children:
            for index, html in zip(child.indices, self._collect(child) or (), strict=False):
                done[index] = html
        self._children = []
        return [
            done[i] if i in done else str(self.render(item)) for i, item in enumerate(self.items)
        ]

    @staticmethod
    def _collect(child: _Child) -> list[str] | None:
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
            html = pickle.loads(data)
        except Exception:  # a truncated payload: render the share here
            return None
        if not isinstance(html, list) or len(html) != len(child.indices):
            return None
        return html

    def close(self) -> None:
        """Reap children that were started but not collected (an error in the caller)."""
        for child in self._children:  # closing every pipe first unblocks every writer
            with contextlib.suppress(OSError):
                os.close(child.read_fd)
        for child in self._children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, 0)
        self._children = []


def _deal(count: int, weights: list[float]) -> list[list[int]]:
    """Indices ``0..count-1`` in stripes, each to the worker furthest below its weight."""
    shares: list[list[int]] = [[] for _ in weights]
    for begin in range(0, count, STRIPE):
        worker = min(range(len(weights)), key=lambda i: len(shares[i]) / weights[i])
        shares[worker].extend(range(begin, min(begin + STRIPE, count)))
    return shares
