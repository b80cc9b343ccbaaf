"""A tool call's box shows everything its call and result hold, not only what its view reads."""

from __future__ import annotations

import html as html_module
import json
import re
from typing import Any

import pytest

from exporter.loader import parse_session_bytes
from exporter.render import render_session
from exporter.render.tools import MAX_DIFF_GUTTER, diff_gutter

T0 = "2025-01-01T00:00:0"


def _page(calls: list[dict[str, Any]], results: list[dict[str, Any]]) -> str:
    """One prompt, one answer making ``calls``, then ``results`` (toolResult messages)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    answer = {"role": "assistant", "content": calls, "provider": "p", "model": "m",
              "stopReason": "toolUse"}  # fmt: skip
    lines = [
        header,
        {"type": "message", "id": "u", "parentId": None, "timestamp": T0 + "1Z",
         "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": T0 + "2Z", "message": answer},
    ]  # fmt: skip
    parent = "a"
    for index, result in enumerate(results):
        entry_id = f"r{index}"
        message = {"role": "toolResult", "isError": False, **result}
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": T0 + "3Z", "message": message})  # fmt: skip
        parent = entry_id
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    return render_session(parse_session_bytes(data))


def _box(page: str, call_id_text: str) -> str:
    """The visible text of the article holding the answer (where the tool boxes are)."""
    article = page.split('data-entry-id="a"', 1)[1].split("</article>", 1)[0]
    text = html_module.unescape(re.sub(r"<[^>]+>", "", article))
    assert call_id_text in text
    return text


def test_a_result_shown_with_its_call_keeps_content_it_cannot_read() -> None:
    """A result's unknown block or non-text ``text`` was dropped when the result was shown
    in its call's box (the same result on its own showed it)."""
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    content = [{"type": "text", "text": "FIRST_PART"}, {"type": "weird", "payload": "ODD_401"},
               {"type": "text", "text": 123}]  # fmt: skip
    text = _box(_page([call], [{"toolCallId": "c1", "toolName": "bash", "content": content}]), "ls")
    assert "FIRST_PART" in text and "ODD_401" in text and '"text": 123' in text
    assert text.count("ODD_401") == 1


def test_another_tools_details_and_a_built_ins_other_arguments_are_shown() -> None:
    calls = [
        {"type": "toolCall", "id": "c1", "name": "todo", "arguments": {"add": "x"}},
        {"type": "toolCall", "id": "c2", "name": "read",
         "arguments": {"path": "a.py", "EXTRA_ARG": "XREAD_100"}},
        {"type": "toolCall", "id": "c3", "name": "bash",
         "arguments": {"command": "make", "description": "BASHDESC_101"}},
    ]  # fmt: skip
    results = [
        {"toolCallId": "c1", "toolName": "todo", "content": [{"type": "text", "text": "ok"}],
         "details": {"items": ["TODO_DETAIL_118"]}},
        {"toolCallId": "c2", "toolName": "read", "content": [{"type": "text", "text": "x=1"}]},
        {"toolCallId": "c3", "toolName": "bash", "content": [{"type": "text", "text": "done"}],
         "details": {"truncation": {"truncated": False}, "BUILTIN_DETAIL": 1}},
    ]  # fmt: skip
    text = _box(_page(calls, results), "a.py")
    assert "Details (the tool's structured result):" in text and "TODO_DETAIL_118" in text
    assert "Other arguments:" in text and "XREAD_100" in text and "BASHDESC_101" in text
    assert '"path"' not in text  # the arguments its view shows are not listed again
    assert "BUILTIN_DETAIL" in text  # what a built-in's view does not read of its details


def test_a_built_in_tools_arguments_its_view_did_not_show_are_listed() -> None:
    """An argument counted as shown by its name, not by whether its value was: an edit
    whose ``edits`` was a dict lost the whole edit, ``file_path`` beside ``path`` and a
    ``timeout`` of "soon" (shown as "timeout 0s") were lost (review of 78f9cbd)."""
    calls = [
        {"type": "toolCall", "id": "c1", "name": "edit",
         "arguments": {"path": "a.py", "edits": {"oldText": "ODD_EDIT_OLD", "newText": "x"}}},
        {"type": "toolCall", "id": "c2", "name": "read",
         "arguments": {"path": "b.py", "file_path": "OTHER_PATH.py", "offset": "ten"}},
        {"type": "toolCall", "id": "c3", "name": "bash",
         "arguments": {"command": "make", "timeout": "soon"}},
        {"type": "toolCall", "id": "c4", "name": "edit",
         "arguments": {"path": "c.py", "edits": [{"oldText": "a", "newText": "b",
                                                  "replaceAll": "REPLACE_ALL_FLAG"}]}},
    ]  # fmt: skip
    results = [
        {"toolCallId": f"c{n}", "toolName": name, "content": [{"type": "text", "text": "ok"}]}
        for n, name in ((1, "edit"), (2, "read"), (3, "bash"), (4, "edit"))
    ]
    results[2]["details"] = {"truncation": {"truncated": True}, "fullOutputPath": "/tmp/FULL.log"}
    text = _box(_page(calls, results), "a.py")
    assert "ODD_EDIT_OLD" in text and "OTHER_PATH.py" in text and '"offset": "ten"' in text
    assert '"timeout": "soon"' in text and "timeout 0s" not in text
    assert "REPLACE_ALL_FLAG" in text
    assert "output truncated by Pi (full output: /tmp/FULL.log)" in text


def test_a_result_naming_another_tool_says_so() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    result = {"toolCallId": "c1", "toolName": "RESNAME_990", "content": []}
    assert "The result names another tool: RESNAME_990" in _box(_page([call], [result]), "ls")


