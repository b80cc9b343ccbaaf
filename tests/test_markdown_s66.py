"""Stop 66 (hunt 3, the Markdown export): a built-in tool's call lost the arguments its
Markdown view did not use (a bash call's timeout, cwd and env, a read's encoding, a
write's append, an edit's replaceAll) and the page's notes (an update_plan's explanation,
a search the provider ran, a result naming another tool), where the page shows them all;
every single line break of a message was a space on GitHub (cmark-gfm joins the lines
of a paragraph, the page's markdown-it shows each); an empty prompt was a bare heading,
and Pi's redacted thinking read as the model's own words."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.markdown_text import prose
from tests.browser_util import PageServer, Viewer
from tests.conftest import Build

pytest_plugins = ["tests.browser_util"]

DATA = Path(__file__).parent / "data"
CLAUDE_CODE = DATA / "claude-code" / "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl"
CODEX = DATA / "codex" / "rollout-2025-12-28T13-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl"


def _export(source: Path, out: Path) -> str:
    """``pi-session export source -o out`` (Markdown or HTML by its suffix): the text."""
    done = CliRunner().invoke(cli, ["export", str(source), "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out.read_text(encoding="utf-8")


def github(markdown: str) -> str:
    """``markdown`` as GitHub renders it (cmark-gfm, its extensions, raw HTML filtered)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown)


def _seen(rendered: str) -> str:
    """The words of rendered HTML, tags out, references read, spaces made one."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rendered)).split())


def _turn(entry_id: str, parent: str, second: int, *blocks: dict[str, Any]) -> dict[str, Any]:
    line = Build.assistant(entry_id, parent, "", second)
    line["message"]["content"] = list(blocks)
    if any(block["type"] == "toolCall" for block in blocks):
        line["message"]["stopReason"] = "toolUse"
    return line


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _result(
    entry_id: str, parent: str, second: int, call_id: str, name: str, text: str, **extra: Any
) -> dict[str, Any]:
    line = Build.tool_result(entry_id, parent, call_id, name, second)
    line["message"]["content"] = [{"type": "text", "text": text}]
    line["message"].update(extra)
    return line


def _json_blocks(markdown: str) -> list[Any]:
    """The JSON code blocks GitHub shows, read back."""
    found = re.findall(r'<pre lang="json"><code>(.*?)</code></pre>', github(markdown), re.S)
    return [json.loads(html.unescape(block)) for block in found]


# --- 1: every argument of a built-in tool's call, and the page's notes ----------------------


def _crafted_calls(write_session: Any) -> Path:
    """The hunter's craft2: four built-in calls with arguments their views do not use."""
    calls = [
        _call("c1", "bash", {"command": "rm -rf build", "timeout": 30, "cwd": "/etc",
                             "env": {"DANGER": "1"}}),
        _call("c2", "read", {"path": "a.py", "offset": 10, "limit": 5, "encoding": "latin1"}),
        _call("c3", "write", {"path": "b.txt", "content": "hello", "append": True}),
        _call("c4", "edit", {"path": "c.py", "oldText": "a", "newText": "b", "replaceAll": True}),
        _call("c5", "write", {"path": "d.json", "content": {"KEY_IN_CONTENT": 1}}),
    ]  # fmt: skip
    return write_session([
        Build.header(),
        Build.user("u1", None, "go"),
        _turn("a2", "u1", 2, *calls),
        _result("r3", "a2", 3, "c1", "bash", "ok"),
        _result("r4", "r3", 4, "c2", "read", "line10\nline11"),
        _result("r5", "r4", 5, "c3", "write", "wrote"),
        _result("r6", "r5", 6, "c4", "edit_v2", "Edited", details={"diff": "-1 a\n+1 b"}),
        _result("r7", "r6", 7, "c5", "write", "wrote"),
    ])  # fmt: skip


def test_a_built_in_calls_unused_arguments_and_notes_are_in_the_markdown(
    write_session: Any, tmp_path: Path
) -> None:
    source = _crafted_calls(write_session)
    markdown = _export(source, tmp_path / "calls.md")
    page = _seen(_export(source, tmp_path / "calls.html"))
    for said in ("timeout 30s", "Other arguments:", "The result names another tool: edit_v2"):
        assert said in page  # what the page shows, the Markdown below says too
    assert "**bash** · timeout 30s\n" in markdown
    assert "**write** `b.txt` · 1 line\n" in markdown
    assert "**edit** `c.py` · +1 −1\n" in markdown
    assert "*The result names another tool: edit\\_v2.*" in markdown
    blocks = _json_blocks(markdown)
    assert {"cwd": "/etc", "env": {"DANGER": "1"}} in blocks  # not "timeout": said above
    assert {"encoding": "latin1"} in blocks  # offset and limit are the line range
    assert {"append": True} in blocks
    assert {"replaceAll": True} in blocks
    assert markdown.count('"cwd"') == 1 and '"command"' not in markdown  # each said once
    # a write's content that is not text: its JSON, and the page's warning, not nothing
    assert '{"KEY_IN_CONTENT": 1}' in markdown
    assert "*\\[invalid arg\\] content is not a string.*" in markdown


