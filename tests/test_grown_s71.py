"""A session that grows while (or after) it is exported: the page's copy of it is the bytes
that were read (Pi only appends: the file's first bytes, when they hash the same), and an
imported Claude Code answer keeps its anchor while Claude Code appends its blocks."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES_DIR, REPO

import exporter.jsonl_out as jsonl_out
import exporter.loader as loader
from exporter.cli import cli
from exporter.loader import load_session, parse_session_bytes
from exporter.render import render_session
from exporter.session import Session
from tests.browser_util import embedded_jsonl

V1 = "pi-v1-before-compaction.jsonl"
CLAUDE_CODE = REPO / "tests/data/claude-code/7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl"
CODEX = REPO / (
    "tests/data/codex/rollout-2025-12-28T13-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl"
)


def v1_line(number: int) -> bytes:
    """A v1 message line as Pi wrote them (no id), with a number Python writes otherwise."""
    message = {"role": "user", "content": [{"type": "text", "text": f"one more {number}"}],
               "timestamp": 1765240990000 + number, "cost": 0.00003}  # fmt: skip
    line = {"type": "message", "timestamp": f"2025-12-09T01:30:{number % 60:02d}.000Z",
            "message": message}  # fmt: skip
    return json.dumps(line, separators=(",", ":")).encode("utf-8") + b"\n"


def copy_of(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(FIXTURES_DIR / name, target)
    return target


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def same(data: bytes | None, expected: bytes) -> bool:
    """Byte for byte (asserted so: pytest's diff of two megabytes took minutes)."""
    return data == expected


def embedded(html: str) -> bytes:
    (blob,) = embedded_jsonl(html)
    return blob


@pytest.mark.parametrize("name", [V1, "pi-branched-1.jsonl"])
def test_a_file_pi_appended_to_after_the_load_is_embedded_as_read(
    tmp_path: Path, name: str
) -> None:
    path = copy_of(name, tmp_path)
    original = path.read_bytes()
    session = load_session(path)
    append(path, v1_line(1) + v1_line(2))  # Pi wrote on while the page was made
    html = render_session(session)
    assert same(embedded(html), original)  # not the migrated, re-encoded session
    assert same(jsonl_out.download_bytes(session), original)
    assert jsonl_out.REWRITTEN_NOTE not in html
    if name == V1:  # the legacy header and Pi's numbers, as the file has them
        assert b'"version"' not in original.split(b"\n", 1)[0]
        assert b"0.000005," in embedded(html)


def appending_during_the_load(monkeypatch: pytest.MonkeyPatch, path: Path, during: bytes) -> None:
    """The loader's reading of ``path`` appends ``during`` after its first line: the load
    reads on into it (a Pi writing while the export loads)."""
    real = loader._lines

    def lines(handle: object) -> Iterator[bytes]:
        for number, line in enumerate(real(handle), start=1):  # type: ignore[arg-type]
            yield line
            if number == 1:
                append(path, during)

    monkeypatch.setattr(loader, "_lines", lines)


def test_lines_appended_during_the_load_are_in_the_copy_and_later_ones_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy_of(V1, tmp_path)
    original = path.read_bytes()
    later = v1_line(3)
    half = len(later) // 2
    during = v1_line(2) + later[:half]  # a line and half of the next: Pi was writing it
    appending_during_the_load(monkeypatch, path, during)
    session = load_session(path)
    monkeypatch.undo()
    assert [d.kind for d in session.damaged] == ["truncated"]  # the half line, as read
    append(path, later[half:] + v1_line(4))  # Pi finished the line, and wrote another
    read = original + during
    assert same(jsonl_out.read_source_bytes(session), read)
    html = render_session(session)
    assert same(embedded(html), read)  # what the page shows: the half line as it was read
    assert "one more 2" in html and "one more 4" not in html
    assert path.read_bytes().startswith(read)


def test_a_line_appended_between_the_check_and_the_read_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file unchanged since the load (same size and time), then Pi appends between that
    check and the read: the copy is the bytes stamped (a whole read() brought one line more
    and the page fell back to the session written out anew: 1 in 4 exports in a test)."""
    path = copy_of(V1, tmp_path)
    original = path.read_bytes()
    session = load_session(path)
    real_fstat = jsonl_out.os.fstat

    def fstat_then_pi_appends(descriptor: int) -> object:
        found = real_fstat(descriptor)
        append(path, v1_line(1))
        return found

    monkeypatch.setattr(jsonl_out.os, "fstat", fstat_then_pi_appends)
    copy, note = jsonl_out.download_copy(session)
    monkeypatch.undo()
    assert same(copy, original) and note is None
    assert path.read_bytes() == original + v1_line(1)


@pytest.mark.parametrize("grown", [False, True], ids=["unchanged", "grown-during-the-load"])
def test_a_damaged_line_that_parsed_keeps_its_text_as_written_while_pi_appends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grown: bool
) -> None:
    """A line that is JSON but no entry (``[1e5, "\\u00e9"]``) is shown as the file has it,
    not as parsed and written again (``[100000.0, "é"]``): also when Pi appended during the
    load (the texts were read again only from a file unchanged since)."""
    path = copy_of(V1, tmp_path)
    odd = b'[1e5, "\\u00e9"]'
    append(path, odd + b"\n")
    if grown:
        appending_during_the_load(monkeypatch, path, v1_line(1))
    session = load_session(path)
    monkeypatch.undo()
    (damaged,) = session.damaged
    assert damaged.kind == "not-an-object" and damaged.text == odd.decode("ascii")
    assert ("one more 1" in path.read_text("utf-8")) is grown


def test_a_damaged_line_keeps_its_parsed_text_when_the_file_was_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewritten after the load (its first bytes are no longer the ones read): the text as
    parsed, not the line the file now has there."""
    path = copy_of(V1, tmp_path)
    append(path, b"[1e5]\n")
    real = loader._reread_damaged

    def rewritten_first(*args: object) -> None:
        path.write_bytes(path.read_bytes().replace(b"[1e5]", b"[2e5]"))
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(loader, "_reread_damaged", rewritten_first)
    session = load_session(path)
    monkeypatch.undo()
    (damaged,) = session.damaged
    assert damaged.text == "[100000.0]" and b"[2e5]" in path.read_bytes()


def test_a_rewritten_file_is_written_out_and_the_page_says_so(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    data = path.read_bytes()
    session = load_session(path)
    unchanged = render_session(session)
    assert jsonl_out.REWRITTEN_NOTE not in unchanged
    assert same(embedded(unchanged), data)
    # as long as before and more (so grown by its size), but its first bytes differ
    changed = data.replace(b'"role":"user"', b'"role":"USER"', 1)
    assert len(changed) == len(data) and changed != data
    path.write_bytes(changed + v1_line(1))
    assert jsonl_out.read_source_bytes(session) is None
    copy, note = jsonl_out.download_copy(session)
    written = jsonl_out.session_to_jsonl(session).encode("utf-8")
    assert same(copy, written) and note == jsonl_out.REWRITTEN_NOTE
    html = render_session(session)
    assert same(embedded(html), written)
    footer = html[html.index('<footer class="page-foot') :]
    assert f"(JSONL, gzip)</a> ({jsonl_out.REWRITTEN_NOTE})." in footer


def test_a_copy_is_written_out_without_the_note(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    source = load_session(path)
    copy = parse_session_bytes(jsonl_out.session_to_jsonl(source).encode("utf-8"))
    copy.source_data = None  # as a redacted copy: no bytes of its own
    data, note = jsonl_out.download_copy(copy)
    assert same(data, jsonl_out.session_to_jsonl(copy).encode("utf-8")) and note is None


class Writer(threading.Thread):
    """Pi at work: a line appended every 50 ms until stopped."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.done = threading.Event()
        self.lines = 0

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.lines += 1
            append(self.path, v1_line(self.lines))


def test_the_export_command_embeds_the_bytes_it_read_while_pi_appends(tmp_path: Path) -> None:
    path = copy_of(V1, tmp_path)
    original = path.read_bytes()
    out = tmp_path / "page.html"
    writer = Writer(path)
    writer.start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "exporter", "export", str(path), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        writer.done.set()
        writer.join()
    assert result.returncode == 0, result.stderr
    assert writer.lines > 3
    copy = embedded(out.read_text(encoding="utf-8"))
    final = path.read_bytes()
    assert copy.startswith(original) and final.startswith(copy)  # a prefix: the bytes read
    assert copy.split(b"\n", 1)[0] == original.split(b"\n", 1)[0]  # v1, as the file has it
    page_ids = set(re.findall(r'<article data-entry-id="([^"]*)"', out.read_text("utf-8")))
    copy_ids = {e.id for e in parse_session_bytes(copy).entries}
    assert page_ids <= copy_ids  # every entry the page shows is in its copy


# --- imports: an entry's id (its anchor) stays as lines are appended --------------------


def prefixes(path: Path) -> Iterator[tuple[int, bytes]]:
    """The file's first N lines, for every N whose lines make a session."""
    lines = path.read_bytes().splitlines(keepends=True)
    for number in range(1, len(lines) + 1):
        yield number, b"".join(lines[:number])


def links(session: Session) -> dict[str, tuple[str | None, str | None]]:
    """Each entry's parent and, for a tool result, the entry of its call (the leaf's title
    entry is named after the leaf, which moves on as the session grows)."""
    found = {}
    for entry in session.entries:
        if entry.id.endswith(".title"):
            continue
        call = session.call_for_result(entry.id)
        found[entry.id] = (session.parent_of(entry.id), call.entry_id if call else None)
    return found


@pytest.mark.parametrize("source", [CLAUDE_CODE, CODEX], ids=["claude-code", "codex"])
def test_an_imported_entry_keeps_its_id_and_links_as_the_file_grows(
    tmp_path: Path, source: Path
) -> None:
    target = tmp_path / source.name  # (beside no sub-agents' transcripts)
    full = links(load_session(source))
    checked = 0
    for number, data in prefixes(source):
        try:
            session = parse_session_bytes(data, path=target)
        except loader.SessionFormatError:  # no message yet (bookkeeping lines only)
            continue
        for entry_id, linked in links(session).items():
            assert full.get(entry_id) == linked, (number, entry_id)
        checked += 1
    assert checked > 20


def test_a_claude_code_answer_is_named_by_its_first_line() -> None:
    session = load_session(CLAUDE_CODE)
    first = "00000000-0000-4000-8000-000000000002"  # the answer's thinking, then 3 more blocks
    answer = session.by_id[first].raw["message"]
    kinds = [block["type"] for block in answer["content"]]
    assert kinds == ["thinking", "text", "toolCall", "toolCall"]
    for later in ("3", "4", "5"):
        assert f"00000000-0000-4000-8000-00000000000{later}" not in session.by_id
    assert session.parent_of("00000000-0000-4000-8000-000000000006") == first  # read's result
    compaction = session.by_id["00000000-0000-4000-8000-000000000024"]  # its boundary line
    assert compaction.type == "compaction" and compaction.raw["tokensBefore"] == 17520
    assert "00000000-0000-4000-8000-000000000025" not in session.by_id
    after = session.parent_of("00000000-0000-4000-8000-000000000026")
    assert after == compaction.id  # the summary line's child follows the compaction


def exported(args: list[str]) -> str:
    result = CliRunner().invoke(cli, ["export", *args, "-o", "-"])
    assert result.exit_code == 0, result.output
    return result.stdout


def anchors(html: str) -> dict[str, str]:
    """Each article's entry id -> its DOM id."""
    found = re.findall(r'<article data-entry-id="([^"]*)"[^>]*? id="([^"]*)"', html)
    return dict(found)


@pytest.mark.parametrize("cut", [6, 7, 12, 26])
def test_a_claude_code_page_s_anchors_and_markdown_stay_as_the_answer_grows(
    tmp_path: Path, cut: int
) -> None:
    """Exported in the middle of an answer (6, 7: after its 1st and 2nd block; 12: before
    another's last block; 26: a compaction's boundary before its summary line), then whole:
    every anchor and every entry id the Markdown names are still there, redacted too."""
    lines = CLAUDE_CODE.read_bytes().splitlines(keepends=True)
    early = tmp_path / "early" / CLAUDE_CODE.name
    early.parent.mkdir()
    early.write_bytes(b"".join(lines[:cut]))
    for extra in ([], ["--redact"]):
        before, after = (anchors(exported([str(p), *extra])) for p in (early, CLAUDE_CODE))
        assert before and all(after.get(entry) == anchor for entry, anchor in before.items())
    named = re.compile(r"`(00000000-[-0-9]*)`")  # an entry the Markdown names: the leaf…
    early_md = exported([str(early), "--format", "md"])
    assert named.findall(early_md)
    full = {e.id for e in load_session(CLAUDE_CODE).entries}
    assert set(named.findall(early_md)) <= full


def test_a_watch_page_embeds_the_bytes_it_read(tmp_path: Path) -> None:
    """``watch`` renders the bytes it read: a line appended after its read is not in the
    page's copy until the next one (and the copy is never written out anew)."""
    from exporter.render import RenderOptions
    from exporter.watch import SessionWatch

    path = copy_of(V1, tmp_path)
    watch = SessionWatch(path, RenderOptions(), clock=lambda: 1000.0)
    read = path.read_bytes()
    append(path, v1_line(1))
    assert same(embedded(watch.state.page.html.decode("utf-8")), read)
    assert watch.step() is not None  # read again: the line is in the next version's copy
    grown = path.read_bytes()
    assert grown != read and same(embedded(watch.state.page.html.decode("utf-8")), grown)
