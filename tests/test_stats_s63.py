"""Session 63: `stats` says where a converted session's dollars come from (a model with no
known price was "$0.00" without a word, where the page's header said so), and `list` and
`--since` date a message without an entry time by its own time, as Pi and the day table do."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli

FIXTURES = (
    Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).parents[2] / "shared") / "fixtures"
)
SESSION_ID = "019b0000-0000-7000-8000-00000000000a"


def _codex_rollout(folder: Path, model: str) -> Path:
    """A Codex rollout of one prompt and one answer on ``model``."""

    def at(clock: str) -> str:
        return f"2025-12-01T{clock}.000Z"

    usage = {
        "input_tokens": 4200,
        "cached_input_tokens": 0,
        "output_tokens": 14,
        "reasoning_output_tokens": 0,
        "total_tokens": 4214,
    }
    lines: list[dict[str, Any]] = [
        {
            "timestamp": at("09:00:00"),
            "type": "session_meta",
            "payload": {
                "id": SESSION_ID,
                "timestamp": at("09:00:00"),
                "cwd": "/home/dev/alpha",
                "originator": "codex_cli_rs",
                "cli_version": "0.77.0",
            },
        },
        {
            "timestamp": at("09:00:01"),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hi"}],
            },
        },
        {
            "timestamp": at("09:00:02"),
            "type": "turn_context",
            "payload": {"cwd": "/home/dev/alpha", "model": model, "effort": "medium"},
        },
        {
            "timestamp": at("09:00:05"),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi! What shall I do?"}],
            },
        },
        {
            "timestamp": at("09:00:05"),
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage},
            },
        },
    ]
    day = folder / "2025" / "12" / "01"
    day.mkdir(parents=True)
    path = day / f"rollout-2025-12-01T09-00-00-{SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_stats_says_a_model_without_a_price_was_counted_as_nothing(tmp_path: Path) -> None:
    path = _codex_rollout(tmp_path / "codex", "gpt-6-codex")
    result = CliRunner().invoke(cli, ["stats", str(path)])
    assert result.exit_code == 0, result.output
    cost_lines = [line for line in result.output.splitlines() if line.startswith("  cost ")]
    assert len(cost_lines) == 1
    assert "list prices" in cost_lines[0]
    assert "no price known for gpt-6-codex: counted as $0" in cost_lines[0]
    document = json.loads(CliRunner().invoke(cli, ["stats", "--json", str(path)]).output)
    assert "no price known for gpt-6-codex" in document["cost_note"]


def test_a_pi_session_has_no_cost_line(tmp_path: Path) -> None:
    """Pi records each turn's cost: nothing to say, and nothing said."""
    fixture = FIXTURES
    result = CliRunner().invoke(cli, ["stats", str(fixture / "pi-branched-1.jsonl")])
    assert result.exit_code == 0, result.output
    assert not [line for line in result.output.splitlines() if line.startswith("  cost ")]
    document = json.loads(
        CliRunner().invoke(cli, ["stats", "--json", str(fixture / "pi-branched-1.jsonl")]).output
    )
    assert document["cost_note"] is None


def _timeless_session(folder: Path, minutes_ago: int) -> Path:
    """A v3 session from 2020 whose entries have no ``timestamp``, only their messages
    (epoch milliseconds, ``minutes_ago`` before now)."""
    now = int(time.time() * 1000) - minutes_ago * 60_000
    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": "timeless",
            "timestamp": "2020-01-01T00:00:00.000Z",
            "cwd": "/tmp/proj",
        }
    ]
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}}
    parent = None
    for turn in range(3):
        user = {"role": "user", "content": "q", "timestamp": now + turn * 1000}
        lines.append({"type": "message", "id": f"u{turn}", "parentId": parent, "message": user})
        answer = {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}],
            "provider": "anthropic",
            "model": "m",
            "usage": usage,
            "stopReason": "stop",
            "timestamp": now + turn * 1000 + 500,
        }
        lines.append(
            {"type": "message", "id": f"a{turn}", "parentId": f"u{turn}", "message": answer}
        )
        parent = f"a{turn}"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_messages_without_entry_times_are_dated_by_their_own(tmp_path: Path) -> None:
    """The day table put the turns on today; `--since 1d` said the session was older and
    `list` showed 2020-01-01 (hunt 63)."""
    sessions = tmp_path / "sessions"
    _timeless_session(sessions / "p", minutes_ago=60)
    since = CliRunner().invoke(
        cli, ["stats", "--all", "--sessions-dir", str(sessions), "--since", "1d", "--json"]
    )
    assert since.exit_code == 0, since.output
    listed = CliRunner().invoke(cli, ["list", "--all", "--sessions-dir", str(sessions)])
    assert listed.exit_code == 0, listed.output
    assert "2020-01-01" not in listed.output
    today = time.strftime("%Y-%m-%d", time.localtime(time.time() - 3600))
    assert today in listed.output


def test_stats_all_says_which_models_are_list_priced_and_which_have_no_price(
    tmp_path: Path,
) -> None:
    """`stats --all` showed "$0.00" for a Codex model with no known price without a word
    (hunt 63); a Pi session's models are priced by Pi and not named."""
    sessions = tmp_path / "codex"
    _codex_rollout(sessions, "gpt-6-codex")
    pi = tmp_path / "pi" / "project"
    pi.mkdir(parents=True)
    (pi / "s.jsonl").write_bytes((FIXTURES / "pi-branched-1.jsonl").read_bytes())
    result = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(sessions)])
    assert result.exit_code == 0, result.output
    said = result.output.splitlines()[1]
    assert said == (
        "Claude Code and Codex turns' cost is computed from list prices (openai/gpt-6-codex); "
        "no price known for openai/gpt-6-codex: counted as $0"
    )
    document = json.loads(
        CliRunner()
        .invoke(cli, ["stats", "--all", "--json", "--sessions-dir", str(sessions)])
        .output
    )
    assert document["list_priced_models"] == document["unpriced_models"] == ["openai/gpt-6-codex"]
    only_pi = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(pi.parent)])
    assert only_pi.exit_code == 0 and "$" in only_pi.output, only_pi.output
    assert "list prices" not in only_pi.output
