"""`export --format md --no-timestamps`: Markdown with no date or time anywhere, for a
document that diffs by what was said (claude-conversation-log users asked for it); the rest
is the timestamped document's, line for line."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from exporter import __version__
from exporter.cli import cli
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from tests.conftest import FIXTURE_FILES

FILE_TIME = r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d"
DATETIME = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [+\-−]\d\d:\d\d| UTC[+\-−]?[\d:]*)?"


def without_times(document: str) -> str:
    """The timestamped document as --no-timestamps should write it."""
    document = re.sub(rf" · {DATETIME}", "", document)  # headings
    document = re.sub(rf" · last activity {DATETIME}", "", document)  # branch facts
    document = re.sub(rf" \({DATETIME}\)", "", document)  # "entry `x` (time) “...”"
    document = re.sub(  # Pi's name of the parent's file starts with the moment it was made
        rf"- \*\*Forked from:\*\* `[^`\n]*/{FILE_TIME}[\d-]*Z_([^`/\n]+)\.jsonl`",
        r"- **Forked from:** session `\1`",
        document,
    )
    document = re.sub(  # and the file's own name, in the last line
        rf"\*Exported from `{FILE_TIME}[\d-]*Z_([^`/\n]+)\.jsonl`",
        r"*Exported from session `\1`",
        document,
    )
    return re.sub(
        rf"- \*\*Started:\*\* {DATETIME}\n- \*\*Ended:\*\* {DATETIME} \(([^)\n]*)\)",
        r"- **Duration:** \1",
        document,
    )


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
def test_no_date_or_time_is_left_and_nothing_else_changes(path) -> None:
    session = load_session(path)
    timed = session_markdown(session)
    plain = session_markdown(session, timestamps=False)
    assert re.findall(DATETIME, timed), "the fixture's document has times to drop"
    assert re.findall(DATETIME, plain) == []  # (a session's own text may hold times)
    head = plain.split("\n\n## ", 1)[0]  # the facts above the first entry
    assert re.findall(FILE_TIME, head) == []
    assert plain == without_times(timed)


def test_the_flag_is_for_markdown_only(tmp_path) -> None:
    fixture = str(FIXTURE_FILES[0])
    runner = CliRunner()
    page = runner.invoke(
        cli, ["export", fixture, "-o", str(tmp_path / "p.html"), "--no-timestamps"]
    )
    assert page.exit_code == 1
    assert "--no-timestamps: for --format md, not HTML pages" in page.stderr
    assert not (tmp_path / "p.html").exists()
    out = tmp_path / "notes.md"
    done = runner.invoke(cli, ["export", fixture, "-o", str(out), "--no-timestamps"])
    assert done.exit_code == 0, done.output
    assert "**Duration:**" in out.read_text(encoding="utf-8")
    assert "**Started:**" not in out.read_text(encoding="utf-8")


def test_a_pi_file_s_own_dated_name_is_not_in_the_last_line(tmp_path) -> None:
    """Pi names a session's file after the moment it began: the last line names the session
    by its id then, as the parent is named (review h177 F4: the date and time were there)."""
    import shutil

    path = tmp_path / "2025-06-01T10-00-00-000Z_d97339c6-aaaa-bbbb-cccc-0123456789ab.jsonl"
    shutil.copyfile(FIXTURE_FILES[0], path)
    session = load_session(path)
    plain = session_markdown(session, timestamps=False)
    assert re.findall(FILE_TIME, plain) == [], plain[-300:]
    assert plain.rstrip().endswith(
        "*Exported from session `d97339c6-aaaa-bbbb-cccc-0123456789ab` by pi-session-export "
        f"{__version__}.*"
    )
    assert plain == without_times(session_markdown(session))
