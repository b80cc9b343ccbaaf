"""Stop 63 (helper hunt: the outline's current row), checked in Chromium: two branches deep
the entry at mid-screen was never found (its column was the branches' indent), so the
current row stopped following the reader, Tab out of the outline sent them to the page's
title and a narrow screen's "Outline" link opened the outline at the wrong row; and a jump
into a folded branch near a long outline's end left the current row thousands of pixels
below the sidebar's edge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from tests.browser_util import (
    PageServer,
    Viewer,
    after_frames,
    after_page_timers,
    render_fixture,
)
from tests.conftest import Build, dump_lines

pytest_plugins = ["tests.browser_util"]

BRANCHED = "pi-branched-1.jsonl"
#: A tool call two branches deep in pi-branched-1, with more such entries below it.
DEEP_ENTRY = "0e36d628"
#: A small tablet: the outline folds away above the transcript, reached by the floating
#: "Outline" link, and branches indent as on a wide screen (a phone indents them 2 px).
TABLET = {"viewport": {"width": 800, "height": 1000}, "is_mobile": True, "has_touch": True}

#: The page's reveal stops re-placing its target and ignores scrolling for 1 s after a jump.
AFTER_JUMP_MS = 1100
#: Longer than the look again page.js takes 300 ms after the reader's scrolling.
AFTER_FOLLOW_MS = 400

SCROLL_STOPPED = """() => new Promise(done => {
  let last = scrollY, still = 0;
  const look = () => { still = scrollY === last ? still + 1 : 0; last = scrollY;
    still >= 20 ? done() : requestAnimationFrame(look); };
  requestAnimationFrame(look);
})"""

#: The entries whose box reaches the band around the middle of the screen page.js reads.
ENTRIES_AT_MIDDLE = """() => Array.from(document.querySelectorAll('#transcript [data-entry-id]'))
  .filter(e => { const r = e.getBoundingClientRect(), mid = innerHeight / 2;
    return r.height > 0 && r.top <= mid + 120 && r.bottom >= mid - 120; }).map(e => e.id)"""

CURRENT_ROW = "document.querySelector('#tree li.current > a').getAttribute('href').slice(1)"


def _depth(page: Any, entry_id: str) -> int:
    """How many branch blocks hold the entry."""
    return page.evaluate(
        """id => { let d = 0; for (let p = document.getElementById(id); p; p = p.parentElement)
          if (p.matches('details.branch')) d++; return d; }""",
        entry_id,
    )


def _scroll_by_wheel(page: Any, times: int, delta: int) -> None:
    """The reader's own scrolling, over the transcript, until the page stops moving."""
    after_page_timers(page, AFTER_JUMP_MS)
    page.mouse.move(page.viewport_size["width"] * 0.7, page.viewport_size["height"] / 2)
    for _ in range(times):
        page.mouse.wheel(0, delta)
        page.evaluate(SCROLL_STOPPED)
    after_page_timers(page, AFTER_FOLLOW_MS)


def _deep_and_scrolled(viewer: Viewer, page_server: PageServer) -> Any:
    """pi-branched-1, jumped into a branch within a branch and scrolled on by three turns
    of the wheel: the entries read there are two branches deep too."""
    url = page_server.publish("s63-deep.html", render_fixture(BRANCHED))
    page = viewer.open(f"{url}#{DEEP_ENTRY}", viewport={"width": 1280, "height": 720})
    assert _depth(page, DEEP_ENTRY) == 2
    _scroll_by_wheel(page, 3, 600)
    at_middle = page.evaluate(ENTRIES_AT_MIDDLE)
    assert at_middle and DEEP_ENTRY not in at_middle
    assert all(_depth(page, entry) >= 2 for entry in at_middle), at_middle
    return page


def test_the_current_row_follows_the_reader_two_branches_deep(
    viewer: Viewer, page_server: PageServer
) -> None:
    """The current row stayed on the entry jumped to, 1,645 px above the screen: the one
    column looked at for the entry at mid-screen was the branches' indent."""
    page = _deep_and_scrolled(viewer, page_server)
    current = page.evaluate(CURRENT_ROW)
    assert current in page.evaluate(ENTRIES_AT_MIDDLE), current
    viewer.assert_clean()


def test_tab_out_of_the_outline_two_branches_deep_stays_at_the_entry_read(
    viewer: Viewer, page_server: PageServer
) -> None:
    """Tab out of the outline goes to the entry being read; two branches deep none was
    found, and the focus went to the page's title, scrolling the reader to the top."""
    page = _deep_and_scrolled(viewer, page_server)
    at_middle, reading_at = page.evaluate(ENTRIES_AT_MIDDLE), page.evaluate("scrollY")
    assert reading_at > 5000
    page.focus(".filters label[tabindex='0']")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#tree') !== null")
    page.keyboard.press("Tab")
    page.evaluate(SCROLL_STOPPED)
    focused = page.evaluate(
        """() => { const f = document.activeElement, r = f.getBoundingClientRect();
          return [f.tagName, f.id, r.bottom > 0 && r.top < innerHeight, scrollY]; }"""
    )
    _, entry_id, shown, scroll_y = focused
    assert abs(scroll_y - reading_at) < 5, (reading_at, focused)
    assert entry_id in at_middle and shown, (at_middle, focused)
    viewer.assert_clean()