def test_what_a_built_in_view_shows_is_judged_by_the_value() -> None:
    """Review of the fix above: with a diff every edit argument counted as shown (a second
    old/new pair was nowhere); a read's limit of 0 or offset of 2.5, a non-text full output
    path, and "truncated": false (which said the file was truncated)."""
    calls = [
        {"type": "toolCall", "id": "c1", "name": "edit",
         "arguments": {"path": "a.py", "oldText": "x", "newText": "y",
                       "old_string": "SECOND_OLD", "new_string": "SECOND_NEW"}},
        {"type": "toolCall", "id": "c2", "name": "read",
         "arguments": {"path": "b.py", "offset": 2.5, "limit": 0}},
        {"type": "toolCall", "id": "c3", "name": "bash", "arguments": {"command": "make"}},
        {"type": "toolCall", "id": "c4", "name": "read", "arguments": {"path": "c.py"}},
    ]  # fmt: skip
    results = [
        {"toolCallId": "c1", "toolName": "edit", "content": [{"type": "text", "text": "ok"}],
         "details": {"diff": "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x\n+y"}},
        {"toolCallId": "c2", "toolName": "read", "content": [{"type": "text", "text": "1"}]},
        {"toolCallId": "c3", "toolName": "bash", "content": [{"type": "text", "text": "ok"}],
         "details": {"truncation": {"truncated": True}, "fullOutputPath": 12345}},
        {"toolCallId": "c4", "toolName": "read", "content": [{"type": "text", "text": "2"}],
         "details": {"truncation": {"truncated": False}}},
    ]  # fmt: skip
    text = _box(_page(calls, results), "a.py")
    assert "SECOND_OLD" in text and "SECOND_NEW" in text
    assert '"offset": 2.5' in text and '"limit": 0' in text
    assert '"fullOutputPath": 12345' in text and "output truncated by Pi" in text
    assert "truncated this file" not in text


def test_a_shell_output_opens_with_its_first_line_of_text() -> None:
    """`npm run build 2>&1 | tail -3` prints a blank first line, and every such box opened
    with an empty row; Pi drops it too. Both bash calls and `!cmd` entries."""
    call = {"type": "toolCall", "id": "c1", "name": "bash",
            "arguments": {"command": "npm run build 2>&1 | tail -3"}}  # fmt: skip
    output = "\n \t\r\n\nbuilt ok\n\n  indented\n\n"
    page = _page([call], [{"toolCallId": "c1", "toolName": "bash",
                           "content": [{"type": "text", "text": output}]}])  # fmt: skip
    assert '<pre class="out">built ok\n\n  indented</pre>' in page
    shell = {"role": "bashExecution", "command": "make", "output": output, "exitCode": 0}
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "message", "id": "b", "parentId": None, "timestamp": T0 + "1Z", "message": shell},
    ]
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    page = render_session(parse_session_bytes(data))
    assert '<pre class="out">built ok\n\n  indented</pre>' in page


def test_a_call_whose_result_is_on_another_branch_links_there() -> None:
    """The tree forks between a call and its result: the call said "no result" while the
    result was in the branch below (differential review; Pi finds it in any branch)."""
    calls = [{"type": "toolCall", "id": f"c{n}", "name": "bash",
              "arguments": {"command": f"echo {n}"}} for n in (7, 8)]  # fmt: skip
    answer = {"role": "assistant", "content": calls, "provider": "p", "model": "m",
              "stopReason": "toolUse"}  # fmt: skip

    def result(call: str) -> dict[str, Any]:
        return {"role": "toolResult", "toolCallId": call, "toolName": "bash", "isError": False,
                "content": [{"type": "text", "text": f"out {call}"}]}  # fmt: skip

    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": T0 + "1Z",
         "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": T0 + "2Z", "message": answer},
        {"type": "message", "id": "r7", "parentId": "a", "timestamp": T0 + "3Z",
         "message": result("c7")},
        {"type": "message", "id": "r8", "parentId": "r7", "timestamp": T0 + "4Z",
         "message": result("c8")},
        {"type": "message", "id": "u2", "parentId": "r7", "timestamp": T0 + "5Z",
         "message": {"role": "user", "content": "go on without it"}},
    ]  # fmt: skip
    data = "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    page = render_session(parse_session_bytes(data))
    box = page.split('data-entry-id="a"', 1)[1].split("</article>", 1)[0]
    assert '<a href="#r8">result on another branch</a>' in box
    assert box.count("no result") == 0
    assert page.count('data-entry-id="r8"') == 1  # still shown once, in its branch


@pytest.mark.parametrize(
    ("diff", "gutter"),
    [
        ("--- a.py\n+++ a.py\n@@ x @@\n   9 a\n- 10 b\n+ 10 c\n  11 d", 5),  # Pi's numbers
        ("+ 2 x = 2\n  1 import os", 4),
        ("@@ replacement @@\n-old\n+new\n 3 apples", 1),  # computed: a number is code
        ("--- a\n+++ b\n@@ -1 +1 @@\n-1 2\n+1 3\n 4", 1),  # a patch of numbers, no gutter
        ("+ " + "1" * 30 + " x", MAX_DIFF_GUTTER),
        ("", 1),
    ],
)
def test_a_diff_gutter_is_what_comes_before_its_code(diff: str, gutter: int) -> None:
    """The page indents a wrapped diff line's rest by its gutter: the marker, and the line
    number Pi pads to the widest; a number in a patch's code is no gutter."""
    assert diff_gutter(diff) == gutter
