"""--sessions-dir the user may not read or reach (stop 74): said as that, exit 2.

A folder behind one the user may not enter was "does not exist"; one they may not read was
click's "is not readable" with exit 1, where the README puts unreadable session locations at
exit 2. Root passes every permission check, so the check runs in a forked child whose user
is switched to nobody."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import SESSIONS_DIR_TYPE, CliError, cli, existing_sessions_dir

NOBODY = 65534
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="switches user (needs root)"
)


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder another user may enter (pytest's tmp_path is 0700 under root's)."""
    folder = Path(tempfile.mkdtemp(prefix="s74-cli-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in folder.rglob("*"):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


def said_to_another_user(value: str) -> tuple[str, int | None]:
    """What ``existing_sessions_dir`` says of ``value`` to nobody ("" and None: accepted)."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # (nothing but the check and os._exit here: no pytest teardown)
        said = "\0"
        try:
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            existing_sessions_dir(None, None, value)  # type: ignore[arg-type]
        except CliError as error:
            said = f"{error.exit_code}\0{error}"
        except BaseException as error:  # (said to the parent, which fails)
            said = f"\0unexpected {error!r}"
        os.write(writing, said.encode("utf-8"))
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        code, _, message = answer.read().decode("utf-8").partition("\0")
    os.waitpid(child, 0)
    return message, int(code) if code else None


@needs_root
def test_a_sessions_dir_behind_a_closed_folder_is_not_said_missing(open_folder: Path) -> None:
    sessions = open_folder / "closed" / "sessions"
    sessions.mkdir(parents=True)
    (open_folder / "closed").chmod(0o700)
    message, code = said_to_another_user(str(sessions))
    assert code == 2, message
    assert "cannot be reached" in message and "Permission denied" in message
    assert "does not exist" not in message


@needs_root
def test_an_unreadable_sessions_dir_is_exit_2_in_our_words(open_folder: Path) -> None:
    sessions = open_folder / "sessions"
    sessions.mkdir()
    sessions.chmod(0o700)
    message, code = said_to_another_user(str(sessions))
    assert code == 2, message
    assert message == f"--sessions-dir: {sessions} is not readable to you (Permission denied)"
    assert SESSIONS_DIR_TYPE.readable is False  # (click's own check said it first, exit 1)


@needs_root
def test_a_readable_sessions_dir_is_taken(open_folder: Path) -> None:
    sessions = open_folder / "sessions"
    sessions.mkdir()
    assert said_to_another_user(str(sessions)) == ("", None)


def test_missing_and_file_sessions_dirs_are_said_as_before(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["list", "--sessions-dir", str(tmp_path / "typo")])
    assert missing.exit_code == 2
    assert f"--sessions-dir: {tmp_path / 'typo'} does not exist" in missing.output
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    file_said = runner.invoke(cli, ["list", "--sessions-dir", str(afile)])
    assert file_said.exit_code == 2
    assert "is a file, not a folder" in file_said.output
