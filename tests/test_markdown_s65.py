"""Stop 65: a character reference at the end of a bare web address in a title or heading
("docs at https://a.b/x&gt; done") was left out of GitHub's link and then read as a
reference, so the reader saw "https://a.b/x> done", not the text as written."""

from __future__ import annotations

import html
import re

import pytest

from exporter.markdown_text import escaped
from tests.test_markdown_s60 import github


def _seen(markdown: str) -> str:
    """What a reader of GitHub's rendering sees: the text, tags gone, references read."""
    return html.unescape(re.sub(r"<[^>]+>", "", github(markdown))).strip()


@pytest.mark.parametrize(
    "text",
    [
        "docs at https://a.b/x&gt; done",
        "https://a.b/x&amp;&lt;. then",
        "see https://a.b/x&gt;) after",
        "https://a.b/?a=1&b=2 and more",
        "R&amp;D at https://a.b/c",
        "https://a.b/x; end",
    ],
)
def test_a_bare_address_with_a_reference_at_its_end_reads_as_written(text: str) -> None:
    assert _seen(escaped(text)) == text
    assert 'href="https://a.b/' in github(escaped(text))  # still a link


def test_a_reference_inside_the_address_stays_as_written() -> None:
    """Written as <autolink> for its tail, "?a=1&amp;b=2" inside read as "?a=1&b=2"
    (review 2026-12-07): such an address stays bare, its middle as written."""
    text = "see https://a.b/?a=1&amp;b=2&gt; then"
    assert "a=1&amp;b=2" in _seen(escaped(text))


def test_a_long_address_of_references_is_read_in_one_pass() -> None:
    """The tail is read from the end: a run of references costs one pass, not one per."""
    text = "https://a.b/" + "&a;" * 50_000 + "x"
    assert escaped(text) == text
