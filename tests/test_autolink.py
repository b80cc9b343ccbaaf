"""Bare web addresses in Markdown become links where GitHub's Markdown (and Pi's page) makes
them, end where GitHub ends them, and never let another scheme or markup through."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from exporter.loader import load_session
from exporter.render import render_session
from exporter.render.markup import markdown


def _links(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<a href="([^"]*)" rel="noreferrer noopener">(.*?)</a>', html)


@pytest.mark.parametrize(
    ("text", "links"),
    [
        ("Here's a bare URL: https://github.com", [("https://github.com", "https://github.com")]),
        # sentence punctuation and an unmatched bracket stay outside; a matched one is kept
        (
            "see (https://en.wikipedia.org/wiki/Foo_(bar)) and www.example.com.",
            [
                (
                    "https://en.wikipedia.org/wiki/Foo_(bar)",
                    "https://en.wikipedia.org/wiki/Foo_(bar)",
                ),
                ("http://www.example.com", "www.example.com"),
            ],
        ),
        (
            "url http://localhost:3000/api?x=1.",
            [("http://localhost:3000/api?x=1", "http://localhost:3000/api?x=1")],
        ),
        ('he said "https://q.example/p" ok', [("https://q.example/p", "https://q.example/p")]),
        ("**https://bold.example**", [("https://bold.example", "https://bold.example")]),
        ("a_b https://x.example/a_b_ end", [("https://x.example/a_b", "https://x.example/a_b")]),
        (
            "HTTPS://EXAMPLE.COM/A?b=1&c=2, then",
            [("HTTPS://EXAMPLE.COM/A?b=1&amp;c=2", "HTTPS://EXAMPLE.COM/A?b=1&amp;c=2")],
        ),
        (
            "https://例え.jp/パス",
            [("https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9", "https://例え.jp/パス")],
        ),
        # a link's own text, code and an autolink are left as they are
        ("a [link https://x.com](https://y.com) b", [("https://y.com", "link https://x.com")]),
        ("<https://z.com>", [("https://z.com", "https://z.com")]),
        ("`https://code.example` x", []),
        ("```\nhttps://fenced.example\n```", []),
        # not addresses, or not ones a page should link
        ("ftp://files.example javascript://x https:// wwwx.com www.", []),
        ("glued:https://x.example mid-https://y.example", []),
        ("https://_under.example", []),
    ],
)
def test_bare_addresses(text: str, links: list[tuple[str, str]]) -> None:
    assert _links(markdown(text)) == links


def test_markup_after_an_address_stays_text() -> None:
    html = str(markdown('x https://a.example/<script>alert(1)</script> "><img src=x onerror=y>'))
    assert _links(html) == [("https://a.example/", "https://a.example/")]
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_text_around_an_address_is_kept_whole() -> None:
    html = str(markdown("before https://a.example/x, between www.b.example; after"))
    text = re.sub(r"<[^>]+>", "", html).strip()
    assert text == "before https://a.example/x, between www.b.example; after"


def test_the_demo_session_links_its_bare_url(tmp_path: Path) -> None:
    """Pi's page links the demo's "bare URL" sample; ours showed it as text."""
    demo = Path(__file__).parents[1] / "exporter" / "demo"
    (source,) = demo.glob("*.jsonl")
    page = render_session(load_session(source))
    entry = page[page.index('data-entry-id="9952f4ab"') :]
    entry = entry[: entry.index("</article>")]
    assert '<a href="https://github.com" rel="noreferrer noopener">https://github.com</a>' in entry


def test_an_address_in_pasted_json_ends_at_its_quote() -> None:
    """Minified JSON has no spaces: the address ran on through the quotes to the end of the
    line, as one giant link (a 98 KB pasted prompt could then no longer fold)."""
    html = str(markdown('{"url":"https://x.example/a","b":"www.y.example/q?x=1","n":2}'))
    assert _links(html) == [
        ("https://x.example/a", "https://x.example/a"),
        ("http://www.y.example/q?x=1", "www.y.example/q?x=1"),
    ]


def test_an_address_longer_than_any_real_one_stays_text() -> None:
    text = "x https://a.example/" + "b" * 5000 + " y https://ok.example"
    html = str(markdown(text))
    assert _links(html) == [("https://ok.example", "https://ok.example")]
    assert re.sub(r"<[^>]+>", "", html).strip() == text  # nothing lost around either


def test_trimming_what_follows_an_address_is_linear() -> None:
    """Each trimmed character sliced and counted the whole address again: an address
    followed by 200 KB of ")" took 13 s, 200 KB of "&a;" 45 s."""
    import time

    for tail in (")" * 200_000, "&a;" * 70_000):
        start = time.process_time()
        html = str(markdown("see https://a.example/p" + tail))
        assert time.process_time() - start < 2.0  # ~0.1 s now
        assert tail[:1000] in html.replace("&amp;", "&")  # all of it still there, as text
    many = str(markdown(("see https://a.example/p" + ")" * 2000 + " ") * 100))
    assert many.count('<a href="https://a.example/p"') == 100  # trimmed, each one linked


@pytest.mark.parametrize(
    "text",
    [
        "a https://x.example/" + "b" * 3000 + " c www.y.example d https://z.example/(p)) e",
        '{"u":"https://x.example/a","v":"www.' + "w" * 3000 + '.example"} then https://ok.example.',
        "see (https://x.example/a)), [www.y.example]; and https://z.example&amp; end",
    ],
)
def test_no_text_is_lost_or_doubled_around_addresses(text: str) -> None:
    """Whatever is linked or left, the paragraph's text reads as written."""
    import html as html_module

    rendered = str(markdown(text))
    assert html_module.unescape(re.sub(r"<[^>]+>", "", rendered)).strip() == html_module.unescape(
        text
    )
