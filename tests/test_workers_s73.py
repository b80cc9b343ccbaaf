"""Stop 73: `publish -j 2` under a long TMPDIR (a CI runner's, a test's) failed every run
with only "AF_UNIX path too long": the worker pool's forkserver names its socket in
TMPDIR, and a Unix socket's name is at most ~107 bytes. The pool now starts its workers by
spawn there (no socket)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.hub import FakeHub
from tests.test_write_errors_s73 import _env, _publish


def test_publish_with_two_workers_under_a_long_tmpdir_publishes(tmp_path: Path) -> None:
    env = _env(tmp_path)
    long_tmp = tmp_path / ("t" * 120)  # longer than any socket name, wherever tmp_path is
    long_tmp.mkdir()
    env["TMPDIR"] = str(long_tmp)
    with FakeHub() as hub:
        done = _publish(tmp_path, hub, jobs=2, env=env)
        assert done.returncode == 0, done.stderr
        assert "AF_UNIX" not in done.stderr
        assert len(hub.commits) == 1  # every session went up
    assert "4 added" in done.stdout + done.stderr, done.stderr
