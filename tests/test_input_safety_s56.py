"""Stop 56: the edges of the command line a bad-input hunt found: standard output that is
the input session (`-o - >> s.jsonl`), `~user` paths and no home, closed standard streams,
`--help` into a full disk, and `list` counting a typeless entry as `stats` does. Each runs
the real program in a shell, as a script would."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.browser_util import fixture_path

PROGRAM = f"{shlex.quote(sys.executable)} -m exporter"


def shell(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``command`` (``pi-session`` is the program) in sh, as a user's script runs it."""
    script = command.replace("pi-session", PROGRAM)
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), **env}
    return subprocess.run(
        ["sh", "-c", script], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120
    )


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(fixture_path("every-entry-type.jsonl"), path)
    return path


@pytest.mark.parametrize(
    "command",
    [
        "pi-session redact s.jsonl -o - >> s.jsonl",
        "pi-session export s.jsonl --format md -o - 1<>s.jsonl",
        "pi-session export s.jsonl -o - > s.jsonl.html; pi-session export s.jsonl -o - >> s.jsonl",
    ],
)
def test_standard_output_that_is_the_input_is_refused(session: Path, command: str) -> None:
    """`-o /dev/stdout >> s.jsonl` was refused, `-o - >> s.jsonl` appended a second copy
    of the session to it, and `1<>s.jsonl` overwrote it with Markdown."""
    before = digest(session)
    result = shell(command, session.parent)
    assert result.returncode == 1, result.stderr
    assert "refusing to write into the input session" in result.stderr
    assert "Traceback" not in result.stderr
    assert digest(session) == before


def test_standard_output_elsewhere_is_still_written(session: Path) -> None:
    result = shell("pi-session export s.jsonl --format md -o - > out.md", session.parent)
    assert result.returncode == 0, result.stderr
    assert (session.parent / "out.md").read_text(encoding="utf-8").startswith("# ")


def test_a_user_s_home_that_cannot_be_expanded_is_a_path_not_found(tmp_path: Path) -> None:
    """bash leaves `~typo/s.jsonl` as written when there is no such user: Path.expanduser
    raised a RuntimeError, a traceback."""
    result = shell("pi-session stats '~nosuchuser56/x.jsonl'", tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "no session file or session id matches '~nosuchuser56/x.jsonl'" in result.stderr
    listing = shell("pi-session list", tmp_path, PI_CODING_AGENT_DIR="~nosuchuser56/agent")
    assert listing.returncode == 2 and "Traceback" not in listing.stderr, listing.stderr


def test_no_home_at_all_turns_caches_off_and_says_where_a_home_is_needed(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No HOME and no password entry: a single export crashed in the template cache (an
    optimisation), and `list` with a traceback."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    for name in ("HOME", "XDG_CACHE_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)
    page = session.parent / "s.html"
    export = CliRunner().invoke(cli, ["export", str(session), "-o", str(page)])
    assert export.exit_code == 0, export.output
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    listing = CliRunner().invoke(cli, ["list"])
    assert listing.exit_code == 2, listing.output
    assert "cannot tell the home folder" in listing.stderr


@pytest.mark.parametrize(
    "command",
    [
        "pi-session search e s.jsonl 2>&- > out.txt",
        "pi-session stats --all --sessions-dir sessions 2>&- > out.txt",
        "pi-session export --all --sessions-dir sessions -o out 2>&-",
    ],
)
def test_a_closed_stderr_is_no_reason_to_fail(session: Path, command: str) -> None:
    """`2>&-` (a cron job's way): the progress bar asked the missing stream if it was a
    terminal, and the command stopped with exit 1, having done nothing."""
    folder = session.parent / "sessions" / "--w--"
    folder.mkdir(parents=True)
    shutil.copyfile(session, folder / "2025-06-01T10-00-00-000Z_s.jsonl")
    result = shell(command, session.parent)
    assert result.returncode == 0, result.stderr
    made = session.parent / ("out" if "-o out" in command else "out.txt")
    assert (made / "index.html").is_file() if made.is_dir() else made.read_text("utf-8")


@pytest.mark.parametrize(
    "command",
    [
        "pi-session stats s.jsonl >&-",
        "pi-session stats s.jsonl --json >&-",
        "pi-session search e s.jsonl >&-",
        "pi-session export s.jsonl -o - >&-",
        "pi-session redact s.jsonl -o - >&-",
        "pi-session list --all --sessions-dir . >&-",
    ],
)
def test_a_closed_stdout_is_an_error_not_a_success(session: Path, command: str) -> None:
    """`>&-`: some commands crashed (a traceback), others wrote nothing and exited 0."""
    result = shell(command, session.parent)
    assert result.returncode == 2, result.stderr
    assert "standard output is closed" in result.stderr
    assert "Traceback" not in result.stderr


def test_pick_with_stdin_closed_says_nothing_was_read(session: Path) -> None:
    folder = session.parent / "sessions" / "--w--"
    folder.mkdir(parents=True)
    shutil.copyfile(session, folder / "2025-06-01T10-00-00-000Z_s.jsonl")
    result = shell("pi-session stats --pick --sessions-dir sessions <&-", session.parent)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "nothing was read" in result.stderr


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_into_a_full_disk_is_one_line_exit_2(tmp_path: Path, option: str) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    result = shell(f"pi-session {option} > /dev/full", tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "pi-session: error: standard output: No space left on device"
    ]


def test_list_counts_an_entry_without_a_type_as_stats_does(tmp_path: Path, build, dump) -> None:
    """The loader keeps an entry whose type is not a word (with a warning); the listing's
    scan dropped it, and its child then looked like a second branch."""
    root = tmp_path / "sessions"
    folder = root / "--p--"
    folder.mkdir(parents=True)
    odd = build.user("x", "u1")
    odd["type"] = None
    path = folder / "2025-06-01T10-00-00-000Z_notype.jsonl"
    path.write_bytes(dump([build.header(), build.user("u1", None), odd, build.user("u2", "x")]))
    listed = CliRunner().invoke(cli, ["list", "--all", "--sessions-dir", str(root), "--json"])
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    stats = json.loads(CliRunner().invoke(cli, ["stats", str(path), "--json"]).stdout)
    assert (row["entries"], row["branches"]) == (stats["entries"], stats["branches"]) == (3, 1)


def test_an_agent_dir_that_is_a_file_is_said_to_be_one(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("junk", encoding="utf-8")
    result = CliRunner().invoke(cli, ["list"], env={"PI_CODING_AGENT_DIR": str(not_a_folder)})
    assert result.exit_code == 2
    assert f"PI_CODING_AGENT_DIR: {not_a_folder} is not a folder" in result.stderr


@pytest.mark.parametrize(
    "args",
    [["share", "--api-url", "https://x:99999"], ["publish", "--endpoint", "https://x:99999"]],
)
def test_a_port_out_of_range_is_said_to_be_one(session: Path, args: list[str]) -> None:
    """It was said to name its host "ambiguously (a backslash, space or control
    character)", which it does not."""
    command, option, url = args
    target = "me/traces" if command == "publish" else str(session)  # a dataset, a session
    result = CliRunner().invoke(cli, [command, target, option, url])
    assert result.exit_code == 1, result.output
    assert "names a port that does not exist" in result.stderr
    assert "ambiguously" not in result.stderr
