"""Rendering on several CPUs: the same page as one process, and failures fall back safely.

The parallel path only forks when no other thread runs, and the test process has threads
(servers, browsers) left by other tests, so each forking scenario runs in a fresh Python.
"""

from __future__ import annotations

import os
import select
import threading
import time
from pathlib import Path

import fresh_python
import pytest
from conftest import FIXTURE_FILES

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from exporter.render.parallel import (
    MIN_ITEMS_PER_WORKER,
    STRIPE,
    ForkedMap,
    available_workers,
    can_fork,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")

# Tool results render inside their call, so a page has about half as many entry items as lines.
BIG_FIXTURES = [p for p in FIXTURE_FILES if sum(1 for _ in p.open("rb")) > 4 * MIN_ITEMS_PER_WORKER]


def in_fresh_python(scenario: str, *args: str) -> None:
    """Run ``scenario(*args)`` of this module in a new interpreter (no stray threads)."""
    fresh_python.in_fresh_python("test_render_parallel", scenario, *args)


def test_there_are_fixtures_big_enough_to_fork() -> None:
    assert len(BIG_FIXTURES) >= 3, [p.name for p in FIXTURE_FILES]


def same_page_in_parallel(path: str) -> None:
    forks = []
    original = ForkedMap.start

    def counting_start(self: ForkedMap) -> ForkedMap:  # type: ignore[type-arg]
        started = original(self)
        forks.append(len(started._children))
        return started

    ForkedMap.start = counting_start  # type: ignore[method-assign]
    serial = render_session(load_session(path), RenderOptions(jobs=1))
    parallel = render_session(load_session(path), RenderOptions(jobs=3))
    assert forks[0] == 0 and forks[1] == 2, forks
    assert parallel == serial


@pytest.mark.parametrize("path", BIG_FIXTURES, ids=lambda p: p.name)
def test_parallel_page_is_identical_to_the_serial_one(path: Path) -> None:
    in_fresh_python("same_page_in_parallel", str(path))


def test_work_really_runs_in_other_processes_and_keeps_its_order() -> None:
    in_fresh_python("runs_in_children")


def runs_in_children() -> None:
    items = list(range(4 * MIN_ITEMS_PER_WORKER))
    parent = os.getpid()
    started = os.pipe()  # each child's pid, once per item (2,400 bytes: never blocks)

    def render(i: int) -> str:
        if os.getpid() == parent:
            # this process is slower (it built the rest of the page first): a fixed share
            # would leave it a third of the stripes, taking them as it is free leaves it few
            time.sleep(0.01)
        else:
            os.write(started[1], os.getpid().to_bytes(4, "little"))
            time.sleep(0.001)  # long enough for every worker to take stripes
        return f"{i}:{os.getpid()}"

    mapped = ForkedMap(render, items, workers=3).start()
    assert len(mapped._children) == 2  # and this process is the third worker
    # this process builds the rest of the page meanwhile: until both children are under
    # way (a fixed sleep here let them finish everything, or not start, on a busy machine)
    assert _pids_seen(started[0], 2) == 2, "the children did not start"
    results = mapped.results()
    os.close(started[1])
    os.close(started[0])
    assert [int(r.split(":")[0]) for r in results] == items
    pids = [int(r.split(":")[1]) for r in results]
    assert len(set(pids)) == 3 and parent in pids
    # whoever is free takes the next stripe: the children, busy from the start, did more
    own = pids.count(parent)
    assert 0 < own < min(pids.count(p) for p in set(pids) - {parent}), sorted(
        (pids.count(p), p == parent) for p in set(pids)
    )
    # stripes: neighbours in the same stripe went to the same process
    assert all(len(set(pids[s : s + STRIPE])) == 1 for s in range(0, len(items), STRIPE))


def test_a_busy_parent_leaves_the_stripes_to_the_children() -> None:
    in_fresh_python("busy_parent")


def busy_parent() -> None:
    """Whoever is free takes the next stripe: while this process builds the rest of the page
    the children take them all (a fixed split kept 0.6 of a share here, rendered after)."""
    items = list(range(6 * MIN_ITEMS_PER_WORKER))
    calls = os.pipe()
    parent = os.getpid()

    def render(i: int) -> str:
        os.write(calls[1], b"x")
        return f"{i}:{os.getpid()}"

    mapped = ForkedMap(render, items, workers=2).start()
    # the header, tables and outline take as long as the child needs for every item (a
    # fixed 0.5 s was too short for a busy machine); a fixed share would never get there
    rendered = _read_until(calls[0], len(items))
    results = mapped.results()
    os.close(calls[1])
    while chunk := os.read(calls[0], 65536):
        rendered += chunk
    assert [int(r.split(":")[0]) for r in results] == items
    assert len(rendered) == len(items)  # no stripe rendered twice
    assert not any(r.endswith(f":{parent}") for r in results)


def _read_until(fd: int, size: int, seconds: float = 30.0) -> bytes:
    """What ``fd`` gives until ``size`` bytes have come or ``seconds`` have passed."""
    data = b""
    deadline = time.monotonic() + seconds
    while len(data) < size and (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            data += os.read(fd, size - len(data))
    return data


def _pids_seen(fd: int, wanted: int, seconds: float = 30.0) -> int:
    """Read 4-byte pids from ``fd`` until ``wanted`` different ones came (or time ran out)."""
    pids: set[bytes] = set()
    deadline = time.monotonic() + seconds
    while len(pids) < wanted and time.monotonic() < deadline:
        pid = _read_until(fd, 4, deadline - time.monotonic())
        if len(pid) == 4:
            pids.add(pid)
    return len(pids)


def test_small_inputs_and_one_worker_stay_in_this_process() -> None:
    parent = str(os.getpid())
    few = ForkedMap(lambda i: str(os.getpid()), list(range(MIN_ITEMS_PER_WORKER)), 8).start()
    assert few._children == [] and set(few.results()) == {parent}
    one = ForkedMap(lambda i: str(os.getpid()), list(range(1000)), 1).start()
    assert one._children == [] and set(one.results()) == {parent}


def test_a_child_that_dies_is_replaced_by_this_process() -> None:
    in_fresh_python("dead_child")


def dead_child() -> None:
    parent = os.getpid()

    def render(i: int) -> str:
        if os.getpid() != parent and i == 5:
            os._exit(9)  # killed mid-way, sends nothing
        return f"item {i}"

    items = list(range(3 * MIN_ITEMS_PER_WORKER))
    mapped = ForkedMap(render, items, workers=3).start()
    assert len(mapped._children) == 2
    assert mapped.results() == [f"item {i}" for i in items]


def test_a_child_that_raises_is_replaced_by_this_process() -> None:
    in_fresh_python("raising_child")


def raising_child() -> None:
    parent = os.getpid()

    def render(i: int) -> str:
        if os.getpid() != parent and i % 7 == 0:
            raise ValueError("boom")
        return f"<p>{i}</p>"

    items = list(range(4 * MIN_ITEMS_PER_WORKER))
    mapped = ForkedMap(render, items, workers=4).start()
    assert len(mapped._children) == 3
    assert mapped.results() == [f"<p>{i}</p>" for i in items]


def test_close_reaps_children_that_were_never_collected() -> None:
    in_fresh_python("reaped_children")


def reaped_children() -> None:
    mapped = ForkedMap(lambda i: "x" * 10_000, list(range(1000)), workers=3).start()
    pids = [child.pid for child in mapped._children]
    assert len(pids) == 2
    mapped.close()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not can_fork()
        mapped = ForkedMap(lambda i: str(os.getpid()), list(range(1000)), 2).start()
        assert mapped._children == []
        assert set(mapped.results()) == {str(os.getpid())}
    finally:
        stop.set()
        thread.join()


def test_worker_count() -> None:
    assert available_workers(3) == 3
    assert 1 <= available_workers(None) <= 8
    assert available_workers(0) == available_workers(None)
