"""Stop 65 (helper hunt: Copy buttons): a bash call whose command folds (a long heredoc) had
no Copy button at all, neither for the command nor for its output, even a one-line output;
and a long prompt that folds lost the Copy button of every code block in it, even a block
wholly above the fold or wholly inside it. A folded command is now copied whole, its output
as for any other call, and every whole code block keeps its button; a block the fold cuts
through is copied whole from its head, as a long block in an answer is."""

from __future__ import annotations

import json
from typing import Any

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from tests.browser_util import PageServer, Viewer

pytest_plugins = ["tests.browser_util"]

NO_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": NO_COST}

#: Folded by lines (80 of them); its head's last line (the 12th) is blank, the case where
#: the head shows one more line break than the command has.
HEREDOC = (
    "cat > /tmp/f.py <<'EOF'\n"
    + "\n".join("" if k == 10 else f"print({k})" for k in range(80))
    + "\nEOF\npython /tmp/f.py"
)
#: One line of 5,000 characters: folded inside the line ("N more characters").
ONE_LONG_LINE = "echo " + " ".join(f"word{k:04d}" for k in range(555))
LONG_OUTPUT = "\n".join(f"out {k}" for k in range(200))


def _session(*messages: dict[str, Any]) -> str:
    """A page of these messages, each the child of the one before."""
    lines = [json.dumps({"type": "session", "version": 3, "id": "s65", "cwd": "/w",
                         "timestamp": "2026-01-01T10:00:00.000Z"})]  # fmt: skip
    parent = None
    for number, message in enumerate(messages, start=1):
        entry_id = f"m{number:03d}"
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                 "timestamp": f"2026-01-01T10:{number:02d}:00.000Z",
                                 "message": {"timestamp": number, **message}}))  # fmt: skip
        parent = entry_id
    return render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))


def _bash_call(call_id: str, command: str, output: str) -> list[dict[str, Any]]:
    call = {"role": "assistant", "api": "x", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": USAGE, "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": call_id, "name": "bash",
                         "arguments": {"command": command}}]}  # fmt: skip
    result = {"role": "toolResult", "toolCallId": call_id, "toolName": "bash",
              "content": [{"type": "text", "text": output}], "isError": False}  # fmt: skip
    return [call, result]


def _open(viewer: Viewer, page_server: PageServer, name: str, html: str) -> Any:
    """The page with its Copy buttons made (a small page's in one batch) and a clipboard."""
    context = viewer.context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = viewer.open(page_server.publish(name, html), context=context)
    page.wait_for_function("() => document.querySelectorAll('.copy-btn').length > 0")
    return page


def _copied(page: Any, scope: Any, name: str) -> str:
    button = scope.get_by_role("button", name=name, exact=True)
    assert button.count() == 1, f"{name!r}: {button.count()} buttons"
    button.click()
    return page.evaluate("navigator.clipboard.readText()")


def test_a_folded_command_is_copied_whole_and_its_output_too(
    viewer: Viewer, page_server: PageServer
) -> None:
    calls = [("A", HEREDOC, "ok"), ("B", ONE_LONG_LINE, LONG_OUTPUT), ("C", "echo short", "ok")]
    bang = {"role": "bashExecution", "command": HEREDOC, "output": "done\n", "exitCode": 0,
            "cancelled": False, "truncated": False}  # fmt: skip
    messages = [{"role": "user", "content": [{"type": "text", "text": "go"}]}, bang]
    for call in calls:
        messages += _bash_call(*call)
    page = _open(viewer, page_server, "s65-commands.html", _session(*messages))
    tools = page.locator(".tool")
    assert tools.count() == 4
    summaries = page.locator("details.cmd-rest > summary").all_inner_texts()
    assert len(summaries) == 3 and "characters" in summaries[2], summaries  # both kinds of fold
    assert tools.nth(2).locator(":scope > details.fold-before").count() == 1  # B's output
    for index, (command, output) in enumerate([(HEREDOC, "done"), *[c[1:] for c in calls]]):
        tool = tools.nth(index)
        tool.scroll_into_view_if_needed()
        assert _copied(page, tool, "Copy output") == output, index
        assert _copied(page, tool, "Copy the command") == command, index
    viewer.assert_clean()


