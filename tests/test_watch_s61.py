"""Stop 61: `pi-session watch`. --open does not wait for the browser (one that stays in the
foreground froze the server) and never puts the address's secret on a command line; a
reader whose branch became a fold keeps their entry at the top; two new sessions at once,
the newest is followed; a file only touched (or an empty sub-agent file beside a Pi
session) is no new version."""

from __future__ import annotations

import contextlib
import html
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import encode_cwd
from exporter.live_server import LiveServer
from exporter.loader import load_session
from exporter.render import RenderOptions
from exporter.watch import FOLLOW_SECONDS, SessionWatch
from tests.browser_util import after_frames, fixture_path
from tests.conftest import Build, ctrl_c_as_at_a_terminal
from tests.test_watch import (
    Clock,
    append,
    at,
    copy_of,
    get,
    http_get,
    served,
    user_line,
    version_of,
)
from tests.test_watch_browser import append_lines, live, wait_for_entry

pytest_plugins = ["tests.browser_util"]
__all__ = ["live", "served"]  # fixtures, used by name

#: A browser that stays in the foreground, as w3m, lynx or a $BROWSER script do: it follows
#: the redirect file it may be given, fetches the page, says something on its stdout (as a
#: running Chromium does), writes what it saw, and runs until the test lets it go (exiting
#: with the status the test writes).
FAKE_BROWSER = """#!{python}
import html, http.client, json, os, pathlib, re, sys, time, urllib.parse, urllib.request
log = pathlib.Path({log!r})
given = address = sys.argv[1]
if given.startswith("file://"):
    page = pathlib.Path(urllib.request.url2pathname(urllib.parse.urlsplit(given).path))
    address = html.unescape(re.search(r'content="0;url=([^"]*)"', page.read_text("utf-8"))[1])
parts = urllib.parse.urlsplit(address)
try:
    connection = http.client.HTTPConnection(parts.netloc, timeout=10)
    connection.request("GET", parts.path)
    fetched = connection.getresponse().status
except Exception as error:
    fetched = repr(error)
print("Opening in existing browser session.", flush=True)
log.with_suffix(".part").write_text(
    json.dumps({{"argv": sys.argv[1:], "address": address, "fetched": fetched}}), "utf-8"
)
log.with_suffix(".part").rename(log)
release, deadline = log.with_suffix(".release"), time.monotonic() + 90
while not release.exists() and time.monotonic() < deadline:
    time.sleep(0.05)
sys.exit(int(release.read_text("utf-8") or 0) if release.exists() else 0)
"""


#: FALLBACK_SECONDS in the watch of the tests that wait for it to pass: the same code, a
#: shorter wait (15 s idled twice per run). No race: the fake browsers below fetch the page
#: (or not) and exit before the opener ends, and the wait starts when the opener has ended.
SHORT_FALLBACK = 2.0


def _python_m_exporter(fallback: float | None) -> list[str]:
    """``python -m exporter``, with ``browser_open.FALLBACK_SECONDS`` set to ``fallback``
    first when one is given (it is read when the wait is checked)."""
    if fallback is None:
        return [sys.executable, "-m", "exporter"]
    return [
        sys.executable,
        "-c",
        "import exporter.browser_open as b; "
        f"b.FALLBACK_SECONDS = {float(fallback)!r}; "
        "from exporter.launch import run; run()",
    ]


