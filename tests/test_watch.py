"""`pi-session watch`: the page made again as the session grows, served over real HTTP on
127.0.0.1 (in-process for the engine, a real subprocess for the command)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
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
from exporter.watch import FOLLOW_SECONDS, SETTLE_SECONDS, SessionWatch
from tests.browser_util import branch_depth, embedded_jsonl, fixture_path, parse_html
from tests.conftest import Build, ctrl_c_as_at_a_terminal


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def copy_of(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(fixture_path(name), target)
    return target


def user_line(entry_id: str, parent: str, text: str) -> bytes:
    line = Build.user(entry_id, parent, text, second=86_400 * 400)
    return json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[SessionWatch, LiveServer, Path, Clock]]:
    """A watch of a copy of pi-branched-1 and its server on a free port."""
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    server = LiveServer(watch, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield watch, server, path, clock
    finally:
        server.shutdown()
        server.server_close()


def get(server: LiveServer, path: str, host: str | None = None, method: str = "GET") -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.putrequest(method, path, skip_host=True)
        connection.putheader("Host", host or f"127.0.0.1:{server.port}")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def at(server: LiveServer, rest: str = "") -> str:
    """A path under the server's secret: its page, or ``version``."""
    return f"/{server.secret}/{rest}"


def version_of(server: LiveServer) -> dict[str, Any]:
    status, headers, body = get(server, at(server, "version"))
    assert status == 200 and headers["Content-Type"] == "application/json"
    return json.loads(body)


def test_the_page_is_made_again_when_the_session_grows(served: Any) -> None:
    watch, server, path, _ = served
    original = path.read_bytes()
    status, headers, body = get(server, at(server))
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "no-store" and headers["X-Frame-Options"] == "DENY"
    page = parse_html(body.decode("utf-8"))
    first = version_of(server)
    marker = page.one(lambda e: e.tag == "meta" and e.get("name") == "pi-session-live")
    assert marker.get("content") == first["version"] and first["problem"] is None
    csp = page.one(lambda e: e.get("http-equiv") == "Content-Security-Policy").get("content")
    assert csp is not None and "default-src 'none'; connect-src 'self';" in csp
    assert watch.step() is None  # nothing changed: no new version
    assert version_of(server)["version"] == first["version"]

    leaf = load_session(path).leaf_id
    assert leaf is not None
    added = user_line("live-0001", leaf, "Ein neuer Gedanke 🌱 and <script>alert(1)</script>")
    append(path, added)
    assert watch.step() == f"updated: {first['entries'] + 1:,} entries (+1)"
    second = version_of(server)
    assert second["version"] != first["version"] and second["entries"] == first["entries"] + 1
    page = parse_html(get(server, at(server))[2].decode("utf-8"))
    entry = page.entry("live-0001")
    assert "Ein neuer Gedanke 🌱 and <script>alert(1)</script>" in entry.text
    assert not page.all(lambda e: e.tag == "script" and "alert(1)" in e.raw_text)
    # the new entry is the main line's last: the page opens on it as Pi's /tree would
    transcript = page.one(lambda e: e.get("id") == "transcript")
    ids = [e.get("data-entry-id") for e in transcript.iter() if e.get("data-entry-id")]
    assert ids[-1] == "live-0001"
    assert path.read_bytes() == original + added  # only read


def test_a_problem_that_grows_is_said_once(served: Any) -> None:
    """The file's unreadable timestamps are one warning that counts them: each new one
    changed its text, and the watch said it again at every line the writer added."""
    watch, _, path, _ = served
    leaf = load_session(path).leaf_id or ""
    for number in range(3):
        line = json.loads(user_line(f"live-t{number}", leaf, "when?"))
        line["timestamp"] = "soon"
        append(path, json.dumps(line).encode("utf-8") + b"\n")
        leaf = f"live-t{number}"
        assert watch.step() is not None
    said = [w for w in watch.warnings if "[bad-timestamp]" in w]
    assert len(said) == 1 and "timestamp 'soon' is not an ISO date and time;" in said[0], said
    assert "(and 2 more lines)" in str(load_session(path).diagnostics)


