"""What a screen-reader or keyboard-only reader meets on the page, in real Chromium: the
findings of the accessibility review of 2026-12-04 (review 155), each checked as it was
measured then."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from tests.browser_util import PageServer, Viewer, after_page_timers, render_fixture

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

SAMPLER = "every-entry-type.jsonl"
BRANCHED = "pi-branched-1.jsonl"
LARGE = "pi-large-session.jsonl"
PHONE = {"width": 320, "height": 700}


def _line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


def _folds_and_no_times() -> bytes:
    """A thinking block holding a link (a focusable thing inside a fold), and two entries
    written without a timestamp (a damaged or hand-made file)."""
    thinking = "Check https://example.com/docs/page first."
    assistant = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": thinking}, {"type": "text", "text": "Done."}],
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "stopReason": "stop",
        "timestamp": 1735689602000,
    }
    lines = [
        _line(type="session", version=3, id="s1", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
        _line(type="message", id="u1", parentId=None, timestamp="2025-01-01T00:00:01Z",
              message={"role": "user", "content": "hello"}),
        _line(type="message", id="a1", parentId="u1", timestamp="2025-01-01T00:00:02Z",
              message=assistant),
        _line(type="message", id="u2", parentId="a1", message={"role": "user", "content": "x"}),
        _line(type="message", id="u3", parentId="u2", message={"role": "user", "content": "y"}),
    ]  # fmt: skip
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture(scope="module")
def pages(page_server: PageServer) -> dict[str, str]:
    urls = {}
    for name in (SAMPLER, BRANCHED, LARGE):
        urls[name] = page_server.publish(f"a11y-{name}.html", render_fixture(name))
    made = render_session(parse_session_bytes(_folds_and_no_times()))
    urls["made"] = page_server.publish("a11y-made.html", made)
    return urls


def _described(page: Any) -> str | None:
    return page.evaluate(
        """(() => { const id = document.activeElement.getAttribute('aria-describedby');
                    return id ? document.getElementById(id).textContent : null; })()"""
    )


def test_the_outline_row_tab_lands_on_mid_page_says_how_to_move(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """Tab into the outline after the reader went to an entry lands on that entry's row (the
    browser first focuses the first row, the script moves it on). That second focus came
    from inside the outline, so the row lost the "Up and Down arrows…" description: mid-page,
    a screen reader was never told how to move in a 212-row list that is one Tab stop."""
    page = viewer.open(pages[BRANCHED])
    row = page.locator("#tree li:not(.sub) > a").nth(20)
    row.click()
    # the row becomes current in the hashchange's own task: a Tab before it entered the
    # outline at its first row
    href = row.get_attribute("href")
    page.wait_for_selector(f'#tree li.current > a[href="{href}"]', state="attached")
    page.focus('label[for="flt-default"]')
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.getAttribute('href')") == row.get_attribute("href")
    assert (_described(page) or "").startswith("Up and Down arrows, Home and End move")
    page.keyboard.press("ArrowDown")  # the rows the arrows reach do not repeat it
    assert _described(page) is None
    viewer.assert_clean()


def test_a_tool_calls_heading_names_the_call_alone(viewer: Viewer, pages: dict[str, str]) -> None:
    """Each call's h4 held its "#" link and, once the script ran, its copy buttons: the
    heading was read "bash $ ls -la Link to this entry Copy the command Copy the output"
    (373 of 399 headings on pi-large-session). They are now the heading's siblings, on its
    line, and the "$" is drawn by CSS and not read."""
    page = viewer.open(pages[LARGE])
    page.wait_for_function("() => document.querySelectorAll('.tool-head .copy-btn').length > 50")
    heads = page.get_by_role("heading", level=4)
    assert heads.count() > 300
    noise = re.compile(r"Link to this entry|Copy (the|output)|^bash \$")
    noisy = page.get_by_role("heading", level=4, name=noise)
    assert noisy.count() == 0, noisy.first.text_content()
    bash = page.get_by_role("heading", level=4, name=re.compile(r"^bash ")).first
    assert not bash.locator("code.cmd").text_content().startswith("$")
    prompt = bash.locator("code.cmd").evaluate("c => getComputedStyle(c, '::before').content")
    assert "$" in prompt
    # the "#" and the buttons share the line of the call's name, at the right of the card
    rows = page.evaluate(
        """document.querySelectorAll('.entry').forEach(e => e.style.contentVisibility = 'visible');
           [...document.querySelectorAll('.tool-head:has(> .copy-btn) > h4')].slice(0, 60)
             .map(h => { const name = h.querySelector('.tool-name').getBoundingClientRect();
               return [...h.parentElement.querySelectorAll(':scope > :is(a, button)')]
                 .filter(b => { const r = b.getBoundingClientRect();
                   return !(r.top < name.bottom && name.top < r.bottom
                            && r.left >= h.getBoundingClientRect().right); })
                 .map(b => [h.closest("[id]").id, b.textContent]); }).flat()"""
    )
    assert len(rows) == 0, rows
    # the output's button is named with the words it shows (a voice user says them)
    assert page.get_by_role("button", name="Copy output", exact=True).count() > 50
    # each "#" is named by one hidden "Link to this entry" (aria-labelledby), not 373 copies
    named = page.get_by_role("link", name="Link to this entry", exact=True).count()
    assert named == page.locator("a.permalink").count() > 300
    viewer.assert_clean()


def test_an_entry_without_a_time_has_a_named_link(viewer: Viewer, pages: dict[str, str]) -> None:
    """A time-less entry's link was named "#" alone, and showed "# #"."""
    page = viewer.open(pages["made"])
    for entry in ("u2", "u3"):
        link = page.locator(f'[data-entry-id="{entry}"] > header > a.ts')
        assert link.get_attribute("aria-labelledby") == "lnk"
        shown = link.evaluate("a => a.textContent + getComputedStyle(a, '::after').content")
        assert shown.count("#") == 1, shown
    assert page.get_by_role("link", name="Link to this entry").count() >= 2
    viewer.assert_clean()