class OpenedWatch:
    """A real `watch --open` whose browser is :data:`FAKE_BROWSER`; its stderr read as it
    comes (a thread), so a line said while it serves can be waited for."""

    def __init__(
        self,
        folder: Path,
        session: Path,
        script: str = FAKE_BROWSER,
        fallback: float | None = None,
    ) -> None:
        self.log = folder / "browser.json"
        browser = folder / "fakebrowser"
        browser.write_text(script.format(python=sys.executable, log=str(self.log)), "utf-8")
        browser.chmod(0o755)
        env = {
            key: value
            for key, value in os.environ.items()
            # no other browser webbrowser could pick: no display, no terminal's console one
            if key not in ("DISPLAY", "WAYLAND_DISPLAY", "TERM", "PI_CODING_AGENT_DIR")
        }
        env |= {"BROWSER": str(browser), "PYTHONIOENCODING": "utf-8"}
        self.process = subprocess.Popen(
            [*_python_m_exporter(fallback), "watch", str(session), "--open"],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
            preexec_fn=ctrl_c_as_at_a_terminal,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self.url = self.process.stdout.readline().strip()
        self.errors: list[str] = []
        stderr = self.process.stderr
        self.reader = threading.Thread(target=lambda: self.errors.extend(stderr), daemon=True)
        self.reader.start()

    def browser_saw(self) -> dict[str, Any]:
        """What the browser was given and got, once it has fetched the page (30 s at most)."""
        deadline = time.monotonic() + 30
        while not self.log.exists():
            assert time.monotonic() < deadline, f"no browser ran: {self.errors}"
            assert self.process.poll() is None, self.errors
            time.sleep(0.05)
        return dict(json.loads(self.log.read_text(encoding="utf-8")))

    def release_browser(self, status: int = 0) -> None:
        self.log.with_suffix(".release").write_text(str(status), encoding="utf-8")

    def wait_for_line(self, text: str) -> None:
        deadline = time.monotonic() + 30
        while not any(text in line for line in self.errors):
            assert time.monotonic() < deadline, f"never said {text!r}: {self.errors}"
            time.sleep(0.05)

    def stop(self) -> tuple[str, str]:
        """Stopped as Ctrl-C stops it: the rest of its stdout, and all its stderr (read by
        the reader thread alone: communicate() read the same pipe at the same time, and
        what it took of it was lost, a half line perhaps)."""
        self.release_browser()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)
        assert self.process.stdout is not None
        rest = ""
        if not self.process.stdout.closed:  # (stopped a second time by the fixture)
            rest = self.process.stdout.read()
            self.process.stdout.close()
        self.reader.join(timeout=30)
        assert not self.reader.is_alive(), "stderr still open 30 s after the watch ended"
        return rest, "".join(self.errors)


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[OpenedWatch]:
    watch = OpenedWatch(tmp_path, copy_of("every-entry-type.jsonl", tmp_path))
    try:
        yield watch
    finally:
        watch.stop()


# --- 1: --open does not wait for the browser -------------------------------------------------


def test_a_browser_in_the_foreground_gets_the_page_and_others_do_too(
    opened: OpenedWatch,
) -> None:
    """The browser was started before the server served, and waited for: w3m (or any
    $BROWSER script that keeps running) asked for a page nobody answered, and so did every
    other client, for as long as it ran."""
    saw = opened.browser_saw()
    assert saw["fetched"] == 200, saw  # it was: TimeoutError('timed out')
    assert saw["address"] == opened.url
    assert http_get(opened.url + "version")[0] == 200  # the browser still running
    # one that ends with an error is still said, now that nothing waits for it
    opened.release_browser(1)
    opened.wait_for_line(f"pi-session: warning: could not open a browser; the page is {opened.url}")
    rest, errors = opened.stop()
    assert rest == "", "the browser's chatter is not the watch's output (its address)"
    assert "Opening in existing browser session." in errors
    assert opened.process.returncode == 0 and "Traceback" not in errors, errors


# --- 3: the secret on no command line ----------------------------------------------------------


def _command_lines_with(text: str) -> list[str]:
    """Every process's command line that holds ``text`` (what `ps -eo args` shows to all)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            data = cmdline.read_bytes()
            if text.encode() in data:
                found.append(data.replace(b"\0", b" ").decode("utf-8", "replace"))
    return found


@pytest.mark.browser
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")
def test_open_puts_no_secret_on_a_command_line(opened: OpenedWatch, pw_browser: Any) -> None:
    """`--open` gave the browser the address itself: every user of the computer read it
    (and the secret that keeps them from the session) in `ps` while the browser ran. It is
    given a redirect file now, this user's alone, removed when the watch ends."""
    secret = opened.url.rstrip("/").rsplit("/", 1)[1]
    saw = opened.browser_saw()
    assert _command_lines_with(secret) == []  # the browser still running
    (given,) = saw["argv"]
    assert given.startswith("file://") and secret not in given, given
    assert saw["fetched"] == 200, saw
    redirect = Path(given.removeprefix("file://"))
    assert stat.S_IMODE(redirect.stat().st_mode) == 0o600
    assert stat.S_IMODE(redirect.parent.stat().st_mode) == 0o700
    text = redirect.read_text(encoding="utf-8")
    assert f'<a href="{html.escape(opened.url)}">' in text

    # a real browser follows it to the page
    context = pw_browser.new_context()
    try:
        page = context.new_page()
        page.goto(given)
        page.wait_for_url(opened.url, timeout=20_000)
        page.wait_for_selector("meta[name='pi-session-live']", state="attached")
    finally:
        context.close()
    _, errors = opened.stop()
    assert not redirect.parent.exists(), "the redirect file outlived the watch"
    assert "Traceback" not in errors and "could not open" not in errors, errors


