"""`pi-session watch` in Chromium: the open page reloads itself when the session grows,
keeps the reader's folds, filter, search and place (the end, for one who was there), marks
what is new, asks nothing of any other address, and says when the watcher has stopped.
Skipped without Chromium unless CI is set (see tests/browser_util.py)."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.live_server import LiveServer
from exporter.loader import load_session
from exporter.render import RenderOptions
from exporter.watch import SessionWatch
from tests.browser_util import after_frames, fixture_path

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[SessionWatch, LiveServer, Path]]:
    path = tmp_path / "pi-branched-1.jsonl"
    shutil.copyfile(fixture_path("pi-branched-1.jsonl"), path)
    watch = SessionWatch(path, RenderOptions())
    server = LiveServer(watch, 0)
    # a short poll interval: shutdown() returns soon after it is called (see the stop at the
    # end of test_the_page_follows_the_session_and_keeps_the_reader_s_place)
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    try:
        yield watch, server, path
    finally:
        server.shutdown()
        server.server_close()


def grow(watch: SessionWatch, path: Path, entry_id: str, text: str) -> None:
    """Append a prompt to the session's leaf, as Pi does, and let the watch see it."""
    leaf = load_session(path).leaf_id
    line = {
        "type": "message",
        "id": entry_id,
        "parentId": leaf,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1767225600000},
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    assert watch.step() is not None


#: The page has ``id``'s entry and its live script has run: the status line is the script's,
#: put there before it restores the reader's folds, filter and place (in the same task). The
#: entry alone is not enough: the page is still being parsed when it appears.
RELOADED = (
    "id => !!document.querySelector('.live-status') && [...document.querySelectorAll("
    "'[data-entry-id]')].some(e => e.getAttribute('data-entry-id') === id)"
)


class Grower:
    """:func:`grow` in a thread: the test goes on acting on the page meanwhile."""

    def __init__(self, watch: SessionWatch, path: Path, entry_id: str, text: str) -> None:
        self.failed: list[BaseException] = []
        self.thread = threading.Thread(
            target=self._grow, args=(watch, path, entry_id, text), daemon=True
        )  # (a daemon: a hung grow cannot hold pytest's exit)
        self.deadline = time.monotonic() + 60
        self.thread.start()

    def _grow(self, *args: Any) -> None:
        try:
            grow(*args)
        except BaseException as error:  # said in the test's thread by check()
            self.failed.append(error)

    def running(self) -> bool:
        """Still making the new version, and not yet past its minute (then check() fails)."""
        return self.thread.is_alive() and time.monotonic() < self.deadline

    def check(self) -> None:
        self.thread.join(max(0.0, self.deadline - time.monotonic()))
        assert not self.thread.is_alive(), "the watch did not make the new version"
        if self.failed:
            raise self.failed[0]


def wait_for_entry(page: Any, entry_id: str, frames: int = 20) -> None:
    """Until the page reloaded with ``entry_id`` and live.js set the reader's place again for
    ``frames`` frames (it does so each frame until the height is steady: 90 frames at most):
    counted in frames, not in milliseconds, which a busy machine draws fewer of."""
    page.wait_for_function(RELOADED, arg=entry_id, timeout=20_000)
    after_frames(page, frames)


