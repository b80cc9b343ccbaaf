"""Markdown export: the gaps a hunt with GitHub's own parser (cmark-gfm) found in ``prose``.

Each text comes from a reproducer that made a live ``<img src=https://tracker…>`` or a
hijacked link on GitHub; markdown-it (the project's parser) read most of them as code, so
the checks are on the exported text itself, and on markdown-it's rendering with HTML on.
"""

from __future__ import annotations

import re

import pytest

from exporter.markdown_doc import session_markdown
from exporter.markdown_text import escaped, prose
from tests.test_markdown_export import UNFILTERED, VIEWER, _answer, _crafted, _text

PIXEL = '<img src="https://tracker.example/pixel.png">'


def _no_live_tag(said: str) -> None:
    """No raw tag is left in the text at all (in a code span or not), and markdown-it with
    HTML on makes no image or link to the tracker."""
    assert "<img" not in said and "&lt;img" in said, said
    html = UNFILTERED.render(said)
    assert "<img" not in html and 'href="https://tracker' not in html, html


@pytest.mark.parametrize(
    "text",
    [
        f"see https://example.com/y\u00a0`{PIXEL}`",  # item 5: a no-break space
        f"see https://example.com/y\u00a0`\n{PIXEL}`",
    ],
    ids=["nbsp", "nbsp-next-line"],
)
def test_a_no_break_space_does_not_end_a_web_address(text: str) -> None:
    """GitHub ends a bare address only at ASCII whitespace (or a "<"): it took the
    backtick after a no-break space into the link, and the tag after it was live."""
    _no_live_tag(prose(text, 3))


def test_a_remote_image_after_a_no_break_space_is_a_link() -> None:
    said = prose("see https://example.com/y\u00a0`\n![](https://tracker.example/pixel.png)`", 3)
    assert "\\![](https://tracker.example/pixel.png)" in said, said


@pytest.mark.parametrize(
    "text",
    [
        f">www.example.com`{PIXEL}`",  # item 4: a quote with no space after ">"
        f"| site | note |\n|---|---|\n|www.example.com`{PIXEL}`| x |",  # a table cell
    ],
    ids=["quote", "table-cell"],
)
def test_a_www_address_right_after_a_quote_mark_or_a_pipe_is_seen(text: str) -> None:
    """GitHub links ``www.`` at the start of a quote's or a cell's text, backticks too."""
    _no_live_tag(prose(text, 3))


def test_an_escaped_angle_bracket_does_not_stretch_a_web_address() -> None:
    """Item 3: "<" written "&lt;" no longer ends GitHub's bare address, which then took in
    the double backticks the code span needed."""
    said = prose(f"Docs at https://example.com/a<b``{PIXEL}`` ok", 3)
    _no_live_tag(said)
    assert "https://example.com/a&lt;b" in said


def test_a_definition_split_over_lines_defines_nothing() -> None:
    """Item 7: markdown-it refused ``[1\\n]: https://evil.example/phish(`` (the "(" is not
    closed), so it stayed as written; GitHub took it as a definition, and the user's own
    "[1]" linked to it."""
    session = _crafted(
        {"message": {"role": "user", "content": "Per the spec [1], fix the parser."}},
        _answer(_text("Sources below.\n\n[1\n]: https://evil.example/phish(\n")),
    )
    document = session_markdown(session)
    assert "]\\: https://evil.example/phish(" in document
    html = UNFILTERED.render(document + "\n\n[1]\n")
    assert not re.findall(r'href="https://evil', html), html
    assert "Per the spec [1], fix the parser." in html


def test_a_colon_after_a_bracket_in_code_is_as_written() -> None:
    said = prose("`a[0]: b` and\n\n```\n[x]: https://a.example\n```\n\nc[1]: d", 3)
    assert "`a[0]: b`" in said and "\n[x]: https://a.example\n" in said
    assert said.endswith("c[1]\\: d")


@pytest.mark.parametrize(
    "text",
    [
        f"Changes:\n- renamed `old_name\n{PIXEL}\n` to new_name",  # item 1
        f"> `\n{PIXEL}\n`",
    ],
    ids=["list-item", "quote"],
)
def test_a_tag_on_a_lazy_continuation_line_is_text(text: str) -> None:
    """cmark starts an HTML block at a tag on a lazy continuation line; markdown-it read the
    line as a code span's text and left it raw."""
    _no_live_tag(prose(text, 3))


def test_a_text_that_never_settles_is_escaped_whole() -> None:
    """Item 2: escaping ``<div>`` moved the code span, and back, every round; the last
    round's spans were used for other text, and the tag in them was live on GitHub."""
    _no_live_tag(prose(f"a `\n<div>`{PIXEL}`", 3))


@pytest.mark.parametrize("fence", ["```", "````"])
def test_a_fence_left_open_in_a_text_that_never_settles_is_closed(fence: str) -> None:
    """Item 2: the open fence was taken from an earlier text than the one written, and
    was not closed: it took in the rest of the document, tool output as live Markdown."""
    said = prose(f"I'll inspect things: a `\n<div>` x\n{fence}", 3)
    document = f"{said}\n\n## Next\n\n{PIXEL}\n"
    html = UNFILTERED.render(document)
    assert "<h2>Next</h2>" in html and PIXEL in html, (said, html)


def test_indented_code_right_after_a_line_of_text_is_not_trusted() -> None:
    """Item 6: markdown-it made the last line indented code (it cannot interrupt a
    paragraph), so it was left as written; cmark reads it as the quote's paragraph."""
    text = f"Plan:\n> > step one\n    - {PIXEL}"
    _no_live_tag(prose(text, 3))
    _no_live_tag(prose(text.replace("    ", "\t"), 3))


def test_an_address_after_a_letter_is_escaped_text() -> None:
    """Item 8 (its first half): GitHub links neither "xhttps://" nor "xwww.", so the marks
    in them are markup unless escaped (a session name made a bold, struck title)."""
    said = escaped("xhttps://a.b/**BOLD**_em_ and xwww.a.b/**B**")
    assert said == "xhttps://a.b/\\*\\*BOLD\\*\\*\\_em\\_ and xwww.a.b/\\*\\*B\\*\\*"
    assert "<strong>" not in VIEWER.render(said) and "<em>" not in VIEWER.render(said)
    assert escaped("see https://a.b/x_y www.c.d/e_f") == "see https://a.b/x_y www.c.d/e_f"
