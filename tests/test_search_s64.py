"""`pi-session search` and the site's text search (hunt s64): a word after an acronym is
found in the site ("error" in "OSError"); a regex re cannot build is a usage error, not a
traceback; invalid UTF-8 is said; ``$`` matches before a CRLF; sessions come by last
activity as `list` orders them; a long regex match is shortened in its snippet.

The site test builds with `pi-session export --all`, serves it over HTTP on 127.0.0.1 and
searches it in Chromium (skipped without it unless CI is set; see tests/browser_util.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.search import SNIPPET_CONTEXT
from tests.conftest import Build
from tests.test_site_s62 import ask, expect, write_session

pytest_plugins = ["tests.browser_util", "tests.test_site_s62"]  # its `served` site, `page`


def _search(*args: str) -> Any:
    return CliRunner().invoke(cli, ["search", *args])


def _rows(*args: str) -> list[dict[str, Any]]:
    result = _search(*args, "--json")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _session_file(folder: Path, sid: str, lines: list[dict[str, Any] | bytes]) -> Path:
    """A session file of ``lines`` (a dict as JSON; bytes as they are) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    raw = [line if isinstance(line, bytes) else json.dumps(line).encode() for line in lines]
    path.write_bytes(b"".join(line + b"\n" for line in raw))
    return path


def _message(entry_id: str, parent: str | None, role: str, text: str, stamp: str) -> dict:
    message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 0}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp} | {
        "message": message
    }


# --- 1. the site's text search: a word after an acronym ---------------------------------------


@pytest.mark.browser
def test_the_site_finds_a_word_that_starts_after_an_acronym(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """A word starts at an acronym's last capital when a small letter follows it: "error"
    was not found in "OSError", "parser" in "HTMLParser", "decode" in "JSONDecodeError",
    "http" in "XMLHttpRequest"."""
    root = tmp_path / "sessions"
    said = "why does OSError come from HTMLParser and XMLHttpRequest with a JSONDecodeError"
    write_session(root, "/home/dev/alpha", "a6400000-0000-4000-8000-000000000001", ask(said))
    write_session(
        root, "/home/dev/beta", "b6400000-0000-4000-8000-000000000002", ask("nothing here")
    )
    site, base = served
    built = CliRunner().invoke(
        cli, ["export", "--all", "--sessions-dir", str(root), "-o", str(site), "-j", "1"]
    )
    assert built.exit_code == 0, built.output
    page.goto(f"{base}/index.html")
    found = {
        "error": ["Error", "Error"],
        "parser": ["Parser"],
        "decode": ["Decode"],
        "http": ["Http"],
        "request": ["Request"],
    }
    for query, marked in found.items():
        page.fill("#text-query", query)
        page.press("#text-query", "Enter")
        expect(page.locator("#text-status")).to_have_text("1 match in 1 session")
        expect(page.locator("#text-results mark")).to_have_text(marked)
    # inside an acronym, or inside a word, no word starts
    for query in ("serror", "rror", "mlparser"):
        page.fill("#text-query", query)
        page.press("#text-query", "Enter")
        expect(page.locator("#text-status")).to_have_text("No matches")


# --- 2. a regex re cannot build ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("a{4294967296}", "the repetition number is too large"), ("(" * 1000 + "a" + ")" * 1000, "")],
)
def test_a_regex_re_cannot_build_is_a_usage_error(
    write_session: Any, pattern: str, reason: str
) -> None:
    """An OverflowError (a repeat count past what re counts) and a RecursionError (groups
    nested a thousand deep) were tracebacks; re.error alone was caught."""
    path = write_session([Build.header("s64-regex"), Build.user("u1", None, "aaa")])
    result = _search("-E", pattern, str(path))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("pi-session: error: --regex "), result.stderr
    assert reason in result.stderr
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)


# --- 3. invalid UTF-8 -------------------------------------------------------------------------


