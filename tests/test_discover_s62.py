"""Stop 62 (hunt: odd inputs): `list` counted a damaged line that its fast path took for an
entry (a NUL or BEL inside a string, two entries glued on one line, as a crash leaves them),
where `stats`, the page and the site index said one damaged line: a session's messages,
branches, tokens and cost differed between them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.loader import load_session
from tests.test_discover import assert_agree


def _lines() -> list[bytes]:
    """A six-message session written as Pi writes it (compact JSON, fixed key order)."""
    header = (
        b'{"type":"session","version":3,"id":"s1","timestamp":"2025-06-01T10:00:00.000Z",'
        b'"cwd":"/p"}'
    )
    lines, parent = [header], b"null"
    for n in range(1, 7):
        role = b"user" if n % 2 else b"assistant"
        usage = (
            b',"provider":"anthropic","model":"claude-x","usage":{"input":10,"output":5,'
            b'"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.01,'
            b'"output":0.02,"cacheRead":0,"cacheWrite":0,"total":0.03}},"stopReason":"stop"'
            if role == b"assistant"
            else b""
        )
        lines.append(
            b'{"type":"message","id":"e%d","parentId":%s,"timestamp":"2025-06-01T10:0%d:00.000Z",'
            b'"message":{"role":"%s","content":[{"type":"text","text":"MARK%d hello"}],'
            b'"timestamp":1%s}}' % (n, parent, n, role, n, usage)
        )
        parent = b'"e%d"' % n
    return lines


def _damaged(case: str) -> bytes:
    lines = _lines()
    if case == "glued":  # a cut line, then the next append on the same line
        lines[5] += lines.pop(6)
    elif case == "nul":
        lines[3] = lines[3].replace(b"MARK3 hello", b"MARK3 \x00\x00hello")
    elif case == "cut-in-a-string-then-glued":  # the usual crash: cut mid-text, appended on
        lines[5] = lines[5][: lines[5].index(b"MARK5") + 3] + lines.pop(6)
    elif case == "raw-cr-in-an-answer":
        lines[2] = lines[2].replace(b"MARK2 hello", b"MARK2 \rhello")
    elif case == "bel-in-an-answer":  # its usage was added to the listing's tokens and cost
        lines[2] = lines[2].replace(b"MARK2 hello", b"MARK2 \x07hello")
    return b"\n".join(lines) + b"\n"


@pytest.mark.parametrize(
    "case",
    ["glued", "cut-in-a-string-then-glued", "nul", "bel-in-an-answer", "raw-cr-in-an-answer"],
)
def test_list_counts_a_damaged_line_as_stats_does(tmp_path: Path, case: str) -> None:
    path = tmp_path / f"2025-06-01T10-00-00-000Z_{case}.jsonl"
    path.write_bytes(_damaged(case))
    assert load_session(path).damaged  # the loader finds a damaged line in each
    assert_agree(path, case)


def test_valid_lines_that_look_odd_are_still_counted(tmp_path: Path) -> None:
    """What the checks may take for damage but is valid JSON: "}{" and an escaped backslash
    before a letter inside a string, a string ending in a backslash. Parsed, and counted."""
    lines = _lines()
    lines[1] = lines[1].replace(b"MARK1 hello", b"code }{ and C:\\\\qux\\\\")
    lines[2] = lines[2].replace(b"MARK2 hello", b'say \\"}{\\"')
    path = tmp_path / "2025-06-01T10-00-00-000Z_valid.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = load_session(path)
    assert not session.damaged and len(session.entries) == 6
    assert_agree(path, "valid")


def test_a_session_link_that_leads_nowhere_is_said_not_left_out_unsaid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dangling link and a loop of links named *.jsonl were left out of `list`, `stats
    --all` and `export --all` without a word, where an unreadable folder is said."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    folder = tmp_path / "sessions" / encode_cwd(str(project))
    folder.mkdir(parents=True)
    (folder / "2025-06-01T10-00-00-000Z_ok.jsonl").write_bytes(_damaged("none"))
    (folder / "gone.jsonl").symlink_to(tmp_path / "moved-away.jsonl")
    (folder / "loopA.jsonl").symlink_to(folder / "loopB.jsonl")
    (folder / "loopB.jsonl").symlink_to(folder / "loopA.jsonl")
    for args in (["list"], ["stats", "--all"]):
        result = CliRunner().invoke(cli, [*args, "--sessions-dir", str(folder.parent)])
        assert result.exit_code == 0, result.output
        for name in ("gone.jsonl", "loopA.jsonl", "loopB.jsonl"):
            said = f"cannot read {folder / name} ("
            assert said in result.stderr and "it is left out" in result.stderr, result.stderr


def test_a_printed_path_keeps_to_one_line_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """`export`'s written path showed an escape code as a sign on a terminal, but a line
    break in the name raw: the path came out as two lines (as `search`'s did)."""
    import io
    import sys

    from exporter.redact_cli import echo_path

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    echo_path(Path("new\nline\tand\x1b[31mred.html"))
    assert screen.getvalue() == "new\u240aline\u2409and\u241b[31mred.html\n"
