"""The site index in Chromium, opened from file:// as a downloaded folder would be.

Sorting by column, the filter box, the theme toggle, links into session and project pages,
no network requests and no console or CSP errors; with JavaScript off the table is complete
and newest first. Skipped without Chromium unless CI is set (see tests/browser_util.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import session_files
from exporter.site import build_site

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

_WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + e.blockedURI);
});
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.test_site import make_sessions  # after pytest_plugins: keeps assert rewriting

    base = tmp_path_factory.mktemp("site-browser")
    make_sessions(base / "sessions")
    report = build_site(session_files(base / "sessions"), base / "site", jobs=1, progress=False)
    assert report.rendered == 12
    return base / "site"


@pytest.fixture(scope="module")
def fixtures_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of the real fixtures: three projects, sessions of 10-75 million tokens."""
    from tests.conftest import FIXTURE_FILES

    base = tmp_path_factory.mktemp("fixtures-site")
    folder = base / "sessions" / "--fixtures--"
    folder.mkdir(parents=True)
    for path in FIXTURE_FILES:
        (folder / path.name).write_bytes(path.read_bytes())
    report = build_site(session_files(base / "sessions"), base / "site", jobs=1, progress=False)
    assert report.rendered == len(FIXTURE_FILES) and not report.failed
    return base / "site"


def expect(locator: Any) -> Any:
    """Playwright's ``expect``, imported when a test runs: a module-level importorskip
    skipped this file even under CI, where the ``pw_browser`` fixture must fail instead."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


class Tab:
    """A page plus everything it requested, complained about or popped up (test_site_search
    uses it too)."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else 0)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog {d.message}"), d.dismiss()))

    def assert_clean(self, allowed: set[str]) -> None:
        assert self.errors == []
        foreign = [u for u in self.requests if u.split("#")[0] not in allowed]
        assert foreign == [], f"network requests: {foreign}"
        assert self.page.evaluate("window.__csp || []") == []


@pytest.fixture(name="tab")
def tab_fixture(pw_browser: Any) -> Iterator[Tab]:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(_WATCH)
    try:
        yield Tab(context)
    finally:
        context.close()


def titles(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "#session-table tbody tr:not(.filtered-out) td.title",
        "cells => cells.map(c => (c.querySelector('a') || c).firstChild.textContent.trim())",
    )


def column(page: Any, index: int) -> list[float]:
    return page.eval_on_selector_all(
        "#session-table tbody tr",
        f"rows => rows.map(r => parseFloat(r.cells[{index}].getAttribute('data-sort')))",
    )


def test_sorting_by_column_headers(site: Path, tab: Tab) -> None:
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    newest_first = column(page, 0)
    assert newest_first == sorted(newest_first, reverse=True)
    initial = titles(page)
    cost = page.locator("#session-table thead th", has_text="Cost")
    cost.locator("button").click()
    assert cost.get_attribute("aria-sort") == "descending"
    assert column(page, 7) == sorted(column(page, 7), reverse=True)
    cost.locator("button").click()
    assert cost.get_attribute("aria-sort") == "ascending"
    assert column(page, 7) == sorted(column(page, 7))
    page.locator("#session-table thead th", has_text="Session").locator("button").click()
    names = [t.lower() for t in titles(page)]
    assert names == sorted(names) and titles(page) != initial
    assert page.locator("#session-table thead th[aria-sort]").count() == 1
    # the arrows are drawn, not read: "Cost ▼" was read "Cost black down-pointing triangle"
    assert page.get_by_role("button", name="Cost", exact=True).count() == 1
    assert page.get_by_role("button", name="Session", exact=True).count() == 1
    tab.assert_clean({url})


def test_filter_box_filters_rows(site: Path, tab: Tab) -> None:
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    box = page.locator("#filter")
    assert box.is_visible()
    # the row of a file that failed to load is no session: the count is the header's
    assert page.locator("tr.failed").count() == 1
    assert page.locator("#filter-status").text_content() == "12 sessions"
    assert page.locator(".facts dd >> nth=0").text_content().startswith("12")
    box.fill("alpha")
    expect(page.locator("tr.filtered-out")).to_have_count(7)
    assert len(titles(page)) == 6
    assert page.locator("#filter-status").text_content().startswith("6 of 12 sessions · $")
    box.fill("00000007 ALPHA")  # every term must match: no row has both
    expect(page.locator("tr.filtered-out")).to_have_count(13)
    box.fill("00000007")
    expect(page.locator("tr.filtered-out")).to_have_count(12)
    assert titles(page) == ["Session 7"]
    box.press("Escape")
    assert page.locator("#session-table tbody tr:not(.filtered-out)").count() == 13
    # "/" finds, unless single-key shortcuts were turned off on a session page
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "filter"
    page.evaluate("localStorage.setItem('pi-session-export:single-keys', 'off')")
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") != "filter"
    page.evaluate("localStorage.removeItem('pi-session-export:single-keys')")
    tab.assert_clean({url})


