"""Odd and damaged inputs (stop 62): `search` said "no matches" for words the page shows in
its Damaged lines section; `publish` called a copy of a session saved with CRLF, a byte order
mark, UTF-16 or gzip "an earlier state" of it and uploaded it under the copy's name; a
newline in a session's file name split `search`'s listing; and `export --format md` called
its Markdown document "the page"."""

from __future__ import annotations

import codecs
import gzip
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.search import Pattern, search_file
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import FIXTURE, Home, _home

pytest_plugins = ["tests.browser_util"]

HEADER = {"type": "session", "version": 3, "id": "sess-s62", "cwd": "/tmp/proj",
          "timestamp": "2025-06-01T10:00:00.000Z"}  # fmt: skip


def _entry(number: int, parent: int | None, role: str, text: str) -> bytes:
    message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    entry = {"type": "message", "id": f"e{number:02}",
             "parentId": None if parent is None else f"e{parent:02}",
             "timestamp": f"2025-06-01T10:0{number}:00.000Z", "message": message}  # fmt: skip
    return json.dumps(entry).encode()


def _session(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in [json.dumps(HEADER).encode(), *lines])


def _nul_before_entry() -> bytes:
    """Entry e03 (line 4) after the NUL bytes a crash leaves: not valid JSON, a damaged line
    the page shows as written."""
    return _session([
        _entry(1, None, "user", "first question"),
        _entry(2, 1, "assistant", "first answer"),
        b"\0" * 16 + _entry(3, 2, "user", "the crashed orchid line"),
        _entry(4, 3, "assistant", "later answer"),
    ])  # fmt: skip


def _glued_entries() -> bytes:
    """A line cut off mid-entry with the next entry written on after it (line 4)."""
    return _session([
        _entry(1, None, "user", "first question"),
        _entry(2, 1, "assistant", "first answer"),
        b'{"type": "message", "id": "e03", "parentId": "e02"'
        + _entry(4, 3, "assistant", "the glued marigold reply"),
        _entry(5, 4, "user", "after the glue"),
    ])  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return _home(tmp_path)


# --- search: damaged lines --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "word"), [(_nul_before_entry, "orchid"), (_glued_entries, "marigold")]
)
def test_search_finds_text_in_a_damaged_line(
    tmp_path: Path, make: Callable[[], bytes], word: str
) -> None:
    """The page shows a damaged line's text under "Damaged lines"; search found nothing
    there and said "no matches" without a word about the line it skipped."""
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(make())
    (match,) = search_file(path, Pattern(word))["matches"]
    assert match["entry_id"] is None and match["kind"] == "damaged" and match["line"] == 4
    assert match["snippet"][match["start"] : match["end"]] == word


def test_search_cli_says_a_damaged_line_and_its_place_on_the_page(
    home: Home, tmp_path: Path
) -> None:
    """Listed as the line it is ("line-4  damaged line"), counted as a damaged line, not
    as an entry, and not said to be on "another branch"."""
    path = tmp_path / "crashed.jsonl"
    path.write_bytes(_nul_before_entry())
    result = home.run("search", "orchid", str(path))
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  line-4  damaged line: " in [line[:24] for line in lines], result.stdout
    assert "[orchid]" in result.stdout and "other branch" not in result.stdout
    assert "(sess-s62, 1 damaged line)" in result.stdout
    assert "pi-session: 1 damaged line in 1 session" in result.stderr
    both = home.run("search", "-E", "answer|orchid", str(path))  # entries and the line
    assert "pi-session: 2 entries and 1 damaged line in 1 session" in both.stderr


def test_an_entry_of_type_damaged_is_still_an_entry(home: Home, tmp_path: Path) -> None:
    """Only a damaged line of the file is said as one: an extension's entry whose type is
    "damaged" keeps its id and its branch."""
    odd = {"type": "damaged", "id": "x1", "parentId": None, "note": "violet"}
    path = tmp_path / "odd.jsonl"
    path.write_bytes(_session([json.dumps(odd).encode()]))
    result = home.run("search", "violet", str(path))
    assert result.code == 0, result.stderr
    assert "  x1  " in result.stdout and "damaged line" not in result.stdout
    assert "1 entry in 1 session" in result.stderr


