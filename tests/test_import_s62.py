"""Claude Code and Codex transcripts as their writers really leave them (found in stop 62):
Claude Code files that hold no message, a resumed sub-agent's one file named by two calls,
Codex's tool search, and the blocks a Claude Code tool result holds besides text and
images (a PDF, a tool reference, an image given by its address)."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import claude_encode_cwd
from exporter.entries import MessageEntry
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from exporter.render import RenderOptions, render_session
from tests.browser_util import Viewer

pytest_plugins = ["tests.browser_util"]

SESSION = "62626262-6262-4262-8262-626262626262"
USAGE = {
    "input_tokens": 10,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 1000,
    "output_tokens": 50,
}


def claude_line(uuid: str, parent: str | None, kind: str, second: int, **fields: Any) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/me/app",
        "sessionId": SESSION,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-02-12T10:00:{second:02d}Z",
        **fields,
    }


def prompt(uuid: str, parent: str | None, second: int, content: Any, **fields: Any) -> dict:
    message = {"role": "user", "content": content}
    return claude_line(uuid, parent, "user", second, message=message, **fields)


def answer(
    uuid: str, parent: str, second: int, message_id: str, content: list[dict], **fields: Any
) -> dict:
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
    message = {
        "id": message_id,
        "role": "assistant",
        "model": "claude-opus-4-6",
        "content": content,
        "stop_reason": stop,
        "usage": USAGE,
    }
    return claude_line(uuid, parent, "assistant", second, message=message, **fields)


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


# --- Claude Code files without a message ----------------------------------------------------

#: What Claude Code leaves of sessions opened and quit before their first prompt, and of the
#: summaries it writes into files of their own.
EMPTY_FILES = {
    "bbbbbbbb-0000-4000-8000-000000000000.jsonl": [
        {"type": "summary", "summary": "Old chat about X", "leafUuid": "11111111-aaaa"},
        {"type": "summary", "summary": "Another", "leafUuid": "11111111-bbbb"},
    ],
    "cccccccc-0000-4000-8000-000000000000.jsonl": [
        {
            "type": "file-history-snapshot",
            "messageId": "x",
            "snapshot": {"messageId": "x", "trackedFileBackups": {}, "timestamp": "2026"},
            "isSnapshotUpdate": False,
        }
    ],
    "dddddddd-0000-4000-8000-000000000000.jsonl": [
        {
            "type": "queue-operation",
            "operation": "dequeue",
            "timestamp": "2026-02-12T09:00:00Z",
            "sessionId": "dddddddd-0000-4000-8000-000000000000",
        }
    ],
}


def projects_with_empty_files(root: Path, project: str = "/home/me/app") -> Path:
    """A Claude Code projects folder: one real session, older than three files without a
    message (the newest files of the folder)."""
    folder = root / claude_encode_cwd(project)
    real = write_lines(
        folder / f"{SESSION}.jsonl",
        [
            prompt("u1", None, 1, "Where are the tests REALPROMPT?"),
            answer("u2", "u1", 2, "m1", [{"type": "text", "text": "In tests/."}]),
        ],
    )
    os.utime(real, (1_700_000_000, 1_700_000_000))
    for name, lines in EMPTY_FILES.items():
        write_lines(folder / name, lines)
    return root


def test_files_without_messages_are_left_out_of_folder_wide_commands(tmp_path) -> None:
    """They were listed as "(unreadable: not a Pi session file)" with today's date, warned
    about by stats and search, and counted as failures by `export --all`."""
    root = projects_with_empty_files(tmp_path / "projects")
    runner = CliRunner()
    listing = runner.invoke(cli, ["list", "--all", "--json", "--sessions-dir", str(root)])
    assert listing.exit_code == 0, listing.output
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    assert [Path(row["path"]).name for row in rows] == [f"{SESSION}.jsonl"]
    assert all(not row.get("error") for row in rows)

    stats = runner.invoke(cli, ["stats", "--all", "--sessions-dir", str(root)])
    assert stats.exit_code == 0, stats.output
    assert "warning" not in stats.stderr, stats.stderr

    search = runner.invoke(cli, ["search", "--all", "--sessions-dir", str(root), "REALPROMPT"])
    assert search.exit_code == 0, search.output
    assert "warning" not in search.stderr, search.stderr

    out = tmp_path / "site"
    exported = runner.invoke(cli, ["export", "--all", "--sessions-dir", str(root), "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    assert "0 failed" in exported.stderr, exported.stderr
    assert "1 rendered" in exported.stderr, exported.stderr


def test_the_latest_session_is_not_a_file_without_messages(tmp_path, monkeypatch) -> None:
    """Newest in the project's folder, such a file made `stats` without SESSION warn "the
    latest session cannot be read"."""
    project = tmp_path / "app"
    project.mkdir()
    root = projects_with_empty_files(tmp_path / "projects", str(project.resolve()))
    monkeypatch.chdir(project)
    stats = CliRunner().invoke(cli, ["stats", "--sessions-dir", str(root)])
    assert stats.exit_code == 0, stats.output
    assert "cannot be read" not in stats.stderr, stats.stderr
    assert "warning" not in stats.stderr, stats.stderr


