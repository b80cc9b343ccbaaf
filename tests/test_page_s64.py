"""Stop 64 (CI): the outline's current row follows the reader's scrolling with a look 300 ms
after it, but on a busy machine entries off screen took their real heights seconds later
(content-visibility), moving another entry to the middle of the screen without any scroll:
the current row stayed on the entry that had been there. It now follows the transcript's
height changes while it follows the scrolling, and not after a jump or a click."""

from __future__ import annotations

from typing import Any

from tests.browser_util import PageServer, Viewer, after_frames, after_page_timers, render_fixture

pytest_plugins = ["tests.browser_util"]

V1_COMPACTION = "pi-v1-before-compaction.jsonl"

#: The entry being read, found as the page finds it, and the outline's current row.
MIDDLE_AND_CURRENT = """() => {
  const c = document.querySelector('#transcript').getBoundingClientRect();
  const row = document.querySelector('#tree li.current > a');
  const current = row && row.getAttribute('href').slice(1);
  // the entry being read: at the middle, or, when the middle falls between two entries (or
  // on a fork's summary), the nearest one a little below or above it, as the page takes it
  for (let step = 0; step <= 120; step += 12) {
    for (const sign of [1, -1]) {
      for (let x = c.left + Math.min(40, c.width / 2); x < c.right; x += c.width / 4) {
        const hit = document.elementFromPoint(x, innerHeight / 2 + sign * step);
        const entry = hit && hit.closest('[data-entry-id]');
        if (entry) return [entry.id, current];
      }
    }
  }
  return [null, current];
}"""

#: A late layout that no scroll answers: an entry far above the middle grows by 3,000 px
#: (scroll anchoring off, as it was for the entries that took their heights late in CI).
GROW_ABOVE = """() => {
  for (const el of [document.documentElement, document.body]) el.style.overflowAnchor = 'none';
  const first = document.querySelector('#transcript [data-entry-id]');
  first.style.minHeight = (first.getBoundingClientRect().height + 3000) + 'px';
}"""

READER_SCROLLS = "d => { dispatchEvent(new WheelEvent('wheel')); scrollBy(0, d); }"


def _followed(page: Any) -> bool:
    entry, row = page.evaluate(MIDDLE_AND_CURRENT)
    return bool(entry) and entry == row


def _scrolled_by_the_reader(viewer: Viewer, page_server: PageServer) -> Any:
    """The v1 page scrolled 20,000 px by the reader, its current row following, and the
    follow's look again (300 ms on) done."""
    url = page_server.publish("s64-v1.html", render_fixture(V1_COMPACTION))
    page = viewer.open(url, viewport={"width": 1280, "height": 900})
    column = page.eval_on_selector("#transcript", "e => e.getBoundingClientRect().left")
    page.mouse.move(column + 100, 400)
    page.evaluate(READER_SCROLLS, 20000)
    page.wait_for_function(
        f"() => {{ const [e, r] = ({MIDDLE_AND_CURRENT})(); return e && e === r; }}"
    )
    after_page_timers(page, 400)
    assert _followed(page)
    return page


def test_the_current_row_follows_entries_that_take_their_height_late(
    viewer: Viewer, page_server: PageServer
) -> None:
    page = _scrolled_by_the_reader(viewer, page_server)
    before = page.evaluate(MIDDLE_AND_CURRENT)[0]
    page.evaluate(GROW_ABOVE)
    after_frames(page, 3)
    middle, current = page.evaluate(MIDDLE_AND_CURRENT)
    assert middle != before  # the layout moved another entry to the middle, without a scroll
    assert current == middle
    viewer.assert_clean()


def test_a_clicked_row_stays_current_when_the_transcript_changes_height(
    viewer: Viewer, page_server: PageServer
) -> None:
    page = _scrolled_by_the_reader(viewer, page_server)
    row = "#tree li:not(.sub):not(.hide-default) > a >> nth=2"
    clicked = page.get_attribute(row, "href")[1:]
    page.click(row)
    after_page_timers(page, 1100)  # past the second the page's own jump is told apart
    page.evaluate(GROW_ABOVE)
    after_frames(page, 3)
    assert page.evaluate(MIDDLE_AND_CURRENT)[1] == clicked
    viewer.assert_clean()