#: A browser such as a desktop one opened through xdg-open: it takes the address, exits 0
#: and fetches the page. One that cannot read /tmp (Ubuntu's snap Firefox) finds no file at
#: a file:// address ("file not found"); one that can follows the redirect file. Each call is
#: logged with what it fetched.
GUI_BROWSER = """#!{python}
import html, http.client, json, pathlib, re, sys, urllib.parse, urllib.request
log, given, reads_tmp = pathlib.Path({log!r}), sys.argv[1], READS_TMP
address, fetched = given, None
if given.startswith("file://") and reads_tmp:
    page = pathlib.Path(urllib.request.url2pathname(urllib.parse.urlsplit(given).path))
    address = html.unescape(re.search(r'content="0;url=([^"]*)"', page.read_text("utf-8"))[1])
if not address.startswith("file://"):
    parts = urllib.parse.urlsplit(address)
    connection = http.client.HTTPConnection(parts.netloc, timeout=10)
    connection.request("GET", parts.path)
    fetched = connection.getresponse().status
calls = json.loads(log.read_text("utf-8")) if log.exists() else []
log.with_suffix(".part").write_text(json.dumps([*calls, [given, fetched]]), "utf-8")
log.with_suffix(".part").replace(log)  # whole: the test reads it as it may be written
"""


def _browser_calls(log: Path, count: int) -> list[list[Any]]:
    """The calls a :data:`GUI_BROWSER` logged, once there are ``count`` (30 s at most)."""
    deadline = time.monotonic() + 30
    while len(calls := json.loads(log.read_text("utf-8")) if log.exists() else []) < count:
        assert time.monotonic() < deadline, calls
        time.sleep(0.1)
    return list(calls)


def test_a_browser_that_cannot_read_the_redirect_file_gets_the_address(tmp_path: Path) -> None:
    """The review: a snap browser cannot see /tmp, and `--open` showed "file not found"
    where it had opened the page. When no browser has asked for the page in time, the
    address itself is opened, and said."""
    script = GUI_BROWSER.replace("READS_TMP", "False")
    watch = OpenedWatch(
        tmp_path, copy_of("every-entry-type.jsonl", tmp_path), script, SHORT_FALLBACK
    )
    try:
        watch.wait_for_line("opening its address instead")
        (file_url, nothing), (address, fetched) = _browser_calls(watch.log, 2)
        assert file_url.startswith("file://") and nothing is None
        assert (address, fetched) == (watch.url, 200)
    finally:
        _, errors = watch.stop()
    assert "could not open" not in errors and "Traceback" not in errors, errors


def test_a_browser_that_came_for_the_page_is_not_given_the_address(tmp_path: Path) -> None:
    """The second review: the check of whether a browser came read a number bound when the
    watch began (always 0), so every --open also opened the address, secret and all, on a
    command line after the wait."""
    script = GUI_BROWSER.replace("READS_TMP", "True")
    watch = OpenedWatch(
        tmp_path, copy_of("every-entry-type.jsonl", tmp_path), script, SHORT_FALLBACK
    )
    try:
        ((file_url, fetched),) = _browser_calls(watch.log, 1)
        assert file_url.startswith("file://") and fetched == 200
        time.sleep(SHORT_FALLBACK + 2)  # past the wait: nothing more may be opened
        assert len(_browser_calls(watch.log, 1)) == 1
    finally:
        _, errors = watch.stop()
    assert "opening its address instead" not in errors, errors


# --- 2: a fork above the reader ------------------------------------------------------------------

#: The entry live.js keeps at the top (its topEntry()): its element id and where it starts.
TOP_ENTRY = """() => {
  const x = document.getElementById('transcript').getBoundingClientRect().left + 24;
  for (let y = 8; y < innerHeight / 2; y += 40) {
    const hit = document.elementFromPoint(x, y), entry = hit && hit.closest('[data-entry-id]');
    if (entry && entry.id) return [entry.id, entry.getBoundingClientRect().top];
  }
  return null;
}"""