def test_the_page_follows_the_session_and_keeps_the_reader_s_place(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    watch, server, path = live
    page = viewer.open(server.url, also_allow=(server.url + "version",))
    status = page.locator(".live-status")
    page.wait_for_function(
        "() => /^Live: updated /.test(document.querySelector('.live-status').textContent)"
    )
    assert status.get_attribute("data-state") == "live"
    # in 24-hour time, as the page's other times (it said "5:22:49 AM"; stop 58)
    assert re.fullmatch(r"Live: updated \d\d:\d\d:\d\d", status.text_content() or "")

    # the reader opens a branch, picks a filter, searches, and reads at the end
    branch = page.locator("details.branch").first
    branch_id = branch.get_attribute("id")
    branch.locator("> summary").click()
    page.locator("label[for='flt-notools']").first.click()
    page.fill("#tree-search", "branch")
    for _ in range(5):  # entries take their real size as they come into view
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(100)
    old_last = page.evaluate(
        "[...document.querySelectorAll('#transcript [data-entry-id]')].pop()"
        ".getAttribute('data-entry-id')"
    )

    grow(watch, path, "live-0005", "A new prompt, typed while the page was open ✨")
    wait_for_entry(page, "live-0005")
    assert page.evaluate("id => document.getElementById(id).open", branch_id) is True
    assert page.evaluate("document.getElementById('flt-notools').checked") is True
    assert page.input_value("#tree-search") == "branch"
    at_end = page.evaluate(
        "document.getElementById('transcript').getBoundingClientRect().bottom <= innerHeight"
    )
    assert at_end, "the reader was at the end: the page follows the session"
    new = page.evaluate(
        "[...document.querySelectorAll('.live-new')].map(e => e.getAttribute('data-entry-id'))"
    )
    assert new == ["live-0005"], (new, old_last)
    assert "✨" in page.locator("[data-entry-id='live-0005']").inner_text()

    # a reader further up stays where they were: the entry at the top stays there
    where = """id => {
      const e = [...document.querySelectorAll('#transcript [data-entry-id]')]
        .find(e => e.getAttribute('data-entry-id') === id);
      return e.getBoundingClientRect().top;
    }"""
    middle = page.evaluate(
        "[...document.querySelectorAll('#transcript [data-entry-id]')]"
        ".filter(e => e.getClientRects().length)[10].getAttribute('data-entry-id')"
    )
    page.evaluate(
        "id => [...document.querySelectorAll('[data-entry-id]')]"
        ".find(e => e.getAttribute('data-entry-id') === id).scrollIntoView()",
        middle,
    )
    page.evaluate("window.scrollBy(0, -30)")
    page.wait_for_timeout(200)
    before = page.evaluate(where, middle)
    assert 0 < before < 150
    grow(watch, path, "live-0006", "Another prompt")
    wait_for_entry(page, "live-0006", frames=100)  # the place is set each frame, 90 at most
    assert abs(page.evaluate(where, middle) - before) < 3
    page.reload()  # by hand (F5): the place is kept too
    wait_for_entry(page, "live-0006", frames=100)
    assert abs(page.evaluate(where, middle) - before) < 3
    assert page.evaluate("document.getElementById('flt-notools').checked") is True

    viewer.assert_clean()  # no request but the page and its version, no error so far
    # the watcher stops: the page says so and keeps what it shows
    seen = viewer.watch(page)
    errors_before = len(seen.console_errors)
    # stopped just after a poll was answered, well before the next (a second later): a poll
    # that came while the server stopped waited unanswered in its socket's queue and was
    # reset when the socket closed (ERR_CONNECTION_RESET), not refused
    with page.expect_response(server.url + "version", timeout=15_000):
        pass
    server.shutdown()
    server.server_close()
    page.wait_for_function(
        "() => document.querySelector('.live-status').dataset.state === 'off'", timeout=15_000
    )
    assert "Not connected" in status.inner_text()
    assert page.locator("[data-entry-id='live-0006']").count() == 1
    refused = seen.console_errors[errors_before:]  # Chromium logs each refused poll
    assert refused and all("ERR_CONNECTION_REFUSED" in error for error in refused), refused
    assert seen.page_errors == [] and seen.foreign_requests() == []


def test_the_served_page_is_complete_without_javascript(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    watch, server, path = live
    grow(watch, path, "live-0007", "Seen without a script")
    page = viewer.open(server.url, js=False)
    assert "Seen without a script" in page.locator("[data-entry-id='live-0007']").inner_text()
    assert page.locator(".live-status").count() == 0
    entries = page.evaluate("document.querySelectorAll('[data-entry-id]').length")
    assert entries == len(load_session(path).entries)
    viewer.assert_clean()


def append_lines(path: Path, *lines: dict[str, Any] | str) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for line in lines:
            handle.write((line if isinstance(line, str) else json.dumps(line)) + "\n")


def label_line(number: int, parent: str, target: str) -> dict[str, Any]:
    return {
        "type": "label",
        "id": f"label-{number:02d}",
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{number:02d}.000Z",
        "targetId": target,
        "label": f"mark {number}",
    }


def test_the_fold_the_reader_opened_is_the_one_open_again(viewer: Any, tmp_path: Path) -> None:
    """Folds were named by their place among all folds of the header: a labels fold that
    appeared (an 11th label) before the problems fold the reader had opened took its place."""
    path = tmp_path / "labels.jsonl"
    shutil.copyfile(fixture_path("pi-branched-1.jsonl"), path)
    session = load_session(path)
    targets = [e.id for e in session.entries if e.id not in session.labels]
    parent = session.leaf_id
    lines: list[dict[str, Any] | str] = ["a damaged line, so the header has its problems fold"]
    for number in range(10 - len(session.labels)):  # 10 labels: listed, not folded
        lines.append(label_line(number, parent, targets[number]))
        parent = f"label-{number:02d}"
    append_lines(path, *lines)
    eleventh = label_line(10, parent, targets[10])
    watch = SessionWatch(path, RenderOptions())
    server = LiveServer(watch, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = viewer.open(server.url, also_allow=(server.url + "version",))
        assert page.locator("details.all-labels").count() == 0
        page.locator("details.diagnostics > summary").click()
        append_lines(path, eleventh)
        assert watch.step() is not None
        page.wait_for_function(  # the new version, its live script run (the folds restored)
            "() => !!document.querySelector('details.all-labels')"
            " && !!document.querySelector('.live-status')",
            timeout=20_000,
        )
        after_frames(page, 2)
        assert page.evaluate("document.querySelector('details.diagnostics').open") is True
        assert page.evaluate("document.querySelector('details.all-labels').open") is False
        viewer.assert_clean()
    finally:
        server.shutdown()
        server.server_close()


def test_typing_in_the_search_is_not_cut_off_by_a_reload(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    watch, server, path = live
    page = viewer.open(server.url, also_allow=(server.url + "version",))
    page.wait_for_function("() => document.querySelector('.live-status').dataset.state === 'live'")
    page.click("#tree-search")
    page.keyboard.type("bra")
    page.evaluate("window.__samePage = true")
    # the reader goes on pressing keys (the caret to the right: it is at the end already)
    # while the new version is made: made first (~0.4 s, seconds on a busy machine), a poll
    # after it saw no key for over 1.5 s and rightly reloaded before the next letter
    grower = Grower(watch, path, "live-0008", "While the reader types")
    while grower.running():
        page.wait_for_timeout(400)
        page.keyboard.press("ArrowRight")
    grower.check()
    for key in "nch":  # typing goes on past a poll (every 1 s): no reload mid-word
        page.wait_for_timeout(400)  # well inside the 1.5 s pause, on a slow machine too
        page.keyboard.type(key)
    assert page.evaluate("window.__samePage === true")
    wait_for_entry(page, "live-0008")  # once the reader paused
    assert page.evaluate("window.__samePage") is None
    assert page.evaluate("document.activeElement.id") == "tree-search"
    page.keyboard.type("es")  # the caret was kept at the end: the word goes on
    assert page.input_value("#tree-search") == "branches"
    assert page.evaluate("document.querySelectorAll('details.thinking[open]').length") == 0
    viewer.assert_clean()


def test_a_closed_branch_stays_closed_though_the_address_names_an_entry_in_it(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    watch, server, path = live
    inside = load_session(path)
    folded = next(b for b in inside.branches() if not b.is_active).entry_ids[-1]
    page = viewer.open(server.url, also_allow=(server.url + "version",))
    anchor = page.evaluate(
        "id => [...document.querySelectorAll('[data-entry-id]')]"
        ".find(e => e.getAttribute('data-entry-id') === id).id",
        folded,
    )
    page.goto(f"{server.url}#{anchor}")  # an outline link: the branch opens around it
    fold = "id => document.getElementById(id).parentElement.closest('details').open"
    page.wait_for_function(fold, arg=anchor, timeout=5000)
    branch = page.locator(f"[id='{anchor}']").locator("xpath=ancestor::details[1]")
    branch.locator("> summary").click()  # the reader closes it again
    page.wait_for_function(f"id => !({fold})(id)", arg=anchor, timeout=5000)
    page.wait_for_timeout(300)  # past the link's own settling: it must not reopen the branch
    assert branch.evaluate("d => d.open") is False
    grow(watch, path, "live-0009", "After the branch was closed")
    wait_for_entry(page, "live-0009")
    branch = page.locator(f"[id='{anchor}']").locator("xpath=ancestor::details[1]")
    assert branch.evaluate("d => d.open") is False
    assert page.evaluate("location.hash") == ""
    viewer.assert_clean()


def test_a_copy_saved_from_the_browser_asks_nothing(
    pw_browser: Any, live: tuple[SessionWatch, LiveServer, Path], tmp_path: Path
) -> None:
    watch = live[0]
    saved = tmp_path / "saved.html"
    saved.write_bytes(watch.state.page.html)
    context = pw_browser.new_context()
    try:
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(saved.as_uri())
        page.wait_for_timeout(1500)
        assert page.locator(".live-status").count() == 0
        assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
    finally:
        context.close()
