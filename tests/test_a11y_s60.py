"""Stop 60 (helper hunt: accessibility in Chromium): the site index said its counts at every
key, and its filter's count made a phone's page scroll sideways; a Markdown link without
words was an empty, invisible Tab stop; Tab out of the outline on a narrow screen focused
the title a screen away; the Thinking toggle said "not pressed" with every block unfolded."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import session_files
from exporter.loader import parse_session_bytes
from exporter.render import render_session
from exporter.site import build_site
from tests.browser_util import (
    PageServer,
    Viewer,
    after_frames,
    after_page_timers,
    render_fixture,
    shared_dir,
)

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

BRANCHED = "pi-branched-1.jsonl"
BRANCHED_4 = "pi-branched-4.jsonl"
LARGE = "pi-large-session.jsonl"

#: Every live region's changes, as a screen reader would hear them (a region whose
#: aria-live is "off" is not read out).
LISTEN = """window.said = [];
  for (const el of document.querySelectorAll('[role=status], [aria-live]')) {
    if (el.getAttribute('aria-live') === 'off') continue;
    new MutationObserver(() => window.said.push([el.id, el.textContent]))
      .observe(el, { childList: true, characterData: true, subtree: true });
  }"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("a11y-s60-site")
    folder = base / "sessions" / "--home-dev-app--"
    folder.mkdir(parents=True)
    for name in ("pi-branched-1.jsonl", "pi-branched-2.jsonl", "every-entry-type.jsonl"):
        (folder / name).write_bytes((shared_dir() / "fixtures" / name).read_bytes())
    report = build_site(session_files(base / "sessions"), base / "site", jobs=1, progress=False)
    assert report.rendered == 3 and not report.failed
    return base / "site"


@pytest.fixture
def context(pw_browser: Any) -> Iterator[Any]:
    made: list[Any] = []

    def new(**options: Any) -> Any:
        options.setdefault("viewport", {"width": 1280, "height": 900})
        made.append(pw_browser.new_context(**options))
        return made[-1]

    try:
        yield new
    finally:
        for one in made:
            one.close()


def _open_index(context: Any, site: Path, *, paused: bool = False, **options: Any) -> Any:
    """The site's index in a new tab; ``paused``: its timers under the test's clock, which
    stands still from the load on (``page.clock.run_for`` moves it)."""
    page = context(**options).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if paused:
        page.clock.install(time=CLOCK_START)
        page.clock.pause_at(CLOCK_START + timedelta(hours=1))  # (ahead of it: it ran since)
    page.goto((site / "index.html").as_uri())
    page.errors = errors
    return page


#: Where the paused clock stands (its timers only fire when the test moves it).
CLOCK_START = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def _type_paused(page: Any, selector: str, text: str, gap_ms: int) -> None:
    """Types ``text`` a key at a time, ``gap_ms`` of the page's time between keys: a busy
    machine's pauses between keys (a second, now and then) are not the page's."""
    for key in text:
        page.locator(selector).press(key)
        page.clock.run_for(gap_ms)


def test_the_index_says_its_counts_once_typing_pauses(context: Any, site: Path) -> None:
    """The filter's count (aria-live) changed at every key: "theme" queued five counts. It is
    said once the typing pauses, and not again while it stays the same; the count on screen
    still follows each key."""
    page = _open_index(context, site, paused=True)
    page.evaluate(LISTEN)
    _type_paused(page, "#filter", "theme", 80)
    # the first filtering unpacks the prompts (no timer: it takes what it takes), then runs
    status = page.locator("#filter-status")
    expect(status).to_contain_text("matching prompt")
    assert page.evaluate("window.said") == []  # nothing said while the typing goes on
    page.clock.run_for(1000)
    shown = page.text_content("#filter-status")
    assert "matching prompt" in shown
    assert page.evaluate("window.said") == [["filter-said", shown]]
    _type_paused(page, "#filter", "  ", 80)  # the same words: nothing new
    page.clock.run_for(1000)
    assert page.evaluate("window.said") == [["filter-said", shown]]
    assert page.errors == []


