"""Markdown export: what the page says and the Markdown left unsaid or said wrong (hunt s63).

A listing's count under ``--no-tool-output`` (the note's one line was counted), a message
of a role no view knows (an empty heading, its data gone), an edit's diff computed from the
call (shown as the tool's), a turn with no usage (zeros), and a model with no known price
($0.00 unexplained). Each is checked against the page, which said it already.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from exporter.render import render_session
from exporter.render.tools import listing_count
from tests.conftest import FIXTURES_DIR, Build
from tests.test_markdown_s60 import IMG, github, live_tags

_TAG = re.compile(r"<[^>]+>")


def _page_text(page: str) -> str:
    """The page's words, tags out: what a reader of it reads (scripts' text included)."""
    return html.unescape(_TAG.sub(" ", page))


def _export(source: Path, out: Path, *options: str) -> str:
    """``pi-session export source -o out`` (Markdown or HTML by its suffix): the text."""
    done = CliRunner().invoke(cli, ["export", str(source), *options, "-o", str(out)])
    assert done.exit_code == 0, done.output
    return out.read_text(encoding="utf-8")


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def _turn(entry_id: str, parent: str, second: int, *blocks: dict[str, Any], **extra: Any) -> dict:
    """An assistant turn of ``blocks`` (its usage and stop reason as Build's, or ``extra``)."""
    line = Build.assistant(entry_id, parent, "", second, **extra)
    line["message"]["content"] = list(blocks)
    if "stopReason" not in extra and any(block["type"] == "toolCall" for block in blocks):
        line["message"]["stopReason"] = "toolUse"
    return line


def _result(
    entry_id: str, parent: str, second: int, call_id: str, name: str, text: str, **extra: Any
) -> dict:
    line = Build.tool_result(entry_id, parent, call_id, name, second, extra.pop("error", False))
    line["message"]["content"] = [{"type": "text", "text": text}]
    line["message"].update(extra)
    return line


# --- 1: a listing's count under --no-tool-output --------------------------------------------

_LISTED = "\n".join(f"file{n:02}.txt" for n in range(30))
_LS_OUTPUT = f"{_LISTED}\n\n[30 entries limit reached. Use limit=60 for more]"
_GREP_OUTPUT = "src/a.py:3: TODO one\nsrc/a.py-4- context\nsrc/b.py:9: TODO two"


def _listings(write_session: Any) -> Path:
    return write_session([
        Build.header(),
        Build.user("u1", None, "list them"),
        _turn("a2", "u1", 2, _call("c1", "ls", {"path": "/p", "limit": 30}),
              _call("c2", "grep", {"pattern": "TODO", "context": 1})),
        _result("r3", "a2", 3, "c1", "ls", _LS_OUTPUT),
        _result("r4", "r3", 4, "c2", "grep", _GREP_OUTPUT),
        Build.assistant("a5", "r4", "done", 5),
        _turn("a6", "a5", 6, _call("c3", "ls", {"path": "/q"})),
        _result("r7", "a6", 7, "c3", ["ls"], "a.txt"),  # a name of no type: no traceback
    ])  # fmt: skip


def test_no_tool_output_keeps_a_listings_count(write_session: Any, tmp_path: Path) -> None:
    """``**ls** … · 1 entry`` above the note that replaced 30 entries: the count was of the
    note's own line, and "(limit reached)" was lost. The count is taken before the output
    goes, kept in the note, and said by the Markdown and the page as without the option."""
    source = _listings(write_session)
    plain = _export(source, tmp_path / "plain.md")
    assert "· 30 entries (limit reached)" in plain and "· 2 matches" in plain
    markdown = _export(source, tmp_path / "cut.md", "--no-tool-output")
    heads = [line for line in markdown.splitlines() if line.startswith(("**ls**", "**grep**"))]
    assert heads[0].endswith("· 30 entries (limit reached)"), heads
    assert heads[1].endswith("· 2 matches"), heads
    assert heads[2].endswith('`path="/q"`'), heads  # its name is no listing's: no count
    assert "file07.txt" not in markdown and "TODO one" not in markdown  # the output is gone
    page = _page_text(_export(source, tmp_path / "cut.html", "--no-tool-output"))
    assert "30 entries (limit reached)" in page and "2 matches" in page
    assert "1 entry" not in page and "1 match " not in page


def test_a_note_that_says_no_count_gives_none() -> None:
    """A note left by an earlier export (no count in it), or of a listing that failed,
    counted as "1 entry"; it gives no count now."""
    note = "[tool output left out (--no-tool-output): 25 lines, 239 characters]"
    assert listing_count("ls", note) == ""
    said = f"{note[:-1]}; it listed 1,204 matches (limit reached)]"
    assert listing_count("grep", said) == "1,204 matches (limit reached)"


# --- 2: a message of a role no view knows -----------------------------------------------------


def test_a_message_of_an_unknown_role_is_shown_as_written(
    write_session: Any, tmp_path: Path
) -> None:
    """An extension's ``{"role": "notification", "text": …}`` gave an empty heading and its
    data was gone; the page shows it as its JSON. So does the Markdown now, fenced: text
    that closes a fence or opens HTML stays inside it (GitHub's parser says so)."""
    notification = {"role": "notification", "text": "Deploy finished: build 4711 is live"}
    hostile = f"ARTIFACT BODY\n```\n\n{IMG}\n\n# Branch 1 of 1\n````"
    artifact = {"role": "artifact", "content": hostile, "title": "Report TITLE"}
    source = write_session([
        Build.header(),
        Build.user("u1", None, "go"),
        Build.entry("message", "n2", "u1", 2, message=notification),
        Build.entry("message", "n3", "n2", 3, message=artifact),
        Build.assistant("a4", "n3", "ok", 4),
    ])  # fmt: skip
    markdown = _export(source, tmp_path / "s.md")
    rendered = github(markdown)
    assert live_tags(rendered) == [], rendered
    blocks = re.findall(r'<pre><code class="language-json">(.*?)</code></pre>', rendered, re.S)
    shown = [json.loads(html.unescape(block)) for block in blocks]
    assert [m for m in shown if m.get("role") in ("notification", "artifact")] == [
        notification,
        artifact,
    ]
    assert "<h3>Assistant" in rendered  # the heading after it is still one
    assert "## Not shown" not in markdown
    page = _page_text(_export(source, tmp_path / "s.html"))
    assert "Deploy finished: build 4711 is live" in page and "Report TITLE" in page


def test_an_unknown_roles_image_is_said_not_pasted(write_session: Any, tmp_path: Path) -> None:
    """An unknown role's screenshot put its whole base64 into the JSON block: 600 KB of
    a document meant for reading (review s63)."""
    data = "iVBORw0KGgo" + "A" * 200_000
    shot = {"type": "image", "data": data, "mimeType": "image/png"}
    message = {"role": "screenshotTool", "content": [{"type": "text", "text": "the page"}, shot]}
    source = write_session([
        Build.header(),
        Build.user("u1", None, "go"),
        Build.entry("message", "s2", "u1", 2, message=message),
    ])  # fmt: skip
    markdown = _export(source, tmp_path / "s.md")
    assert "A" * 1000 not in markdown and len(markdown) < 10_000
    assert "[image/png, 150,008 bytes of base64: not in the Markdown]" in markdown
    assert "the page" in markdown
    # an image block's address or note is shown as written (review s63)
    linked = {"type": "image", "data": "https://example.com/chart.png"}
    noted = {"role": "chartTool", "content": [linked], "details": {"type": "image", "data": "Q3"}}
    source = write_session([Build.header(), Build.entry("message", "c1", None, 1, message=noted)])
    markdown = _export(source, tmp_path / "c.md")
    assert "https://example.com/chart.png" in markdown and '"data": "Q3"' in markdown
    # base64 wrapped in lines (the `base64` tool's, MIME's) is data all the same
    wrapped = "\n".join(data[i : i + 76] for i in range(0, 20_000, 76))
    shot = {"role": "shotTool", "content": [{"type": "image", "data": wrapped}]}
    source = write_session([Build.header(), Build.entry("message", "w1", None, 1, message=shot)])
    assert "A" * 76 not in _export(source, tmp_path / "w.md")


# --- 3: an edit's diff computed from the call -------------------------------------------------


def test_an_edits_diff_from_the_call_is_said_so(write_session: Any, tmp_path: Path) -> None:
    """A failed edit's diff was computed from its replacements, never made: the page says
    so over it, the Markdown showed it as the tool's diff."""
    edits = [{"oldText": "x = 1", "newText": "x = 2"}, {"oldText": "y", "newText": "z"}]
    source = write_session([
        Build.header(),
        Build.user("u1", None, "fix it"),
        _turn("a2", "u1", 2, _call("c1", "edit", {"path": "a.py", "edits": edits})),
        _result("r3", "a2", 3, "c1", "edit", "Could not find the exact text", error=True),
        _turn("a4", "r3", 4, _call("c2", "edit", {"path": "b.py", "oldText": "a", "newText": "b"})),
        _result("r5", "a4", 5, "c2", "edit", "Edited b.py", details={"diff": "-1 a\n+1 b"}),
    ])  # fmt: skip
    failed = "Diff computed from the call's 2 replacements: not applied, the edit failed"
    markdown = _export(source, tmp_path / "s.md")
    lines = markdown.splitlines()
    at = lines.index(f"*{failed}.*")
    assert lines[at - 2].startswith("**edit** `a.py`") and lines[at + 2] == "```diff"
    assert "Diff computed from the call's oldText" not in markdown  # b.py's is the tool's
    assert failed.lower() in _page_text(_export(source, tmp_path / "s.html")).lower()
    cut = _export(source, tmp_path / "cut.md", "--no-tool-output")
    assert "*Diff computed from the call's oldText/newText.*" in cut  # its diff went too


def test_an_edit_of_the_shared_fixture_without_its_output(tmp_path: Path) -> None:
    """The page's label and the Markdown's note are the same words."""
    source = FIXTURES_DIR / "every-entry-type.jsonl"
    markdown = _export(source, tmp_path / "s.md", "--no-tool-output")
    page = _page_text(_export(source, tmp_path / "s.html", "--no-tool-output"))
    assert "diff computed from the call's oldText/newText" in page
    assert "*Diff computed from the call's oldText/newText.*" in markdown


# --- 4: a turn with no usage ------------------------------------------------------------------


def test_a_turn_without_usage_is_said_as_on_the_page(write_session: Any) -> None:
    """``*in 0 · out 0 · cache read 0 · cache write 0 · $0.00*`` for a turn that recorded
    no usage, and for an aborted one that used nothing: the page says so in words."""
    unrecorded = Build.assistant("a2", "u1", "answer without usage", 2)
    del unrecorded["message"]["usage"]
    zeros = Build.usage(0, 0, 0)
    aborted = Build.assistant("a4", "u3", "", 4, usage=zeros, stopReason="aborted")
    source = write_session([
        Build.header(),
        Build.user("u1", None, "hello"),
        unrecorded,
        Build.user("u3", "a2", "again", 3),
        aborted,
    ])  # fmt: skip
    session = load_session(source)
    markdown = session_markdown(session)
    assert "*no usage recorded*" in markdown and "*no tokens used*" in markdown
    assert "in 0 · out 0" not in markdown
    page = _page_text(render_session(session))
    assert "· no usage recorded" in page and "· no tokens used" in page


# --- 5: a model with no known price -----------------------------------------------------------

_CODEX_ID = "019b0000-0000-7000-8000-00000000000a"


def _codex_rollout(model: str) -> bytes:
    """A Codex rollout of one prompt and answer by ``model``, its tokens counted."""
    counted = {"input_tokens": 4200, "cached_input_tokens": 0, "output_tokens": 14,
               "reasoning_output_tokens": 0, "total_tokens": 4214}  # fmt: skip
    lines = [
        ("session_meta", {"id": _CODEX_ID, "timestamp": "2025-12-01T09:00:00.000Z",
                          "cwd": "/home/dev/alpha", "originator": "codex_cli_rs",
                          "cli_version": "0.77.0"}),
        ("response_item", {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "hi"}]}),
        ("event_msg", {"type": "user_message", "message": "hi", "images": []}),
        ("turn_context", {"cwd": "/home/dev/alpha", "model": model, "effort": "medium"}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Hi! What next?"}]}),
        ("event_msg", {"type": "token_count", "info": {"total_token_usage": counted,
                       "last_token_usage": counted, "model_context_window": 272000}}),
    ]  # fmt: skip
    stamped = [
        {"timestamp": f"2025-12-01T09:00:{n:02}.000Z", "type": kind, "payload": payload}
        for n, (kind, payload) in enumerate(lines)
    ]
    return "".join(json.dumps(line) + "\n" for line in stamped).encode()


