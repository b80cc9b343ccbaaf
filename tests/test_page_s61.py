"""Stop 61 (helper hunt: big pages): the Thinking and Tool output buttons showed on a page with
nothing of their kind, and pressing them (or t / o) did nothing a reader could see."""

from __future__ import annotations

from typing import Any

from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from tests.browser_util import PageServer
from tests.conftest import Build, dump_lines

pytest_plugins = ["tests.browser_util"]


def _page(tmp_path: Any, with_thinking: bool) -> str:
    """A two-turn session: plain text only, or with a thinking block."""
    content: list[dict[str, Any]] = [{"type": "text", "text": "the answer"}]
    if with_thinking:
        content.insert(0, {"type": "thinking", "thinking": "pondering"})
    answer = Build.assistant("a1", "u1")
    answer["message"]["content"] = content
    lines = [Build.header(), Build.user("u1", None, "a question"), answer]
    path = tmp_path / f"s{int(with_thinking)}.jsonl"
    path.write_bytes(dump_lines(lines))
    return render_session(load_session(path), RenderOptions())


def _shown(page: Any, button: str) -> bool:
    return page.evaluate(f"() => !document.getElementById('{button}').hidden")


def test_a_toggle_with_nothing_to_unfold_stays_hidden(
    pw_browser: Any, page_server: PageServer, tmp_path: Any
) -> None:
    plain = page_server.publish("plain.html", _page(tmp_path, with_thinking=False))
    thinking = page_server.publish("thinking.html", _page(tmp_path, with_thinking=True))
    page = pw_browser.new_page()
    try:
        page.goto(thinking, wait_until="load")
        assert _shown(page, "toggle-thinking")  # a page with thinking keeps its button
        page.goto(plain, wait_until="load")
        page.wait_for_function("() => !document.getElementById('theme-toggle').hidden")
        assert not _shown(page, "toggle-thinking")
        assert not _shown(page, "toggle-tools")
        page.keyboard.press("t")  # the key still says what it did
        page.wait_for_function("() => /none on this page/.test(document.body.innerText)")
    finally:
        page.close()
