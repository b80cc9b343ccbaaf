"""Findings of the stop-67 review of the CLI, file and library changes: a nohup'd build's
workers died on a hang-up, `-o ~/x` with an empty HOME named `/x`, and two builds in two
threads left multiprocessing's start method fixed."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURE_FILES

REPO = Path(__file__).resolve().parent.parent


def _fresh(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, check=False,
    )  # fmt: skip


def test_a_worker_of_a_nohup_build_keeps_ignoring_hang_ups() -> None:
    """Under `nohup` the build ignores SIGHUP, and its workers did too until they began to
    catch it as SIGTERM: a hang-up killed them ("the worker process died")."""
    code = (
        "import os, signal\n"
        "from exporter.workers import _worker_start\n"
        "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "_worker_start(os.getpid(), None)\n"
        "print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN)\n"
        "signal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
        "_worker_start(os.getpid(), None)\n"
        "print(signal.getsignal(signal.SIGHUP) not in (signal.SIG_IGN, signal.SIG_DFL))\n"
    )
    done = _fresh(code)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_a_tilde_output_with_an_empty_home_is_the_user_s_home(tmp_path: Path) -> None:
    """`HOME= pi-session export F -o '~/x/p.html'` wrote to `/x/p.html`: expanduser takes an
    empty HOME for "/", where the tool's own home() reads the password entry."""
    own = pwd.getpwuid(os.getuid()).pw_dir
    missing = "no-such-folder-s67-review"
    source = next(p for p in FIXTURE_FILES if p.name == "pi-branched-1.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "exporter", "export", str(source), "-o", f"~/{missing}/p.html"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "HOME": ""}, check=False,
    )  # fmt: skip
    assert done.returncode != 0, done.stderr  # (the folder is missing: said, not made)
    assert f"the folder {own.rstrip('/')}/{missing} does not exist" in done.stderr, done.stderr


def test_two_builds_in_two_threads_leave_the_start_method_unset() -> None:
    """Build A fixes the method, build B comes in, A leaves (unsetting it), B fixes it again
    and left it fixed: the caller's set_start_method("spawn") then raised."""
    code = (
        "import multiprocessing as mp\n"
        "from exporter.workers import _start_method_kept\n"
        "a, b = _start_method_kept(), _start_method_kept()\n"
        "a.__enter__(); mp.get_start_method()\n"
        "b.__enter__()\n"
        "a.__exit__(None, None, None); mp.get_start_method()\n"
        "b.__exit__(None, None, None)\n"
        "print(mp.get_start_method(allow_none=True))\n"
        "mp.set_start_method('spawn')\n"
        "print('set')\n"
    )
    done = _fresh(code)
    assert done.stdout.split() == ["None", "set"], done.stderr
