"""Session 64: a Codex rollout resumed under a newer build (``codex resume`` appends to the
same file, with no new session_meta) holds two layouts: first one turn_context per turn,
each request ending at a tool output and counted after its items; then a turn_context
before every request, counted before its items. The layout was judged once per file, so
the older part's three requests became one answer with their tokens summed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session

SESSION_ID = "019bcccc-0000-7000-8000-000000000064"


class _Rollout:
    """Writes rollout lines as Codex does, keeping the running token total."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        second = len(self.lines)
        when = f"2026-01-12T10:{second // 60:02d}:{second % 60:02d}.000Z"
        self.lines.append({"timestamp": when, "type": kind, "payload": payload})

    def context(self) -> None:
        self.add("turn_context", {"cwd": "/w", "model": "gpt-5-codex", "effort": "medium"})

    def prompt(self, text: str) -> None:
        content = [{"type": "input_text", "text": text}]
        self.add("response_item", {"type": "message", "role": "user", "content": content})

    def answer(self, text: str) -> None:
        content = [{"type": "output_text", "text": text}]
        self.add("response_item", {"type": "message", "role": "assistant", "content": content})

    def call(self, call_id: str, command: str) -> None:
        arguments = json.dumps({"command": ["bash", "-lc", command]})
        payload = {"type": "function_call", "name": "shell", "arguments": arguments}
        self.add("response_item", {**payload, "call_id": call_id})

    def output(self, call_id: str, text: str) -> None:
        wrapped = json.dumps({"output": text, "metadata": {"exit_code": 0}})
        self.add(
            "response_item", {"type": "function_call_output", "call_id": call_id, "output": wrapped}
        )

    def count(self, tokens_in: int, tokens_out: int) -> None:
        last = {
            "input_tokens": tokens_in,
            "cached_input_tokens": 0,
            "output_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        }
        for key in self.total:
            self.total[key] += last[key]
        total = {
            **self.total,
            "total_tokens": self.total["input_tokens"] + self.total["output_tokens"],
        }
        info = {"total_token_usage": total, "last_token_usage": last}
        self.add("event_msg", {"type": "token_count", "info": info})

    def write(self, folder: Path) -> Path:
        path = folder / f"rollout-2026-01-12T10-00-00-{SESSION_ID}.jsonl"
        text = "".join(json.dumps(line) + "\n" for line in self.lines)
        path.write_text(text, encoding="utf-8")
        return path


def _resumed_rollout(folder: Path) -> Path:
    """One turn of three requests by a mid-2025 build, then two turns by a late-2025 one
    (the last a single request, which shows its layout only by its count coming first)."""
    rollout = _Rollout()
    meta = {"id": SESSION_ID, "timestamp": "2026-01-12T10:00:00Z", "cwd": "/w"}
    rollout.add("session_meta", {**meta, "cli_version": "0.46.0", "model_provider": "openai"})
    rollout.context()
    rollout.prompt("first task")
    rollout.call("a", "ls")
    rollout.count(1000, 10)
    rollout.output("a", "x")
    rollout.call("b", "cat x")
    rollout.count(2000, 20)
    rollout.output("b", "y")
    rollout.answer("first done")
    rollout.count(3000, 30)
    # resumed by a newer build: a turn_context before each request, its count first
    rollout.context()
    rollout.prompt("second task")
    rollout.context()
    rollout.count(4000, 40)
    rollout.call("c", "pwd")
    rollout.output("c", "/w")
    rollout.context()
    rollout.count(5000, 50)
    rollout.answer("second done")
    rollout.prompt("third task")
    rollout.context()
    rollout.count(6000, 60)
    rollout.answer("third done")
    return rollout.write(folder)


def test_each_part_of_a_resumed_rollout_is_read_by_its_own_layout(tmp_path: Path) -> None:
    session = load_session(_resumed_rollout(tmp_path))
    on_path = set(session.active_path)
    messages = [e for e in session.iter_messages() if e.id in on_path]
    assert [e.role for e in messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    answers = [e.message for e in messages if e.role == "assistant"]
    calls = [[b["id"] for b in m["content"] if b["type"] == "toolCall"] for m in answers]
    assert calls == [["a"], ["b"], [], ["c"], [], []]
    usage = [(m["usage"]["input"], m["usage"]["output"]) for m in answers]
    assert usage == [(1000, 10), (2000, 20), (3000, 30), (4000, 40), (5000, 50), (6000, 60)]


def test_stats_counts_each_request_of_a_resumed_rollout_and_keeps_the_totals(
    tmp_path: Path,
) -> None:
    path = _resumed_rollout(tmp_path)
    result = CliRunner().invoke(cli, ["stats", "--json", str(path)])
    assert result.exit_code == 0, result.output
    usage = json.loads(result.output)["usage"]["all"]
    assert (usage["turns"], usage["turns_without_usage"]) == (6, 0), usage
    assert (usage["input"], usage["output"]) == (21000, 210), usage


def _answers(path: Path) -> list[tuple[int, list[str]]]:
    """Each answer's input tokens and what it holds (tool names, text)."""
    answers = []
    for entry in load_session(path).entries:
        message = entry.raw.get("message") if isinstance(entry.raw, dict) else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            held = [c.get("name") or c.get("text") or "" for c in message.get("content", [])]
            answers.append((message.get("usage", {}).get("input", 0), held))
    return answers


def test_a_compact_after_an_older_builds_turn_leaves_its_requests_apart(tmp_path: Path) -> None:
    """A /compact writes a turn_context and a count of its own after the answer, before the
    next prompt: read as that turn's sign of the newer layout, it merged the turn's three
    requests into one answer (review, stop 64). A turn's first sign decides."""
    rollout = _Rollout()
    meta = {"id": SESSION_ID, "timestamp": "2026-01-12T10:00:00Z", "cwd": "/w"}
    rollout.add("session_meta", {**meta, "cli_version": "0.36.0", "model_provider": "openai"})
    for tag in ("a", "b"):
        rollout.prompt(f"task {tag}")
        rollout.context()
        for index in range(2):
            rollout.call(f"{tag}{index}", "ls")
            rollout.count(1000 * (index + 1), 10)
            rollout.output(f"{tag}{index}", "x")
        rollout.answer(f"{tag} done")
        rollout.count(9000, 90)
        if tag == "a":
            rollout.context()
            rollout.count(500, 300)
            rollout.add("compacted", {"message": "summary"})
    answers = _answers(rollout.write(tmp_path))
    held = [["bash"], ["bash"], ["a done"], ["bash"], ["bash"], ["b done"]]
    assert [held for _, held in answers] == held
    assert sum(tokens for tokens, _ in answers) == 2 * (1000 + 2000 + 9000) + 500