def _prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


#: An answer's short block, last on the page: its button says all the buttons are made.
ANSWER = {"role": "assistant", "api": "x", "provider": "anthropic", "model": "claude-sonnet-4-5",
          "usage": USAGE, "stopReason": "stop",
          "content": [{"type": "text", "text": "```\nok\n```"}]}  # fmt: skip


def _code_buttons(page: Any) -> list[int]:
    """How many Copy buttons each code block of the page has, in order."""
    return page.eval_on_selector_all(
        "div.code", "blocks => blocks.map(b => b.querySelectorAll('.copy-btn').length)"
    )


def _copy_code(page: Any, index: int) -> str:
    block = page.locator("div.code").nth(index)
    fold = block.locator("xpath=ancestor::details[1]")
    if fold.count() and not fold.evaluate("d => d.open"):
        fold.locator(":scope > summary").click()  # the reader unfolds it first
    block.scroll_into_view_if_needed()
    block.hover()
    return _copied(page, block, "Copy this code")


def test_the_code_blocks_of_a_folded_prompt_keep_their_copy_buttons(
    viewer: Viewer, page_server: PageServer
) -> None:
    lorem = "lorem ipsum dolor sit amet " * 8
    paragraphs = "\n\n".join(f"Paragraph {k}: {lorem}" for k in range(80))
    early, late = "def early():\n    return 'EARLY'", "def late():\n    return 'LATE'"
    around = f"Review:\n\n```python\n{early}\n```\n\n{paragraphs}\n\n```python\n{late}\n```\n\nend."
    # two whole blocks meet at the fold: the second, labelled, is the fold's first block
    first = "\n".join(f"echo {k}" for k in range(37))
    second = "\n".join(f"x{k} = {k}" for k in range(150))
    meeting = f"```sh\n{first}\n```\n\n```python\n{second}\n```"
    html = _session(_prompt(around), _prompt(meeting), ANSWER)
    page = _open(viewer, page_server, "s65-prompt.html", html)
    assert page.locator("details.fold.prose").count() == 2
    assert page.locator("details.fold.prose > summary + div.code > .code-lang").count() == 1
    assert _code_buttons(page) == [1, 1, 1, 1, 1]
    assert [_copy_code(page, index) for index in range(4)] == [early, late, first, second]
    viewer.assert_clean()


def test_a_block_the_prompts_fold_cuts_through_is_copied_whole_from_its_head(
    viewer: Viewer, page_server: PageServer
) -> None:
    # the fold cuts after source line 40: the head's last line (the 37th) is blank
    code = "\n".join("" if k == 36 else f"x{k} = {k}" for k in range(200))
    page = _open(
        viewer,
        page_server,
        "s65-cut.html",
        _session(_prompt(f"Intro\n\n```python\n{code}\n```"), ANSWER),
    )
    rest = page.locator("details.fold.prose > summary + div.code")
    assert rest.count() == 1 and page.locator("details.code-rest").count() == 0
    assert _code_buttons(page) == [1, 0, 1]  # half a block is never copied alone
    assert _copy_code(page, 0) == code
    viewer.assert_clean()


def test_two_unlabelled_blocks_meeting_at_a_prompts_fold_copy_apart(
    viewer: Viewer, page_server: PageServer
) -> None:
    """A block's rest was told by its missing label: two whole blocks without one meeting
    at the fold copied as one from the first, and the second had no button (review
    2026-12-07). The renderer marks a cut block's rest ("cont") instead."""
    first = "\n".join(f"echo {k}" for k in range(37))
    second = "\n".join(f"x{k} = {k}" for k in range(150))
    html = _session(_prompt(f"```\n{first}\n```\n\n```\n{second}\n```"), ANSWER)
    page = _open(viewer, page_server, "s65-unlabelled.html", html)
    assert page.locator("details.fold.prose > summary + div.code").count() == 1
    assert page.locator("div.code.cont").count() == 0  # whole blocks: nothing continued
    assert _code_buttons(page) == [1, 1, 1]
    assert [_copy_code(page, index) for index in range(2)] == [first, second]
    viewer.assert_clean()