def test_invalid_utf8_is_said_once_with_how_many_lines(tmp_path: Path) -> None:
    """The loader reads invalid bytes as U+FFFD: "no matches" for "café" in a Latin-1 file
    said nothing of it (stats and export warn). Said once, however many lines have it."""
    stamp = "2026-12-01T10:00:01.000Z"
    lines: list[dict[str, Any] | bytes] = [
        Build.header("s64-latin1"),
        _message("u1", None, "user", "un café", stamp),  # line 2, UTF-8
    ]
    for n in (2, 3):  # lines 3 and 4: "crème" in Latin-1
        said = json.dumps(_message(f"u{n}", f"u{n - 1}", "user", "CREME", stamp)).encode()
        lines.append(said.replace(b"CREME", "crème".encode("latin-1")))
    path = _session_file(tmp_path, "latin1", lines)
    result = _search("café", str(path))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"pi-session: warning: {path}: line 3: invalid UTF-8 bytes replaced with U+FFFD "
        "[invalid-utf8] (and 1 more line)"
    ]
    assert "pi-session: 1 entry in 1 session" in result.stderr


# --- 4. $ before a CRLF -----------------------------------------------------------------------


def test_a_regex_dollar_matches_before_a_crlf(write_session: Any) -> None:
    """README and --help: ``^`` and ``$`` match at each line's start and end; ``end$``
    found nothing in "line one end\\r\\nsecond" (Python's ``$`` looks for ``\\n`` only)."""
    text = "line one end\r\nsecond line END\r\n"
    path = write_session([Build.header("s64-crlf"), Build.user("u1", None, text)])
    rows = _rows("-E", "end$", "-s", str(path))
    assert [(r["entry_id"], r["snippet"][r["start"] : r["end"]]) for r in rows] == [("u1", "end")]
    assert rows[0]["snippet"] == "line one end second line END"
    # a pattern that says the \r itself still finds it, in the text as written
    assert [r["entry_id"] for r in _rows("-E", "one end\\r$", str(path))] == ["u1"]
    assert _rows("-E", "one$", str(path)) == []


# --- 5. newest session first, by last activity ------------------------------------------------


def test_sessions_come_by_last_activity_as_list_orders_them(tmp_path: Path) -> None:
    """Results came by the files' modification time: a session copied or touched last came
    first though `list` (and search's own help) put the one last active first."""
    folder = tmp_path / "sessions" / "--home-dev-app--"
    recent_talk = _session_file(
        folder,
        "recent-talk",
        [
            Build.header("recent-talk"),
            _message("r1", None, "user", "needle recent", "2026-12-05T10:00:00.000Z"),
        ],
    )
    old_talk = _session_file(
        folder,
        "old-talk",
        [
            Build.header("old-talk"),
            _message("o1", None, "user", "needle old", "2026-01-05T10:00:00.000Z"),
        ],
    )
    os.utime(recent_talk, (1_000_000_000, 1_000_000_000))  # written long ago
    os.utime(old_talk, (1_900_000_000, 1_900_000_000))  # touched last
    where = ["--all", "--sessions-dir", str(tmp_path / "sessions")]
    listed = CliRunner().invoke(cli, ["list", *where, "--json"])
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [
        "recent-talk",
        "old-talk",
    ]
    rows = _rows("needle", *where, "-j", "1")
    assert [row["session"] for row in rows] == ["recent-talk", "old-talk"]


# --- 6. a long regex match ------------------------------------------------------------------

MATCH_SHOWN = 2 * SNIPPET_CONTEXT  # the longest match shown whole


def test_a_long_regex_match_is_shortened_in_its_snippet(write_session: Any) -> None:
    """-E 'a{50,}' printed a match of 5,415 characters whole; the context each side is cut
    to 60 characters, and so is the match now: its start and its end, "…" between them."""
    text = "before the run " + "a" * 5_000 + " after the run"
    path = write_session([Build.header("s64-long"), Build.user("u1", None, text)])
    (row,) = _rows("-E", "a{50,}", str(path))
    shown = row["snippet"][row["start"] : row["end"]]
    assert len(shown) == MATCH_SHOWN
    assert shown == "a" * SNIPPET_CONTEXT + "…" + "a" * (MATCH_SHOWN - SNIPPET_CONTEXT - 1)
    assert row["snippet"] == "before the run " + shown + " after the run"
    out = _search("-E", "a{50,}", str(path)).stdout
    assert max(len(line) for line in out.splitlines()) < 200
    # a match as long as the limit is shown whole
    (whole,) = _rows("-E", f"a{{{MATCH_SHOWN}}}", str(path))
    assert whole["snippet"][whole["start"] : whole["end"]] == "a" * MATCH_SHOWN
