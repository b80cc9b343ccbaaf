"""Session 70: right-to-left words quoted after an English prefix drew their punctuation at
the wrong end.

An outline row says whose words it shows ("user: ", "[label: …]", "[name: …]", a label's
"[…]" before it); the Labels list, a marker's "entry u1 “user: …”", the branch table's
"Forks at" and "(starts with …)", and a branch's summary quote such rows. The row's English
prefix made the line left to right, so in "[label: חשוב!]" the "!" was drawn on the right of
the Hebrew word, where a reader of Hebrew starts. The quoted words are now isolated
(``<bdi>``) when they hold a right-to-left letter; other rows cost no byte more.

The check is what a reader sees, in Chromium, as in :mod:`tests.test_rtl_s69`: each
right-to-left letter followed by end punctuation on the same line must have the punctuation
drawn to its LEFT.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.test_rtl_s69 import HEADER, LABEL, NAME, PROMPT, REPLY, _line, misdrawn, page_fixture

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser
__all__ = ["page_fixture"]  # the Chromium page, one context per test

ARABIC_LABEL = "مهم جدا!"
RETRY = "תשובה אחרת, נסה שוב!"
ARABIC_PROMPT = "هل يعمل الآن؟"
OTHER_PROMPT = "مرحبا بالعالم!"
SUMMARY = "סיכום הענף הקודם."
NOTE = "הודעה מהתוסף!"
OUTPUT = "שגיאה: הקובץ חסר!"  # a tool's output whose call is not in the file


def _user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return _line("message", entry_id, parent, message={"role": "user", "content": text})


def _assistant(entry_id: str, parent: str, text: str) -> dict[str, Any]:
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    message = {"role": "assistant", "provider": "p", "model": "m", "usage": usage}
    message |= {"stopReason": "stop", "content": [{"type": "text", "text": text}]}
    return _line("message", entry_id, parent, message=message)


def _orphan_result(text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"role": "toolResult", "toolCallId": "gone", "toolName": "bash", "content": content}


def write_branched_rtl_session(folder: Path) -> Path:
    """Hebrew and Arabic prompts, answers, labels and a name, in three branches: one forks
    at a Hebrew answer, one opens with another (Hebrew) answer to an English prompt."""
    records = [
        {**HEADER, "id": "rtl-s70"},
        _user("u1", None, PROMPT),
        _assistant("a1", "u1", REPLY),
        _user("u4", "a1", OTHER_PROMPT),  # a branch forking at a Hebrew answer
        _line("branch_summary", "s4", "u4", fromId="a1", summary=SUMMARY),
        _assistant("a4", "s4", "Done."),
        _assistant("a2b", "u2", RETRY),  # a branch opening with an answer (before u2: odd)
        _user("u3b", "a2b", ARABIC_PROMPT),
        _user("u2", "a1", "Please run the tests."),
        _line("custom_message", "c2", "u2", customType="note", content=NOTE, display=True),
        _assistant("a2", "c2", "All green."),
        _line("message", "t2", "a2", message=_orphan_result(OUTPUT)),
        _line("label", "l1", "t2", targetId="u1", label=LABEL),
        _line("label", "l2", "l1", targetId="u2", label=ARABIC_LABEL),
        _line("session_info", "n1", "l2", name=NAME),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2026-01-01T00-00-00-000Z_rtl-s70.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from exporter.loader import load_session
    from exporter.render import render_session

    folder = tmp_path_factory.mktemp("rtl-s70")
    session = load_session(write_branched_rtl_session(folder))
    out = folder / "rtl.html"
    out.write_text(render_session(session), encoding="utf-8")
    return out


def _show_all(page: Any, page_file: Path) -> None:
    page.goto(page_file.as_uri())
    page.locator("label[for=flt-all]").click()  # the label and name rows too
    page.wait_for_function(
        "getComputedStyle(document.querySelector('#tree li.r-meta')).display !== 'none'"
    )
    for details in page.locator("details.branch").all():  # the branches' entries too
        details.evaluate("d => d.open = true")


def test_outline_rows_draw_quoted_words_in_their_own_direction(page: Any, page_file: Path) -> None:
    _show_all(page, page_file)
    expected = (PROMPT, REPLY, LABEL, ARABIC_LABEL, NAME, RETRY, ARABIC_PROMPT, SUMMARY, NOTE)
    assert misdrawn(page, expected=(*expected, OUTPUT), skip="main") == []


def test_the_page_draws_quoted_rows_in_their_own_direction(page: Any, page_file: Path) -> None:
    _show_all(page, page_file)
    expected = (PROMPT, REPLY, LABEL, ARABIC_LABEL, NAME, RETRY, OTHER_PROMPT, ARABIC_PROMPT)
    # (a tool's output is a terminal's: shown left to right as written, not checked here)
    assert misdrawn(page, expected=expected, skip="#sidebar, pre") == []


def test_quoted_rows_isolate_only_the_entry_s_own_right_to_left_words() -> None:
    from exporter.render.outline_html import isolated, quoted_row

    assert quoted_row("user: שלום!") == "user: <bdi>שלום!</bdi>"
    assert quoted_row("[label: חשוב!]") == "[label: <bdi>חשוב!</bdi>]"
    assert quoted_row("[name: שלום עולם…") == "[name: <bdi>שלום עולם…</bdi>"  # cut short
    assert quoted_row("skill: pdf · user: סכם!") == "skill: pdf · user: <bdi>סכם!</bdi>"
    assert quoted_row("assistant: (aborted) לא!") == "assistant: (aborted) <bdi>לא!</bdi>"
    assert quoted_row("[bash result] שגיאה!") == "[bash result] <bdi>שגיאה!</bdi>"
    assert quoted_row("[branch summary]: סיכום.") == "[branch summary]: <bdi>סיכום.</bdi>"
    # untrusted words stay text, isolated or not
    said = quoted_row("user: <b a=\"1\">שלום</b> & 'x'")
    assert said == "user: <bdi>&lt;b a=&#34;1&#34;&gt;שלום&lt;/b&gt; &amp; &#39;x&#39;</bdi>"
    assert quoted_row("user: <b>hi</b>") == "user: &lt;b&gt;hi&lt;/b&gt;"
    assert isolated("مرحبا!") == "<bdi>مرحبا!</bdi>" and isolated("a<b") == "a&lt;b"
    # left to right words, or right-to-left ones only in the page's part: no byte more
    for row in ("user: fix the build!", "[label: done]", "[read: /tmp/שלום.txt] result"):
        assert quoted_row(row) == row.replace("<", "&lt;")


#: Where a page isolated text before session 70, whatever its direction: the Labels list's
#: label and row, "Label “…”", "Session named “…”", a branch's summary.
_ISOLATED_BEFORE = re.compile(r'(?:<span class="muted">|“|</span> |<li>)<bdi>')


@pytest.mark.parametrize("name", ["every-entry-type.jsonl", "pi-branched-1.jsonl"])
def test_a_page_without_right_to_left_text_isolates_nothing_more(name: str) -> None:
    from tests.browser_util import render_fixture

    html = render_fixture(name)
    start = html.index('<ul class="tree"')
    tree = html[start : html.index("</nav>", start)]
    assert tree.count("<li") > 20 and "<bdi>" not in tree
    assert html.count("<bdi>") == len(_ISOLATED_BEFORE.findall(html))


def test_a_failed_turn_s_hebrew_error_is_drawn_in_its_own_direction(
    page: Any, tmp_path: Path
) -> None:
    """A turn that failed with no text is the row "assistant: error: <message>": the
    "error: " is the page's, not the words' (review of 0.2.52: its "!" was on the right)."""
    from exporter.loader import load_session
    from exporter.render import render_session

    error, aborted = "השרת לא זמין!", "עצרתי כאן!"
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}

    def turn(entry_id: str, parent: str, **message: Any) -> dict[str, Any]:
        said = {"role": "assistant", "provider": "p", "model": "m", "usage": usage, **message}
        return _line("message", entry_id, parent, message=said)

    records = [
        {**HEADER, "id": "e"},
        _line("message", "u1", None, message={"role": "user", "content": "hi"}),
        turn("a1", "u1", stopReason="error", errorMessage=error, content=[]),
        _line("message", "u2", "a1", message={"role": "user", "content": "again"}),
        turn("a2", "u2", stopReason="aborted", content=[{"type": "text", "text": aborted}]),
    ]
    source = tmp_path / "s.jsonl"
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    source.write_text(lines, encoding="utf-8")
    out = tmp_path / "p.html"
    out.write_text(render_session(load_session(source)), encoding="utf-8")
    page.goto(out.as_uri())
    assert misdrawn(page, expected=(error, aborted), skip="main") == []
