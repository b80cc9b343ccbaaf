"""Stop 62 (helper hunt: accessibility and right-to-left text), checked in Chromium: a long
outline's rows were no list items, a Hebrew message's bullets and quote bar sat 720 px from
its words, a Hebrew prompt's outline row showed its end and cut its start, and printing
from a touch screen left a 44 px blank band atop every code block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from exporter.render.markup import markdown
from tests.browser_util import PageServer
from tests.conftest import Build, dump_lines

pytest_plugins = ["tests.browser_util"]

HEBREW_ANSWER = (
    "הנה הרשימה:\n\n- פריט ראשון\n- פריט שני\n\n1. שלב אחד\n2. שלב שני\n\n"
    "> ציטוט בעברית שמופיע כאן\n\nAnd in English:\n\n- first item\n\n> an English quote\n"
)
#: A prompt far longer than an outline row: its first and last words are told apart.
HEBREW_PROMPT = "התחלה " + " ".join(["מילה"] * 40) + " סוף"


def _render(tmp_path: Path, name: str, turns: list[tuple[str, str]]) -> str:
    """A page of real session file lines: one user prompt and one answer per turn."""
    lines: list[dict[str, Any]] = [Build.header()]
    parent = None
    for n, (prompt, answer) in enumerate(turns):
        lines.append(Build.user(f"u{n}", parent, prompt, second=2 * n + 1))
        lines.append(Build.assistant(f"a{n}", f"u{n}", answer, second=2 * n + 2))
        parent = f"a{n}"
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(dump_lines(lines))
    return render_session(load_session(path), RenderOptions())


def test_a_chunked_outlines_rows_are_list_items_to_chromium(
    pw_browser: Any, page_server: PageServer, tmp_path: Path
) -> None:
    """pi-large-session's 1,018 rows were 0 list items: a chunk's ``ul role="none"`` made
    Chromium drop the listitem role of every row in it (axe: "list", serious). Each chunk
    is now a list of its rows; nothing between a row and its list."""
    turns = [(f"prompt {n}", f"answer {n}") for n in range(300)]  # 600 rows: chunked
    url = page_server.publish("s62-chunks.html", _render(tmp_path, "chunks", turns))
    page = pw_browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url, wait_until="load")
        assert page.locator("#tree li.chunk").count() >= 2
        rows = page.locator("#tree li:not(.sub, .chunk) > a").count()
        assert rows == 600
        assert page.locator("#tree").get_by_role("listitem").count() == rows
        # Chromium's own tree: the first chunk's list and its items, as a reader meets them
        cdp = page.context.new_cdp_session(page)
        root = cdp.send("DOM.getDocument")["root"]["nodeId"]
        first = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "#tree > li > ul"})
        node = cdp.send("DOM.describeNode", {"nodeId": first["nodeId"]})["node"]
        query = {"backendNodeId": node["backendNodeId"], "role": "listitem"}
        items = cdp.send("Accessibility.queryAXTree", query)["nodes"]
        in_first = page.locator("#tree > li:first-child > ul > li:not(.sub)").count()
        assert in_first > 100 and len(items) == in_first
        query["role"] = "list"
        assert len(cdp.send("Accessibility.queryAXTree", query)["nodes"]) == 1
    finally:
        page.close()


def test_a_right_to_left_lists_markers_and_quote_bar_sit_beside_its_words(
    pw_browser: Any, page_server: PageServer, tmp_path: Path
) -> None:
    """A Hebrew list's bullets and numbers and a Hebrew quote's bar were on the left, ~720 px
    from their right-aligned words; an English list and quote keep theirs on the left."""
    html = _render(tmp_path, "rtl", [("תן לי רשימה בבקשה", HEBREW_ANSWER)])
    url = page_server.publish("s62-rtl.html", html)
    page = pw_browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url, wait_until="load")
        sides = page.evaluate(
            """() => [...document.querySelectorAll('#a0 .md :is(ul, ol, blockquote)')]
                 .map(block => {
                   const box = block.getBoundingClientRect(), css = getComputedStyle(block);
                   const first = block.querySelector(':scope > li') || block;
                   const item = first.getBoundingClientRect();
                   return [block.textContent.trim().slice(0, 12), css.direction,
                           Math.round(box.right - item.right), Math.round(item.left - box.left),
                           css.borderRightWidth, css.borderLeftWidth]; })"""
        )
        assert len(sides) == 5, sides
        for words, direction, right_gap, left_gap, bar_right, bar_left in sides[:3]:
            assert direction == "rtl", words
            if words.startswith("ציטוט"):  # the quote's bar at its right, beside its words
                assert (bar_right, bar_left) == ("3px", "0px"), words
            else:  # the markers' room is on the right, where the item's words start
                assert right_gap >= 16 and left_gap == 0, (words, right_gap, left_gap)
        for words, direction, right_gap, left_gap, _, bar_left in sides[3:]:
            assert direction == "ltr", words
            assert right_gap == 0 and (left_gap >= 16 or bar_left == "3px"), words
    finally:
        page.close()
    # what left-to-right text costs: not a byte (pi-large-session's page stays its size)
    assert "dir=" not in str(markdown("- an item\n  - nested\n\n1. one\n\n> a quote\n"))


def test_a_left_to_right_list_inside_a_right_to_left_one_says_so() -> None:
    """A block says its direction only where it differs from the one around it: an English
    list inside a Hebrew one would inherit right to left. An outline row is judged by its
    prompt, not by the page's "user: " before it."""
    from exporter.render.markup import text_direction  # (new here: the tests above run before)
    from exporter.render.view import row_direction

    html = str(markdown("- פריט\n  - english item\n  - another\n"))
    assert html.startswith('<ul dir="rtl">') and '<ul dir="ltr">' in html
    assert text_direction("42. \u2067abc\u2069 שלום") == "rtl"  # an isolate's words are skipped
    assert text_direction("1, 2 - 3") is None
    assert row_direction("skill: pdf · user: שלום") == "rtl"
    assert row_direction("user: fix the באג") == "ltr"  # the prompt's own first letter