def test_links_theme_and_pages_open_cleanly(site: Path, tab: Tab) -> None:
    index = (site / "index.html").as_uri()
    page = tab.page
    page.goto(index)
    page.locator("#theme-toggle").click()
    assert page.evaluate("document.documentElement.getAttribute('data-theme')") in ("dark", "light")
    link = page.locator("#session-table td.title a", has_text="Session 4")
    target = (site / link.get_attribute("href")).as_uri()
    link.click()
    page.wait_for_url(target)
    assert page.locator("#transcript").count() == 1
    page.goto(index)
    project = page.locator("#projects a").first
    project_url = (site / project.get_attribute("href")).as_uri()
    project.click()
    page.wait_for_url(project_url)
    # its six sessions, and the file in its folder that failed (the index links it here)
    assert page.locator("#session-table tbody tr").count() == 7
    assert page.locator("#session-table tbody tr.failed").count() == 1
    page.locator(".crumbs a").click()
    page.wait_for_url(index)
    tab.assert_clean({index, target, project_url})


def test_readable_without_javascript(site: Path, pw_browser: Any) -> None:
    context = pw_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        rows = page.locator("#session-table tbody tr")
        assert rows.count() == 13
        assert all(rows.nth(i).is_visible() for i in range(13))
        assert not page.locator("#filter").is_visible()
        assert page.locator("#session-table thead button").count() == 0
        times = column(page, 0)
        assert times == sorted(times, reverse=True)
        assert page.locator("tr.failed").count() == 1
        assert page.locator("#cost-per-day svg rect.bar").count() >= 1
        assert page.locator("#cost-per-day .daytable tbody tr").count() >= 11  # every day
        assert page.locator("#projects tbody tr").count() == 3  # two projects + total
    finally:
        context.close()


def test_printed_sessions_table_fits_the_page(site: Path, tab: Tab) -> None:
    """A scroll box prints cut off: on an A4-wide page the table must fit, sort marks gone."""
    url = (site / "index.html").as_uri()
    page = tab.page
    page.set_viewport_size({"width": 718, "height": 1000})
    page.goto(url)
    page.emulate_media(media="print")
    right = page.evaluate("document.querySelector('#session-table').getBoundingClientRect().right")
    assert right <= 718, f"the printed table ends at {right}px on a 718px page"
    mark = page.evaluate(
        "getComputedStyle(document.querySelector('th button.sort'), '::after').content"
    )
    assert mark in ("none", "normal", ""), mark
    tab.assert_clean({url})


def test_phone_shows_sessions_as_cards_in_the_readers_zone(site: Path, pw_browser: Any) -> None:
    """At 375 px the nine-column table scrolled sideways and showed the time and half a title;
    each session is now a card that fits. The header's period names the reader's zone."""
    context = pw_browser.new_context(
        viewport={"width": 375, "height": 740}, timezone_id="Asia/Tokyo", locale="en-US"
    )
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        sizes = page.evaluate(
            """() => {
              const wrap = document.querySelector('#session-table').parentElement;
              const row = document.querySelector('#session-table tbody tr:not(.failed)');
              const cost = row.cells[row.cells.length - 1].getBoundingClientRect();
              return {page: document.scrollingElement.scrollWidth, wrap: wrap.scrollWidth,
                      view: wrap.clientWidth, title: row.querySelector('td.title').offsetWidth,
                      row: row.offsetWidth, costRight: cost.right};
            }"""
        )
        assert sizes["page"] <= 375 and sizes["wrap"] <= sizes["view"], sizes
        assert sizes["title"] >= sizes["row"] - 24, sizes  # the title has the card's width
        assert sizes["costRight"] <= 375, sizes
        unit = page.locator("#session-table tbody tr:not(.failed) td[data-unit]").first
        after = unit.evaluate("td => getComputedStyle(td, '::after').content")
        assert "message" in after, after
        assert page.locator("#session-table thead button.sort").first.is_visible()
        period = page.locator(".facts time").last.text_content()
        assert period.endswith("UTC+09:00"), period
        row_time = page.locator("#session-table tbody time").first.text_content()
        assert "UTC" not in row_time  # rows follow the zone the header names
        # as `list` prints times and the pages show them, not "Nov 30, 2026, 12:57 AM"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", row_time or ""), row_time
    finally:
        context.close()


