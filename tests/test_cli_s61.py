"""CLI review s61: `stats` tables one line per row whatever a session names its models,
Ctrl-C at the `--pick` prompt is an interrupt, search colours follow NO_COLOR and TERM=dumb,
and the progress bar fits a narrow terminal.

The terminal tests run the command in a real pseudo-terminal (its size set), as a user does.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from tests.conftest import (
    Build,
    ctrl_c_as_at_a_terminal,
    dump_lines,
    wait_until_reading_the_terminal,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(os.environ.get("PI_SHARED_DIR", "/work/shared")) / "fixtures"

#: What a session's model name, provider, tool name or entry id would add as a table row.
FORGED = "\ntotal      1  1  1  0  0  $0.01\n"


def spoofing_session(folder: Path, cwd: str = "/tmp/spoof") -> Path:
    """A session whose every name a table shows carries a forged ``total`` line; its one
    real turn cost $950."""
    expensive = Build.usage(inp=100_000, out=100_000, cost=950.0)
    lines = [
        Build.header("spoof001", cwd=cwd),
        Build.user("u1", None, "hello", second=1),
        Build.assistant(
            "a1" + FORGED,
            "u1",
            model="claude-opus-4" + FORGED,
            provider="anthropic" + FORGED,
            calls=[("c1", "bash" + FORGED)],
            usage=expensive,
        ),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2025-01-01T00-00-00-000Z_spoof001.jsonl"
    path.write_bytes(dump_lines(lines))
    return path


def assert_nothing_forged(output: str) -> None:
    """No line the session wrote (a `… $0.01` row), and the $950 rows name what they count."""
    for line in output.splitlines():
        if "$950.00" in line:
            assert re.match(r"\S", line), f"a cost row without its name: {line!r}\n{output}"
    totals = [line for line in output.splitlines() if line.lstrip().startswith("total")]
    assert totals and all("$950.00" in line for line in totals), output


def test_stats_model_names_with_newlines_forge_no_rows(tmp_path: Path) -> None:
    """A model, provider, tool or entry id with a newline added a fake `total … $0.01`
    row to the header and both usage tables, and pushed the real $950 row off its name."""
    path = spoofing_session(tmp_path)
    result = CliRunner().invoke(cli, ["stats", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert_nothing_forged(result.stdout)
    header = result.stdout.split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in header[1:]] == [
        "id", "project", "started", "ended", "models", "entries", "tree",
    ]  # fmt: skip
    tools = result.stdout.split("Tools (all branches)\n")[1].splitlines()
    assert len(tools) == 3 and tools[2].startswith("bash total"), tools


def test_stats_json_keeps_the_names_as_written(tmp_path: Path) -> None:
    """The JSON escapes a newline itself: the names stay what the file says."""
    path = spoofing_session(tmp_path)
    result = CliRunner().invoke(cli, ["stats", str(path), "--json"], catch_exceptions=False)
    document = json.loads(result.stdout)
    assert document["usage"]["by_model"][0]["model"] == f"anthropic{FORGED}/claude-opus-4{FORGED}"
    assert list(document["tools"]) == ["bash" + FORGED]


def test_stats_all_model_and_project_names_forge_no_rows(tmp_path: Path) -> None:
    """`stats --all`: the By model and By project tables, the same forgery."""
    sessions = tmp_path / "sessions"
    spoofing_session(sessions / "--x--", cwd="/tmp/a" + FORGED)
    args = ["stats", "--all", "--sessions-dir", str(sessions), "-j", "1"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert_nothing_forged(result.stdout)
    document = json.loads(CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False).stdout)
    assert document["by_project"][0]["project"] == "/tmp/a" + FORGED


# --- at a terminal ----------------------------------------------------------------------------


def at_a_terminal(
    argv: list[str], cwd: Path, columns: int = 100, **env: str
) -> tuple[subprocess.Popen[bytes], int]:
    """`pi-session ARGV` with a pty (``columns`` wide) as its controlling terminal, and the
    pty's other end, to type into and read from."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))

    def own_terminal() -> None:  # the pty becomes the child's controlling terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        ctrl_c_as_at_a_terminal()

    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    environment.pop("NO_COLOR", None)
    environment.update({"PYTHONPATH": str(ROOT), "TERM": "xterm", **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "exporter", *argv],
        cwd=cwd,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
        preexec_fn=own_terminal,
        env=environment,
    )
    os.close(terminal)
    return proc, controller


