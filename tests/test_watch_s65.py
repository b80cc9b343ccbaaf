"""Stop 65: `pi-session watch` and a Claude Code sub-agent at work (shown under the call that
runs it when the session says which; a transcript nothing names makes no page), a sub-agent's
line still being written (waited for, as the session file's own), a request head too big to
read (431, saying why: another program's cookies for 127.0.0.1), and "1 entry"."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import exporter.watch as watch_module
from exporter.live_server import REQUEST_BYTES, LiveServer
from exporter.loader import load_session
from exporter.render import RenderOptions
from exporter.watch import SETTLE_SECONDS, SessionWatch
from tests.claude_code_corpus import sub_agent_session, u
from tests.conftest import Build
from tests.test_watch import Clock, append, copy_of

pytest_plugins = ["tests.browser_util"]

AGENT = "a1b2c3d"  # the corpus's sub-agent, run by its Task call toolu_T (line 2)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, values: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")


def _agent_file(session: Path) -> Path:
    return session.parent / session.stem / "subagents" / f"agent-{AGENT}.jsonl"


def _agent_progress(after: dict[str, Any]) -> dict[str, Any]:
    """The line Claude Code (before 2.1.71) writes in the session's file as its sub-agent
    works: the agent's id and the call it runs (``parentToolUseID``)."""
    return {
        "parentUuid": after["uuid"],
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w",
        "sessionId": after["sessionId"],
        "type": "progress",
        "data": {"type": "agent_progress", "agentId": AGENT, "prompt": "List the test files"},
        "toolUseID": "agent_msg_01",
        "parentToolUseID": "toolu_T",
        "uuid": "5e1d0c2b-0000-4000-8000-0000000000f1",
        "timestamp": "2026-11-21T09:00:02.500Z",
    }


def _at_work(folder: Path, link: str) -> Path:
    """The corpus session while its sub-agent works: the Task call made, no result yet; the
    session says which agent runs it by ``link``: a progress line, its ``.meta.json``, or
    nothing at all."""
    path = sub_agent_session(folder)
    main = _lines(path)[:2]
    if link == "progress":
        main.append(_agent_progress(main[1]))
    elif link == "meta":
        meta = {"agentType": "Explore", "description": "Find the tests", "toolUseId": "toolu_T"}
        _agent_file(path).with_name(f"agent-{AGENT}.meta.json").write_text(
            json.dumps(meta), encoding="utf-8"
        )
    _write(path, main)
    return path