def test_a_file_without_messages_named_says_what_it_is(tmp_path) -> None:
    root = projects_with_empty_files(tmp_path / "projects")
    folder = root / claude_encode_cwd("/home/me/app")
    said = {
        "bbbbbbbb": "a Claude Code file with no messages (only summary lines)",
        "cccccccc": "a Claude Code file with no messages (only one file-history-snapshot line)",
        "dddddddd": "a Claude Code file with no messages (only one queue-operation line)",
    }
    for name in EMPTY_FILES:
        result = CliRunner().invoke(cli, ["export", str(folder / name), "-o", str(tmp_path / "x")])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert said[name[:8]] in result.stderr, result.stderr
        assert not (tmp_path / "x").exists()


def test_look_alikes_of_such_files_are_still_not_sessions(tmp_path) -> None:
    """Another tool's lines (a type Claude Code does not write, a type that is a list) are
    not taken for Claude Code's: listed and refused as before, without a traceback."""
    folder = tmp_path / "projects" / "-home-me-app"
    write_lines(folder / "other.jsonl", [{"type": "event", "sessionId": "s"}])
    write_lines(folder / "odd.jsonl", [{"type": ["queue-operation"], "sessionId": "s"}])
    runner = CliRunner()
    listing = runner.invoke(
        cli, ["list", "--all", "--json", "--sessions-dir", str(tmp_path / "projects")]
    )
    assert listing.exit_code == 0, listing.output
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    assert sorted(Path(row["path"]).name for row in rows) == ["odd.jsonl", "other.jsonl"]
    for name in ("other.jsonl", "odd.jsonl"):
        result = runner.invoke(cli, ["stats", str(folder / name)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "not a Pi session file" in result.stderr, result.stderr


# --- a resumed sub-agent: one file, two calls -----------------------------------------------

AGENT = "a1b2c3d"


def task_call(call_id: str, asked: str, **more: Any) -> list[dict]:
    arguments = {"description": "explore", "prompt": asked, "subagent_type": "Explore", **more}
    return [{"type": "tool_use", "id": call_id, "name": "Task", "input": arguments}]


def task_result(call_id: str, text: str) -> list[dict]:
    return tool_result(call_id, [{"type": "text", "text": text}])


def tool_result(call_id: str, content: list[dict]) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": content}]


def tool_use(call_id: str, name: str, **arguments: Any) -> list[dict]:
    return [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]


def resumed_agent(tmp_path: Path, second_prompt: str = "Which is bigger?") -> Path:
    """A session whose second Task call resumed the first one's agent: Claude Code appended
    the second run to the agent's one file (its first prompt after the first run's end)."""
    done = {"status": "completed", "agentId": AGENT, "totalTokens": 30}
    main = write_lines(
        tmp_path / f"{SESSION}.jsonl",
        [
            prompt("u1", None, 1, "Where are the tests?"),
            answer("u2", "u1", 2, "mA", task_call("toolu_T1", "List the test files")),
            prompt("u3", "u2", 3, task_result("toolu_T1", "FIRSTRESULT"), toolUseResult=done),
            answer("u4", "u3", 4, "mB", [{"type": "text", "text": "In tests/."}]),
            prompt("u5", "u4", 5, "Now ask it which is bigger"),
            answer("u6", "u5", 6, "mC", task_call("toolu_T2", "Which is bigger?", resume=AGENT)),
            prompt("u7", "u6", 7, task_result("toolu_T2", "SECONDRESULT"), toolUseResult=done),
            answer("u8", "u7", 8, "mD", [{"type": "text", "text": "b.py is bigger."}]),
        ],
    )
    side = {"isSidechain": True, "agentId": AGENT}
    write_lines(
        tmp_path / SESSION / "subagents" / f"agent-{AGENT}.jsonl",
        [
            prompt("s1", None, 10, "List the test files", **side),
            answer("s2", "s1", 11, "mS1", [{"type": "text", "text": "SUBFIRST a.py b.py"}], **side),
            prompt("s3", "s2", 12, second_prompt, **side),
            answer("s4", "s3", 13, "mS2", [{"type": "text", "text": "SUBSECOND b.py"}], **side),
        ],
    )
    return main


def test_a_resumed_sub_agent_is_read_once_each_run_after_its_call(tmp_path) -> None:
    """Its file was read once per call: "2 sub-agent transcripts", four lines called copies,
    and both runs hung after the second call's result, none after the first's."""
    session = load_session(resumed_agent(tmp_path))
    said = {d.kind: d.message for d in session.diagnostics}
    assert said["claude-code-sub-agents"].startswith("1 sub-agent transcript ")
    assert "claude-code-copies" not in said
    texts = [e for e in session.entries if isinstance(e, MessageEntry) and "SUB" in e.text]
    assert sorted(e.text for e in texts) == ["SUBFIRST a.py b.py", "SUBSECOND b.py"]
    assert session.by_id["s1"].parent_id == "u3"  # after the first call's result
    assert session.by_id["s3"].parent_id == "u7"  # after the second call's result
    assert session.by_id["s2"].parent_id == "s1"
    assert session.by_id["s4"].parent_id == "s3"


def test_runs_that_cannot_be_told_apart_follow_the_first_call(tmp_path) -> None:
    """The second run's prompt is not the call's: the whole transcript, once, after the
    first call."""
    session = load_session(resumed_agent(tmp_path, second_prompt="something else"))
    assert session.by_id["s1"].parent_id == "u3"
    assert session.by_id["s3"].parent_id == "s2"
    assert not any(e.parent_id == "u7" and e.id.startswith("s") for e in session.entries)
    assert sum(e.id == "s1" for e in session.entries) == 1


# --- Codex's tool search --------------------------------------------------------------------


def codex_line(second: int, kind: str, payload: dict) -> dict:
    return {"timestamp": f"2026-02-01T11:00:{second:02d}.000Z", "type": kind, "payload": payload}


def codex_rollout(path: Path, execution: str) -> Path:
    meta = {
        "id": "019c0000-1111-7222-8333-444444444444",
        "timestamp": "2026-02-01T11:00:00.000Z",
        "cwd": "/home/me/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.98.0",
        "model_provider": "openai",
    }
    found = [{"name": "mcp__github__search_issues", "description": "Search issues FOUNDTOOL"}]
    lines = [
        codex_line(0, "session_meta", meta),
        codex_line(1, "turn_context", {"cwd": "/home/me/proj", "model": "gpt-5.2-codex"}),
        codex_line(
            2,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ),
        codex_line(
            3,
            "response_item",
            {
                "type": "tool_search_call",
                "call_id": "ts_1",
                "status": "completed",
                "execution": execution,
                "arguments": {"query": "github issues TOOLSEARCHQ", "limit": 3},
            },
        ),
        codex_line(
            4,
            "response_item",
            {
                "type": "tool_search_output",
                "call_id": "ts_1",
                "status": "completed",
                "execution": execution,
                "tools": found,
            },
        ),
        codex_line(
            5,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Found the tool. DONE"}],
            },
        ),
    ]
    return write_lines(path, lines)


def test_a_codex_tool_search_is_a_call_and_its_result(tmp_path) -> None:
    """`tool_search_call` and `tool_search_output` were only counted in the bookkeeping
    note: the query was nowhere, the Tools table left the call out."""
    path = codex_rollout(tmp_path / "rollout.jsonl", "client")
    session = load_session(path)
    messages = [e for e in session.entries if isinstance(e, MessageEntry)]
    calls = [block for entry in messages for block in entry.tool_calls]
    assert calls == [
        {
            "type": "toolCall",
            "id": "ts_1",
            "name": "tool_search",
            "arguments": {"query": "github issues TOOLSEARCHQ", "limit": 3},
        }
    ]
    results = [e for e in messages if e.role == "toolResult"]
    assert [(r.tool_call_id, r.tool_name) for r in results] == [("ts_1", "tool_search")]
    assert "FOUNDTOOL" in results[0].text
    assert all("tool_search" not in d.message for d in session.diagnostics)

    markdown = session_markdown(session)
    assert "| `tool_search` | 1 | 0 |" in markdown
    assert "TOOLSEARCHQ" in markdown and "FOUNDTOOL" in markdown
    found = CliRunner().invoke(cli, ["search", "TOOLSEARCHQ", str(path)])
    assert found.exit_code == 0, found.output
    assert "1 entry in 1 session" in found.stderr


def test_a_tool_search_the_servers_ran_ends_no_request(tmp_path) -> None:
    """The provider ran it within the answer: the call, its result and the answer's text are
    one request, which stopped (it did not wait for a tool)."""
    session = load_session(codex_rollout(tmp_path / "rollout.jsonl", "server"))
    answers = [e for e in session.entries if isinstance(e, MessageEntry) and e.role == "assistant"]
    assert len(answers) == 1
    assert [b.get("type") for b in answers[0].content] == ["toolCall", "text"]
    assert answers[0].stop_reason == "stop"


# --- a tool result's documents, tool references and addressed images -----------------------

#: A PDF's bytes as Claude Code keeps them, big enough that the Markdown must not carry it.
PDF = base64.b64encode(b"%PDF-1.4\n" + b"0" * 300_000 + b"\n%%EOF\n").decode("ascii")
IMAGE_URL = "https://images.invalid/shot-IMAGEADDR.png"


def blocks_session(tmp_path: Path) -> Path:
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
    }
    attached = [{"type": "text", "text": "read the PDF"}, {**document, "title": "spec.pdf"}]
    read = [document, {"type": "text", "text": "PDF file read DOCRESULT"}]
    fetched = [
        {"type": "image", "source": {"type": "url", "url": IMAGE_URL}},
        {"type": "tool_reference", "tool_name": "mcp__x__TOOLREF"},
    ]
    return write_lines(
        tmp_path / "cc.jsonl",
        [
            prompt("u1", None, 1, attached),
            answer("u2", "u1", 2, "mA", tool_use("toolu_R", "Read", file_path="/home/me/spec.pdf")),
            prompt("u3", "u2", 3, tool_result("toolu_R", read)),
            answer("u4", "u3", 4, "mB", tool_use("toolu_U", "WebFetch", url="https://x.invalid")),
            prompt("u5", "u4", 5, tool_result("toolu_U", fetched)),
            answer("u6", "u5", 6, "mC", [{"type": "text", "text": "ok DONE"}]),
        ],
    )


