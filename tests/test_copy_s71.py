"""Stop 71 (helper hunt: what a reader copies): selecting a block and pressing Ctrl+C put the
page's own labels into the clipboard between the session's words (a code block's language,
"Copy", "Copy output", the "#" link, "88 more lines" of a fold); and a written file or an
edit's diff had no Copy button, so a long one could only be copied with the fold's label in
its middle. The labels now stay out of a selection, and a write or an edit copies whole."""

from __future__ import annotations

from typing import Any

from tests.browser_util import PageServer, Viewer
from tests.test_page_s65 import USAGE, _copied, _open, _prompt, _session

pytest_plugins = ["tests.browser_util"]

FILE_WRITTEN = "\n".join(f"export const v{k} = {k};" for k in range(100)) + "\n"
OLD_TEXT = "\n".join(f"line {k}" for k in range(60))
NEW_TEXT = OLD_TEXT.replace("line 30", "LINE 30").replace("line 5\n", "LINE 5\n")
ANSWER = "Here it is:\n\n```python\ndef double(x):\n    return 2 * x\n```\n\nand then run it."
LONG_PROMPT = "Look:\n\n```\n" + "\n".join(f"value_{k}" for k in range(300)) + "\n```\n"


def _call(call_id: str, name: str, arguments: dict[str, Any], output: str) -> list[dict]:
    use = {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
    call = {"role": "assistant", "api": "x", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": USAGE, "stopReason": "toolUse", "content": [use]}  # fmt: skip
    result = {"role": "toolResult", "toolCallId": call_id, "toolName": name,
              "content": [{"type": "text", "text": output}], "isError": False}  # fmt: skip
    return [call, result]


def _answer(text: str) -> dict[str, Any]:
    words = [{"type": "text", "text": text}]
    return {"role": "assistant", "api": "x", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": USAGE, "stopReason": "stop", "content": words}  # fmt: skip


def _selected_and_copied(page: Any, selector: str, opened: bool = True) -> str:
    """What Ctrl+C puts on the clipboard with the element's whole contents selected (its
    folds opened first, or as they are)."""
    page.evaluate(
        """([sel, opened]) => { const el = document.querySelector(sel); el.scrollIntoView();
        for (const d of el.querySelectorAll('details')) d.open = opened;
        const range = document.createRange(); range.selectNodeContents(el);
        const s = getSelection(); s.removeAllRanges(); s.addRange(range); }""",
        [selector, opened],
    )
    page.evaluate("navigator.clipboard.writeText('')")
    page.keyboard.press("Control+c")
    page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''")
    return page.evaluate("navigator.clipboard.readText()")


def test_a_written_file_and_an_edits_diff_are_copied_whole(
    viewer: Viewer, page_server: PageServer
) -> None:
    html = _session(
        _prompt("write it"),
        *_call("w1", "write", {"path": "/p/v.ts", "content": FILE_WRITTEN}, "Successfully wrote"),
        *_call("e1", "edit", {"path": "/p/b.txt", "oldText": OLD_TEXT, "newText": NEW_TEXT}, "ok"),
    )
    page = _open(viewer, page_server, "s71-write.html", html)
    write, edit = page.locator(".tool-write"), page.locator(".tool-edit")
    assert write.locator("details.fold").count() == 1  # long: shown in two parts
    copied = _copied(page, write, "Copy the text written")
    assert copied == FILE_WRITTEN  # whole, no "88 more lines" inside, and its final newline
    diff = _copied(page, edit, "Copy the diff")
    assert "-line 30\n+LINE 30" in diff and "-line 5\n+LINE 5" in diff, diff
    assert "more lines" not in diff
    assert write.get_by_role("button", name="Copy output").count() == 0  # a status line
    viewer.assert_clean()


def test_a_selection_copies_the_sessions_words_not_the_pages_labels(
    viewer: Viewer, page_server: PageServer
) -> None:
    html = _session(
        _prompt(LONG_PROMPT),
        _answer(ANSWER),
        *_call("b1", "bash", {"command": "ls -la"}, "\n".join(f"f{k}" for k in range(120))),
    )
    page = _open(viewer, page_server, "s71-select.html", html)
    page.wait_for_function("() => document.querySelectorAll('.copy-btn').length >= 3")
    prompt = _selected_and_copied(page, "#m001")
    assert "value_0\n" in prompt and "value_299" in prompt
    assert "more lines" not in prompt and "Copy" not in prompt, prompt
    answer = _selected_and_copied(page, "#m002 .md")
    assert "def double(x):\n    return 2 * x" in answer and "and then run it." in answer
    assert "python" not in answer and "Copy" not in answer, answer  # the language label
    tool = _selected_and_copied(page, ".tool-bash")
    assert "ls -la" in tool and "f0\n" in tool and "f119" in tool
    assert "#" not in tool and "Copy" not in tool and "more lines" not in tool, tool
    # a closed fold's label stays in: it marks the lines the copy lacks (review of stop 71)
    closed = _selected_and_copied(page, ".tool-bash", opened=False)
    assert "ls -la" in closed and "f119" in closed and "f0\n" not in closed
    assert "earlier lines" in closed and "Copy" not in closed, closed
    viewer.assert_clean()