def test_a_line_still_being_written_is_waited_for(served: Any) -> None:
    watch, server, path, clock = served
    before = version_of(server)
    leaf = load_session(path).leaf_id
    line = user_line("live-0002", leaf, "half written")
    append(path, line[:40])
    assert watch.step() is None and version_of(server)["version"] == before["version"]
    clock.now += SETTLE_SECONDS / 2
    assert watch.step() is None
    append(path, line[40:])  # the writer finished: made at once
    assert watch.step() is not None
    assert version_of(server)["entries"] == before["entries"] + 1
    # a line that never ends is shown as it is (a damaged line) once the wait is over
    append(path, b'{"type":"message","id":"cut')
    assert watch.step() is None
    clock.now += SETTLE_SECONDS
    count = before["entries"] + 1
    # the terminal's line says what changed: it said "updated: 26 entries", nothing more
    assert watch.step() == f"updated: {count:,} entries (+1 unreadable line)"
    assert any("cut off" in warning for warning in watch.warnings)
    assert b"live-0002" in get(server, at(server))[2]
    append(path, b"xx\n")  # finished after all, not JSON still: nothing new to say
    assert watch.step() == f"updated: {count:,} entries (no new entries)"
    append(path, user_line("live-0003", "live-0002", "and on"))
    assert watch.step() == f"updated: {count + 1:,} entries (+1)"


def test_a_file_that_goes_away_keeps_its_last_page(served: Any) -> None:
    watch, server, path, _ = served
    saved = path.read_bytes()
    page = get(server, at(server))[2]
    shown = version_of(server)["version"]
    path.unlink()
    assert watch.step() == "the session file is gone"
    assert watch.step() is None  # said once
    answer = version_of(server)
    assert answer["problem"] == "the session file is gone"
    assert get(server, at(server))[2] == page
    path.write_text("this is not a session\n", encoding="utf-8")
    problem = watch.step()
    assert problem is not None and problem.startswith("the session file cannot be read now")
    assert version_of(server)["problem"] == problem and get(server, at(server))[2] == page
    path.write_bytes(saved)  # back: a new version, and no problem
    assert watch.step() is not None
    answer = version_of(server)
    assert answer["problem"] is None and answer["version"] != shown