def test_codex_shell_limits_a_plans_explanation_and_a_remote_search(tmp_path: Path) -> None:
    markdown = _export(CODEX, tmp_path / "codex.md")
    assert "**bash** · timeout 120s · in /home/dev/projects/inventory\n" in markdown
    assert "· waits up to 10s · output up to 4,000 tokens\n" in markdown
    plan = markdown.index("**update_plan** · 2 of 3 done")
    assert markdown[plan:].split("\n\n")[1] == "*Rounding fixed; docs next.*"
    search = markdown.index("**web\\_search**")
    assert markdown[search:].startswith("**web\\_search** · *results not recorded*\n")
    assert "its results are not in the session." in markdown[search : search + 300]


def test_a_claude_code_bash_calls_description_and_timeout(tmp_path: Path) -> None:
    markdown = _export(CLAUDE_CODE, tmp_path / "cc.md")
    assert "**bash** · timeout 120s\n" in markdown
    assert {"description": "Run the settings tests"} in _json_blocks(markdown)


def test_a_cut_off_edit_says_so_once(write_session: Any, tmp_path: Path) -> None:
    """The page's note on a cut-off edit is said the Markdown's own way, not twice."""
    source = write_session([
        Build.header(),
        Build.user("u1", None, "go"),
        _turn("a2", "u1", 2, _call("c1", "edit", {"path": "a.py", "oldText": "x = 1\n",
                                                   "flag": "FLAG_ARG"})),
    ])  # fmt: skip
    markdown = _export(source, tmp_path / "cut.md")
    assert "*Cut off: the call's arguments end before its `newText`" in markdown
    assert "incomplete" not in markdown.lower()
    assert markdown.count("FLAG_ARG") == 1


# --- 2: a message's line breaks, as on the page ---------------------------------------------

PROMPT = "Run these steps:\nnpm test\nnpm run build\nthen report back"
ANSWER = "Line one\nLine two\n\n```sh\nnpm test\nnpm run build\n```\n\nafter\nthe fence"
THINKING = "step 1\nstep 2"


def _lines_session(write_session: Any) -> Path:
    answer = _turn("a2", "u1", 2, {"type": "thinking", "thinking": THINKING},
                   {"type": "text", "text": ANSWER})  # fmt: skip
    return write_session([Build.header(), Build.user("u1", None, PROMPT), answer])


def _inner_text(viewer: Viewer, page_server: PageServer, name: str, document: str) -> str:
    page = viewer.open(page_server.publish(name, document))
    return page.evaluate("() => document.body.innerText")


def test_a_messages_lines_read_as_lines_on_github_as_on_the_page(
    write_session: Any, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    """Chromium's view of GitHub's rendering of the .md and of the page: the same lines."""
    source = _lines_session(write_session)
    markdown = _export(source, tmp_path / "lines.md")
    rendered = f"<!doctype html><meta charset=utf-8><body>{github(markdown)}</body>"
    on_github = _inner_text(viewer, page_server, "s66-lines-md.html", rendered)
    on_page = _inner_text(
        viewer, page_server, "s66-lines.html", _export(source, tmp_path / "p.html")
    )
    for text in (PROMPT, "Line one\nLine two", "after\nthe fence"):
        assert text in on_page
        assert text in on_github, on_github
    assert "step 1\nstep 2" in on_github
    assert "npm test\nnpm run build\n" in on_github  # the fence's lines as they were
    assert "\\" not in on_github  # no break's backslash shows
    viewer.assert_clean()


#: Texts whose every line break GitHub shows as one once it is a hard break, and nowhere
#: else: code (fenced, indented, a span over lines), a table, a heading, a link's
#: destination on the next line, a line that ends in a break (a backslash, an escaped one,
#: two spaces), a bare address or an emphasis run at a line's end.
BREAK_CASES = [
    PROMPT,
    ANSWER,
    "    indented\n    code\n\ntext\nmore",
    "a `span\nover lines` b\nnext",
    "| a | b |\n|---|---|\n| 1 | 2 |\n\nafter\nthe table",
    "intro\nmore\nx | y\n--|--\n1 | 2",
    "ends in a break\\\nnext",
    "an escaped backslash\\\\\nnext",
    "two spaces  \nnext\nthen",
    "see https://example.com/a\nnext",
    "www.example.com\nnext",
    "foo **\nbar**",
    "a _\nb_ and ~~\nc~~",
    "- one\n  more\n- two\n  more",
    "> quoted\n> lines\nlazy",
    "# Title\nthen\ntext",
    "end \\ \nnext",
    '[a link](https://example.com\n"its title") after\nnext',
    "line\t\nafter a tab",
]


@pytest.mark.parametrize("text", BREAK_CASES)
def test_breaks_land_where_github_reads_line_breaks_and_nowhere_else(text: str) -> None:
    """GitHub's rendering of the text made safe is its rendering with every soft break a
    hard one (cmark's own option, as the page's ``breaks``): nothing else changed, no
    backslash shown, no code, table, heading or link touched."""
    from cmarkgfm.cmark import Options

    wanted = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_HARDBREAKS)
    assert " ".join(github(prose(text)).split()) == " ".join(wanted.split())