def _agent_says(path: Path, number: int, text: str) -> dict[str, Any]:
    """The sub-agent's next line (an answer), after its last."""
    agent = _agent_file(path)
    last = _lines(agent)[-1]
    line = {**last, "uuid": u(number), "parentUuid": last["uuid"], "type": "assistant"}
    line["message"] = {
        "role": "assistant",
        "id": f"msg_{number}",
        "model": "claude-opus-4-6",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return line


def _append_line(path: Path, value: dict[str, Any]) -> None:
    append(path, (json.dumps(value) + "\n").encode("utf-8"))


# --- 1: a sub-agent at work -----------------------------------------------------------------


@pytest.mark.parametrize("link", ["progress", "meta"])
def test_a_sub_agent_at_work_is_a_branch_after_its_call(tmp_path: Path, link: str) -> None:
    """Only a Task result's ``agentId`` linked a sub-agent: one at work was on no page, and
    its writes made the page again for nothing. The session says which call runs it."""
    path = _at_work(tmp_path, link)
    session = load_session(path)
    assert session.parent_of(u(10)) == u(2)  # after the call, which has no result yet
    assert [u(10), u(11), u(12), u(13)] == session.path_to(u(13))[-4:]
    assert session.leaf_id == u(2)  # the session's own line stays its path
    # the result lands and names the agent: after the result, as any finished one
    _write(path, _lines(sub_agent_session(tmp_path / "done")))
    assert load_session(path).parent_of(u(10)) == u(3)


def test_a_call_for_another_agent_links_nothing(tmp_path: Path) -> None:
    """A progress line or .meta.json whose call is no Task call of this file links nothing."""
    path = _at_work(tmp_path, "progress")
    main = _lines(path)
    main[2]["parentToolUseID"] = "toolu_elsewhere"
    _write(path, main)
    assert u(10) not in load_session(path).by_id


def test_the_live_page_shows_a_sub_agent_at_work_as_it_works(
    tmp_path: Path, pw_browser: Any
) -> None:
    """In Chromium: the agent's turns are on the page while it works, and its next turn
    comes to the open page though only its own file changed."""
    path = _at_work(tmp_path, "progress")
    watch = SessionWatch(path, RenderOptions())
    server = LiveServer(watch, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = pw_browser.new_page()
    try:
        page.goto(server.url)
        found = page.locator(f'[data-entry-id="{u(13)}"]')
        assert found.count() == 1 and "Two files." in found.text_content()
        _append_line(_agent_file(path), _agent_says(path, 14, "AGENT-WORK-14"))
        assert watch.step() is not None
        page.wait_for_function(
            "id => document.querySelector(`[data-entry-id='${id}']`) !== null",
            arg=u(14),
            timeout=20_000,
        )
        assert "AGENT-WORK-14" in page.locator(f'[data-entry-id="{u(14)}"]').text_content()
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def test_a_transcript_nothing_names_makes_no_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes to a sub-agent's file that no line of the session names (and no .meta.json
    ties to a call of it) cannot change the page: they made it again at each look."""
    path = _at_work(tmp_path, "none")
    watch = SessionWatch(path, RenderOptions())
    made: list[object] = []
    render = watch_module.render_session

    def counted(*args: Any, **kwargs: Any) -> str:
        made.append(args)
        return render(*args, **kwargs)

    monkeypatch.setattr(watch_module, "render_session", counted)
    for number in range(14, 19):
        _append_line(_agent_file(path), _agent_says(path, number, f"AGENT-WORK-{number}"))
        assert watch.step() is None
    assert made == []
    # once the session names it, its writes are the page's
    _append_line(path, _agent_progress(_lines(path)[1]))
    assert watch.step() is not None
    assert b"AGENT-WORK-18" in watch.state.page.html
    _append_line(_agent_file(path), _agent_says(path, 19, "AGENT-WORK-19"))
    assert watch.step() is not None
    assert b"AGENT-WORK-19" in watch.state.page.html


# --- 3: a sub-agent's line still being written ----------------------------------------------


def test_a_sub_agent_s_line_still_being_written_is_waited_for(tmp_path: Path) -> None:
    """The session file's half-written last line is waited for (two seconds); a sub-agent's
    was read at once: a warning, a damaged line on the page and a version, for nothing."""
    path = sub_agent_session(tmp_path)
    clock = Clock()
    watch = SessionWatch(path, RenderOptions(), clock=clock)
    watch.warnings.clear()
    entries = watch.state.page.entries
    line = (json.dumps(_agent_says(path, 14, "HALF-THEN-WHOLE")) + "\n").encode("utf-8")
    append(_agent_file(path), line[:30])
    assert watch.step() is None
    clock.now += SETTLE_SECONDS / 2
    assert watch.step() is None
    assert watch.warnings == [] and watch.state.page.damaged == 0
    append(_agent_file(path), line[30:])
    assert watch.step() == f"updated: {entries + 1} entries (+1)"
    assert watch.warnings == [] and b"HALF-THEN-WHOLE" in watch.state.page.html
    # a line that never ends is read as it is once waited for, as the file's own is
    append(_agent_file(path), b'{"parentUuid": "x", "isSide')
    assert watch.step() is None
    clock.now += SETTLE_SECONDS
    assert watch.step() is not None
    assert any("could not be read" in warning for warning in watch.warnings)


def test_a_sub_agent_s_line_begun_after_the_look_is_not_read_in_half(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look saw the sub-agent's file end a line, then the agent began the next one
    before the page was made: that half is left for the next look, not warned of."""
    path = sub_agent_session(tmp_path)
    watch = SessionWatch(path, RenderOptions(), clock=Clock())
    watch.warnings.clear()
    entries = watch.state.page.entries
    whole = (json.dumps(_agent_says(path, 14, "WHOLE")) + "\n").encode("utf-8")
    append(_agent_file(path), whole)
    later = {**_agent_says(path, 15, "LATER"), "parentUuid": u(14)}
    begun = (json.dumps(later) + "\n").encode("utf-8")
    parse = watch_module.parse_session_bytes
    chunks = [begun[:25]]

    def a_writer_begins_then_the_read(*args: Any, **kwargs: Any) -> Any:
        while chunks:
            append(_agent_file(path), chunks.pop())
        return parse(*args, **kwargs)

    monkeypatch.setattr(watch_module, "parse_session_bytes", a_writer_begins_then_the_read)
    assert watch.step() == f"updated: {entries + 1} entries (+1)"
    assert watch.warnings == [] and watch.state.page.damaged == 0
    append(_agent_file(path), begun[25:])
    assert watch.step() == f"updated: {entries + 2} entries (+1)"
    assert watch.warnings == [] and b"LATER" in watch.state.page.html


# --- 2: a request head too big to read ------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[LiveServer]:
    watch = SessionWatch(copy_of("pi-branched-1.jsonl", tmp_path), RenderOptions())
    server = LiveServer(watch, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _ask(server: LiveServer, head: bytes) -> bytes:
    """Send ``head`` as it is; the whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(head)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def _head_of(server: LiveServer, size: int) -> bytes:
    """A GET of the page exactly ``size`` bytes long, its blank last line included."""
    start = f"GET /{server.secret}/version HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
    padding = size - len(start) - len("Cookie: x=\r\n\r\n")
    return f"{start}Cookie: x={'v' * padding}\r\n\r\n".encode("ascii")


def test_the_limit_on_a_request_s_head_is_exact(
    served: LiveServer, capfd: pytest.CaptureFixture[str]
) -> None:
    """It was checked before each 4 KB read: heads of ~20 KB were read, and one over that
    had an empty reply, said nowhere."""
    assert len(_head_of(served, REQUEST_BYTES)) == REQUEST_BYTES
    assert _ask(served, _head_of(served, REQUEST_BYTES)).startswith(b"HTTP/1.0 200 ")
    for size in (REQUEST_BYTES + 1, REQUEST_BYTES + 3000, 40_000):
        answer = _ask(served, _head_of(served, size))
        assert answer.startswith(b"HTTP/1.0 431 "), (size, answer[:80])
        headers, _, body = answer.partition(b"\r\n\r\n")
        assert b"Content-Type: text/plain; charset=utf-8" in headers
        assert b"cookies for 127.0.0.1" in body and b"localhost" in body
        assert served.secret.encode() not in answer
    said = capfd.readouterr().err
    assert said.count("answered 431") == 1, said  # once, however many came
    assert served.secret not in said


def test_a_browser_with_big_cookies_for_127_0_0_1_is_told_why(
    served: LiveServer, pw_browser: Any
) -> None:
    """Cookies other local programs set for 127.0.0.1 are sent to every port: over 16 KB,
    the page was an empty reply (ERR_EMPTY_RESPONSE). Chromium now shows why, and the
    address with localhost (no such cookies) serves the page."""
    context = pw_browser.new_context()
    cookies = [
        {"name": f"otherapp{i}", "value": "v" * 3500, "domain": "127.0.0.1", "path": "/"}
        for i in range(6)
    ]
    context.add_cookies(cookies)
    page = context.new_page()
    try:
        answer = page.goto(served.url)
        assert answer is not None and answer.status == 431
        said = page.locator("body").inner_text()
        assert "clear the cookies for 127.0.0.1" in said and "localhost" in said
        answer = page.goto(served.url.replace("127.0.0.1", "localhost"))
        assert answer is not None and answer.status == 200
        assert page.locator("[data-entry-id]").count() > 0
    finally:
        context.close()


# --- 4: one entry ---------------------------------------------------------------------------


def test_one_entry_is_said_as_one(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(Build.header()) + "\n", encoding="utf-8")
    watch = SessionWatch(path, RenderOptions())
    _append_line(path, Build.user("e-0001", None, "the first prompt"))
    assert watch.step() == "updated: 1 entry (+1)"
    _append_line(path, Build.user("e-0002", "e-0001", "the second"))
    assert watch.step() == "updated: 2 entries (+1)"


def test_one_bookkeeping_line_is_said_as_one(tmp_path: Path) -> None:
    """The Claude Code note said "1 Claude Code bookkeeping lines are not shown"."""
    path = tmp_path / "one.jsonl"
    lines = [
        {"type": "summary", "summary": "a title", "leafUuid": "u1"},
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s1",
         "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/srv",
         "message": {"role": "user", "content": "hello"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    said = [d.message for d in load_session(path).diagnostics if "bookkeeping" in d.message]
    assert said and said[0].startswith("1 Claude Code bookkeeping line is not shown"), said


def test_an_agent_whose_meta_comes_before_its_transcript_is_seen(tmp_path: Path) -> None:
    """Claude Code without progress lines ties an agent at work by its .meta.json alone:
    written before the transcript, the meta named a call no transcript was there for,
    and the transcript's lines then changed no stamp: the agent was never on the page."""
    path = _at_work(tmp_path, "meta")
    agent = _agent_file(path)
    transcript = agent.read_bytes()
    agent.unlink()
    watch = SessionWatch(path, RenderOptions())
    assert u(10) not in watch.state.page.html.decode()
    agent.write_bytes(transcript)
    assert watch.step() is not None
    assert watch.state.page.html.count(u(13).encode()) > 0


def test_a_fifo_named_as_a_meta_file_is_passed_over(tmp_path: Path) -> None:
    """Opening a FIFO named ``agent-<id>.meta.json`` waited for a writer for ever: export,
    search and watch hung. Only a regular file is read."""
    path = _at_work(tmp_path, "none")
    os.mkfifo(_agent_file(path).with_name(f"agent-{AGENT}.meta.json"))
    finished: list[object] = []
    worker = threading.Thread(target=lambda: finished.append(load_session(path)), daemon=True)
    worker.start()
    worker.join(20)
    assert finished, "loading the session blocked on the FIFO"
    assert u(10) not in finished[0].by_id  # nothing ties the agent to its call
