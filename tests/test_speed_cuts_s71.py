"""Stop 71's four cuts of the export's serial CPU, each leaving every page as it was.

* The loaded session goes to the GC's oldest generation unwalked (``loader.gc_paused``):
  nothing stays frozen after a library call, a caller's frozen objects stay frozen, and a
  loop of loads does not grow (the caller's cyclic garbage is still collected).
* ``MessageEntry.message`` is looked up once, and stays right for a redacted copy.
* The minified CSS and scripts are kept on disk (``template_cache.cached_text``): a damaged
  or changed cache file, an unwritable cache, or ``PI_SESSION_NO_TEMPLATE_CACHE`` give the
  page a fresh minify gives, and the page's CSP hashes its inline code.
* The page is encoded to UTF-8 once on its way to the file: lone surrogates in the session's
  text are written as U+FFFD, as before.
"""

from __future__ import annotations

import base64
import dataclasses
import gc
import hashlib
import html
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.agent_context import AgentContext
from exporter.cli import cli
from exporter.entries import MessageEntry, make_entry
from exporter.formatting import writable_page
from exporter.loader import load_session, parse_session_bytes
from exporter.policy import RedactionPolicy
from exporter.prepare import prepare_session
from exporter.render import RenderOptions, assets, render_session, template_cache
from tests.conftest import FIXTURES_DIR

EVERY = FIXTURES_DIR / "every-entry-type.jsonl"
#: A credential of a well-known format (what --redact replaces).
SECRET = "sk-ant-api03-" + "A" * 80


def session_lines(*extra: dict[str, Any]) -> bytes:
    """every-entry-type.jsonl with ``extra`` entries after its last one."""
    lines = EVERY.read_text(encoding="utf-8").splitlines()
    last = [json.loads(line) for line in lines][-1]["id"]
    added = []
    for number, entry in enumerate(extra, start=1):
        added.append(json.dumps({"id": f"x{number}", "parentId": last, **entry}))
        last = f"x{number}"
    return ("\n".join(lines + added) + "\n").encode("utf-8")


def message(role: str, content: Any, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "timestamp": "2025-06-01T11:00:00.000Z",
        "message": {"role": role, "content": content, **fields},
    }


# --- the loaded session and the cyclic GC ---------------------------------------------------


def test_a_load_leaves_nothing_frozen_and_its_session_in_the_oldest_generation() -> None:
    gc.collect()  # (the young counts from zero: no older collection due right after)
    before = gc.get_freeze_count()
    session = load_session(FIXTURES_DIR / "pi-branched-1.jsonl")
    assert gc.get_freeze_count() == before
    # moved there unwalked: a young collection used to walk the whole session first
    oldest = {id(value) for value in gc.get_objects(generation=2)}
    tracked = [entry for entry in session.entries if gc.is_tracked(entry)]
    assert len(tracked) == len(session.entries) > 100
    assert all(id(entry) in oldest for entry in tracked)
    copy = parse_session_bytes(EVERY.read_bytes())
    assert gc.get_freeze_count() == before
    render_session(copy, RenderOptions(jobs=1))
    assert gc.get_freeze_count() == before


def test_a_callers_frozen_objects_stay_frozen_through_a_load() -> None:
    marker: list[Any] = [[]]
    gc.freeze()  # a server freezing its start-up state, say
    try:
        load_session(EVERY)
        render_session(load_session(EVERY), RenderOptions(jobs=1))
        assert gc.get_freeze_count() > 0 and gc.isenabled()
        assert gc.is_tracked(marker)
        assert all(value is not marker for value in gc.get_objects())  # still frozen
    finally:
        gc.unfreeze()


def test_a_load_with_the_gc_disabled_leaves_it_disabled() -> None:
    gc.disable()
    try:
        load_session(EVERY)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_loop_of_loads_stays_flat_while_the_caller_makes_cyclic_garbage() -> None:
    """The young objects a load promotes do not count towards a full collection: the
    caller's garbage among them lived on, 3,000 objects a load here, until the loader
    collected the young generations before it started."""
    gc.collect()
    start = len(gc.get_objects())
    for _ in range(80):
        session = load_session(EVERY)
        junk: list[list[Any]] = [[] for _ in range(3000)]
        for each in junk:
            each.append(each)
        del junk, session
    grown = len(gc.get_objects()) - start
    assert grown < 60_000, grown  # (80 x 3,000 = 240,000 when the garbage stays)
    assert gc.get_freeze_count() == 0