def test_the_outline_link_on_a_tablet_opens_at_the_entry_read_two_branches_deep(
    viewer: Viewer, page_server: PageServer
) -> None:
    """On a narrow screen the floating "Outline" link opens the outline at the entry being
    read; two branches deep no entry was found there, and the outline opened at the row of
    the entry jumped to long before."""
    url = page_server.publish("s63-deep-tablet.html", render_fixture(BRANCHED))
    page = viewer.open(f"{url}#{DEEP_ENTRY}", **TABLET)
    assert page.is_visible(".outline-toggle")
    _scroll_by_wheel(page, 4, 500)
    at_middle = page.evaluate(ENTRIES_AT_MIDDLE)
    assert at_middle and DEEP_ENTRY not in at_middle
    assert all(_depth(page, entry) >= 2 for entry in at_middle), at_middle
    page.evaluate("document.querySelector('.to-outline').click()")
    after_frames(page, 3)
    current = page.evaluate(CURRENT_ROW)
    assert current in at_middle, (current, at_middle)
    row_shown = page.evaluate(
        """() => { const r = document.querySelector('#tree li.current > a').getBoundingClientRect();
          const s = document.querySelector('#sidebar').getBoundingClientRect();
          return r.height > 0 && r.top >= Math.max(s.top, 0)
            && r.bottom <= Math.min(s.bottom, innerHeight); }"""
    )
    assert row_shown
    viewer.assert_clean()


def _long_outline_with_a_folded_branch_at_its_end(tmp_path: Path) -> tuple[str, str]:
    """A page whose outline comes in chunks, one of the last two holding a fork whose other
    branch (folded in the outline) is longer than a chunk's placeholder height; and the id
    of that branch's last entry."""
    lines: list[dict[str, Any]] = [Build.header()]
    turns, fork_at, branch_turns = 500, 495, 200
    second = 0

    def turn(prefix: str, n: int, parent: str | None) -> str:
        nonlocal second
        second += 2
        lines.append(Build.user(f"{prefix}u{n}", parent, f"{prefix} prompt {n}", second=second))
        lines.append(Build.assistant(f"{prefix}a{n}", f"{prefix}u{n}", "ok", second=second + 1))
        return f"{prefix}a{n}"

    parent = None
    for n in range(fork_at):
        parent = turn("m", n, parent)
    fork = parent
    for n in range(branch_turns):  # an abandoned try, written before the line goes on
        parent = turn("b", n, parent if n else fork)
    last_in_branch = f"ba{branch_turns - 1}"
    parent = fork
    for n in range(fork_at, turns):
        parent = turn("m", n, parent)
    path = tmp_path / "s63-chunks.jsonl"
    path.write_bytes(dump_lines(lines))
    return render_session(load_session(path), RenderOptions()), last_in_branch


def test_a_jump_into_a_folded_branch_at_a_long_outlines_end_keeps_its_row_in_view(
    viewer: Viewer, page_server: PageServer, tmp_path: Path
) -> None:
    """The outline scrolled to the row once, while the chunk holding it still had its
    placeholder height (the branch unfolded inside it did not count yet): the sidebar
    could not scroll that far, and once the chunk took its real height the current row
    lay thousands of pixels below the sidebar's edge."""
    html, target = _long_outline_with_a_folded_branch_at_its_end(tmp_path)
    url = page_server.publish("s63-chunks.html", html)
    page = viewer.open(url, viewport={"width": 1280, "height": 720})
    assert page.locator("#tree li.chunk").count() >= 5
    row = f'#tree a[href="#{target}"]'
    chunks_after = page.evaluate(
        """sel => { const chunks = Array.from(document.querySelectorAll('#tree li.chunk'));
          const own = document.querySelector(sel).closest('li.chunk');
          return chunks.length - 1 - chunks.indexOf(own); }""",
        row,
    )
    assert chunks_after in (0, 1)  # the outline ends less than a placeholder's height below it
    assert not page.is_visible(row)  # folded in the outline until the jump
    page.evaluate("id => { location.hash = id; }", target)
    after_frames(page, 40)
    placed = page.evaluate(
        """sel => { const a = document.querySelector(sel), r = a.getBoundingClientRect();
          const s = document.querySelector('#sidebar').getBoundingClientRect();
          return {current: a.parentElement.classList.contains('current'), top: r.top,
                  bottom: r.bottom, sideTop: s.top, sideBottom: s.bottom}; }""",
        row,
    )
    assert placed["current"], placed
    assert placed["sideTop"] <= placed["top"] and placed["bottom"] <= placed["sideBottom"], placed
    viewer.assert_clean()