def test_the_markdown_says_what_the_page_shows_of_a_result_as_written(tmp_path) -> None:
    """A `document` (a PDF Read returned) and a `tool_reference` in a result were on the page
    "as written" and nowhere in the Markdown; the PDF's data is said by type and size."""
    markdown = session_markdown(load_session(blocks_session(tmp_path)))
    assert "DOCRESULT" in markdown
    assert '"tool_reference"' in markdown and "mcp__x__TOOLREF" in markdown
    assert markdown.count("*PDF document") == 2  # the prompt's and the result's
    assert "(application/pdf, 300,016 bytes)" in markdown  # decoded: the real size
    assert PDF[:200] not in markdown and len(markdown) < 20_000


def test_an_image_given_by_its_address_keeps_it_never_loaded(tmp_path, viewer: Viewer) -> None:
    """It became "[image of type ? not shown …]" on the page, "[image, 0 bytes …]" in the
    Markdown, its address lost."""
    from playwright.sync_api import expect  # (the fixture says when Playwright is missing)

    session = load_session(blocks_session(tmp_path))
    markdown = session_markdown(session)
    assert f"[image: {IMAGE_URL}]" in markdown
    assert "0 bytes" not in markdown

    html = render_session(session, RenderOptions())
    page = viewer.open(viewer.server.publish("addressed-image.html", html) + "#u5")
    result = page.locator('[data-entry-id="u5"]')
    result.scroll_into_view_if_needed()  # (an entry off screen is not laid out: no text)
    expect(result).to_contain_text(f"[image: {IMAGE_URL}]", use_inner_text=True)
    assert "not shown" not in result.inner_text()
    assert page.locator(f'img[src="{IMAGE_URL}"]').count() == 0
    viewer.assert_clean()  # no request for the image's address
