"""The batch pool (`exporter.workers`): worker set-up survives a worker that died."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from exporter.workers import run_tasks, server_context


def _report_setup(task: str) -> dict[str, Any]:
    if task == "crash":
        os._exit(1)  # a worker killed by the OOM killer, a segfault in a C extension...
    watching = any(t.name == "watch-build" for t in threading.enumerate())
    return {"digits": sys.get_int_max_str_digits(), "watching": watching}


def test_tasks_after_a_dead_worker_run_in_workers_set_up_like_the_first(monkeypatch) -> None:
    """The pool that ran the rest after a crash was made without the worker set-up: Python's
    default 4,300-digit limit (sessions the build reads failed there) and no watch that ends
    the worker with a killed build (code review 2026-12-01)."""
    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: 100_000)  # as the CLI raises it
    results: dict[str, dict[str, Any]] = {}
    run_tasks(
        ["crash", "a", "b", "c"],
        _report_setup,
        lambda task, result: results.__setitem__(task, result),
        jobs=2,
        died=lambda task: {"died": True},
        context=lambda: server_context("exporter.workers"),
    )
    assert results.pop("crash") == {"died": True}
    assert set(results) == {"a", "b", "c"}
    assert all(r == {"digits": 100_000, "watching": True} for r in results.values()), results