def test_a_loop_of_renders_stays_flat_while_the_caller_makes_cyclic_garbage() -> None:
    """The same for a render's own freeze (B's report, stop 71): what the caller left in the
    young generations was thawed into the oldest one, uncounted towards its collection, so a
    loop of renders (watch, a library user) grew by all the garbage made between them."""
    session = load_session(EVERY)
    render_session(session)
    gc.collect()
    start = len(gc.get_objects())
    for _ in range(60):
        junk: list[list[Any]] = [[] for _ in range(3000)]
        for each in junk:
            each.append(each)
        del junk
        render_session(session)
    grown = len(gc.get_objects()) - start
    assert grown < 60_000, grown  # (60 x 3,000 = 180,000 when the garbage stays)
    assert gc.get_freeze_count() == 0


# --- MessageEntry.message ---------------------------------------------------------------------


class CountingDict(dict[str, Any]):
    """An entry's JSON that counts how often its ``message`` is looked up."""

    looked_up = 0

    def get(self, key: str, default: Any = None) -> Any:
        if key == "message":
            self.looked_up += 1
        return super().get(key, default)


def test_an_entrys_message_is_looked_up_once() -> None:
    raw = CountingDict(
        message("assistant", [{"type": "text", "text": "hi"}], provider="p", model="m")
    )
    entry = make_entry(raw, 1, "a", None)
    assert isinstance(entry, MessageEntry)
    said = (entry.role, entry.text, entry.model_key, entry.stop_reason, entry.tool_calls)
    assert said == ("assistant", "hi", "p/m", None, [])
    assert raw.looked_up == 1


def test_an_entrys_message_follows_its_fields_and_a_new_raw() -> None:
    entry = make_entry(message("user", "before"), 1, "a", None)
    assert isinstance(entry, MessageEntry)
    assert entry.text == "before"
    entry.message["content"] = "changed in place"
    assert entry.text == "changed in place"
    other = dataclasses.replace(
        entry, raw={**entry.raw, "message": {"role": "user", "content": "new"}}
    )
    assert (other.text, entry.text) == ("new", "changed in place")


def test_a_message_entry_without_a_message_object_reads_as_empty() -> None:
    entry = make_entry({"type": "message", "message": "oops"}, 1, "a", None)
    assert isinstance(entry, MessageEntry)
    assert (entry.message, entry.role, entry.text) == ({}, "unknown", "")


def test_a_redacted_copy_reads_its_own_messages() -> None:
    session = parse_session_bytes(session_lines(message("user", f"my key {SECRET} here")))
    original = session.entries[-1]
    assert isinstance(original, MessageEntry)
    assert SECRET in original.text  # looked up (and kept) before the copy is made
    redacted, _report = prepare_session(session, RedactionPolicy(redact=True))
    copy = redacted.by_id[original.id]
    assert isinstance(copy, MessageEntry)
    assert SECRET not in copy.text and SECRET not in json.dumps(copy.message)
    assert SECRET in original.text  # the loaded session is left as it was


# --- the minified CSS and scripts kept on disk ---------------------------------------------

_CACHED = (
    "page_css_and_script",
    "head_script",
    "agent_context_css",
    "ansi_css",
    "live_css_and_script",
    "_minifier_fingerprint",
)
_FORGETS = [getattr(assets, name).cache_clear for name in _CACHED if hasattr(assets, name)]


def forget_minified() -> None:
    """What this process minified, forgotten: the next page reads the disk cache."""
    for forget in _FORGETS:
        forget()


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache folder of the test's own, and nothing minified in this process yet."""
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("PI_SESSION_NO_TEMPLATE_CACHE", raising=False)
    forget_minified()
    yield home / "pi-session-export" / "minified"
    forget_minified()


