"""Session 69: the tests' hang guard counts CPU time where the body only computes.

``time_limit`` counts the wall clock, so a linear-time body guarded by it failed as "a
hang" on a machine whose cores were busy with other tests (the body waited for a core).
``cpu_time_limit`` counts this process's CPU time, with the wall clock as a backstop.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import Hang, cpu_time_limit


def test_a_spinning_body_is_stopped_by_its_cpu_time() -> None:
    with pytest.raises(Hang, match="of CPU time"), cpu_time_limit(0.2):
        while True:
            pass


def test_a_body_that_waits_is_not_charged_for_the_wall_clock() -> None:
    with cpu_time_limit(0.1):
        time.sleep(0.5)  # five times the limit, on the wall clock only


def test_a_hang_is_not_swallowed_by_code_that_catches_os_errors() -> None:
    caught = []
    with pytest.raises(Hang), cpu_time_limit(0.2):
        try:
            while True:
                pass
        except (OSError, Exception) as error:  # as scan_summary catches OSError
            caught.append(error)
    assert caught == []


def test_a_body_that_sleeps_forever_still_ends() -> None:
    with pytest.raises(Hang, match=r"more than 1s: a hang"), cpu_time_limit(0.05, 1):
        time.sleep(30)  # the wall-clock backstop