def test_the_index_says_its_text_search_count_once_typing_pauses(context: Any, site: Path) -> None:
    """The text search's count (role status) changed at every key after the first pause:
    14 times for "dimgray color", five of them the same words."""
    page = _open_index(context, site, paused=True)
    page.evaluate(LISTEN)
    _type_paused(page, "#text-query", "light theme", 200)
    # the first search unpacks the index (no timer: it takes what it takes), then runs
    status = page.locator("#text-status")
    expect(status).to_have_text(re.compile(r" in \d+ sessions?$"))
    page.clock.run_for(1000)
    found = page.text_content("#text-status")
    assert " in " in found and "match" in found, found
    assert page.evaluate("window.said") == [["text-said", found]]
    assert page.get_by_role("status").filter(has_text=found).count() == 1
    assert page.errors == []


@pytest.mark.parametrize("width", [320, 375, 414])
def test_filtering_the_index_on_a_phone_scrolls_nothing_sideways(
    context: Any, site: Path, width: int
) -> None:
    """The filter's count kept on one line beside its box widened a 320 px page to 566."""
    page = _open_index(
        context, site, viewport={"width": width, "height": 700}, is_mobile=True, has_touch=True
    )
    page.fill("#filter", "theme")
    # (the first filtering unpacks the prompts first: no timer says when it is done)
    expect(page.locator("#filter-status")).to_contain_text("matching prompt")
    wide, shown = page.evaluate(
        "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
    )
    assert wide <= shown, (wide, shown)
    status = page.locator("#filter-status").bounding_box()
    assert status is not None and status["x"] + status["width"] <= width
    page.fill("#text-query", "light theme")
    page.locator("#text-query").press("Enter")
    expect(page.locator("#text-status")).to_have_text(re.compile(r"\bmatch(es)? in \d+ session"))
    wide, shown = page.evaluate(
        "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
    )
    assert wide <= shown, (wide, shown)
    assert page.errors == []


