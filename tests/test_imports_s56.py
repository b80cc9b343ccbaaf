"""Stop 56: Claude Code and Codex shapes the converters read wrongly (found by a hunt over
their public formats): a prompt typed while Claude worked, one-hour cache writes, `!` shell
commands, Read's tab-numbered lines, a resumed session's id, a system line's odd subtype;
Codex's MCP results and the tags around an attached image."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.entries import MessageEntry
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from exporter.render import RenderOptions, render_session
from exporter.search import Pattern, search_file

SID = "11111111-2222-4333-8444-555555555555"


def u(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def cc(n: int, parent: int | None, kind: str, content: Any, sid: str = SID, **extra: Any) -> dict:
    """A Claude Code line: a user or assistant message (or another type, given in extra)."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        usage = extra.pop("usage", None) or {"input_tokens": 10, "output_tokens": 5}
        message |= {"id": f"msg_{n}", "model": "claude-sonnet-4-5-20250929", "usage": usage}
    line = {
        "parentUuid": u(parent) if parent else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/w",
        "sessionId": sid,
        "version": "2.1.63",
        "type": kind,
        "message": message,
        "uuid": u(n),
        "timestamp": f"2026-01-01T10:00:{n:02d}.000Z",
    }
    return line | extra


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


def markdown(path: Path) -> str:
    return session_markdown(load_session(path))


def queued(n: int, parent: int, prompt: Any, **attachment: Any) -> dict:
    line = cc(n, parent, "attachment", None)
    del line["message"]
    line["attachment"] = {"type": "queued_command", "prompt": prompt, "commandMode": "prompt",
                          "origin": {"kind": "human"}} | attachment  # fmt: skip
    return line


def _queued_session(tmp_path: Path) -> Path:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    return write(
        tmp_path / f"{SID}.jsonl",
        [
            cc(1, None, "user", "Add the price column"),
            cc(2, 1, "assistant", [call]),
            cc(3, 2, "user", [result]),
            queued(4, 3, "and convert the prices to euros"),
            queued(5, 4, "<task-notification>done</task-notification>", commandMode="notice"),
            queued(6, 5, "a message from another session", origin={"kind": "peer"}),
            cc(7, 6, "assistant", [{"type": "text", "text": "Done, prices in euros."}]),
        ],
    )


def test_a_prompt_typed_while_claude_worked_is_a_user_message(tmp_path: Path) -> None:
    """Claude Code writes such a prompt only as a `queued_command` attachment: it was
    counted as bookkeeping, and the answer to it answered nothing on the page."""
    path = _queued_session(tmp_path)
    session = load_session(path)
    typed = session.by_id[u(4)]
    assert isinstance(typed, MessageEntry) and typed.role == "user"
    assert typed.message["content"] == "and convert the prices to euros"
    for not_typed in (u(5), u(6)):  # a notification, another session's message
        assert not_typed not in session.by_id
    path_ids = list(session.active_path)
    assert path_ids.index(u(4)) < path_ids.index(u(7))  # the answer follows it
    assert "and convert the prices to euros" in markdown(path)
    assert search_file(path, Pattern("prices to euros"))["matches"]


def test_one_hour_cache_writes_cost_twice_the_input_price(tmp_path: Path) -> None:
    """Anthropic prices a one-hour cache write at 2x the input price, a five-minute one at
    1.25x: both were priced at the five-minute rate."""
    usage = {"input_tokens": 500, "output_tokens": 0, "cache_creation_input_tokens": 1_000_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 400_000,
                                "ephemeral_1h_input_tokens": 600_000}}  # fmt: skip
    path = write(
        tmp_path / f"{SID}.jsonl",
        [
            cc(1, None, "user", "hi"),
            cc(2, 1, "assistant", [{"type": "text", "text": "x"}], usage=usage),
        ],
    )
    cost = load_session(path).by_id[u(2)].message["usage"]["cost"]  # type: ignore[attr-defined]
    # sonnet: input $3, five-minute write $3.75, one-hour write $6 per million
    expected = 500 * 3 / 1e6 + 400_000 * 3.75 / 1e6 + 600_000 * 6 / 1e6
    assert math.isclose(cost["total"], expected), cost
    assert math.isclose(cost["cacheWrite"], 1.5 + 3.6), cost


