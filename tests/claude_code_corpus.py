"""Claude Code sessions built in a test's folder (the fixture file is tests/data/claude-code/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def u(number: int) -> str:
    """The fixture's uuids: ``u(5)`` is ``00000000-0000-4000-8000-000000000005``."""
    return f"00000000-0000-4000-8000-{number:012d}"


def sub_agent_session(folder: Path, beside: bool = False) -> Path:
    """A session whose Task call ran a sub-agent, laid out as Claude Code 2.1 (or 2.0)."""
    sid = "5e1d0c2b-0000-4000-8000-00000000aaaa"
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": sid}

    def line(n: int, parent: int | None, kind: str, content: Any, **extra: Any) -> dict:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message |= {"id": f"msg_{n}", "model": "claude-opus-4-6", "usage": usage}
        stamp = f"2026-11-21T09:00:{n:02d}.000Z"
        parent_id = u(parent) if parent else None
        fields = {"parentUuid": parent_id, "type": kind, "uuid": u(n), "timestamp": stamp}
        return {**base, **fields, "message": message, **extra}

    usage = {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0}
    task = {"type": "tool_use", "id": "toolu_T", "name": "Task",
            "input": {"description": "Find the tests", "prompt": "List the test files",
                      "subagent_type": "Explore"}}  # fmt: skip
    main = [
        line(1, None, "user", "Where are the tests?"),
        line(2, 1, "assistant", [task]),
        line(3, 2, "user", [{"type": "tool_result", "tool_use_id": "toolu_T",
                             "content": [{"type": "text", "text": "tests/ holds 2 files"}]}],
             toolUseResult={"status": "completed", "agentId": "a1b2c3d", "totalTokens": 30}),
        line(4, 3, "assistant", [{"type": "text", "text": "In tests/."}]),
    ]  # fmt: skip
    agent = {"isSidechain": True, "agentId": "a1b2c3d"}
    grep = {"type": "tool_use", "id": "toolu_G", "name": "Grep", "input": {"pattern": "def test"}}
    sub = [
        line(10, None, "user", "List the test files", **agent),
        line(11, 10, "assistant", [grep], **agent),
        line(12, 11, "user", [{"type": "tool_result", "tool_use_id": "toolu_G",
                               "content": "tests/a.py\ntests/b.py"}], **agent),
        line(13, 12, "assistant", [{"type": "text", "text": "Two files."}], **agent),
    ]  # fmt: skip
    session = folder / f"{sid}.jsonl"
    where = folder if beside else folder / sid / "subagents"
    where.mkdir(parents=True, exist_ok=True)
    for path, values in ((session, main), (where / "agent-a1b2c3d.jsonl", sub)):
        path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    return session