def test_an_unpriced_models_cost_is_explained(tmp_path: Path, write_session: Any) -> None:
    """A Codex model with no known price: the page's header says it was counted as $0,
    the Markdown said "$0.00" and no more."""
    source = tmp_path / f"rollout-2025-12-01T09-00-00-{_CODEX_ID}.jsonl"
    source.write_bytes(_codex_rollout("gpt-6-codex"))
    note = "no price known for gpt-6-codex: counted as $0"
    assert note in _page_text(_export(source, tmp_path / "s.html"))
    markdown = _export(source, tmp_path / "s.md")
    cost = next(line for line in markdown.splitlines() if line.startswith("- **Cost:**"))
    assert note in cost and "list prices" in cost, cost
    pi_file = write_session([Build.header(cost="whatever a file says"), Build.user("u1", None)])
    said = _export(pi_file, tmp_path / "pi.md")  # a Pi file: Pi records its own costs
    assert "whatever a file says" not in said


def test_a_v1_prompts_attachments_are_said_and_their_text_shown(tmp_path: Path) -> None:
    """A v1 prompt's attached document and image: the page says them, the Markdown left
    them out without a word (hunt s63). A fence in the document's text stays inside."""
    text = "Quarterly budget: the zanzibar project\n```\n# not a heading\n"
    document = {
        "type": "document",
        "fileName": "budget-report.txt",
        "mimeType": "text/plain",
        "size": 56,
        "extractedText": text,
    }
    image = {"type": "image", "fileName": "shot.png", "mimeType": "image/png", "content": IMG}
    user = {"role": "user", "content": "see attached", "attachments": [document, image]}
    lines = [
        {"type": "session", "id": "v1-attach", "timestamp": "2025-01-01T00:00:00.000Z"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z", "message": user},
    ]
    source = tmp_path / "v1.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    markdown = _export(source, tmp_path / "v1.md")
    assert "*Attached document:* `budget-report.txt` (text/plain, 56 bytes)" in markdown
    assert "*Attached image:* `shot.png` (image/png)" in markdown
    assert "image/png" in markdown.split("`shot.png`", 1)[1]  # the image's own note follows
    rendered = github(markdown)
    assert "zanzibar project" in rendered and "<h1>not a heading</h1>" not in rendered
    assert not live_tags(rendered)