def _shell_session(tmp_path: Path, content: Any) -> Path:
    output = "<bash-stdout># Title\n*all* done</bash-stdout><bash-stderr>warning: x</bash-stderr>"
    return write(
        tmp_path / f"{SID}.jsonl",
        [
            cc(1, None, "user", "hello"),
            cc(2, 1, "assistant", [{"type": "text", "text": "hi"}]),
            cc(3, 2, "user", content),
            cc(4, 3, "user", output),
            cc(5, 4, "user", "what changed?"),
        ],
    )


def test_a_bang_command_is_a_shell_command_with_its_output(tmp_path: Path) -> None:
    """`!git log` wrote two user lines (the command, its tagged output): both read as
    prompts, the output rendered as Markdown (`# Title` a heading), stderr unmarked."""
    for content in ("<bash-input>git log -3</bash-input>",
                    [{"type": "text", "text": "<bash-input>git log -3</bash-input>"}]):  # fmt: skip
        path = _shell_session(tmp_path, content)
        session = load_session(path)
        ran = session.by_id[u(3)]
        assert isinstance(ran, MessageEntry) and ran.role == "bashExecution"
        assert ran.message["command"] == "git log -3"
        assert ran.message["output"] == "# Title\n*all* done\nwarning: x"
        assert u(4) not in session.by_id  # its output is the command's
        assert session.by_id[u(5)].parent_id == u(3)
        page = render_session(session, RenderOptions())
        assert "<h1>Title</h1>" not in page and "<em>all</em>" not in page
        assert "# Title\n*all* done" in markdown(path)


def test_reads_numbered_with_tabs_lose_their_numbers(tmp_path: Path) -> None:
    """Claude Code 2.1 numbers Read's lines `     1\\t…` (before, `     1→…`)."""
    call = {"type": "tool_use", "id": "toolu_R", "name": "Read", "input": {"file_path": "/w/a.py"}}
    text = "     1\tdef add(a, b):\n     2\t    return a + b\n"
    result = {"type": "tool_result", "tool_use_id": "toolu_R", "content": text}
    path = write(
        tmp_path / f"{SID}.jsonl",
        [cc(1, None, "user", "read it"), cc(2, 1, "assistant", [call]), cc(3, 2, "user", [result])],
    )
    shown = load_session(path).by_id[u(3)].message["content"][0]["text"]  # type: ignore[attr-defined]
    assert shown == "def add(a, b):\n    return a + b\n"


def test_a_resumed_session_has_its_own_id(tmp_path: Path) -> None:
    """`claude --resume` writes a new file that starts with the old session's lines, under
    the old id: the new file was reported as the old session."""
    old, new = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
    path = write(
        tmp_path / f"{new}.jsonl",
        [
            cc(1, None, "user", "first", sid=old),
            cc(2, 1, "assistant", [{"type": "text", "text": "one"}], sid=old),
            cc(3, 2, "user", "again", sid=new),
            cc(4, 3, "assistant", [{"type": "text", "text": "two"}], sid=new),
        ],
    )
    assert load_session(path).id == new
    stats = CliRunner().invoke(cli, ["stats", str(path), "--json"])
    assert json.loads(stats.stdout)["id"] == new


