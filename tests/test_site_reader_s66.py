"""Site index, stop 66, as a reader sees it: Back from a session page keeps the sort, the
text search and the matches listed, and the page where the reader left it (Chrome reloads a
file:// page, its back-forward cache keeps http(s) pages only); a printed index says what
was filtered and searched; the filter's count writes costs as the rows do and counts the
rows of files that could not be read; with JavaScript off the caption does not promise
sorting; the header's "1 failed" link lands on the failed row, which shows no last activity;
a wrapped matching prompt's bullet sits on its first line on a phone.

The site is opened from file:// in Chromium (skipped without it unless CI is set; see
tests/browser_util.py).
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import encode_cwd, session_files
from exporter.formatting import fmt_cost
from exporter.site import build_site

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

ALPHA, BETA = "/home/dev/alpha", "/home/dev/beta"
SESSIONS = 36  # enough rows that the table scrolls by several screens
NEEDLES = 12  # the prompts of session 7 that say "needle": more than the 5 listed at first
#: Sessions whose costs the filter's count must write as the rows do: word -> cost.
PRICED = {"tinyword": 0.00004, "almostword": 0.9996, "subcentword": 0.00996, "tieword": 1.125}

#: When the unreadable file was last changed (its row says so): 2026-09-01 12:00 UTC.
BROKEN_CHANGED = 1788264000

Turn = tuple[str, str, float]  # role, text, cost of an answer


def write_session(root: Path, cwd: str, number: int, title: str, turns: list[Turn]) -> Path:
    """A Pi session named ``title`` of project ``cwd``, its day set by ``number`` (so the
    rows' order by last activity is known), in Pi's layout under ``root``."""
    sid = f"5e55{number:04d}-0000-4000-8000-000000000000"
    day = f"2026-10-{1 + number % 28:02d}T{number // 28:02d}"
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": sid, "timestamp": f"{day}:00:00.000Z", "cwd": cwd},
        {"type": "session_info", "id": f"n{number:07d}", "parentId": None, "name": title}
        | {"timestamp": f"{day}:00:00.500Z"},
    ]
    parent = lines[-1]["id"]
    for n, (role, text, cost) in enumerate(turns):
        entry: dict[str, Any] = {
            "type": "message",
            "id": f"{number:04d}{n:04x}",
            "parentId": parent,
        }
        entry["timestamp"] = f"{day}:{n // 60:02d}:{n % 60:02d}.000Z"
        content = [{"type": "text", "text": text}]
        if role == "user":
            entry["message"] = {"role": "user", "content": content, "timestamp": 0}
        else:
            usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}
            usage["cost"] = {"input": 0, "output": cost, "cacheRead": 0, "cacheWrite": 0}
            usage["cost"]["total"] = cost
            entry["message"] = {"role": "assistant", "content": content, "usage": usage}
            entry["message"] |= {"provider": "anthropic", "model": "claude-sonnet-4-5"}
        lines.append(entry)
        parent = entry["id"]
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{day}-00-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def make_sessions(root: Path) -> None:
    """36 sessions in two projects, their costs in another order than their days; session 7
    says "needle" 12 times, every fourth once; the four priced ones; one unreadable file."""
    for number in range(SESSIONS):
        cost = round(((number * 7) % SESSIONS + 1) * 0.13, 6)
        turns: list[Turn] = [("user", f"question {number} about the widget", 0.0)]
        turns.append(("assistant", f"answer {number}", cost))
        if number == 7:
            for k in range(NEEDLES):
                turns += [("user", f"needle prompt {k}", 0.0), ("assistant", f"done {k}", 0.0)]
        elif number % 4 == 0:
            turns += [("user", f"one needle in session {number}", 0.0), ("assistant", "ok", 0.0)]
        write_session(root, ALPHA if number % 2 else BETA, number, f"Session {number:02d}", turns)
    for offset, (word, cost) in enumerate(PRICED.items()):
        turns = [("user", f"the {word} question", 0.0), ("assistant", "ok", cost)]
        write_session(root, ALPHA, SESSIONS + offset, f"Priced {word}", turns)
    broken = root / encode_cwd(BETA) / "2026-09-01T00-00-00-000Z_unreadablething.jsonl"
    broken.write_bytes(b"\x00\x01 this is not JSON\n")
    os.utime(broken, (BROKEN_CHANGED, BROKEN_CHANGED))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("reader-site")
    make_sessions(base / "sessions")
    report = build_site(session_files(base / "sessions"), base / "site", jobs=1, progress=False)
    assert report.rendered == SESSIONS + len(PRICED) and len(report.failed) == 1
    return base / "site"


@pytest.fixture
def context(pw_browser: Any) -> Iterator[Any]:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(context: Any) -> Iterator[Any]:
    """A tab that fails the test on any script error."""
    errors: list[str] = []
    tab = context.new_page()
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield tab
    assert errors == []


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def link_at(page: Any, box: dict[str, float]) -> str | None:
    """The text of the link drawn where ``box`` (a link's, when it was clicked) starts."""
    return page.evaluate(
        """([x, y]) => { const e = document.elementFromPoint(x + 3, y + 4);
                         const a = e && e.closest('a'); return a ? a.textContent : null; }""",
        [box["x"], box["y"]],
    )


def sorted_by(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#session-table th[aria-sort]", "hs => hs.map(h => h.textContent + ' ' + h.ariaSort)"
    )


# --- 1. Back keeps the sort, and the rows under the scroll --------------------------------------


def test_back_to_the_index_keeps_the_sort_and_the_rows_under_the_scroll(
    site: Path, page: Any
) -> None:
    """Sorted by cost, a row opened, Back: the table was by last activity again while the
    browser put the scroll back, so another session sat where the clicked one had been."""
    page.goto((site / "index.html").as_uri())
    page.locator("#session-table th button", has_text="Cost").click()
    assert sorted_by(page) == ["Cost descending"]
    link = page.locator("#session-table tbody tr td.title > a").nth(25)
    link.scroll_into_view_if_needed()
    title, box, left_at = link.text_content(), link.bounding_box(), page.evaluate("scrollY")
    assert left_at > 900  # the row is screens down the table
    link.click()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    assert sorted_by(page) == ["Cost descending"]
    page.wait_for_function("y => scrollY === y", arg=left_at, timeout=10_000)
    assert link_at(page, box) == title
    # the heading says the order (a printed page's headers have no arrows)
    expect(page.locator("#sort-note")).to_have_text("(by cost, highest first)")


# --- 2. Back keeps the text search and the matches listed ----------------------------------------


def test_back_to_the_index_keeps_the_text_search_and_the_matches_listed(
    site: Path, page: Any
) -> None:
    """A text search, a session's matches all listed, one opened, Back: the box was empty
    and the results gone (autocomplete="off" keeps the browser from refilling it). With the
    filter's box filled too, both are put back and the page is where the reader left it."""
    page.goto((site / "index.html").as_uri())
    page.fill("#filter", "widget")
    expect(page.locator("#filter-status")).to_contain_text(f"{SESSIONS} of 40 sessions")
    page.fill("#text-query", "needle")
    page.press("#text-query", "Enter")
    status = page.locator("#text-status")
    expect(status).to_have_text(f"{NEEDLES + 9} matches in 10 sessions")
    page.locator("#text-results li.more button").click()
    links = page.locator("#text-results li a")
    expect(links).to_have_count(NEEDLES + 9)
    link = links.nth(NEEDLES + 6)  # below the session whose list was lengthened
    link.scroll_into_view_if_needed()
    text, box, left_at = link.text_content(), link.bounding_box(), page.evaluate("scrollY")
    assert box["y"] > 300 and left_at > 300
    link.click()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    assert page.input_value("#text-query") == "needle"
    expect(status).to_have_text(f"{NEEDLES + 9} matches in 10 sessions")
    expect(links).to_have_count(NEEDLES + 9)  # the lengthened list too
    assert page.input_value("#filter") == "widget"
    expect(page.locator("#filter-status")).to_contain_text(f"{SESSIONS} of 40 sessions")
    page.wait_for_function("y => scrollY === y", arg=left_at, timeout=10_000)
    assert link_at(page, box) == text


def test_a_new_search_after_back_lists_its_first_matches_only(site: Path, page: Any) -> None:
    """What the reader lengthened belongs to the words it was found by: other words start
    with five matches a session again."""
    page.goto((site / "index.html").as_uri())
    page.fill("#text-query", "needle")
    page.press("#text-query", "Enter")
    page.locator("#text-results li.more button").click()
    expect(page.locator("#text-results li a")).to_have_count(NEEDLES + 9)
    page.fill("#text-query", "needle prompt")
    page.press("#text-query", "Enter")
    expect(page.locator("#text-status")).to_have_text(f"{NEEDLES} matches in 1 session")
    expect(page.locator("#text-results li a")).to_have_count(5)


# --- 3. a printed index says what was filtered and searched --------------------------------------


def test_a_printed_index_says_what_was_filtered_and_searched(site: Path, page: Any) -> None:
    """Printed, the filtered table was headed as if whole (the count "10 of 40 sessions" was
    hidden with the box), and the search's results printed without the words or the count,
    with a "Show all 12 matches" button on paper."""
    page.goto((site / "index.html").as_uri())
    page.fill("#filter", "needle")
    expect(page.locator("#filter-status")).to_contain_text("10 of 40 sessions")
    page.fill("#text-query", "needle")
    page.press("#text-query", "Enter")
    expect(page.locator("#text-status")).to_have_text(f"{NEEDLES + 9} matches in 10 sessions")
    assert not page.locator(".printed-query").first.is_visible()  # on screen the boxes say it
    page.emulate_media(media="print")
    assert page.locator("#filter-status").is_visible()
    assert page.locator("#text-status").is_visible()
    assert page.locator("#sessions .printed-query").text_content() == "Filter: needle"
    assert page.locator("#sessions .printed-query").is_visible()
    assert page.locator("#text-search .printed-query").text_content() == "Searched for: needle"
    assert page.locator("#text-search .printed-query").is_visible()
    for hidden in ("#filter", "#text-query", "label[for=text-query]", "#text-results li.more"):
        assert not page.locator(hidden).is_visible(), hidden
    assert page.locator("#text-results section.text-hits").first.is_visible()
    # nothing searched: the search's heading and note are not printed over nothing
    page.emulate_media(media="screen")
    page.press("#text-query", "Escape")
    expect(page.locator("#text-results section")).to_have_count(0)
    page.emulate_media(media="print")
    assert not page.locator("#text-search").is_visible()
    assert page.locator("#sessions .printed-query").text_content() == "Filter: needle"


# --- 4. the filter's count writes costs as the rows do -------------------------------------------


@pytest.mark.parametrize("word", list(PRICED))
def test_the_filter_count_writes_a_cost_as_its_row_does(site: Path, page: Any, word: str) -> None:
    """$0.00004 was "<$0.0001" in the row and "$0.0000" in the count; $0.9996 "$1.00" and
    "$1.000"; $0.00996 "$0.010" and "$0.0100"; $1.125 "$1.12" and "$1.13"."""
    page.goto((site / "index.html").as_uri())
    page.fill("#filter", word)
    status = page.locator("#filter-status")
    expect(status).to_contain_text(f"1 of {SESSIONS + len(PRICED)} sessions")
    row = page.locator("#session-table tbody tr:not(.filtered-out)")
    expect(row).to_have_count(1)
    cell = row.locator("td").last.text_content()
    assert cell == fmt_cost(PRICED[word])
    assert status.text_content().split(" · ")[1] == cell


def _cost_values() -> list[float]:
    """Amounts around every rule of fmt_cost: its thresholds, ties of each rounding (floats
    that are exactly half a last digit), negatives, huge and non-finite ones, and many
    six-decimal amounts (the rows' data) and random ones."""
    values = [0.0, -0.0, 5e-5, 4.9999e-5, 5.0000001e-5, 1e-300, 0.0099949, 0.009995, 0.00995]
    values += [0.99949, 0.9995, 0.99951, 0.999499999, 1.0, 1.125, 0.0625, 0.03125, 0.09375]
    values += [2.5, 2.675, 1234567.125, 999999999999.995, 1e12, 1.125e12, 1.2355e15, 2.5e21]
    values += [1.7976931348623157e308, math.inf, -math.inf, math.nan, -1.125, -0.00001, -3e-5]
    values += [k / 2**n for n in range(1, 12) for k in range(1, 2**n, 2)]  # dyadic: ties
    generator = random.Random(66)
    values += [round(generator.uniform(0, 2), 6) for _ in range(600)]
    values += [round(generator.uniform(0, 0.02), 6) for _ in range(600)]
    values += [10 ** generator.uniform(-7, 14) for _ in range(600)]
    values += [-v for v in values[-200:]]
    return values


def test_the_pages_cost_text_follows_fmt_cost_rule_for_rule(site: Path, page: Any) -> None:
    """The index script's costText (the filter's count) against fmt_cost over ~2,700
    amounts: the same text for every one."""
    page.goto((site / "index.html").as_uri())
    values = _cost_values()
    shown = page.evaluate(
        """reprs => reprs.map(r => costText(r === 'inf' ? Infinity : r === '-inf' ? -Infinity
                                            : Number(r)))""",
        [repr(v) for v in values],
    )
    wrong = [
        (v, mine, fmt_cost(v)) for v, mine in zip(values, shown, strict=True) if mine != fmt_cost(v)
    ]
    assert wrong == []


# --- 5. the rows of unreadable files are counted -------------------------------------------------


def test_the_filter_count_counts_the_unreadable_files_it_lists(site: Path, page: Any) -> None:
    """Filtering by an unreadable file's name said "0 of 40 sessions · $0.00" over its row."""
    page.goto((site / "index.html").as_uri())
    page.fill("#filter", "unreadablething")
    expect(page.locator("#session-table tbody tr:not(.filtered-out)")).to_have_count(1)
    expect(page.locator("#filter-status")).to_have_text("0 of 40 sessions · 1 unreadable file")
    # both kinds: the 36 "Session NN" titles (and 9 prompts "one needle in session N") and
    # the row saying "not a Pi session file"
    page.fill("#filter", "session")
    expect(page.locator("#session-table tbody tr:not(.filtered-out)")).to_have_count(SESSIONS + 1)
    expect(page.locator("#filter-status")).to_have_text(
        re.compile(
            rf"^{SESSIONS} of 40 sessions · \$[0-9.]+ · 1 unreadable file · 9 matching prompts$"
        )
    )


# --- 6. the caption without JavaScript --------------------------------------------------------


@pytest.mark.parametrize("script", [False, True], ids=["without script", "with script"])
def test_the_caption_says_the_headers_sort_only_when_they_do(
    site: Path, pw_browser: Any, script: bool
) -> None:
    """With JavaScript off the headers are plain text, yet the hidden caption told screen
    readers "the column headers sort them", on the index and on a project page alike."""
    context = pw_browser.new_context(java_script_enabled=script)
    try:
        page = context.new_page()
        project = next((site / "projects").glob("*.html"))
        for listing in (site / "index.html", project):
            page.goto(listing.as_uri())
            caption = page.locator("#session-table caption").text_content()
            buttons = page.locator("#session-table thead button").count()
            if script:
                assert caption == "Sessions: one row each (the column headers sort them)"
                assert buttons > 0
            else:
                assert caption == "Sessions: one row each" and buttons == 0
    finally:
        context.close()


# --- 7. the "1 failed" link and the failed row's time --------------------------------------------


def test_the_failed_link_lands_on_the_failed_row(site: Path, page: Any) -> None:
    """The header's "1 failed" went to the top of the table, the failed row 40 rows below;
    and the row showed its file's time (the newest) in a newest-first column, at its bottom:
    the column is empty now (the row sorts as having no activity), the time said under the
    error as the file's."""
    page.goto((site / "index.html").as_uri())
    page.locator("a.err", has_text="1 failed").click()
    failed = page.locator("tr.failed")
    expect(failed).to_be_in_viewport()
    assert page.evaluate("location.hash") == "#failed"
    first = failed.locator("td").first
    assert first.text_content() == "" and first.get_attribute("data-sort") == "0"
    changed = failed.locator("td.title .sub time")
    assert changed.get_attribute("datetime").startswith("2026-09-01T12:00:00")


def test_without_script_the_failed_row_is_reached_and_shows_no_activity(
    site: Path, pw_browser: Any
) -> None:
    """The link's target is the row itself: it works without the script too."""
    context = pw_browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri() + "#failed")
        expect(page.locator("tr.failed")).to_be_in_viewport()
        assert page.locator("tr.failed td").first.text_content() == ""
    finally:
        context.close()


# --- 8. a wrapped matching prompt's bullet on a phone ---------------------------------------------

_DARK_ROWS = """async ([png, width]) => {
  const img = new Image(); img.src = 'data:image/png;base64,' + png; await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext('2d'); ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data, rows = [];
  for (let y = 0; y < img.height; y++) for (let x = 0; x < width; x++) {
    const i = (y * img.width + x) * 4;
    if (data[i] + data[i + 1] + data[i + 2] < 300) { rows.push(y); break; }
  }
  return rows;
}"""


def test_a_wrapped_prompt_s_bullet_sits_on_its_first_line_on_a_phone(
    site: Path, pw_browser: Any
) -> None:
    """On a 360 px phone (a finger's pointer) the links under a row were inline blocks: the
    bullet of a prompt that wrapped sat on its last line. And a prompt's link is not bold
    (the title link's weight won over the list's)."""
    phone = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}
    context = pw_browser.new_context(**phone, color_scheme="light")
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        assert page.evaluate("matchMedia('(pointer: coarse)').matches")
        page.fill("#filter", "widget 33")
        link = page.locator("#session-table .prompt-hits li a")
        expect(link).to_have_count(1)
        page.evaluate(
            "document.querySelector('.prompt-hits li a').textContent += ' word'.repeat(30)"
        )
        assert link.evaluate("a => a.offsetHeight > 40")  # it wraps
        link.scroll_into_view_if_needed()
        item = page.locator("#session-table .prompt-hits li").bounding_box()
        text = link.evaluate(
            """a => { const r = document.createRange(); r.setStart(a.firstChild, 0);
                      r.setEnd(a.firstChild, 1); const b = r.getBoundingClientRect();
                      return [b.top, b.bottom]; }"""
        )
        left = max(item["x"] - 14, 0)
        shot = page.screenshot(
            clip={"x": left, "y": item["y"], "width": item["x"] - left, "height": item["height"]}
        )
        blank = context.new_page()
        rows = blank.evaluate(_DARK_ROWS, [base64.b64encode(shot).decode("ascii"), 100])
        assert rows, "no bullet drawn"
        bullet = item["y"] + (rows[0] + rows[-1]) / 2
        assert text[0] <= bullet <= text[1], (bullet, text, item)
        assert link.evaluate("a => getComputedStyle(a).fontWeight") == "400"
    finally:
        context.close()
