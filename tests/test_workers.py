"""The batch pool (`exporter.workers`): every pool's workers are set up alike."""

from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from exporter.workers import _new_pool, server_context


def _report_setup() -> dict[str, Any]:
    watching = any(t.name == "watch-build" for t in threading.enumerate())
    return {"digits": sys.get_int_max_str_digits(), "watching": watching}


def test_a_pool_s_workers_read_long_integers_and_end_with_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool that ran the rest of a batch after a worker died was made without the worker
    set-up: Python's default 4,300-digit limit (sessions the build reads failed there) and no
    watch that ends the worker with a killed build (code review 2026-12-01). Both pools now
    come from `_new_pool`. (A test that kills a worker to reach the second pool hung once in
    the full suite, in CPython's pool shutdown: see the stop's note.)"""
    monkeypatch.setattr(sys, "get_int_max_str_digits", lambda: 100_000)  # as the CLI raises it
    pool = _new_pool(1, server_context("exporter.workers"))
    try:
        assert pool.submit(_report_setup).result(timeout=60) == {
            "digits": 100_000,
            "watching": True,
        }
    finally:
        pool.shutdown(wait=True)