def test_a_system_line_with_an_odd_subtype_loads(tmp_path: Path) -> None:
    odd = cc(2, 1, "system", None, subtype=["local_command"])
    odd["content"] = "x"
    del odd["message"]
    path = write(tmp_path / f"{SID}.jsonl", [cc(1, None, "user", "hi"), odd])
    result = CliRunner().invoke(cli, ["stats", str(path)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "hi" in result.stdout


# --- Codex -----------------------------------------------------------------------------------

CODEX_ID = "019b0000-0000-7000-8000-00000000c0de"


def cx(second: int, kind: str, payload: dict) -> dict:
    return {"timestamp": f"2025-12-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def rollout(tmp_path: Path, items: list[dict]) -> Path:
    meta = cx(0, "session_meta", {"id": CODEX_ID, "timestamp": "2025-12-01T10:00:00.000Z",
                                  "cwd": "/w", "originator": "codex_cli_rs",
                                  "cli_version": "0.77.0"})  # fmt: skip
    context = cx(1, "turn_context", {"cwd": "/w", "model": "gpt-5-codex"})
    return write(
        tmp_path / f"rollout-2025-12-01T10-00-00-{CODEX_ID}.jsonl", [meta, context, *items]
    )


def test_a_codex_mcp_result_shows_its_text(tmp_path: Path) -> None:
    """Codex saves an MCP tool's content blocks as a JSON string: the page showed that
    string, `\\n` and all."""
    blocks = [{"type": "text", "text": "Issue #12: Login fails\nline two"}]
    path = rollout(
        tmp_path,
        [
            cx(2, "response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": "my issues"}]}),
            cx(3, "response_item", {"type": "function_call", "name": "github__list_issues",
                                    "arguments": "{}", "call_id": "c1"}),
            cx(4, "response_item", {"type": "function_call_output", "call_id": "c1",
                                    "output": json.dumps(blocks)}),
        ],
    )  # fmt: skip
    session = load_session(path)
    (result,) = [e for e in session.entries if getattr(e, "role", "") == "toolResult"]
    assert result.message["content"] == [{"type": "text", "text": blocks[0]["text"]}]  # type: ignore[attr-defined]
    assert "Issue #12: Login fails\nline two" in markdown(path)


def test_codex_s_image_tags_are_not_the_prompt_s_words(tmp_path: Path) -> None:
    png = (
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4"
        "DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
    )
    content = [
        {"type": "input_text", "text": "<image name=[Image #1]>"},
        {"type": "input_image", "image_url": png},
        {"type": "input_text", "text": "</image>"},
        {"type": "input_text", "text": "[Image #1] why is this red? </image> stays in words"},
    ]
    path = rollout(
        tmp_path, [cx(2, "response_item", {"type": "message", "role": "user", "content": content})]
    )
    (prompt,) = [e for e in load_session(path).entries if getattr(e, "role", "") == "user"]
    blocks = prompt.message["content"]  # type: ignore[attr-defined]
    assert [b["type"] for b in blocks] == ["image", "text"]
    assert blocks[1]["text"].startswith("[Image #1] why is this red?")


def test_an_inline_sub_agent_follows_its_task_call(tmp_path: Path) -> None:
    """Before Claude Code 2.0.28 a sub-agent's lines sat in the session's own file: it was
    a separate root ("Branch 2 of 2"), not a branch after the Task call that ran it."""
    task = {"type": "tool_use", "id": "toolu_T", "name": "Task",
            "input": {"description": "Find tests", "prompt": "List the test files"}}  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": "toolu_T", "content": "2 files"}
    side = {"isSidechain": True}
    path = write(
        tmp_path / f"{SID}.jsonl",
        [
            cc(1, None, "user", "Where are the tests?"),
            cc(2, 1, "assistant", [task]),
            cc(3, None, "user", "List the test files", **side),
            cc(4, 3, "assistant", [{"type": "text", "text": "tests/a.py, tests/b.py"}], **side),
            cc(5, 2, "user", [result]),
            cc(6, 5, "assistant", [{"type": "text", "text": "In tests/."}]),
        ],
    )
    session = load_session(path)
    assert session.by_id[u(3)].parent_id == u(5)  # right after the call's result
    assert list(session.active_path)[-1] == u(6)
    roots = [e.id for e in session.entries if e.parent_id is None]
    assert roots == [u(1)]
