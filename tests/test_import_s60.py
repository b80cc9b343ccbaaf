"""Claude Code and Codex transcripts as their writers really leave them (found in stop 60):
a compaction whose named parent was never written, Claude Code's background-task notices,
and a Codex fork's copy of its parent's turns in `stats --all`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.entries import CompactionEntry, MessageEntry
from exporter.loader import load_session
from exporter.render import RenderOptions, render_session
from exporter.usage import compute_stats

SESSION = "44444444-4444-4444-8444-444444444444"
USAGE = {
    "input_tokens": 10,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 1000,
    "output_tokens": 50,
}


def claude_line(uuid: str, parent: str | None, kind: str, when: str, **fields: Any) -> dict:
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
        "timestamp": when,
        **fields,
    }


def answer(uuid: str, parent: str, when: str, message_id: str, text: str) -> dict:
    message = {
        "id": message_id,
        "role": "assistant",
        "model": "claude-opus-4-6",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": USAGE,
    }
    return claude_line(uuid, parent, "assistant", when, requestId=f"r-{uuid}", message=message)


NOTICE = (
    "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
    '<summary>Background command "tests" completed (exit code 0)</summary>\n'
    "</task-notification>\nRead the output file to retrieve the result: /tmp/b1.output"
)


def streaming_compaction(tmp_path: Path) -> Path:
    """Claude Code 2.1 compacted while an answer was streaming: the boundary's
    ``logicalParentUuid`` names a line the file never got."""
    lines = [
        claude_line(
            "d-01",
            None,
            "user",
            "2026-02-12T10:00:00Z",
            message={"role": "user", "content": "Build the feature BEFORE_COMPACT"},
        ),
        answer("d-02", "d-01", "2026-02-12T10:00:05Z", "m1", "Working on it PRE_ANSWER"),
        claude_line(
            "d-03",
            None,
            "system",
            "2026-02-12T10:05:00Z",
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            logicalParentUuid="never-written-uuid",
            compactMetadata={"trigger": "auto", "preTokens": 170000},
        ),
        claude_line(
            "d-04",
            "d-03",
            "user",
            "2026-02-12T10:05:01Z",
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
            message={"role": "user", "content": "This session is being continued... SUMMARY"},
        ),
        answer("d-05", "d-04", "2026-02-12T10:05:05Z", "m2", "Continuing POST_ANSWER"),
        claude_line(
            "d-06",
            "d-05",
            "user",
            "2026-02-12T10:06:00Z",
            message={"role": "user", "content": NOTICE},
        ),
    ]
    folder = tmp_path / "projects" / "-home-me-app"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_compaction_after_a_line_never_written_follows_the_main_line(tmp_path) -> None:
    session = load_session(streaming_compaction(tmp_path))
    compaction = next(e for e in session.entries if isinstance(e, CompactionEntry))
    assert compaction.parent_id == "d-02"  # not a second root
    assert session.active_path[:3] == ["d-01", "d-02", compaction.id]
    assert not [d for d in session.diagnostics if d.kind == "orphan"]
    stats = compute_stats(session)
    assert stats.active_path.turns == 2 == stats.all.turns
    assert len(stats.branches) == 1


def test_a_compaction_naming_a_written_line_still_follows_it(tmp_path) -> None:
    path = streaming_compaction(tmp_path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[2]["logicalParentUuid"] = "d-01"  # the answer d-02 was then a fork of its own
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = load_session(path)
    compaction = next(e for e in session.entries if isinstance(e, CompactionEntry))
    assert compaction.parent_id == "d-01"


def test_a_background_task_notice_is_claude_codes_not_the_users(tmp_path) -> None:
    session = load_session(streaming_compaction(tmp_path))
    prompts = [e for e in session.entries if isinstance(e, MessageEntry) and e.role == "user"]
    assert [e.id for e in prompts] == ["d-01"]
    notice = session.by_id["d-06"]
    assert notice.raw["type"] == "custom_message"
    assert notice.raw["customType"] == "claude-code-notification"
    assert notice.raw["display"] is True
    text = notice.raw["content"]
    assert "<task" not in text and "</summary>" not in text
    assert text.startswith('Background command "tests" completed (exit code 0)')
    assert "- task-id: b1" in text and "- status: completed" in text
    assert text.endswith("Read the output file to retrieve the result: /tmp/b1.output")
    page = render_session(session, RenderOptions())
    assert "&lt;task-notification&gt;" not in page
    assert "Background command &quot;tests&quot; completed" in page


def test_a_typed_prompt_that_mentions_the_tag_stays_a_prompt(tmp_path) -> None:
    path = streaming_compaction(tmp_path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    lines[5]["message"]["content"] = "Why did I get a <task-notification> here?"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = load_session(path)
    assert session.by_id["d-06"].raw["type"] == "message"


# Codex --------------------------------------------------------------------------------
PARENT = "019a0000-0000-7000-8000-000000000001"
FORK = "019a0000-0000-7000-8000-000000000002"


def codex_line(when: str, kind: str, payload: dict) -> dict:
    return {"timestamp": when, "type": kind, "payload": payload}


def meta(session_id: str, when: str, **fields: Any) -> dict:
    payload = {
        "id": session_id,
        "timestamp": when,
        "cwd": "/home/me/proj",
        "originator": "codex_cli_rs",
        "cli_version": "0.58.0",
        "source": "cli",
        "model_provider": "openai",
        **fields,
    }
    return codex_line(when, "session_meta", payload)


def request(when: str, question: str, reply: str, last: dict, total: dict) -> list[dict]:
    context = {"cwd": "/home/me/proj", "model": "gpt-5-codex", "effort": "medium"}
    asked = {"type": "message", "role": "user"}
    asked["content"] = [{"type": "input_text", "text": question}]
    said = {"type": "message", "role": "assistant"}
    said["content"] = [{"type": "output_text", "text": reply}]
    info = {"total_token_usage": total, "last_token_usage": last, "model_context_window": 1}
    return [
        codex_line(when, "response_item", asked),
        codex_line(when, "turn_context", context),
        codex_line(when, "response_item", said),
        codex_line(when, "event_msg", {"type": "token_count", "info": info}),
    ]


def tokens(inp: int, cached: int, out: int) -> dict:
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "output_tokens": out,
        "reasoning_output_tokens": 0,
        "total_tokens": inp + out,
    }


def test_a_codex_forks_copy_of_its_parents_turns_is_counted_once(tmp_path) -> None:
    """Codex writes a fork's copy of the parent's lines under new time stamps, one header
    line down: neither the time stamps nor the line-numbered ids say it is a copy."""
    day = tmp_path / "sessions" / "2025" / "11" / "20"
    day.mkdir(parents=True)
    u1, u2, u3 = tokens(10000, 8000, 500), tokens(12000, 10000, 300), tokens(11000, 9000, 100)
    first = request("2025-11-20T10:00:01.000Z", "first question", "first answer", u1, u1)
    parent = [
        meta(PARENT, "2025-11-20T10:00:00.000Z"),
        *first,
        *request("2025-11-20T10:01:00.000Z", "second question", "second answer", u2, u2),
    ]
    restamped = [{**line, "timestamp": "2025-11-20T11:00:00.500Z"} for line in parent]
    fork = [
        meta(FORK, "2025-11-20T11:00:00.000Z", forked_from_id=PARENT),
        *restamped[:5],  # the parent's header and its first request, copied
        *request("2025-11-20T11:00:01.000Z", "other question", "other answer", u3, u3),
    ]
    for name, lines in (("10-00-00-" + PARENT, parent), ("11-00-00-" + FORK, fork)):
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (day / f"rollout-2025-11-20T{name}.jsonl").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["stats", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions")]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    total = report["total"]
    assert total["turns"] == 3
    assert total["input"] == 6000  # 2,000 + 2,000 + 2,000 uncached
    assert total["cache_read"] == 27000
    assert report["repeated_turns"] == 1


def test_a_notice_field_holding_a_tag_is_kept_as_text() -> None:
    """A field is text without tags; an unclosed or nested tag stays in the notice's text
    (``.*?`` to a far closing tag, for each unclosed one, took quadratic time)."""
    from exporter.claude_code import _task_notification

    notice = _task_notification(
        "<task-notification>\n<task-id>b1</task-id>\n<summary>a <b>c</b></summary>\n"
        "</task-notification>"
    )
    assert notice is not None
    assert "- task-id: b1" in notice
    assert "- b: c" in notice and "<summary>a </summary>" in notice  # nothing lost
    many = _task_notification("<task-notification>" + "<a>" * 2000 + "</task-notification>")
    assert many == "<a>" * 2000