def test_a_right_to_left_prompts_outline_row_shows_its_start(
    pw_browser: Any, page_server: PageServer, tmp_path: Path
) -> None:
    """A Hebrew prompt's row was laid out left to right and cut at its right edge: the
    right-to-left run's first words fell outside the row and its last words showed. Its
    first word now shows; the row's cut-off end is the prompt's end."""
    html = _render(tmp_path, "rtl-row", [(HEBREW_PROMPT, "ok"), ("an English prompt", "ok")])
    url = page_server.publish("s62-rtl-row.html", html)
    page = pw_browser.new_page(viewport={"width": 1280, "height": 600})
    try:
        page.goto(url, wait_until="load")
        where = page.evaluate(
            """() => {
              const a = document.querySelector('#tree a[href="#u0"]');
              const box = a.getBoundingClientRect();
              // the text node that holds the word (the prompt's words are in a <bdi>)
              const holding = word => {
                const walk = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
                for (let n = walk.nextNode(); n; n = walk.nextNode())
                  if (n.data.includes(word)) return n;
                return null;
              };
              const place = word => {
                const node = holding(word), r = document.createRange();
                const at = node.data.indexOf(word);
                r.setStart(node, at); r.setEnd(node, at + word.length);
                const rect = r.getBoundingClientRect();
                return rect.left >= box.left && rect.right <= box.right;
              };
              return [a.scrollWidth > a.clientWidth, place('התחלה'),
                      getComputedStyle(a).direction,
                      getComputedStyle(document.querySelector('#tree a[href="#u1"]')).direction];
            }"""
        )
        assert where == [True, True, "rtl", "ltr"]  # cut, yet its first word in view
    finally:
        page.close()


def test_printing_from_a_touch_screen_leaves_no_band_atop_code(
    pw_browser: Any, page_server: PageServer, tmp_path: Path
) -> None:
    """On a touch screen a code block makes room above its code for its Copy button; paper
    has no button, yet kept the 44 px blank band atop every code block."""
    answer = "Here:\n\n```python\nprint('hello')\n```\n"
    url = page_server.publish("s62-code.html", _render(tmp_path, "code", [("code?", answer)]))
    context = pw_browser.new_context(
        viewport={"width": 390, "height": 800}, is_mobile=True, has_touch=True
    )
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.wait_for_selector(".code > .copy-btn", state="attached")
        padding = "getComputedStyle(document.querySelector('.code')).paddingTop"
        assert page.evaluate(padding) == "44px"  # on screen: room for the button
        page.emulate_media(media="print")
        assert page.evaluate(padding) == "8px"
    finally:
        context.close()