def read_all(controller: int, until: bytes | None = None) -> bytes:
    """What the terminal shows: up to ``until`` (or the child's end of it)."""
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (until and until in shown):
        if not select.select([controller], [], [], 1)[0]:
            continue
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    return shown


def finished(argv: list[str], cwd: Path, columns: int = 100, **env: str) -> tuple[int, bytes]:
    """Run to the end at a terminal: the exit code and all it showed."""
    proc, controller = at_a_terminal(argv, cwd, columns, **env)
    try:
        shown = read_all(controller)
        return proc.wait(timeout=120), shown
    finally:
        proc.kill()
        os.close(controller)


@pytest.mark.parametrize(
    ("key", "code", "said"),
    [
        (b"\x03", 130, b"pi-session: interrupted"),
        (b"\x04", 1, b"--pick needs the session's number (nothing was read)"),
    ],
    ids=["ctrl-c", "ctrl-d"],
)
def test_ctrl_c_at_the_pick_prompt_is_an_interrupt(
    tmp_path: Path, key: bytes, code: int, said: bytes
) -> None:
    """Ctrl-C at `--pick`'s prompt exited 1 saying no number was read (a usage error);
    everywhere else it is `pi-session: interrupted` and 130. Ctrl-D keeps its message."""
    project = tmp_path / "proj"
    project.mkdir()
    sessions = tmp_path / "sessions"
    spoofing_session(sessions / encode_cwd(str(project)), cwd=str(project))
    proc, controller = at_a_terminal(["stats", "--pick", "--sessions-dir", str(sessions)], project)
    try:
        shown = read_all(controller, until=b"Session number [1]: ")
        assert shown.endswith(b"Session number [1]: "), shown
        wait_until_reading_the_terminal(proc.pid)
        os.write(controller, key)  # Ctrl-C: the terminal sends SIGINT; Ctrl-D: end of input
        shown += read_all(controller)
        exit_code = proc.wait(timeout=120)
    finally:
        proc.kill()
        os.close(controller)
    assert exit_code == code, shown
    assert said in shown and b"Traceback" not in shown, shown


SEARCH = ["search", "-s", "no, dimGray", str(FIXTURES / "pi-branched-1.jsonl")]


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"])
def test_search_colours_follow_no_color_and_dumb_terminals(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The match was wrapped in colour codes whatever NO_COLOR and TERM said; without
    colour it is marked [so], as in a pipe."""
    code, shown = finished(SEARCH, tmp_path, **env)
    assert code == 0, shown
    assert b"\x1b[" not in shown and b"[no, dimGray]" in shown, shown


def test_search_colours_a_terminal_that_wants_them(tmp_path: Path) -> None:
    """The control: the same run in colour where nothing says no (an empty NO_COLOR too)."""
    code, shown = finished(SEARCH, tmp_path, NO_COLOR="")
    assert code == 0, shown
    assert b"\x1b[33m\x1b[1mno, dimGray\x1b[0m" in shown, shown


@pytest.mark.parametrize("columns", [30, 12])
def test_progress_bar_fits_a_narrow_terminal(tmp_path: Path, columns: int) -> None:
    """In a 30-column terminal the ~61-character bar wrapped, and `\\r` plus spaces cannot
    take back a wrapped line: half bars and blank lines were left above the result."""
    files = sorted(str(p) for p in FIXTURES.glob("*.jsonl"))
    code, shown = finished(["search", "zzzqqq", *files], tmp_path, columns)
    assert code == 0, shown
    text = shown.decode("utf-8")
    bars, said, result = text.partition("pi-session: no matches")
    assert said and result == "\r\n", text  # the result on a line of its own, at the end
    drawn = [part for line in bars.split("\r\n") for part in line.split("\r")]
    assert any("[" in part or "/" in part for part in drawn), text  # a bar was drawn
    assert all(len(part) < columns for part in drawn), [p for p in drawn if len(p) >= columns]
    assert bars.endswith("\r"), text  # the bar taken back: nothing left above the result
    assert "\n" not in bars, text