def test_only_the_page_and_its_version_for_this_address(served: Any) -> None:
    """DNS rebinding: a page on evil.example pointed at 127.0.0.1 must not read the session."""
    _, server, _, _ = served
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1", "localhost:1"):
        status, _, body = get(server, at(server), host=host)
        assert status == 403 and b"data-entry-id" not in body, host
    assert get(server, at(server), host=f"localhost:{server.port}")[0] == 200
    assert get(server, at(server, "?targetId=abc"))[0] == 200  # Pi's deep links
    secret = server.secret
    for path in (
        "/",  # no secret: another user of the machine gets nothing
        "/version",
        f"/{secret[:-1]}/",
        f"/{secret}x/version",
        f"/{secret}/../etc/passwd",
        f"/{secret}/version/x",
        f"/{secret}/pi-branched-1.jsonl",
        "//evil.example/",
    ):
        status, headers, body = get(server, path)
        assert status == 404 and b"data-entry-id" not in body, path
        assert headers["X-Frame-Options"] == "DENY"  # every answer has the headers
    assert get(server, at(server), method="POST")[0] == 501
    status, headers, body = get(server, at(server), method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 100_000


def test_a_new_session_in_the_folder_takes_over(tmp_path: Path) -> None:
    """Pi's /new starts a new file: a watch without SESSION follows it; an older session of
    the folder being written does not take over."""
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/proj")
    folder.mkdir(parents=True)
    old = copy_of("every-entry-type.jsonl", folder)
    watched = folder / "2025-01-02T00-00-00-000Z_watched.jsonl"
    shutil.copyfile(fixture_path("pi-branched-1.jsonl"), watched)

    def newest() -> list[Path]:
        return sorted(folder.glob("*.jsonl"), key=lambda p: -p.stat().st_mtime_ns)

    clock = Clock()
    watch = SessionWatch(watched, RenderOptions(), newest=newest, clock=clock)
    future = time.time() + 60
    os.utime(old, (future, future))  # an older session, written to: not followed
    clock.now += FOLLOW_SECONDS
    assert watch.step() is None and watch.path == watched

    def start(name: str, text: str) -> Path:
        path = folder / name
        lines = (Build.header(name), Build.user("f1", None, text))
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        return path

    # new, though the old session was written to later: it is followed all the same
    fresh = start("2025-01-03T00-00-00-000Z_fresh.jsonl", "a brand new session")
    assert watch.step() is None  # looked at most every FOLLOW_SECONDS
    clock.now += FOLLOW_SECONDS
    news = watch.step()
    assert news is not None and news.startswith("now watching") and watch.path == fresh
    assert b"a brand new session" in watch.state.page.html
    assert watch.state.page.entries == 1
    # a second /new takes over; the first, written to again, does not take it back
    second = start("2025-01-04T00-00-00-000Z_second.jsonl", "and another one")
    os.utime(second, (future + 5, future + 5))
    clock.now += FOLLOW_SECONDS
    assert watch.step() == f"now watching {second}, a new session of this folder"
    os.utime(fresh, (future + 9, future + 9))
    clock.now += FOLLOW_SECONDS
    assert watch.step() is None and watch.path == second


def test_a_claude_code_sub_agent_at_work_is_seen(tmp_path: Path) -> None:
    """A Claude Code sub-agent writes only to its own transcript until it is done: a change
    there alone makes the page again."""
    from tests.test_claude_code import sub_agent_session, u  # after conftest: assert rewriting

    path = sub_agent_session(tmp_path)
    watch = SessionWatch(path, RenderOptions())
    agent = tmp_path / path.stem / "subagents" / "agent-a1b2c3d.jsonl"
    line = json.loads(agent.read_text(encoding="utf-8").splitlines()[-1])
    line |= {"uuid": u(14), "parentUuid": u(13), "timestamp": "2026-11-21T09:00:14.000Z"}
    line["message"] = {**line["message"], "id": "msg_14"}  # a new answer (not a block of 13's)
    before = path.read_bytes()
    with open(agent, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    assert watch.step() is not None
    assert f'data-entry-id="{u(14)}"'.encode() in watch.state.page.html
    assert path.read_bytes() == before


def test_leaf_is_kept_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    path = copy_of("pi-branched-2.jsonl", tmp_path)
    session = load_session(path)
    other = next(b for b in session.branches() if not b.is_active).leaf_id
    watch = SessionWatch(path, RenderOptions(), leaf=other)
    append(path, user_line("live-0003", session.active_path[-1], "on the newest branch"))
    assert watch.step() is not None
    page = parse_html(watch.state.page.html.decode("utf-8"))
    # the --leaf branch stays the main line; the entry added elsewhere is folded in a branch
    assert branch_depth(page.entry(other)) == 0
    assert branch_depth(page.entry("live-0003")) >= 1
    with pytest.raises(KeyError):
        SessionWatch(path, RenderOptions(), leaf="no-such-entry")


# --- the command ---------------------------------------------------------------------------


def start_watch(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env["PYTHONIOENCODING"] = "utf-8"
    process = subprocess.Popen(
        [sys.executable, "-m", "exporter", "watch", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env,
        preexec_fn=ctrl_c_as_at_a_terminal,  # the test stops it with SIGINT, as Ctrl-C does
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    return process, url


def http_get(url: str) -> tuple[int, bytes]:
    parts = url.split("/", 3)
    connection = http.client.HTTPConnection(parts[2], timeout=10)
    try:
        connection.request("GET", "/" + (parts[3] if len(parts) > 3 else ""))
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def served_version(url: str) -> str:
    return str(json.loads(http_get(url + "version")[1])["version"])


def wait_for_a_version_after(url: str, version: str) -> None:
    """Until the served page is a version newer than ``version`` (30 s at most)."""
    deadline = time.monotonic() + 30
    while served_version(url) == version:
        assert time.monotonic() < deadline, "the page was not made again"
        time.sleep(0.2)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_the_command_serves_follows_and_stops_cleanly(tmp_path: Path, stop: int) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    process, url = start_watch(str(path), cwd=tmp_path)
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/"), url
        status, page = http_get(url)
        assert status == 200 and b"pi-session-live" in page
        first = served_version(url)
        append(path, user_line("live-0004", load_session(path).leaf_id or "", "from the CLI"))
        wait_for_a_version_after(url, first)
        assert b"from the CLI" in http_get(url)[1]
    finally:
        process.send_signal(stop)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    assert "Traceback" not in errors
    assert f"watching {path}" in errors and "updated: 213 entries (+1)" in errors
    assert errors.rstrip().endswith("pi-session: stopped")
    with pytest.raises(OSError):
        http_get(url)  # the port is closed


def _catches(pid: int, signum: int) -> bool:
    """The process has its own handler for ``signum`` (Linux: /proc's SigCgt mask)."""
    with contextlib.suppress(OSError):
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        caught = re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.MULTILINE)
        return caught is not None and bool(int(caught.group(1), 16) >> (signum - 1) & 1)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_stopping_while_the_first_page_is_made_is_a_clean_stop(tmp_path: Path, stop: int) -> None:
    """The first page of a big session takes seconds; stopped then, the watch ended with
    130 ("interrupted") or, for SIGTERM, 143 and no word (bug hunt 2026-12-05)."""
    path = tmp_path / "slow.jsonl"
    stamp = "2025-01-01T00:00:00Z"
    lines = [json.dumps({"type": "session", "version": 3, "id": "slow", "timestamp": stamp})]
    parent = None
    for i in range(30):  # each text ~4,900 "[": markdown-it takes ~0.3 s over each
        entry = {"type": "message", "id": f"e{i}", "parentId": parent, "timestamp": stamp}
        entry["message"] = {"role": "user", "content": "[a " * 4_900, "timestamp": 0}
        lines.append(json.dumps(entry))
        parent = f"e{i}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "exporter", "watch", str(path), "--port", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env={**env, "PYTHONIOENCODING": "utf-8"},
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    try:
        deadline = time.monotonic() + 30
        while not _catches(process.pid, signal.SIGTERM):  # the watch has begun
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.3)
    finally:
        process.send_signal(stop)
        out, errors = process.communicate(timeout=60)
    assert out == "", "the first page was made before the signal: make the session bigger"
    assert process.returncode == 0, errors
    assert errors.rstrip().endswith("pi-session: stopped") and "Traceback" not in errors


def test_the_command_without_session_follows_the_folder_s_new_session(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    sessions = tmp_path / "sessions"
    folder = sessions / encode_cwd(str(project))
    folder.mkdir(parents=True)
    copy_of("pi-branched-1.jsonl", folder)
    process, url = start_watch("--sessions-dir", str(sessions), cwd=project)
    try:
        assert b"pi-branched-1.jsonl" in http_get(url)[1]
        fresh = folder / "2026-12-02T11-00-00-000Z_0198-fresh.jsonl"
        lines = (Build.header("fresh-session"), Build.user("f1", None, "typed after /new"))
        fresh.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        deadline = time.monotonic() + 30
        while b"typed after /new" not in http_get(url)[1]:
            assert time.monotonic() < deadline, "the new session was not followed"
            time.sleep(0.2)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert f"now watching {fresh}, a new session of this folder" in errors, errors


def test_the_command_redacts_every_version_when_asked(tmp_path: Path) -> None:
    """`watch --redact` for a screen others see: a token Pi writes later is never served."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    token = "ghp_" + "Z3kq9" * 7 + "a"
    process, url = start_watch(str(path), "--redact", "--no-thinking", cwd=tmp_path)
    try:
        first = served_version(url)
        append(path, user_line("live-0008", load_session(path).leaf_id or "", f"use {token}"))
        wait_for_a_version_after(url, first)
        page = http_get(url)[1].decode("utf-8")
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert "live-0008" in page and "[REDACTED:" in page
    assert token not in page and "Z3kq9Z3kq9" not in page
    (embedded,) = embedded_jsonl(page)  # the download is the redacted copy too
    assert b"live-0008" in embedded and b"Z3kq9Z3kq9" not in embedded
    assert token in path.read_text(encoding="utf-8")  # the file itself is only read


def test_an_excluded_entry_stays_out_of_every_version(tmp_path: Path) -> None:
    """`watch --exclude ID` as `export --exclude`: the entry is never served, however often
    the page is made again; an id the session lacks is refused before anything is served."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    assert "Partial answer" in path.read_text(encoding="utf-8")  # e12's text
    process, url = start_watch(str(path), "--exclude", "e12", cwd=tmp_path)
    try:
        first = http_get(url)[1].decode("utf-8")
        version = served_version(url)
        append(path, user_line("live-0009", load_session(path).leaf_id or "", "typed later"))
        wait_for_a_version_after(url, version)
        later = http_get(url)[1].decode("utf-8")
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert "Traceback" not in errors
    assert "Partial answer" not in first and "Partial answer" not in later
    assert "typed later" in later and 'id="e12"' not in later
    for embedded in (embedded_jsonl(first)[0], embedded_jsonl(later)[0]):
        assert b"Partial answer" not in embedded
    refused = subprocess.run(
        [sys.executable, "-m", "exporter", "watch", str(path), "--exclude", "e99"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout
    assert "--exclude: no entry e99 in this session; nothing was served" in refused.stderr


def test_the_command_s_clean_errors(tmp_path: Path) -> None:
    path = copy_of("every-entry-type.jsonl", tmp_path)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = str(taken.getsockname()[1])
        process, url = start_watch(str(path), "--port", port, cwd=tmp_path)
        _, errors = process.communicate(timeout=60)
        assert url == "" and process.returncode == 2
        assert f"port {port} on 127.0.0.1 is in use" in errors and "Traceback" not in errors
    finally:
        taken.close()
    cases = [
        (["--leaf", "nope"], 1, "no entry with id 'nope'"),
        (["--port", "70000"], 1, "70000 is not in the range"),
        (["-"], 1, "- (stdin) never changes: name the file"),
        (["--demo"], 1, "not both"),
        (["--report", "r.jsonl"], 1, "--report is for export, redact, share and publish"),
    ]
    for extra, code, message in cases:
        args = [str(path), *extra] if extra != ["-"] else extra
        process = subprocess.run(
            [sys.executable, "-m", "exporter", "watch", *args],
            cwd=tmp_path,
            input="",
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
        )
        assert process.returncode == code and message in process.stderr, (extra, process.stderr)
        assert "Traceback" not in process.stderr


def _policy(html: str) -> dict[str, list[str]]:
    page = parse_html(html)
    (meta,) = page.all(lambda e: e.get("http-equiv") == "Content-Security-Policy")
    content = meta.get("content") or ""
    return {d.split()[0]: d.split()[1:] for d in content.split(";") if d.strip()}


def test_a_served_page_may_ask_its_own_server_and_nothing_more(tmp_path: Path) -> None:
    """The served page's policy is the exported page's plus `connect-src 'self'` (its polls)
    and the hashes of its status line's style and script; an exported page has neither."""
    from exporter.render import render_session
    from exporter.render.assets import live_css_and_script
    from exporter.render.csp import _hashes

    session = load_session(fixture_path("every-entry-type.jsonl"))
    exported = _policy(render_session(session))
    served = _policy(render_session(session, RenderOptions(live_version="v1")))
    live_css, live_js = live_css_and_script()
    assert "connect-src" not in exported
    assert served == {
        **exported,
        "connect-src": ["'self'"],
        "style-src": [*exported["style-src"], _hashes([live_css])],
        "script-src": [*exported["script-src"], _hashes([live_js])],
    }
    assert b"pi-session-live" not in render_session(session).encode()


# --- found in review ---------------------------------------------------------------------


def test_a_fifo_in_the_file_s_place_is_a_problem_not_a_hang(served: Any) -> None:
    watch, server, path, _ = served
    page = get(server, at(server))[2]
    path.unlink()
    os.mkfifo(path)
    looked = threading.Thread(target=lambda: setattr(watch, "looked", watch.step()), daemon=True)
    looked.start()
    looked.join(timeout=10)
    assert not looked.is_alive(), "the look blocked on the FIFO"
    assert getattr(watch, "looked", None) == "the session file is not a regular file now"
    assert get(server, at(server))[2] == page and version_of(server)["problem"]
    path.unlink()
    shutil.copyfile(fixture_path("pi-branched-1.jsonl"), path)
    assert watch.step() is not None and version_of(server)["problem"] is None


def test_a_file_unreadable_for_a_while_is_read_once_it_can_be(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chmod changes neither size nor time: a failed read must not mark the file seen."""
    import exporter.watch as watch_module

    watch, server, path, _ = served
    real = watch_module._snapshot
    refused = [True]

    def load(file: Any, *args: Any) -> Any:
        if refused[0]:
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args)

    monkeypatch.setattr(watch_module, "_snapshot", load)
    append(path, user_line("live-0010", load_session(path).leaf_id or "", "written meanwhile"))
    problem = watch.step()
    assert problem == "the session file cannot be read now: Permission denied"
    refused[0] = False  # chmod 644: nothing about the file's stamp changed
    assert watch.step() is not None
    assert (
        version_of(server)["problem"] is None and b"written meanwhile" in get(server, at(server))[2]
    )


def test_a_slow_client_cannot_hold_the_server(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """One header byte every few seconds kept the only thread: the head now has one
    deadline for all of it."""
    import exporter.live_server as live_server

    monkeypatch.setattr(live_server, "REQUEST_SECONDS", 1.0)
    _, server, _, _ = served
    slow = socket.create_connection(("127.0.0.1", server.port))
    stop = threading.Event()

    def dribble() -> None:
        with contextlib.suppress(OSError):
            slow.sendall(b"GET / HTTP/1.0\r\n")
            while not stop.wait(0.3):
                slow.sendall(b"X")

    threading.Thread(target=dribble, daemon=True).start()
    try:
        time.sleep(0.2)
        began = time.monotonic()
        assert version_of(server)["version"]
        assert time.monotonic() - began < 3, "a normal request waited behind the slow one"
    finally:
        stop.set()
        slow.close()


def _page_request(server: LiveServer) -> socket.socket:
    """A connection with small buffers at both ends (an answer does not fit in them, as
    a big page over a slow link does not) that has asked for the page."""
    server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # (inherited)
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", server.port))
    host = f"127.0.0.1:{server.port}"
    client.sendall(f"GET {at(server)} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
    return client


def test_a_slow_reader_gets_the_whole_page(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request's deadline went on bounding the answer: a reader on a slow link got the
    page cut off (at ~5 s), silently, without its live script (bug hunt 2026-12-05)."""
    import exporter.live_server as live_server

    monkeypatch.setattr(live_server, "REQUEST_SECONDS", 0.5)
    watch, server, _, _ = served
    page = watch.state.page.html
    assert len(page) > 200_000
    client = _page_request(server)
    received = b""
    began = time.monotonic()
    with client:
        client.settimeout(10)
        while chunk := client.recv(8192):
            received += chunk
            time.sleep(0.02)  # ~400 KB/s at most: longer than the request's deadline
    assert time.monotonic() - began > 0.5
    head, _, body = received.partition(b"\r\n\r\n")
    assert f"Content-Length: {len(page)}".encode() in head
    assert body == page


def test_a_reader_that_stops_is_let_go(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sending the answer has its own bound: a client that stops reading does not keep the
    one thread (the next request is answered)."""
    import exporter.live_server as live_server

    monkeypatch.setattr(live_server, "WRITE_STALL_SECONDS", 0.5)
    _, server, _, _ = served
    with _page_request(server):  # never read
        time.sleep(0.2)
        began = time.monotonic()
        assert version_of(server)["version"]
        assert time.monotonic() - began < 5, "a request waited behind a stalled reader"


def test_a_dangling_sub_agent_link_is_not_the_session_gone(tmp_path: Path) -> None:
    path = copy_of("pi-branched-1.jsonl", tmp_path)
    agents = tmp_path / path.stem / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    watch = SessionWatch(path, RenderOptions())
    append(path, user_line("live-0011", load_session(path).leaf_id or "", "still here"))
    assert watch.step() == "updated: 213 entries (+1)"


def test_the_command_ends_with_its_stdin_when_asked(tmp_path: Path) -> None:
    """Pi's /live-html starts the watch on a pipe: Pi gone (even by SIGKILL), the watch goes."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    process = subprocess.Popen(
        [sys.executable, "-m", "exporter", "watch", str(path), "--until-stdin-closes"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None and process.stdin is not None
    url = process.stdout.readline().strip()
    assert http_get(url)[0] == 200
    time.sleep(1)
    assert process.poll() is None  # stdin open: it goes on
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert process.stderr is not None
    errors = process.stderr.read()
    assert process.returncode == 0 and errors.rstrip().endswith("pi-session: stopped"), errors


def test_the_address_s_secret_can_be_given_and_must_be_sound(tmp_path: Path) -> None:
    path = copy_of("every-entry-type.jsonl", tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    secret = "a-secret-of-our-own_0123"
    process = subprocess.Popen(
        [sys.executable, "-m", "exporter", "watch", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "PI_SESSION_WATCH_SECRET": secret},
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.endswith(f"/{secret}/") and http_get(url)[0] == 200
    finally:
        process.terminate()
        process.communicate(timeout=30)
    bad = subprocess.run(
        [sys.executable, "-m", "exporter", "watch", str(path)],
        capture_output=True,
        text=True,
        env={**env, "PI_SESSION_WATCH_SECRET": "short"},
        timeout=60,
    )
    assert bad.returncode == 1 and "PI_SESSION_WATCH_SECRET must be 16-64" in bad.stderr


def stopped(process: subprocess.Popen[str]) -> str:
    """Stop a watch as Ctrl-C does; what it said on stderr."""
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=30)[1]


def in_clear(errors: str) -> list[str]:
    """The credential warnings among a watch's lines."""
    return [line for line in errors.splitlines() if "in clear" in line]


def test_credentials_in_clear_are_said_at_start_and_when_more_come(tmp_path: Path) -> None:
    """As `export` says of a page made without redaction: once when watch starts serving,
    again only when a new version holds more (never on every version, never the value);
    `watch --redact` says nothing."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    first_token = "ghp_" + "Q7mz2" * 7 + "b"
    second_token = "AKIA" + "QYLPMN5HFIQR7XQZ"
    append(path, user_line("live-0101", load_session(path).leaf_id or "", f"use {first_token}"))
    process, url = start_watch(str(path), cwd=tmp_path)
    try:
        version = served_version(url)
        append(path, user_line("live-0102", "live-0101", "no secret in this one"))
        wait_for_a_version_after(url, version)
        version = served_version(url)
        append(path, user_line("live-0103", "live-0102", f"aws key {second_token}"))
        wait_for_a_version_after(url, version)
    finally:
        errors = stopped(process)
    said = in_clear(errors)
    assert said == [
        "pi-session: warning: the page holds 1 credential of a known format in clear "
        "(github-token); watch --redact serves it redacted",
        "pi-session: warning: the page holds 2 credentials of a known format in clear "
        "(github-token, aws-access-key-id); watch --redact serves it redacted",
    ], errors
    assert first_token not in errors and second_token not in errors
    redacted, url = start_watch(str(path), "--redact", cwd=tmp_path)
    try:
        served_version(url)
    finally:
        errors = stopped(redacted)
    assert in_clear(errors) == []


def test_a_cut_without_redaction_is_checked_on_what_its_page_holds(tmp_path: Path) -> None:
    """--exclude alone redacts nothing: the page is checked as export checks one (review
    h174/h175: a cut option silenced the warning), and on the cut copy: the token of the
    excluded entry is not on the page and is not said; one that comes later is."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    hidden = "ghp_" + "Q7mz2" * 7 + "b"
    shown = "AKIA" + "QYLPMN5HFIQR7XQZ"
    append(path, user_line("live-0201", load_session(path).leaf_id or "", f"use {hidden}"))
    process, url = start_watch(str(path), "--exclude", "live-0201", cwd=tmp_path)
    try:
        version = served_version(url)
        append(path, user_line("live-0202", "live-0201", f"aws key {shown}"))
        wait_for_a_version_after(url, version)
        page = http_get(url)[1]
    finally:
        errors = stopped(process)
    said = in_clear(errors)
    assert said == [
        "pi-session: warning: the page holds 1 credential of a known format in clear "
        "(aws-access-key-id); watch --redact serves it redacted",
    ], errors
    assert shown.encode() in page and hidden.encode() not in page


def test_a_claude_code_sub_agents_credentials_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The watched page shows a Claude Code session's sub-agents: their transcripts are
    checked with the session's file (only the file was)."""
    from exporter.watch_cli import _CredentialWatch
    from tests.test_site_credentials import PLANTED_GITHUB, sub_agent_with_token

    path = sub_agent_with_token(tmp_path)
    _CredentialWatch(None).check(path)
    said = capsys.readouterr().err
    assert "the page holds 1 credential of a known format in clear (github-token)" in said
    assert PLANTED_GITHUB not in said


def test_a_credential_that_takes_another_s_place_on_the_page_is_said(tmp_path: Path) -> None:
    """--active-branch-only: the agent goes back and a new branch with another token becomes
    the page, the old one leaves it; the page still holds one credential, a new one (review
    h177 F2: only a higher count was said)."""
    path = copy_of("every-entry-type.jsonl", tmp_path)
    fork = load_session(path).leaf_id or ""
    left = "ghp_" + "Q7mz2" * 7 + "b"
    taking = "AKIA" + "QYLPMN5HFIQR7XQZ"
    append(path, user_line("live-0301", fork, f"use {left}"))
    process, url = start_watch(str(path), "--active-branch-only", cwd=tmp_path)
    try:
        version = served_version(url)
        append(path, user_line("live-0302", fork, f"aws key {taking}"))
        wait_for_a_version_after(url, version)
        page = http_get(url)[1]
        version = served_version(url)
        append(path, user_line("live-0303", "live-0302", "the same key again: " + taking))
        wait_for_a_version_after(url, version)
    finally:
        errors = stopped(process)
    assert taking.encode() in page and left.encode() not in page
    assert in_clear(errors) == [
        "pi-session: warning: the page holds 1 credential of a known format in clear "
        "(github-token); watch --redact serves it redacted",
        "pi-session: warning: the page holds 1 credential of a known format in clear "
        "(aws-access-key-id); watch --redact serves it redacted",
    ], errors


def test_a_cut_copy_is_counted_when_made_and_not_kept(tmp_path: Path) -> None:
    """A cut without redaction: what its copy holds is counted as it is made, and the copy
    is not kept between versions (review h177 F3: a 25 MB session's copy stayed, ~75 MB)."""
    from exporter.session import Session
    from exporter.watch_cli import _LastPrepared

    token = "ghp_" + "Q7mz2" * 7 + "b"
    path = copy_of("every-entry-type.jsonl", tmp_path)
    append(path, user_line("live-0401", load_session(path).leaf_id or "", f"use {token}"))
    session = load_session(path)
    prepare = _LastPrepared(lambda s, context: (s, context), count=True)
    assert prepare(session, None) == (session, None)
    found, more = prepare.found or ({}, True)
    assert list(found.values()) == ["github-token"] and not more
    assert token not in repr(vars(prepare))  # digests only, never the value
    assert not any(isinstance(value, Session) for value in vars(prepare).values())