def expect(locator: Any) -> Any:
    """Playwright's ``expect``, imported when a test runs (the fixture says when Playwright
    is missing)."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _line(**fields: Any) -> str:
    return json.dumps(fields)


def _wordless_links_session() -> bytes:
    text = (
        'A link [](https://example.com/a?x=1&y=<"2">), a blank one [ ](https://example.com/b),'
        " and one with words [here](https://example.com/c)."
    )
    assistant = {"role": "assistant", "content": [{"type": "text", "text": text}],
                 "provider": "p", "model": "m", "stopReason": "stop"}  # fmt: skip
    prompt = {"role": "user", "content": "links please"}
    lines = [
        _line(type="session", version=3, id="s60", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
        _line(
            type="message", id="u1", parentId=None, timestamp="2025-01-01T00:00:01Z", message=prompt
        ),
        _line(
            type="message",
            id="a1",
            parentId="u1",
            timestamp="2025-01-01T00:00:02Z",
            message=assistant,
        ),
    ]
    return "\n".join(lines).encode()


def test_a_link_without_words_shows_its_url(viewer: Viewer, page_server: PageServer) -> None:
    """``[](https://…)`` was an empty ``<a>``: 0 px wide, nothing to see, yet a Tab stop with
    no name. It shows its URL, as an image without alt text does (escaped: it is the
    session's text)."""
    html = render_session(parse_session_bytes(_wordless_links_session()))
    assert '<"2">' not in html.split("application/json")[0]
    page = viewer.open(page_server.publish("s60-wordless-links.html", html))
    links = page.locator("#a1 a[href^='https://example.com/']")
    assert links.count() == 3
    for index in range(3):
        link = links.nth(index)
        box = link.bounding_box()
        assert box is not None and box["width"] > 20, box
        href = link.get_attribute("href")
        name = link.evaluate("a => a.textContent")
        assert name == (href if index < 2 else "here"), (name, href)
    assert page.get_by_role("link", name="https://example.com/b", exact=True).count() == 1
    viewer.assert_clean()


FOCUS = """(() => { const e = document.activeElement, r = e.getBoundingClientRect();
  return [e.tagName, e.id, r.height > 0 && r.bottom > 0 && r.top < innerHeight]; })()"""

NARROW = {"viewport": {"width": 390, "height": 800}, "is_mobile": True, "has_touch": True}


def test_tab_out_of_the_outline_on_a_narrow_screen_lands_in_view(
    viewer: Viewer, page_server: PageServer
) -> None:
    """At 390 px the outline lies above the transcript: Tab out of it focused the page's
    title, below the screen, and nothing scrolled to it."""
    url = page_server.publish("s60-narrow-b1.html", render_fixture(BRANCHED))
    page = viewer.open(url, **NARROW)
    page.focus(".outline-toggle")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#tree') !== null")
    for _ in range(5):
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    after_frames(page, 2)
    tag, _, shown = page.evaluate(FOCUS)
    assert shown, tag
    viewer.assert_clean()


def test_tab_out_of_the_outline_returns_to_the_entry_being_read(
    viewer: Viewer, page_server: PageServer
) -> None:
    """A reader deep in a long session opens the outline with the floating "Outline" link,
    moves through it, and leaves it with Tab: the focus went to the title at the top of the
    page, not to the entry they had been reading."""
    url = page_server.publish("s60-narrow-large.html", render_fixture(LARGE))
    page = viewer.open(url, **NARROW)
    page.evaluate("window.scrollTo(0, 30000)")
    after_frames(page, 2)
    page.mouse.move(200, 400)
    page.mouse.wheel(0, -400)  # the reader's own scrolling: the current row follows it
    after_page_timers(page, 500)
    page.evaluate("document.querySelector('.to-outline').click()")
    after_frames(page, 2)
    current = page.evaluate("document.querySelector('#tree li.current > a').getAttribute('href')")
    assert current and current != "#" + page.evaluate(
        "document.querySelector('#transcript [data-entry-id]').id"
    )
    for _ in range(4):
        page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.closest('#tree') !== null")
    page.keyboard.press("Tab")
    after_frames(page, 3)
    tag, entry_id, shown = page.evaluate(FOCUS)
    assert "#" + entry_id == current, (tag, entry_id, current)
    assert shown
    viewer.assert_clean()


@pytest.mark.parametrize(
    ("button", "kind"),
    [
        ("#toggle-thinking", "details.thinking"),
        ("#toggle-tools", ".tool details.fold, details.skill, details.summary-block"),
    ],
)
def test_the_unfold_toggles_say_pressed_when_everything_is_unfolded(
    viewer: Viewer, page_server: PageServer, button: str, kind: str
) -> None:
    """Pressed means everything of its kind unfolded: with every block unfolded by hand the
    button still said "not pressed", and pressing it folded them all."""
    page = viewer.open(page_server.publish("s60-pressed.html", render_fixture(BRANCHED_4)))
    count = page.evaluate("k => document.querySelectorAll(k).length", kind)
    assert count > 5
    assert page.get_attribute(button, "aria-pressed") == "false"
    page.evaluate("k => document.querySelectorAll(k).forEach(d => { d.open = true; })", kind)
    after_page_timers(page, 50)
    assert page.get_attribute(button, "aria-pressed") == "true"
    page.evaluate("k => { document.querySelectorAll(k)[3].open = false; }", kind)  # one folded
    after_page_timers(page, 50)
    assert page.get_attribute(button, "aria-pressed") == "false"
    page.evaluate("k => { document.querySelectorAll(k)[3].open = true; }", kind)  # and again
    after_page_timers(page, 50)
    assert page.get_attribute(button, "aria-pressed") == "true"
    page.click(button)  # everything folds
    after_page_timers(page, 50)
    assert page.evaluate("k => [...document.querySelectorAll(k)].some(d => d.open)", kind) is False
    assert page.get_attribute(button, "aria-pressed") == "false"
    page.click(button)  # everything unfolds
    after_page_timers(page, 50)
    assert page.get_attribute(button, "aria-pressed") == "true"
    viewer.assert_clean()
