"""Stop 66: notes that said something untrue of the session they describe."""

from __future__ import annotations

from pathlib import Path

from exporter.loader import load_session, parse_session_bytes
from exporter.render import render_session
from tests.browser_util import parse_html
from tests.claude_code_corpus import sub_agent_session
from tests.test_watch_s65 import _at_work


def norm(text: str) -> str:
    return " ".join(text.split())


def _sub_agent_note(path: Path) -> str:
    said = {d.kind: d.message for d in load_session(path).diagnostics}
    return said["claude-code-sub-agents"]


def test_a_finished_sub_agent_is_not_said_to_run(tmp_path: Path) -> None:
    """Every sub-agent done: the note said "(after the call, while it runs)" all the same."""
    note = _sub_agent_note(sub_agent_session(tmp_path))
    assert note.startswith("1 sub-agent transcript shown as a branch after the result")
    assert "while it runs" not in note
    assert "their lines are numbered after this file's" in note


def test_a_sub_agent_at_work_is_said_to_hang_after_its_call(tmp_path: Path) -> None:
    """One still at work has no result yet: the note says where it hangs meanwhile."""
    note = _sub_agent_note(_at_work(tmp_path, "progress"))
    assert "(after the call, while it runs)" in note


def _custom_note(display_part: str) -> str:
    """The page's text for one extension message whose ``display`` is ``display_part``
    (a JSON fragment, or empty for none at all)."""
    lines = [
        '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}',
        '{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"hi","timestamp":1}}',
        '{"type":"custom_message","id":"c","parentId":"u","timestamp":"2026-01-01T00:00:02Z",'
        f'"customType":"reminder","content":"REMINDER-TEXT"{display_part}}}',
    ]
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    return norm(parse_html(html).entry("c").text)


def test_a_message_without_display_is_not_said_to_have_display_false() -> None:
    """Pi hides an extension message with no ``display`` as with ``display: false``; the
    note said "(display: false)", which the file does not say."""
    assert "hidden in Pi's UI (no display flag), still sent to the model" in _custom_note("")
    assert "display: false" not in _custom_note("")
    assert "hidden in Pi's UI (display: null)" in _custom_note(',"display":null')
    assert "hidden in Pi's UI (display: false)" in _custom_note(',"display":false')
    assert "hidden in Pi's UI" not in _custom_note(',"display":true')
