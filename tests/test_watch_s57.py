"""Stop 57: `pi-session watch` after a file came back as it was, with a gzip session, at
the address typed without its slash, and in Chromium: the outline as the reader left it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from exporter.live_server import LiveServer
from exporter.render import RenderOptions
from exporter.watch import SETTLE_SECONDS, SessionWatch
from tests.browser_util import after_page_timers, fixture_path
from tests.test_watch import Clock, at, get, served, user_line, version_of
from tests.test_watch_browser import RELOADED, grow, live

pytest_plugins = ["tests.browser_util"]
__all__ = ["live", "served"]  # fixtures, used by name


def test_a_file_back_as_it_was_clears_the_problem(served: Any) -> None:
    """Moved away and back unchanged (or a failed stat): the page kept saying the file was
    gone until the session was next written."""
    watch, server, path, _ = served
    shown = version_of(server)["version"]
    moved = path.with_name("moved.jsonl")
    path.rename(moved)
    assert watch.step() == "the session file is gone"
    assert version_of(server)["problem"] == "the session file is gone"
    moved.rename(path)
    assert watch.step() == "the session file is back"
    answer = version_of(server)
    assert answer["problem"] is None and answer["version"] == shown  # the same page


def test_a_file_that_cannot_be_read_says_so_until_it_changes(served: Any) -> None:
    watch, server, path, _ = served
    path.write_text("this is not a session\n", encoding="utf-8")
    problem = watch.step()
    assert problem is not None and problem.startswith("the session file cannot be read now")
    for _ in range(3):  # the same unreadable file: the problem stays
        assert watch.step() is None
        assert version_of(server)["problem"] == problem


def test_a_gzip_session_is_read_at_once(tmp_path: Path) -> None:
    """A .gz file's last byte is its trailer's, never a newline: every change waited
    SETTLE_SECONDS as if a line were half written."""
    path = tmp_path / "s.jsonl.gz"
    raw = fixture_path("pi-branched-1.jsonl").read_bytes()
    path.write_bytes(gzip.compress(raw))
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    before = watch.state.page.entries
    leaf = json.loads(raw.splitlines()[-1])["id"]
    path.write_bytes(gzip.compress(raw + user_line("gz-0001", leaf, "added to a gzip session")))
    said = watch.step()  # no time passes on this clock: no wait
    assert said is not None and said.startswith("updated:"), said
    assert watch.state.page.entries == before + 1
    assert SETTLE_SECONDS > 0


def test_the_address_without_its_slash_is_sent_to_the_page(served: Any) -> None:
    _, server, _, _ = served
    status, headers, _ = get(server, f"/{server.secret}")
    assert status == 301 and headers["Location"] == at(server)
    status, headers, _ = get(server, f"/{server.secret}?targetId=abc")
    assert status == 301 and headers["Location"] == at(server, "?targetId=abc")
    assert get(server, f"/{server.secret[:-1]}")[0] == 404  # not for another secret


def _reloaded(page: Any, entry_id: str) -> None:
    """Until the new version's live script has restored the outline, its scroll set again
    150 ms later by the page's own timer (a fixed 400 ms began when the entry appeared, the
    page still being parsed: on a busy machine the script had not run yet)."""
    page.wait_for_function(RELOADED, arg=entry_id, timeout=20_000)
    after_page_timers(page, 400)


@pytest.mark.browser
def test_a_reload_keeps_the_outline_as_the_reader_left_it(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    """Each reply reloaded the page with the outline scrolled to its top, its branches
    folded again and, on a narrow screen, its drawer shut."""
    watch, server, path = live
    page = viewer.open(server.url, also_allow=(server.url + "version",))
    page.locator("#sidebar label.ob:visible").last.click()  # unfold a folded branch
    checked = "[...document.querySelectorAll('#sidebar input.ob-t')].map(b => b.checked)"
    unfolded = page.evaluate(checked)
    assert unfolded.count(True) == 1
    page.evaluate("document.getElementById('sidebar').scrollTop = 700")
    assert page.evaluate("document.getElementById('sidebar').scrollTop") == 700
    grow(watch, path, "live-s57-1", "one more prompt")
    _reloaded(page, "live-s57-1")
    assert page.evaluate(checked) == unfolded
    assert page.evaluate("document.getElementById('sidebar').scrollTop") == 700

    page.set_viewport_size({"width": 700, "height": 900})  # the outline is a drawer here
    page.locator("label.outline-toggle").click()
    assert page.evaluate("document.getElementById('outline-open').checked")
    grow(watch, path, "live-s57-2", "and another")
    _reloaded(page, "live-s57-2")
    assert page.evaluate("document.getElementById('outline-open').checked")
    assert page.locator("#sidebar .tree").is_visible()
    viewer.assert_clean()


def test_idle_connections_hold_the_page_a_second_each_at_most(served: Any) -> None:
    """Five connections opened and left silent (a browser's spares, any local program) held
    the one thread 5 s each: the page's next poll waited 25 s."""
    import socket
    import time

    _, server, _, _ = served
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(5)]
    try:
        time.sleep(0.1)
        began = time.monotonic()
        assert version_of(server)["version"]
        waited = time.monotonic() - began
        assert waited < 7.5, f"waited {waited:.1f} s behind 5 idle connections"
        for connection in idle:  # each was closed, not answered
            connection.settimeout(2)
            assert connection.recv(1) == b""
    finally:
        for connection in idle:
            connection.close()
