"""Stop 63: `pi-session watch` makes each page of the bytes it saw end a line (a line a writer
began after the look, or before the watch started, is waited for, not read in half), and
warns of each file's own damaged lines (a new session, a file replaced or rewritten shorter,
has its own, at the same line numbers perhaps)."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path
from typing import Any

import pytest

import exporter.watch as watch_module
from exporter.loader import load_session
from exporter.render import RenderOptions
from exporter.watch import FOLLOW_SECONDS, SETTLE_SECONDS, SessionWatch
from tests.browser_util import fixture_path
from tests.test_codex import rollout, said
from tests.test_watch import Clock, append, copy_of, user_line


def _cut_off(warnings: list[str]) -> list[str]:
    return [warning for warning in warnings if "[truncated]" in warning]


def _line_3_warned(warnings: list[str]) -> bool:
    return any(w.startswith("line 3: ") and "[invalid-json]" in w for w in warnings)


# --- 1: the page is made of the bytes the look saw end a line -----------------------------------


def test_a_line_begun_after_the_look_is_not_read_in_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look saw the file end a line, then the read went on to the end of the file as it
    was by then: a writer's first chunk became a "cut off" line, warned of for good."""
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    watch = SessionWatch(path, RenderOptions(), clock=Clock())
    watch.warnings.clear()
    entries = watch.state.page.entries
    leaf = load_session(path).leaf_id or ""
    whole = user_line("live-s63-1", leaf, "a whole line")
    begun = user_line("live-s63-2", "live-s63-1", "written in two parts")
    looked = watch_module._ends_a_line
    chunks = [begun[:40]]

    def look_then_a_writer_writes(file: Path, stamp: Any) -> bool:
        ended = looked(file, stamp)
        while chunks:  # the writer's first chunk lands right after the look
            append(path, chunks.pop())
        return ended

    monkeypatch.setattr(watch_module, "_ends_a_line", look_then_a_writer_writes)
    append(path, whole)
    news = watch.step()
    assert _cut_off(watch.warnings) == [], watch.warnings
    assert news == f"updated: {entries + 1:,} entries (+1)"
    page = watch.state.page
    assert page.damaged == 0 and b"a whole line" in page.html
    assert b"written in two parts" not in page.html
    append(path, begun[40:])  # the writer's second chunk: the line is made at once
    assert watch.step() == f"updated: {entries + 2:,} entries (+1)"
    assert watch.warnings == [] and watch.state.page.damaged == 0
    assert b"written in two parts" in watch.state.page.html


def test_the_first_page_waits_for_a_line_still_being_written(tmp_path: Path) -> None:
    """`watch` started while Pi wrote a line: it warned of a cut off line at once and
    served a page with a damaged line, though the line ended a moment later."""
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    before = load_session(path)
    line = user_line("live-s63-3", before.leaf_id or "", "begun before the watch")
    append(path, line[:40])
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    assert _cut_off(watch.warnings) == [], watch.warnings
    assert watch.state.page.damaged == 0
    assert watch.state.page.entries == len(before.entries)
    clock.now += SETTLE_SECONDS / 2
    assert watch.step() is None  # still being written: waited for
    append(path, line[40:])
    assert watch.step() == f"updated: {len(before.entries) + 1:,} entries (+1)"
    assert _cut_off(watch.warnings) == [] and watch.state.page.damaged == 0


def test_a_leaf_on_a_last_line_without_its_line_end_is_watched(tmp_path: Path) -> None:
    """`watch --leaf X` of a finished file whose last line (X) has no line end refused to
    start ("no entry with id"): the first page was made of the whole lines only (review
    s63)."""
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    before = load_session(path)
    line = user_line("live-s63-leaf", before.leaf_id or "", "the last word")
    append(path, line.rstrip(b"\n"))
    watch = SessionWatch(path, RenderOptions(), leaf="live-s63-leaf", clock=Clock())
    assert watch.state.page.entries == len(before.entries) + 1


def test_a_last_line_that_never_ends_is_said_once_the_wait_is_over(tmp_path: Path) -> None:
    """A file cut for good (Pi killed mid-write) is read as it is, as before, but only after
    the wait any unfinished line is given."""
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    entries = len(load_session(path).entries)
    append(path, b'{"type":"message","id":"cut')
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    assert _cut_off(watch.warnings) == [], watch.warnings
    assert watch.state.page.damaged == 0
    assert watch.step() is None
    clock.now += SETTLE_SECONDS
    assert watch.step() == f"updated: {entries:,} entries (+1 unreadable line)"
    assert len(_cut_off(watch.warnings)) == 1 and watch.state.page.damaged == 1