@pytest.mark.parametrize("width", [641, 768, 1024, 1280])
def test_the_sessions_fit_a_tablet_and_a_laptop(
    fixtures_site: Path, pw_browser: Any, width: int
) -> None:
    """The eight-column table needs ~940 px: at 768 and 1024 it scrolled sideways, its
    tokens and cost out of view (2026-12-02). Below 1024 each session is a card; from 1024
    the table fits, a date above its time where the room is short. The projects table fits
    from 641 px (a phone's scrolls under its sticky project column)."""
    context = pw_browser.new_context(viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto((fixtures_site / "index.html").as_uri())
        sizes = page.evaluate(
            """() => {
              const table = document.querySelector('#session-table');
              const row = table.querySelector('tbody tr:not(.failed)');
              return {page: document.scrollingElement.scrollWidth,
                      wrap: table.parentElement.scrollWidth,
                      view: table.parentElement.clientWidth,
                      cards: getComputedStyle(row).display === 'flex',
                      projects: [...document.querySelectorAll('table.projects')]
                        .map(t => t.parentElement.scrollWidth - t.parentElement.clientWidth),
                      models: [...table.querySelectorAll('td.models')].map(td => {
                        const tops = [], walk = document.createTreeWalker(td, 4);
                        while (walk.nextNode()) {
                          const node = walk.currentNode;
                          for (let i = 0; i < node.length; i++) {
                            const r = document.createRange();
                            r.setStart(node, i); r.setEnd(node, i + 1);
                            tops.push([node.data[i], Math.round(r.getBoundingClientRect().top)]);
                          }
                        }
                        return tops; })};
            }"""
        )
        assert sizes["page"] <= width and sizes["wrap"] <= sizes["view"], sizes
        assert sizes["cards"] == (width < 1024), sizes
        assert len(sizes["projects"]) == 1 and sizes["projects"][0] <= 1, sizes
        # a model's name wraps after its "/" only: "...claude-sonnet-" over "4-5" at 1280 px
        broken = []
        for chars in sizes["models"]:
            text = "".join(c for c, _ in chars)
            start = 0
            for name in text.split(", "):
                after = start + name.rfind("/") + 1  # the part after the last "/": one line
                if len({top for _, top in chars[after : start + len(name)]}) > 1:
                    broken.append(name)
                start += len(name) + 2
        assert "/" in "".join(c for m in sizes["models"] for c, _ in m) and broken == [], broken
    finally:
        context.close()


def test_filter_still_applies_after_going_back(site: Path, tab: Tab) -> None:
    """Back from a session page refills the filter box after the script ran; the rows must
    follow the refilled text (they showed every session under a filled-in box)."""
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    page.locator("#filter").fill("00000007")
    expect(page.locator("tr.filtered-out")).to_have_count(12)
    page.locator("#session-table td.title a", has_text="Session 7").click()
    page.wait_for_load_state()
    page.go_back()
    page.wait_for_load_state()
    assert page.locator("#filter").input_value() == "00000007"
    expect(page.locator("tr.filtered-out")).to_have_count(12)
    assert page.locator("#filter-status").text_content().startswith("1 of 12 sessions")


def test_printed_numbers_and_headers_stay_whole(site: Path, tab: Tab) -> None:
    """The print rule that lets wide tables fit broke "17,080,882" into "17,0 / 80,8 / 82"
    and "Messages" into "Mes / sag / es": numbers and words keep to one line."""
    url = (site / "index.html").as_uri()
    page = tab.page
    page.set_viewport_size({"width": 718, "height": 1000})
    page.goto(url)
    page.emulate_media(media="print")
    broken = page.evaluate(
        """[...document.querySelectorAll('#session-table td[data-sort], #session-table thead th')]
             .filter(el => el.getClientRects().length && el.textContent.trim())
             .filter(el => { const r = document.createRange(); r.selectNodeContents(el);
                             const boxes = [...r.getClientRects()].map(b => Math.round(b.top));
                             const word = !/\\s/.test(el.textContent.trim());
                             return Math.max(...boxes) - Math.min(...boxes) > 10 && word; })
             .map(el => el.textContent.trim())"""
    )
    assert broken == [], broken[:5]
    tab.assert_clean({url})


def test_phone_chart_fits_whole_and_a_skip_link(site: Path, pw_browser: Any) -> None:
    """The chart opened scrolled to its newest bar, its cost scale and older bars out of
    view (review 2026-12-02): now the whole of it fits, its labels readable."""
    context = pw_browser.new_context(viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto((site / "index.html").as_uri())
        width, view = page.evaluate(
            "(() => { const c = document.querySelector('.chart');"
            " return [c.scrollWidth, c.clientWidth]; })()"
        )
        assert width <= view + 1, (width, view)
        left, right, boxes, sizes = page.evaluate(
            """(() => { const c = document.querySelector('.chart').getBoundingClientRect();
            const all = [...document.querySelectorAll('.chart .bar, .chart .tick')];
            return [c.left, c.right, all.map(e => { const b = e.getBoundingClientRect();
            return [b.left, b.right]; }), [...document.querySelectorAll('.chart .tick')].map(
            t => t.getBoundingClientRect().height)]; })()"""
        )
        assert boxes and all(left - 1 <= a and b <= right + 1 for a, b in boxes), (left, right)
        assert min(sizes) >= 10, sizes  # the scale's and the dates' labels, in px on screen
        # the projects table scrolls sideways under its project column, which stays
        wrap_left, first_left, scrolled = page.evaluate(
            "(() => { const t = document.querySelector('table.projects'), w = t.parentElement;"
            " w.scrollLeft = w.scrollWidth; const c = t.querySelector('tbody th, tbody td');"
            " return [w.getBoundingClientRect().left, c.getBoundingClientRect().left,"
            " w.scrollLeft]; })()"
        )
        assert scrolled > 0 and abs(first_left - wrap_left) < 2, (wrap_left, first_left, scrolled)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.getAttribute('href')") == "#sessions"
    finally:
        context.close()


def test_the_index_tables_are_named_regions_and_tables(site: Path, tab: Tab) -> None:
    """Chromium makes a box that scrolls sideways a Tab stop and named the index's by their
    whole content (every row read out), and the tables had no caption (a11y review
    2026-12-01); the session page's boxes were named already."""
    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    for name in ("Projects", "Sessions"):
        region = page.get_by_role("region", name=f"{name} table", exact=True)
        assert region.count() == 1, name
        assert region.get_by_role("table", name=f"{name}:", exact=False).count() == 1, name
    tab.assert_clean({url})


def test_the_filter_finds_a_session_by_a_prompt_and_links_to_it(site: Path, tab: Tab) -> None:
    """A word only a later prompt of one session holds (not its title or any other row):
    the filter keeps that session, lists the prompt with the word marked, and the link opens
    the session's page at that prompt, shown."""
    from tests.test_site import prompt_index_of

    url = (site / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    index = prompt_index_of(page.content())
    rows = page.eval_on_selector_all("#session-table tbody tr", "rs => rs.map(r => r.textContent)")
    everything = " ".join(rows).lower()

    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z]{8,}", text.lower())}

    counts: dict[str, int] = {}
    for _, prompts in index:
        for word in {w for _, text in prompts for w in words(text)}:
            counts[word] = counts.get(word, 0) + 1
    unique = sorted(w for w, n in counts.items() if n == 1 and w not in everything)
    assert unique, "no prompt word unique to one session"
    word = unique[0]
    href, prompts = next(item for item in index if any(word in t.lower() for _, t in item[1]))
    anchor = next(a for a, t in prompts if word in t.lower())
    page.locator("#filter").fill(word.upper())
    expect(page.locator("#session-table tbody tr:not(.filtered-out)")).to_have_count(1)
    hit = page.locator("tr:not(.filtered-out) .prompt-hits a").first
    assert hit.locator("mark").text_content().lower() == word
    assert hit.get_attribute("href") == f"{href}#{anchor}"
    assert "matching prompt" in page.locator("#filter-status").text_content()
    target = (site / href).as_uri()
    hit.click()
    page.wait_for_url(f"{target}#{anchor}")
    expect(page.locator(f'[id="{anchor}"]')).to_be_visible()
    assert word in page.locator(f'[id="{anchor}"]').inner_text().lower()
    page.go_back()
    page.locator("#filter").fill("")
    page.locator("#filter").press("Escape")
    assert page.locator(".prompt-hits").count() == 0
    tab.assert_clean({url, target})


def test_a_prompt_hit_marks_the_word_found_even_after_letters_that_grow_lowercased(
    tmp_path: Path, tab: Tab
) -> None:
    """ "İ" lower-cases to two characters: the mark was placed by the lower-cased text's
    offsets, one character off ("ebra" for "zebra")."""
    import json

    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-06-01T10:00:00Z"}
    entries = [header | {"cwd": "/p"}]
    for n, text in enumerate(["first prompt", "İİİ İstanbul trip zebra stripes"], 1):
        entries.append(
            {
                "type": "message",
                "id": f"u{n}",
                "parentId": f"u{n - 1}" if n > 1 else None,
                "timestamp": f"2025-06-01T10:00:0{n}Z",
                "message": {"role": "user", "content": text},
            }
        )
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    (folder / "2025-06-01T10-00-00-000Z_s1.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8"
    )
    build_site(session_files(tmp_path / "sessions"), tmp_path / "site", jobs=1, progress=False)
    url = (tmp_path / "site" / "index.html").as_uri()
    page = tab.page
    page.goto(url)
    page.locator("#filter").fill("zebra")
    expect(page.locator(".prompt-hits mark")).to_have_text("zebra")
    assert "trip zebra stripes" in page.locator(".prompt-hits a").inner_text()
    tab.assert_clean({url})
