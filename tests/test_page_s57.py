"""Stop 57: forks the page hid or misnamed (at extension state or a label, after a
``--leaf`` in mid-chain), branches nested past the browser's limit, and a label count the
Labels list disagreed with. Checked in the HTML and in real Chromium."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from exporter.render.view import MAX_BRANCH_NESTING
from exporter.usage import compute_stats
from tests.browser_util import PageServer, Viewer, load_fixture

pytest_plugins = ["tests.browser_util"]

_STAMP = "2026-01-01T00:00:{:02d}.000Z"


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    head = {"type": "session", "version": 3, "id": "s", "timestamp": _STAMP.format(0), "cwd": "/w"}
    return "".join(json.dumps(v) + "\n" for v in [head, *lines]).encode("utf-8")


def _user(entry_id: str, parent: str | None, text: str, second: int = 1) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": _STAMP.format(second),
            "message": {"role": "user", "content": text, "timestamp": 0}}  # fmt: skip


def _answer(entry_id: str, parent: str, text: str, second: int = 2) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": _STAMP.format(second),
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                        "stopReason": "stop", "timestamp": 0}}  # fmt: skip


def _fork_at_state() -> bytes:
    """Pi's extension state written after an answer, then two prompts from it."""
    return _jsonl(
        [
            _user("u1", None, "first"),
            _answer("a1", "u1", "done"),
            {
                "type": "custom",
                "id": "c1",
                "parentId": "a1",
                "timestamp": _STAMP.format(3),
                "customType": "todo-state",
                "data": {"todos": []},
            },
            _user("u2", "c1", "try one way", 4),
            _user("u3", "c1", "try another way", 5),
        ]
    )


def test_a_fork_at_hidden_extension_state_keeps_its_header() -> None:
    """A fork at a `custom` entry (or a label) was hidden with it under the Default filter:
    the branches below seemed to come from nowhere. pi-branched-1 and -2 have such forks."""
    html = render_session(parse_session_bytes(_fork_at_state()))
    article = re.search(r'<article data-entry-id="c1"[^>]*class="([^"]*)"', html)
    assert article is not None
    assert "hide-default" in article[1] and "fork-at" in article[1]
    assert "forks here: 1 other branch below" in html
    # each fixture's forks at hidden entries are marked so
    for name in ("pi-branched-1.jsonl", "pi-branched-2.jsonl"):
        page = render_session(load_fixture(name))
        forks = re.findall(
            r'class="entry ([^"]*hide-default[^"]*)"[^>]*>\s*<header>(?:(?!</header>).)*forks here',
            page,
            re.S,
        )
        assert forks and all("fork-at" in classes for classes in forks), name


def test_a_leaf_in_mid_chain_says_the_session_goes_on() -> None:
    """`--leaf` on an entry with one child said "forks here: 1 other branch below" of what
    is a plain continuation, and the heading counted "1 entries"."""
    session = parse_session_bytes(
        _jsonl([_user("u1", None, "first"), _answer("a1", "u1", "one"), _user("u2", "a1", "next")])
    )
    session.set_leaf("u1")
    html = render_session(session)
    assert "the session goes on below this leaf: 1 branch" in html
    assert "2 branches (the chosen leaf goes on)" in html  # not "2 branches" of no fork
    assert "forks here" not in html
    assert "active path, 1 entry;" in html or "active path, 1 entry)" in html


def _staircase(forks: int) -> bytes:
    """Each prompt has an older child that goes on and a newer one that ends at once: every
    step down is one more nested branch (a staircase of retries)."""
    lines = [_user("r", None, "root"), _answer("ra", "r", "root answer")]
    parent = "ra"
    for step in range(forks):
        lines.append(_user(f"c{step}", parent, f"step {step}", 10))
        lines.append(_answer(f"l{step}", f"c{step}", f"leaf {step}", 20))
        parent = f"c{step}"
    lines.append(_user("active", "ra", "the active branch", 30))
    return _jsonl(lines)