def test_model_markers_keep_a_readable_title_under_enlarged_text(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """At 150 % text on a 320 px screen the marker rows ("Model: openai/gpt-5") kept their
    time on the line, and the title was squeezed to one letter per line (0-25 px wide)."""
    page = viewer.open(pages[LARGE], viewport=PHONE, is_mobile=True)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Page.setFontSizes", {"fontSizes": {"standard": 24, "fixed": 24}})
    widths = page.evaluate(
        """[...document.querySelectorAll('.entry.k-marker')].map(e => {
             e.style.contentVisibility = 'visible';
             const t = e.querySelector(':scope > header > .title');
             if (!t) return 99;
             return t.getBoundingClientRect().width / parseFloat(getComputedStyle(t).fontSize);
           })"""
    )
    assert len(widths) > 50
    assert min(widths) >= 6, sorted(widths)[:5]  # ems of its own text
    page = viewer.open(pages[BRANCHED], viewport=PHONE, is_mobile=True)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Page.setFontSizes", {"fontSizes": {"standard": 32, "fixed": 32}})
    fork = page.evaluate(
        """[...document.querySelectorAll('.badge.fork')].map(b => {
             b.closest('.entry').style.contentVisibility = 'visible';
             const entry = b.closest('.entry').getBoundingClientRect();
             return b.getBoundingClientRect().right - entry.right;
           })"""
    )
    assert fork and max(fork) <= 0, fork  # a badge is not cut off at the entry's edge
    viewer.assert_clean()


def test_t_folding_the_focus_away_moves_it_to_the_fold(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """`t` with focus on a link inside a thinking block closed the block and the focus fell to
    the page's body: a screen reader announced the document and the reader lost their place."""
    page = viewer.open(pages["made"])
    page.keyboard.press("t")
    link = page.locator("details.thinking a[href^='https://example.com']")
    link.focus()
    page.keyboard.press("t")
    assert page.evaluate("document.querySelector('details.thinking').open") is False
    assert page.evaluate(
        "document.activeElement === document.querySelector('details.thinking > summary')"
    )
    viewer.assert_clean()


def test_a_wide_diff_that_takes_focus_is_named_briefly(
    viewer: Viewer, pages: dict[str, str]
) -> None:
    """Chromium makes a sideways-scrolling diff a Tab stop; its name was its whole text (2,025
    characters for the first on pi-large-session)."""
    page = viewer.open(pages[LARGE])
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    index = page.evaluate(
        """[...document.querySelectorAll('pre.diff')].findIndex(p => {
             p.closest('.entry').style.contentVisibility = 'visible';
             return p.scrollWidth > p.clientWidth; })"""
    )
    assert index >= 0, "no diff scrolls sideways at 1280 px"
    diff = page.locator("pre.diff").nth(index)
    diff.focus()
    assert page.evaluate("document.activeElement.tagName") == "PRE"
    name = diff.get_attribute("aria-label") or ""
    assert re.fullmatch(r"Diff of \S+, scrolls sideways", name), name
    assert diff.get_attribute("role") == "group"
    viewer.assert_clean()


def test_the_search_count_is_said_once_typing_pauses(viewer: Viewer, pages: dict[str, str]) -> None:
    """The outline's count was a live region rewritten 30 ms after each key: typing "theme"
    queued five announcements. It is said once, after the typing pauses."""
    page = viewer.open(pages[BRANCHED])
    assert page.get_attribute("#tree-status", "aria-live") == "off"
    page.evaluate(
        """window.said = [];
           for (const el of document.querySelectorAll('[role=status], [aria-live]')) {
             if (el.getAttribute('aria-live') === 'off') continue;
             new MutationObserver(() => { if (el.textContent) window.said.push(el.textContent); })
               .observe(el, { childList: true, characterData: true, subtree: true });
           }"""
    )
    # typed by the page's own timers, 80 ms apart: keys sent from here came over 600 ms apart
    # on a busy machine (the page then rightly said the count twice); the page's timers run
    # in the order they are due, so a late machine still sees each key before the pause
    page.evaluate(
        """() => { const box = document.querySelector('#tree-search');
           box.focus();
           [...'theme'].forEach((key, i) => setTimeout(() => {
             box.value += key;
             box.dispatchEvent(new InputEvent('input', { bubbles: true, data: key,
                                                         inputType: 'insertText' }));
           }, 80 * i)); }"""
    )
    page.wait_for_function("() => document.querySelector('#tree-search').value === 'theme'")
    page.wait_for_timeout(1200)
    # said 600 ms after the last search (itself on a 30 ms timer): on a busy machine the
    # page's timers run late, past a fixed wait; then any later one has its turn too
    page.wait_for_function("() => window.said.length > 0", timeout=15_000)
    after_page_timers(page, 1000)
    said = page.evaluate("window.said")
    shown = page.text_content("#tree-status")
    assert said == [shown] and "entries match" in shown, said
    assert page.get_attribute("#tree-search", "aria-keyshortcuts") == "/"
    viewer.assert_clean()


def test_a_task_lists_checkboxes_are_named_by_their_items(
    viewer: Viewer, page_server: PageServer
) -> None:
    """A Markdown task list's checkboxes had no name: a screen reader said "checkbox,
    checked" and nothing of what was done (review 155). Each is labelled by its item's words."""
    text = "Plan:\n\n- [x] write the parser\n- [ ] ship **it** today\n"
    assistant = {"role": "assistant", "content": [{"type": "text", "text": text}],
                 "provider": "p", "model": "m", "stopReason": "stop"}  # fmt: skip
    data = "\n".join(
        [
            _line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
            _line(
                type="message",
                id="u1",
                parentId=None,
                timestamp="2025-01-01T00:00:01Z",
                message={"role": "user", "content": "plan it"},
            ),
            _line(
                type="message",
                id="a1",
                parentId="u1",
                timestamp="2025-01-01T00:00:02Z",
                message=assistant,
            ),
        ]
    )
    url = page_server.publish("a11y-tasks.html", render_session(parse_session_bytes(data.encode())))
    page = viewer.open(url)
    done = page.get_by_role("checkbox", name="write the parser", exact=True)
    todo = page.get_by_role("checkbox", name="ship it today", exact=True)
    assert done.count() == 1 and done.is_checked() and done.is_disabled()
    assert todo.count() == 1 and not todo.is_checked()