def test_a_codex_rollout_being_written_when_the_watch_starts(tmp_path: Path) -> None:
    """Another agent's file is made of the same bytes: its whole lines at once, its last
    line when it ends."""
    path = tmp_path / "rollout-2025-11-01T10-00-00-s9.jsonl"
    done = rollout(said("user", "first prompt"), said("assistant", "first answer"))
    grown = rollout(
        said("user", "first prompt"), said("assistant", "first answer"), said("user", "more")
    )
    path.write_bytes(grown[: len(done) + 30])
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    assert _cut_off(watch.warnings) == [], watch.warnings
    assert b"first answer" in watch.state.page.html and watch.state.page.damaged == 0
    entries = watch.state.page.entries
    assert watch.step() is None
    append(path, grown[len(done) + 30 :])
    assert watch.step() == f"updated: {entries + 1:,} entries (+1)"
    assert b"more" in watch.state.page.html and _cut_off(watch.warnings) == []


def test_a_utf16_session_grown_by_a_whole_line_is_made_at_once(tmp_path: Path) -> None:
    """A UTF-16 file's newline ends in a zero byte: every change to one waited two seconds
    as if a line were half written."""
    path = tmp_path / "wide.jsonl"
    text = fixture_path("pi-branched-1.jsonl").read_text(encoding="utf-8")
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    watch = SessionWatch(path, RenderOptions(), clock=Clock())  # a clock that never moves
    entries = watch.state.page.entries
    leaf = json.loads(text.splitlines()[-1])["id"]
    line = user_line("live-s63-4", leaf, "wide and whole").decode("utf-8").encode("utf-16-le")
    append(path, line[:41])  # half a character of a line begun: waited for
    assert watch.step() is None
    append(path, line[41:])
    assert watch.step() == f"updated: {entries + 1:,} entries (+1)"
    assert b"wide and whole" in watch.state.page.html


def _with_broken_line_3(path: Path, broken: str, count: int) -> None:
    lines = fixture_path("pi-branched-1.jsonl").read_text(encoding="utf-8").splitlines(True)
    path.write_text("".join(lines[:2]) + broken + "\n" + "".join(lines[2:count]), "utf-8")


def test_a_new_sessions_damaged_line_is_warned_of(tmp_path: Path) -> None:
    """Pi's /new: the new session's damaged line 3 went unsaid, because the first session
    had one at line 3 too (the page showed it; the terminal said nothing)."""
    first = tmp_path / "a.jsonl"
    _with_broken_line_3(first, "{not json", 20)
    sessions = [first]
    clock = Clock()
    watch = SessionWatch(first, RenderOptions(), newest=lambda: list(sessions), clock=clock)
    assert _line_3_warned(watch.warnings), watch.warnings
    watch.warnings.clear()
    second = tmp_path / "b.jsonl"
    _with_broken_line_3(second, "{also broken", 30)
    sessions.insert(0, second)
    clock.now += FOLLOW_SECONDS
    assert watch.step() == f"now watching {second}, a new session of this folder"
    assert watch.state.page.damaged == 1
    assert _line_3_warned(watch.warnings), watch.warnings


def test_a_file_replaced_or_rewritten_shorter_has_its_damaged_lines_warned_of(
    tmp_path: Path,
) -> None:
    """Warnings are the file's: one growing is not warned of again, one replaced (an
    editor's save) or rewritten shorter is read as new."""
    path = tmp_path / "a.jsonl"
    _with_broken_line_3(path, "{not json", 20)
    watch = SessionWatch(path, RenderOptions(), clock=Clock())
    assert _line_3_warned(watch.warnings), watch.warnings
    watch.warnings.clear()
    append(path, user_line("live-s63-6", load_session(path).leaf_id or "", "grown"))
    assert watch.step() is not None and watch.warnings == []  # the same file, grown
    saved = tmp_path / "a.jsonl.new"
    _with_broken_line_3(saved, "{broken by an editor", 12)
    os.replace(saved, path)  # another file under the name
    assert watch.step() is not None
    assert _line_3_warned(watch.warnings), watch.warnings
    watch.warnings.clear()
    _with_broken_line_3(path, "{broken again", 6)  # the same file, written shorter
    assert watch.step() is not None
    assert _line_3_warned(watch.warnings), watch.warnings