def test_branches_nest_no_deeper_than_the_browser_keeps() -> None:
    forks = MAX_BRANCH_NESTING + 40
    session = parse_session_bytes(_staircase(forks))
    html = render_session(session)
    depth = deepest = 0
    for tag in re.finditer(r"<(/?)details\b", html):
        depth += -1 if tag[1] else 1
        deepest = max(deepest, depth)
    assert deepest <= MAX_BRANCH_NESTING + 1  # (+ a details of the page's own)
    ids = re.findall(r'<article data-entry-id="([^"]+)"', html)
    assert sorted(ids) == sorted(e.id for e in session.entries)  # each entry once
    notes = re.findall(r'This branch forks at <a href="#([^"]+)">', html)
    assert len(notes) >= forks - MAX_BRANCH_NESTING
    for anchor in notes:  # each names a fork the page holds, before the note
        assert html.index(f'id="{anchor}"') < html.index(f'href="#{anchor}">an entry')


def test_the_tree_counts_the_labels_the_labels_list_shows() -> None:
    lines = [
        _user("u1", None, "first"),
        _answer("a1", "u1", "one"),
        {"type": "label", "id": "l1", "parentId": "a1", "timestamp": _STAMP.format(3),
         "targetId": "u1", "label": "start"},
        {"type": "label", "id": "l2", "parentId": "l1", "timestamp": _STAMP.format(4),
         "targetId": "a1", "label": "answer"},
        {"type": "label", "id": "l3", "parentId": "l2", "timestamp": _STAMP.format(5),
         "targetId": "gone", "label": "lost"},
    ]  # fmt: skip
    session = parse_session_bytes(_jsonl(lines))
    assert compute_stats(session).labels == 2
    page = render_session(session)  # (one on an entry not in the file: said as such)
    assert "3 labels (1 on an entry not in the file)" in page and "2 labels" not in page


@pytest.mark.browser
def test_the_fork_header_shows_under_default_and_no_tools_only(
    viewer: Viewer, page_server: PageServer
) -> None:
    url = page_server.publish(
        "s57-fork-at.html", render_session(parse_session_bytes(_fork_at_state()))
    )
    for js in (True, False):
        page = viewer.open(url, js=js)
        shown = page.evaluate(
            """(() => { const a = document.querySelector('[data-entry-id=c1]');
                return [a.checkVisibility(), a.querySelector('header').checkVisibility(),
                        [...a.children].filter(c => c.tagName !== 'HEADER')
                          .some(c => c.checkVisibility())]; })()"""
        )
        assert shown == [True, True, False]
        assert page.locator("[data-entry-id=c1] .badge.fork").is_visible()
        for other in ("flt-user", "flt-labeled"):
            page.evaluate(f"document.getElementById('{other}').click()")
            assert not page.locator("[data-entry-id=c1]").is_visible()
        page.evaluate("document.getElementById('flt-all').click()")
        assert page.locator("[data-entry-id=c1] .json, [data-entry-id=c1] pre").first.is_visible()
    viewer.assert_clean()


@pytest.mark.browser
def test_without_a_script_an_enlarged_image_shrinks_when_focus_leaves_it(
    viewer: Viewer, page_server: PageServer
) -> None:
    """Without JavaScript, Tab moved on behind an image that still covered the screen."""
    url = page_server.publish("s57-zoom.html", render_session(load_fixture("pi-branched-2.jsonl")))
    page = viewer.open(url, js=False)
    label = page.locator("label.zoom:visible").first
    label.scroll_into_view_if_needed()
    label.click()
    where = "getComputedStyle(document.querySelector('.zoom-toggle:checked + img')).position"
    assert page.evaluate(where) == "fixed"
    page.keyboard.press("Tab")
    assert page.evaluate(where) == "static"
    assert page.evaluate("document.activeElement.classList.contains('zoom-toggle')") is False
    viewer.assert_clean()
