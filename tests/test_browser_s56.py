"""Stop 56: what a reader met on paper, in high contrast and in right-to-left text (a hunt
over print, forced colours and scripts off), each checked in real Chromium."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from tests.browser_util import PageServer, Viewer, load_fixture, render_fixture

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

IMAGES = "pi-branched-2.jsonl"  # its messages hold images
BRANCHED = "pi-branched-1.jsonl"


def _session(*texts: str, title: str = "") -> bytes:
    """A session of user prompts (each its own branch after the first: a Branches table)."""
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
              "cwd": "/w"}]  # fmt: skip
    for number, text in enumerate(texts):
        parent = None if number < 2 else "u0"
        lines.append({"type": "message", "id": f"u{number}", "parentId": parent,
                      "timestamp": f"2025-01-01T00:00:0{number + 1}Z",
                      "message": {"role": "user", "content": text}})  # fmt: skip
    if title:
        lines.append({"type": "session_info", "id": "n", "parentId": "u0", "name": title,
                      "timestamp": "2025-01-01T00:00:09Z"})  # fmt: skip
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in lines).encode("utf-8")


@pytest.fixture(scope="module")
def pages(page_server: PageServer) -> dict[str, str]:
    words = " | ".join(f"column_identifier_number_{n:02d}_with_no_breaks" for n in range(12))
    wide = f"| {words} |\n|{'---|' * 12}\n| {words} |\n"
    rtl = "מה שלומך? אני רוצה לתקן את הקובץ config.json (בבקשה)."
    return {
        IMAGES: page_server.publish("s56-images.html", render_fixture(IMAGES)),
        BRANCHED: page_server.publish("s56-branched.html", render_fixture(BRANCHED)),
        "wide": page_server.publish(
            "s56-wide.html", render_session(parse_session_bytes(_session(wide)))
        ),
        "rtl": page_server.publish(
            "s56-rtl.html", render_session(parse_session_bytes(_session(rtl, rtl + " שוב")))
        ),
    }


@pytest.mark.parametrize("js", [True, False], ids=["js", "no-js"])
def test_an_image_left_enlarged_prints_in_its_place(
    viewer: Viewer, pages: dict[str, str], js: bool
) -> None:
    """Printed while an image was enlarged, every page was 70% black with the image in
    its middle: it stayed fixed, its backdrop a shadow as big as the screen."""
    page = viewer.open(pages[IMAGES], js=js)
    label = page.locator("label.zoom:visible").first
    label.scroll_into_view_if_needed()
    label.click()
    assert page.evaluate("document.querySelector('.zoom-toggle:checked') !== null")
    if js:
        page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    page.emulate_media(media="print")
    style = page.evaluate(
        """(() => { const img = document.querySelector('.zoom-toggle:checked + img');
                    const s = getComputedStyle(img), z = getComputedStyle(img.parentElement);
                    return [s.position, s.boxShadow, z.position]; })()"""
    )
    assert style == ["static", "none", "static"], style
    viewer.assert_clean()


def test_a_table_of_long_identifiers_fits_the_paper(viewer: Viewer, pages: dict[str, str]) -> None:
    """Cells of unbreakable words: the table ran past the paper's edge (3,059 px in a
    718 px column), and its right-hand columns were not printed."""
    page = viewer.open(pages["wide"], viewport={"width": 760, "height": 1000})
    page.emulate_media(media="print")
    table, column = page.evaluate(
        """(() => { const t = document.querySelector('.md table');
                    return [t.querySelector('tr').getBoundingClientRect().right,
                            t.closest('.md').getBoundingClientRect().right]; })()"""
    )
    assert table <= column + 1, (table, column)
    page.emulate_media(media="screen")  # on screen it scrolls, as wide tables do
    assert page.evaluate("document.querySelector('.md table').scrollWidth") > column
    viewer.assert_clean()


def test_a_right_to_left_title_and_first_prompt_read_right_to_left(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """A Hebrew prompt titled the page and its branch, laid out left to right: its last
    word and full stop came first for a reader of Hebrew."""
    page = viewer.open(pages["rtl"])
    directions = page.evaluate(
        """[document.querySelector('h1'),
            document.querySelector('table.branches td:nth-child(3) a')]
             .map(e => getComputedStyle(e).direction)"""
    )
    assert directions == ["rtl", "rtl"]
    # the first word is the rightmost: the title starts at its right-hand side
    first, stop = page.evaluate(
        """(() => { const h = document.querySelector('h1').firstChild, r = document.createRange();
                    r.setStart(h, 0); r.setEnd(h, 2); const a = r.getBoundingClientRect().left;
                    r.setStart(h, h.length - 1); r.setEnd(h, h.length);
                    return [a, r.getBoundingClientRect().left]; })()"""
    )
    assert first > stop
    english = viewer.open(pages[BRANCHED])
    assert english.evaluate("getComputedStyle(document.querySelector('h1')).direction") == "ltr"
    viewer.assert_clean()


def test_narrow_paper_prints_no_skip_link_and_no_sticky_column(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """A5 paper (~480 px) took the phone layout: "Skip to the transcript" printed first,
    and the usage tables' Cost column stayed sticky."""
    page = viewer.open(pages[BRANCHED], viewport={"width": 480, "height": 800})
    page.emulate_media(media="print")
    skip = page.evaluate("getComputedStyle(document.querySelector('a.skip')).display")
    cost = page.evaluate(
        """getComputedStyle(document.querySelector(
             '#usage table:not(.tools, .files) td:last-child')).position"""
    )
    assert (skip, cost) == ("none", "static")
    viewer.assert_clean()


def test_in_high_contrast_the_entry_a_link_reached_is_marked(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """Without a script the entry a link lands on is marked by :target's ring, a shadow:
    forced colours drop shadows, so nothing showed which entry it was."""
    target = next(e.id for e in load_fixture(BRANCHED).entries if e.id[0].isalpha())
    page = viewer.open(f"{pages[BRANCHED]}#{target}", js=False, forced_colors="active")
    outline: Any = page.evaluate(
        f"getComputedStyle(document.getElementById({target!r})).outlineStyle"
    )
    assert outline not in ("none", ""), outline
    viewer.assert_clean()


@pytest.mark.parametrize("js", [True, False], ids=["js", "no-js"])
def test_a_short_window_s_outline_shows_rows_not_only_its_search_bar(
    viewer: Viewer, pages: dict[str, str], js: bool
) -> None:
    """At 400% zoom (320 x 256 CSS px) the opened outline's sticky search bar took 156 of
    its 200 px: one row showed, however far it scrolled. There the bar scrolls away."""
    rows_seen = """(() => { const s = document.getElementById('sidebar');
        s.scrollTop = s.scrollTop + 400; const box = s.getBoundingClientRect();
        const bar = document.querySelector('.side-top').getBoundingClientRect();
        const top = Math.max(box.top, bar.bottom);  // under the bar, where it covers them
        return [...s.querySelectorAll('#tree li:not(.sub) > a')].filter(a => {
          const r = a.getBoundingClientRect();
          return r.height > 0 && r.top >= top && r.bottom <= box.bottom; }).length; })()"""
    page = viewer.open(pages[BRANCHED], js=js, viewport={"width": 320, "height": 256})
    page.locator("label.outline-toggle").first.click()
    seen = page.evaluate(rows_seen)
    assert seen >= 5, seen
    tall = viewer.open(pages[BRANCHED], js=js, viewport={"width": 320, "height": 700})
    assert tall.evaluate("getComputedStyle(document.querySelector('.side-top')).position") == (
        "sticky"
    )
    viewer.assert_clean()