def a_page(ansi: bool = False) -> str:
    """A page that inlines every minified text: the cards' CSS, the live script and
    (``ansi``) the terminal colours."""
    output = "\x1b[31mred\x1b[0m" if ansi else "plain"
    data = session_lines(
        message("assistant", [{"type": "toolCall", "id": "c9", "name": "bash", "arguments": {}}]),
        message("toolResult", [{"type": "text", "text": output}], toolCallId="c9"),
    )
    options = RenderOptions(jobs=1, live_version="v1", agent_context=AgentContext("You help."))
    return render_session(parse_session_bytes(data), options)


@pytest.fixture
def fresh_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The page with nothing cached: every text minified now."""
    with monkeypatch.context() as env:
        env.setenv("PI_SESSION_NO_TEMPLATE_CACHE", "1")
        forget_minified()
        page = a_page(ansi=True)
        forget_minified()
    return page


def assert_csp_hashes_inline_code(page: str) -> None:
    policy = html.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)  # type: ignore[union-attr]
    )

    def hashes(tag: str) -> list[str]:
        found = re.findall(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        assert found
        return [
            "'sha256-" + base64.b64encode(hashlib.sha256(t.encode()).digest()).decode() + "'"
            for t in found
        ]

    style = re.search(r"style-src ([^;]*);", policy).group(1).split()  # type: ignore[union-attr]
    script = re.search(r"script-src ([^;]*);", policy).group(1).split()  # type: ignore[union-attr]
    assert sorted(style) == sorted(hashes("style"))
    assert sorted(script) == sorted(hashes("script"))


def refuse_to_minify(_text: str) -> str:
    raise AssertionError("minified again: the cache was not read")


def test_the_minified_texts_are_kept_and_read_back(
    cache_home: Path, fresh_page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert a_page(ansi=True) == fresh_page
    names = sorted(path.name.split(".")[0] for path in cache_home.iterdir())
    assert names == [
        "css-agent-context",
        "css-ansi",
        "css-live",
        "css-page",
        "js-live",
        "js-theme+page",
        "js-theme-head",
    ]
    forget_minified()

    monkeypatch.setattr(assets, "minify_js", refuse_to_minify)
    monkeypatch.setattr(assets, "minify_css", refuse_to_minify)
    page = a_page(ansi=True)
    assert page == fresh_page
    assert_csp_hashes_inline_code(page)


def cut_short(data: bytes) -> bytes:
    return data[: len(data) // 2]


def text_changed(data: bytes) -> bytes:  # the digest kept, the text not what it says
    return data.replace(b"{", b"{color:red;", 1).replace(b"function", b"alert(1);function", 1)


def digest_changed(data: bytes) -> bytes:
    return b"0" * 64 + data[64:]


@pytest.mark.parametrize(
    "damage",
    [cut_short, text_changed, digest_changed, lambda d: b"", lambda d: b"\xff\xfe" + d],
    ids=["cut-short", "text-changed", "digest-changed", "empty", "not-utf8"],
)
def test_a_damaged_cache_file_gives_the_fresh_page(
    cache_home: Path, fresh_page: str, damage: Any
) -> None:
    a_page(ansi=True)
    files = sorted(cache_home.iterdir())
    assert len(files) == 7
    for path in files:
        path.write_bytes(damage(path.read_bytes()))
    forget_minified()
    page = a_page(ansi=True)
    assert page == fresh_page
    assert_csp_hashes_inline_code(page)
    forget_minified()  # and the damaged files were written again, whole
    assert a_page(ansi=True) == fresh_page
    assert all(path.read_bytes()[64:65] == b"\n" for path in cache_home.iterdir())


class FullDisk:
    """``tempfile`` on a full disk: the temporary file is made, writing it fails."""

    @staticmethod
    def NamedTemporaryFile(**options: Any) -> Any:  # (tempfile's name)
        handle = tempfile.NamedTemporaryFile(**options)  # noqa: SIM115 (the caller closes it)

        def write(_data: bytes) -> int:
            raise OSError(28, "No space left on device")

        handle.write = write
        return handle


def test_a_cache_that_cannot_be_written_still_exports(
    cache_home: Path, fresh_page: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cache_home.parent.mkdir(parents=True, mode=0o700)
    cache_home.write_text("a file where the folder goes", encoding="utf-8")
    assert a_page(ansi=True) == fresh_page
    cache_home.unlink()
    forget_minified()

    monkeypatch.setattr(template_cache, "tempfile", FullDisk)
    assert a_page(ansi=True) == fresh_page
    assert list(cache_home.iterdir()) == []  # no temporary file left behind
    result = CliRunner().invoke(cli, ["export", str(EVERY), "-o", str(tmp_path / "p.html")])
    assert result.exit_code == 0, result.output
    assert_csp_hashes_inline_code((tmp_path / "p.html").read_text(encoding="utf-8"))


def test_no_template_cache_writes_no_minified_texts(
    cache_home: Path, fresh_page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PI_SESSION_NO_TEMPLATE_CACHE", "1")
    assert a_page(ansi=True) == fresh_page
    assert not cache_home.exists()


def test_another_minifier_misses_and_a_few_versions_are_kept(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each version of the minifier (or of a stylesheet) has texts of its own; the newest
    four of each file are kept, so two installs taking turns both find theirs."""
    a_page()
    first = {path.name for path in cache_home.iterdir()}
    monkeypatch.setattr(assets, "minify_css", lambda css: "/*new*/" + css)
    for number in range(5):
        for path in cache_home.iterdir():  # older than what comes next
            when = path.stat().st_mtime - 100
            os.utime(path, (when, when))
        forget_minified()
        monkeypatch.setattr(assets, "_minifier_fingerprint", lambda n=number: f"minifier {n}")
        assert "/*new*/" in a_page()  # a miss: made by this minifier, not read back
    names = {path.name for path in cache_home.iterdir()}
    assert set(Counter(name.split(".")[0] for name in names).values()) == {4}
    assert not first & names  # the oldest version's went
    forget_minified()
    monkeypatch.setattr(assets, "_minifier_fingerprint", lambda: "minifier 1")
    monkeypatch.setattr(assets, "minify_css", refuse_to_minify)
    monkeypatch.setattr(assets, "minify_js", refuse_to_minify)
    assert "/*new*/" in a_page()  # an older version's texts, still there