def test_html_looking_lines_stay_text_and_lines() -> None:
    said = prose("<div>\nhello\n</div>\n<!-- a\nnote -->")
    rendered = github(said)
    assert "<div>" not in rendered and "<!--" not in rendered
    lines = [_seen(line) for line in rendered.split("<br />")]
    assert lines == ["<div>", "hello", "</div>", "<!-- a", "note -->"]


# --- 3: an empty prompt, a redacted thinking block ------------------------------------------


def test_an_empty_prompt_says_so(write_session: Any, tmp_path: Path) -> None:
    source = write_session([
        Build.header(),
        Build.user("u1", None, "   "),
        _turn("a2", "u1", 2, {"type": "text", "text": "ok"}),
    ])  # fmt: skip
    assert "(empty message)" in _seen(_export(source, tmp_path / "empty.html"))
    prompt = _export(source, tmp_path / "empty.md").split("### User", 1)[1]
    assert prompt.split("\n\n")[1] == "*(empty message)*"  # right under its heading


def test_pis_redacted_thinking_says_so(write_session: Any, tmp_path: Path) -> None:
    redacted = {"type": "thinking", "thinking": "[Reasoning redacted]", "redacted": True,
                "thinkingSignature": "abc"}  # fmt: skip
    empty = {"type": "thinking", "thinking": "", "redacted": True}
    source = write_session([
        Build.header(),
        Build.user("u1", None, "x"),
        _turn("a2", "u1", 2, redacted, empty, {"type": "text", "text": "done"}),
    ])  # fmt: skip
    assert "(redacted by the provider)" in _seen(_export(source, tmp_path / "thinking.html"))
    markdown = _export(source, tmp_path / "thinking.md")
    said = "> **Thinking** (redacted by the provider)"
    assert f"{said}\n>\n> [Reasoning redacted]\n" in markdown
    assert markdown.count(said) == 2  # the one with no text too


# --- the tool views' fixes of this stop, in the Markdown too ------------------------------


def test_a_write_keeps_its_blank_last_lines_and_exit_codes_come_from_failures(
    write_session: Any, tmp_path: Path
) -> None:
    """A write of four lines (two blank at the end) said "4 lines" and showed two; a bash
    call that succeeded and printed "exit code: 7" was "exit 7", and one that failed with
    Pi's "Command exited with code 2" said no code."""
    calls = [
        _call("c1", "write", {"path": "trail.txt", "content": "a\nb\n\n\n"}),
        _call("c2", "bash", {"command": "echo 'exit code: 7'"}),
        _call("c3", "bash", {"command": "false"}),
    ]
    source = write_session([
        Build.header(),
        Build.user("u1", None, "go"),
        _turn("a2", "u1", 2, *calls),
        _result("r3", "a2", 3, "c1", "write", "Successfully wrote 6 bytes to trail.txt"),
        _result("r4", "r3", 4, "c2", "bash", "exit code: 7"),
        _result("r5", "r4", 5, "c3", "bash", "\n\nCommand exited with code 2", isError=True),
    ])  # fmt: skip
    markdown = _export(source, tmp_path / "calls.md")
    assert "**write** `trail.txt` · 4 lines\n\n```\na\nb\n\n\n```" in markdown
    assert "**bash**\n\n```sh\necho 'exit code: 7'" in markdown
    assert "**bash** · **failed** · exit 2\n" in markdown
    shown = github(markdown)
    assert "<pre><code>a\nb\n\n\n</code></pre>" in shown  # four lines on GitHub too