@pytest.mark.browser
def test_a_reader_whose_branch_becomes_a_fold_keeps_their_entry_at_the_top(
    viewer: Any, live: tuple[SessionWatch, LiveServer, Path]
) -> None:
    """A prompt after Pi's /tree to an early entry makes a new branch the page's: the one
    the reader was reading became a closed fold, where the entry they kept at the top has
    no place, and the reload threw them to the end of the page."""
    watch, server, path = live
    page = viewer.open(server.url, also_allow=(server.url + "version",))
    page.wait_for_function("() => document.querySelector('.live-status').dataset.state === 'live'")
    shown = page.evaluate(
        "[...document.querySelectorAll('#transcript [data-entry-id]')]"
        ".filter(e => e.getClientRects().length && !e.closest('details:not([open])'))"
        ".map(e => [e.id, e.getAttribute('data-entry-id')])"
    )
    page.evaluate("id => document.getElementById(id).scrollIntoView()", shown[len(shown) // 2][0])
    after_frames(page, 5)
    top, where = page.evaluate(TOP_ENTRY)
    append_lines(
        path,
        {
            "type": "message",
            "id": "fork-s61",
            "parentId": shown[3][1],
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "a new branch from early on"},
        },
    )
    assert watch.step() is not None
    wait_for_entry(page, "fork-s61")
    after_frames(page, 100)  # the place is set again each frame, 90 at most
    folded = page.evaluate(
        "id => !!document.getElementById(id).closest('details:not([open])')", top
    )
    assert not folded, "the reader's entry is in a closed fold"
    now = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", top)
    assert abs(now - where) < 20, (now, where)
    viewer.assert_clean()


# --- 4: two new sessions at once -----------------------------------------------------------------


def test_of_two_new_sessions_at_once_the_newest_is_followed(tmp_path: Path) -> None:
    """Two sessions started within one look (FOLLOW_SECONDS): the newest was followed, then
    the older one, which was not known yet, took over for good."""
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/proj")
    folder.mkdir(parents=True)
    watched = folder / "2025-01-02T00-00-00-000Z_watched.jsonl"
    watched.write_bytes(fixture_path("pi-branched-1.jsonl").read_bytes())

    def newest() -> list[Path]:
        return sorted(folder.glob("*.jsonl"), key=lambda p: -p.stat().st_mtime_ns)

    def start(name: str, text: str, later: float) -> Path:
        path = folder / name
        lines = (Build.header(name), Build.user("f1", None, text))
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        os.utime(path, (later, later))
        return path

    clock = Clock()
    watch = SessionWatch(watched, RenderOptions(), newest=newest, clock=clock)
    server = LiveServer(watch, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        now = time.time()
        start("2025-01-03T00-00-00-000Z_older.jsonl", "the older of the two", now + 5)
        newer = start("2025-01-03T00-00-01-000Z_newer.jsonl", "the newest of the two", now + 9)
        for _ in range(3):
            clock.now += FOLLOW_SECONDS
            watch.step()
        assert watch.path == newer
        assert b"the newest of the two" in get(server, at(server))[2]
    finally:
        server.shutdown()
        server.server_close()


# --- 5: a change the page does not show ----------------------------------------------------------


def test_a_touched_file_or_an_empty_sub_agent_file_makes_no_new_version(served: Any) -> None:
    """`touch` (a new modification time alone) made a new version, and every open page
    reloaded for "updated: 212 entries (no new entries)"; so did an empty
    <session>/subagents/agent-x.jsonl beside a Pi session, which Pi never reads."""
    watch, server, path, _ = served
    shown = version_of(server)["version"]
    later = time.time() + 60
    os.utime(path, (later, later))
    assert watch.step() is None
    assert version_of(server)["version"] == shown
    agents = path.parent / path.stem / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-x.jsonl").write_bytes(b"")
    assert watch.step() is None
    assert version_of(server)["version"] == shown
    # a change the page shows is a new version still
    append(path, user_line("live-s61-5", load_session(path).leaf_id or "", "and on"))
    assert watch.step() == "updated: 213 entries (+1)"
    assert version_of(server)["version"] != shown
