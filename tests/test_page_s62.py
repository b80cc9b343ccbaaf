"""Stop 62: an answer, a branch summary or an extension's message holding a huge word (a
pasted blob, a minified file on one line) kept the page blank for seconds while Chromium laid
the word out (19 s for 2,000,000 characters), where a prompt holding the same was folded after
its first screen."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from tests.conftest import Build, dump_lines

_TAG = re.compile(r"<[^>]+>")


def _text(markup: str) -> str:
    return html.unescape(_TAG.sub("", markup))


def _blob(length: int) -> str:
    """A word of `length` characters with no space: base64-like, as a pasted image is."""
    return ("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * (length // 35 + 1))[:length]


def _entry(kind: str, said: str) -> dict[str, Any]:
    """An entry of `kind` shown open on the page, saying `said`, with id a1."""
    if kind == "answer":
        return Build.assistant("a1", "u1", text=said)
    stamp = {"id": "a1", "parentId": "u1", "timestamp": "2025-01-01T00:00:02.000Z"}
    if kind == "extension message":
        return {"type": "custom_message", **stamp, "customType": "x", "content": said,
                "display": True}  # fmt: skip
    return {"type": "branch_summary", **stamp, "fromId": "u1", "summary": said}


@pytest.mark.parametrize("kind", ["answer", "extension message", "branch summary"])
def test_a_text_with_a_huge_word_shows_its_first_screen_and_folds_the_rest(
    tmp_path: Any, kind: str
) -> None:
    word = _blob(2_000_000)
    lines = [
        Build.header(),
        Build.user("u1", None, "show me"),
        _entry(kind, f"the file is: {word} (end)"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(dump_lines(lines))
    page = render_session(load_session(path), RenderOptions(embed_jsonl=False))
    entry = page[page.index('data-entry-id="a1"') :]
    fold = entry.index('<details class="fold fold-after prose">')
    shown = _text(entry[:fold])
    assert "the file is:" in shown and len(shown) < 20_000, len(shown)
    folded = entry[fold : entry.index("</details>", fold)]
    summary, rest = folded.split("</summary>", 1)
    assert summary.endswith("more characters of this message")
    whole = (shown + _text(rest)).replace("\n", "")
    assert word in whole  # nothing cut away: the word is whole across the two parts
    assert whole.endswith("(end)")


def test_long_answers_of_ordinary_words_show_whole() -> None:
    from exporter.render.entry_views import HUGE_WORD, _prose_html

    long_prose = "\n\n".join(f"Paragraph {n}: " + "some words " * 60 for n in range(300))
    almost = "before " + _blob(HUGE_WORD - 1) + " after"
    for text in (long_prose, almost):
        markup = str(_prose_html(text))
        assert "<details" not in markup
        assert "Paragraph 299" in markup or "after" in markup