def test_search_redact_reads_a_damaged_line_redacted(home: Home, tmp_path: Path) -> None:
    """With --redact the damaged line is searched as the shared copy holds it: its token
    is neither found nor printed."""
    token = "ghp_" + "Zq7k" * 9
    line = b"\0" * 8 + _entry(3, 2, "user", f"token {token} orchid")
    path = tmp_path / "secret.jsonl"
    path.write_bytes(_session([_entry(1, None, "user", "q"), _entry(2, 1, "assistant", "a"), line]))
    found = home.run("search", "orchid", str(path), "--redact")
    assert found.code == 0, found.stderr
    assert "damaged line" in found.stdout and token not in found.stdout + found.stderr
    hidden = home.run("search", token, str(path), "--redact")
    assert "no matches in the redacted copies" in hidden.stderr and token not in hidden.stdout


def test_the_line_search_names_opens_on_the_page_with_the_word(
    home: Home, tmp_path: Path, viewer: Any
) -> None:
    """What search reports is what a reader finds: the page opened at ``#line-N`` shows the
    damaged line, the word in it."""
    path = tmp_path / "crashed.jsonl"
    path.write_bytes(_nul_before_entry())
    found = home.run("search", "orchid", str(path), "--json")
    assert found.code == 0, found.stderr
    (match,) = [json.loads(line) for line in found.stdout.splitlines()]
    page_path = tmp_path / "crashed.html"
    made = home.run("export", str(path), "-o", str(page_path))
    assert made.code == 0, made.stderr
    url = viewer.server.publish("crashed-s62.html", page_path.read_text(encoding="utf-8"))
    page = viewer.open(f"{url}#line-{match['line']}")
    shown = page.locator(f"#line-{match['line']}")
    assert shown.is_visible()
    assert "the crashed orchid line" in shown.inner_text()


# --- search: a newline in a path --------------------------------------------------------------


def test_search_shows_a_newline_in_a_path_as_a_sign(home: Home, tmp_path: Path) -> None:
    """``new\\nline.jsonl`` printed its newline raw: the listing's path line split in two,
    ``line.jsonl`` read as a line of its own."""
    path = tmp_path / "new\nline.jsonl"
    path.write_bytes(_nul_before_entry())
    result = home.run("search", "first question", str(path))
    assert result.code == 0, result.stderr
    assert f"  {tmp_path}/new\u240aline.jsonl" in result.stdout.splitlines(), result.stdout
    assert "line.jsonl" not in result.stdout.splitlines()


# --- publish: a copy of a session in other bytes ----------------------------------------------


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def _bom(data: bytes) -> bytes:
    return codecs.BOM_UTF8 + data


def _utf16(data: bytes) -> bytes:
    return codecs.BOM_UTF16_LE + data.decode("utf-8").encode("utf-16-le")


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


@pytest.mark.parametrize(
    ("suffix", "saved_again"),
    [
        (".jsonl", _crlf),
        (".jsonl", _bom),
        (".jsonl", _utf16),
        (".jsonl.gz", gzip.compress),
    ],
    ids=["crlf", "bom", "utf16", "gzip"],
)
def test_publish_says_a_resaved_copy_is_the_same_session_and_sends_the_plain_file(
    home: Home,
    tmp_path: Path,
    fake_hub: FakeHub,
    suffix: str,
    saved_again: Callable[[bytes], bytes],
) -> None:
    """The same entries in other bytes are no "earlier state" of a session that "went on";
    the file as Pi writes it goes up under its own name, not the bigger re-encoded copy
    (nor the one first by name)."""
    plain = tmp_path / "b-plain.jsonl"
    shutil.copyfile(FIXTURE, plain)
    copy = tmp_path / f"a-copy{suffix}"
    copy.write_bytes(saved_again(plain.read_bytes()))
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1", "--yes"]
    result = home.run("publish", "alice/s62", str(plain), str(copy), *hub)
    assert result.code == 0, result.stderr
    sent = sorted(p for p in fake_hub.files("alice/s62") if p.startswith("sessions/"))
    assert [Path(p).name for p in sent] == ["b-plain.jsonl"], (sent, result.stderr)
    assert "earlier state" not in result.stderr
    said = f"{tmp_path.name}/a-copy{suffix} holds the same entries as {tmp_path.name}/b-plain"
    assert said in result.stderr, result.stderr


# --- export --format md: what the default name is of ------------------------------------------


def test_export_md_calls_its_default_file_the_markdown_document(home: Home) -> None:
    """``--report`` naming the default output: the error said "the page" of a Markdown
    document."""
    name = f"pi-session-{home.session.stem}"
    result = home.run("export", "--format", "md", str(home.session), "--report", f"{name}.md")
    assert result.code == 1
    assert "the Markdown document (default name; -o names another) and --report" in result.stderr
    page = home.run("export", str(home.session), "--report", f"{name}.html")
    assert page.code == 1 and "the page (default name; -o names another)" in page.stderr