# --- the page encoded once ---------------------------------------------------------------------

SURROGATES = message("user", "lone \ud83d high, \udc00 low, a pair \U0001f600, tail \udfff")


def test_lone_surrogates_are_written_as_before(tmp_path: Path) -> None:
    source = tmp_path / "s.jsonl"
    source.write_bytes(session_lines(SURROGATES))
    assert b"\\ud83d high" in source.read_bytes()  # written as JSON writes a lone surrogate
    written = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(written), "--no-embed"])
    assert result.exit_code == 0, result.output
    page = render_session(load_session(source), RenderOptions(jobs=1, embed_jsonl=False))
    data = written.read_bytes()
    assert data == page.encode("utf-8")
    assert "lone \ufffd high, \ufffd low, a pair \U0001f600, tail \ufffd".encode() in data
    piped = CliRunner().invoke(cli, ["export", str(source), "-o", "-", "--no-embed"])
    assert piped.stdout_bytes == data


def test_the_exported_page_is_written_as_writable_page_encoded_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def encoded_again(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the page was encoded a second time")

    monkeypatch.setattr("exporter.export_cli.atomic_write_text", encoded_again)
    written = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["export", str(EVERY), "-o", str(written)])
    assert result.exit_code == 0, result.output
    assert written.read_bytes().startswith(b"<!DOCTYPE html>")


def test_kept_page_bytes_are_the_pages_own_and_handed_over_once() -> None:
    from exporter.formatting import kept_page_bytes, page_bytes_kept

    page = "<p>caf\u00e9 \ud800</p>"
    assert kept_page_bytes(writable_page(page)) is None  # kept only when asked
    with page_bytes_kept():
        shown = writable_page(page)
        assert kept_page_bytes("<p>another page</p>") is None
        assert kept_page_bytes(shown) == shown.encode("utf-8") == "<p>caf\u00e9 \ufffd</p>".encode()
        assert kept_page_bytes(shown) is None
        controls = writable_page("<p>bell \x07</p>")  # shown as a sign: a new text
        assert kept_page_bytes(controls) is None
    with page_bytes_kept():
        first, second = writable_page("<p>1</p>"), writable_page("<p>2</p>")
        assert kept_page_bytes(first) is None  # the last page only is held
        assert kept_page_bytes(second) == b"<p>2</p>"
