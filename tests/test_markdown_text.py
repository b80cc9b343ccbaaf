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
