"""Markdown keeps the text it was given: nothing a reader wrote disappears in rendering."""

from __future__ import annotations

import html as html_module
import json
import re

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from exporter.render.markup import markdown

SOURCES = (
    "Two sources agree [1][] and [docs][2].\n\n"
    '[1]: https://example.com/paper?a=1&b=2 "The paper"\n'
    "[2]: <https://docs.example/guide>\n"
    "[unused]: https://example.com/never-cited 'Unused title'"
)


def _visible(html: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", html))


def test_reference_definitions_stay_on_the_page() -> None:
    """markdown-it drops ``[1]: https://…`` lines (it only feeds ``[text][1]`` links), so an
    answer's source list vanished, an unused one with its address and every title."""
    html = markdown(SOURCES)
    text = _visible(html)
    assert '[1]: https://example.com/paper?a=1&b=2 "The paper"' in text
    assert "[2]: https://docs.example/guide" in text
    assert '[unused]: https://example.com/never-cited "Unused title"' in text
    assert 'href="https://example.com/never-cited"' in html  # still a link
    assert '<a href="https://docs.example/guide"' in html  # and [docs][2] still resolves
    assert ">docs</a>" in html


def test_a_definition_cannot_smuggle_markup_or_a_script_link() -> None:
    html = markdown('[a]: https://e.com/"onmouseover=x "<img src=x onerror=alert(1)>"')
    assert "<img" not in html and "onerror=alert(1)>" not in html.replace("&lt;", "")
    unsafe = markdown("[b]: javascript:alert(1)\n[c]: data:text/html,<b>x</b>")
    assert "href" not in unsafe and "javascript:alert(1)" in _visible(unsafe)
    assert "<b>" not in unsafe


def test_a_source_list_survives_in_every_kind_of_text() -> None:
    """In a prompt, an answer and a thinking block."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    answer = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": SOURCES}, {"type": "text", "text": SOURCES}],
        "provider": "p",
        "model": "m",
        "stopReason": "stop",
    }
    entries = [
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": SOURCES}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": "2025-01-01T00:00:02Z",
         "message": answer},
    ]  # fmt: skip
    data = "\n".join(json.dumps(line) for line in [header, *entries]).encode("utf-8")
    page = render_session(parse_session_bytes(data))
    transcript = page.split('id="content"', 1)[1]
    assert _visible(transcript).count('[unused]: https://example.com/never-cited "Unused') == 3


def test_a_definitions_address_is_shown_as_the_link_opens_it() -> None:
    """Shown decoded, a punycode host read as the name it imitates ("еxample" with a
    Cyrillic е): the text is now what the link opens."""
    html = markdown("[1]: https://xn--xample-2of.com/%41")
    assert ">https://xn--xample-2of.com/%41</a>" in html


def test_text_markdown_cannot_read_in_time_or_at_all_is_shown_plain_and_whole() -> None:
    """markdown-it-py takes 40-90 µs per "[" outside code (a pasted JSON array of 100,000
    took 4 s, 300,000 "![" a minute: security review 2026-12-01), and skips what nests past
    its limit without a word: both are shown as plain text with a note saying why."""
    crafted = "![" * 6_000 + " <b>bold?</b>"
    shown = str(markdown(crafted))
    assert "More than 5,000 “[” outside code blocks: shown as plain text" in shown
    assert html_module.unescape(re.sub(r"<[^>]+>", "", shown)).endswith(crafted)
    assert "<b>" not in shown
    nested = "\n".join("> " * n + f"level {n}" for n in range(1, 60))
    deep = str(markdown(nested))
    assert "Nested more than 50 levels deep: shown as plain text" in deep and "level 59" in deep
    # fenced code costs the parser nothing: a JSON array in a fence stays highlighted code
    fenced = "Here:\n```json\n" + "[1," * 6_000 + "\n```\nand [a link](https://example.com)."
    code = str(markdown(fenced))
    assert "md-note" not in code and '<a href="https://example.com"' in code


def test_a_long_prompt_shown_plain_still_folds_after_a_screen() -> None:
    pasted = "[1," * 100_000
    message = {"role": "user", "content": pasted}
    entry = {"type": "message", "id": "u1", "parentId": None, "message": message,
             "timestamp": "2025-01-01T00:00:01Z"}  # fmt: skip
    header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z"}'
    page = render_session(parse_session_bytes(f"{header}\n{json.dumps(entry)}".encode()))
    assert "shown as plain text, not Markdown" in page
    assert re.search(r"<summary[^>]*>[^<]*288,000 more characters of this message", page)
    parts = re.findall(r'<pre class="md-plain">(.*?)</pre>', page, re.DOTALL)
    assert len(parts) == 2 and html_module.unescape("".join(parts)) == pasted  # never cut
