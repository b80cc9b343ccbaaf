"""Stop 65: usage and prices.

1. `stats --cwd X` counted a fork's copied turns as X's spending, while `stats --all` gave
   them to the project of the parent the fork's header names (the README's promise): the
   parent, in another project, was never read, so nothing said the turns were its.
2. The price tables did not match Pi 0.73.1's, which their docstrings say they do: a dated
   snapshot with a price of its own (gpt-4o-2024-05-13) was priced as its model, and a dozen
   models Pi prices had none (o1, gpt-4, the chat-latest models, Claude 3 Sonnet).
3. A cost summed past the float range (token counts like 1e308 at list prices) read "$inf"
   in every table: it reads "overflow", as the JSON's null says it.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter import claude_prices, codex_prices
from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.formatting import fmt_cost
from tests.conftest import run_node, unavailable

# --- 1. a fork's copied turns are billed to its parent's project under --cwd too ------------

WEBAPP, OTHER, THIRD = "/home/dev/webapp", "/home/dev/other", "/home/dev/third"


def _user(entry_id: str, parent: str | None, when: str, text: str) -> dict[str, Any]:
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when} | {
        "message": message
    }


def _answer(entry_id: str, parent: str, when: str, text: str, cost: float) -> dict[str, Any]:
    """An assistant entry as Pi writes it, ``cost`` dollars."""
    parts = {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}
    usage = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 1, "totalTokens": 116}
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    message |= {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-x"}
    message |= {"usage": usage | {"cost": parts}, "stopReason": "stop"}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when} | {
        "message": message
    }


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _pi_session(root: Path, cwd: str, session_id: str, made: str, lines: list[dict]) -> Path:
    """A Pi session file of ``cwd`` in Pi's folder for it; ``made`` as in its name."""
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": made, "cwd": cwd}
    name = f"{made.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
    return _write(root / encode_cwd(cwd) / name, [header, *lines])


def _fork(root: Path, cwd: str, session_id: str, made: str, parent: Path, new_cost: float) -> Path:
    """Pi's fork of ``parent`` into ``cwd`` (forkFrom: a header naming the parent's path,
    then the parent's entries as they are), then one prompt and answer of its own."""
    lines = [json.loads(line) for line in parent.read_text(encoding="utf-8").splitlines()]
    header, *entries = lines
    header = {**header, "id": session_id, "timestamp": made, "cwd": cwd}
    header["parentSession"] = str(parent)
    last = entries[-1]["id"]
    later = made.replace("00.000Z", "30.000Z")
    own = [
        _user(f"{session_id}-u", last, later, f"go on in {cwd}"),
        _answer(f"{session_id}-a", f"{session_id}-u", later, f"done in {cwd}", new_cost),
    ]
    name = f"{made.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"
    return _write(root / encode_cwd(cwd) / name, [header, *entries, *own])


@pytest.fixture
def forks(tmp_path: Path) -> Path:
    """A session of /home/dev/webapp ($1, $2, $4), Pi's fork of it into /home/dev/other (its
    own turn $8), and a fork of that fork into /home/dev/third (its own turn $16)."""
    root = tmp_path / "sessions"
    conversation = [
        _user("e0000001", None, "2026-11-30T00:57:10.000Z", "build the parser"),
        _answer("e0000002", "e0000001", "2026-11-30T00:57:20.000Z", "parser built", 1.0),
        _user("e0000003", "e0000002", "2026-11-30T01:00:00.000Z", "add tests"),
        _answer("e0000004", "e0000003", "2026-11-30T01:00:30.000Z", "tests added", 2.0),
        _user("e0000005", "e0000004", "2026-11-30T01:10:00.000Z", "fix the bug"),
        _answer("e0000006", "e0000005", "2026-11-30T01:10:40.000Z", "bug fixed", 4.0),
    ]
    parent = _pi_session(root, WEBAPP, "parent-01", "2026-11-30T00:57:00.000Z", conversation)
    fork = _fork(root, OTHER, "fork-02", "2026-12-02T10:00:00.000Z", parent, 8.0)
    _fork(root, THIRD, "fork-03", "2026-12-04T10:00:00.000Z", fork, 16.0)
    return root


def _stats(root: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["stats", "--json", "--sessions-dir", str(root), "-j", "1", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _by_project(document: dict[str, Any]) -> dict[str, tuple[int, float]]:
    return {row["project"]: (row["turns"], row["cost"]) for row in document["by_project"]}


def test_stats_cwd_bills_a_forks_copied_turns_to_its_parents_project(forks: Path) -> None:
    """`stats --cwd /home/dev/other` said 4 turns and $15 (the parent's $7 with its own $8)
    where `stats --all` gave it 1 turn and $8; the fork of the fork, 6 turns and $31."""
    everything = _by_project(_stats(forks, "--all"))
    assert everything == {WEBAPP: (3, 7.0), OTHER: (1, 8.0), THIRD: (1, 16.0)}
    for project in (WEBAPP, OTHER, THIRD):
        alone = _stats(forks, "--cwd", project)
        assert _by_project(alone) == {project: everything[project]}, project
        assert alone["total"]["cost"] == everything[project][1]
    other = _stats(forks, "--cwd", OTHER)
    assert other["turns_counted_elsewhere"] == 3 and other["repeated_turns"] == 0
    assert other["copies"] == 0 and other["sessions_with_turns"] == 1
    assert _stats(forks, "--cwd", THIRD)["turns_counted_elsewhere"] == 4
    result = CliRunner().invoke(cli, ["stats", "--cwd", OTHER, "--sessions-dir", str(forks)])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.endswith("; 3 turns forked from another project's session counted there"), first


def test_stats_cwd_since_agrees_with_stats_all_since(forks: Path) -> None:
    """With --since the parent's later turns ($2, $4) are the fork's copies too: counted
    in the parent's project, as `stats --all --since` counts them."""
    since = ("--since", "2026-11-30T00:59:00Z")
    everything = _by_project(_stats(forks, "--all", *since))
    assert everything == {WEBAPP: (2, 6.0), OTHER: (1, 8.0), THIRD: (1, 16.0)}
    for project in (OTHER, THIRD):
        assert _by_project(_stats(forks, "--cwd", project, *since)) == {
            project: everything[project]
        }


def test_a_fork_whose_parent_is_not_in_the_sessions_folder_counts_its_copies(
    tmp_path: Path,
) -> None:
    """A parent outside the sessions folder is counted nowhere by `stats --all`: the
    fork's copies of its turns are the fork's, under --cwd as there."""
    outside = tmp_path / "elsewhere"
    lines = [
        _user("u1", None, "2026-11-30T00:57:10.000Z", "hi"),
        _answer("a1", "u1", "2026-11-30T00:57:20.000Z", "hello", 1.0),
    ]
    parent = _pi_session(outside, WEBAPP, "gone-01", "2026-11-30T00:57:00.000Z", lines)
    root = tmp_path / "sessions"
    _fork(root, OTHER, "fork-02", "2026-12-02T10:00:00.000Z", parent, 8.0)
    everything = _by_project(_stats(root, "--all"))
    assert everything == {OTHER: (2, 9.0)}
    alone = _stats(root, "--cwd", OTHER)
    assert _by_project(alone) == everything and alone["turns_counted_elsewhere"] == 0


def _rollout(session_id: str, day: str, cwd: str, **meta: Any) -> list[dict]:
    """A Codex rollout's lines: its header, then "hi" and its answer (4,214 tokens)."""

    def line(clock: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"{day}T{clock}.000Z", "type": kind, "payload": payload}

    header = {"id": session_id, "timestamp": f"{day}T09:00:00.000Z", "cwd": cwd}
    header |= {"originator": "codex_cli_rs", "cli_version": "0.77.0", **meta}
    return [line("09:00:00", "session_meta", header), *_codex_turn(day, "09:00", cwd, "hi")]


def _codex_turn(
    day: str, minute: str, cwd: str, prompt: str, before: int = 0
) -> list[dict[str, Any]]:
    """One prompt and its answer on gpt-5.1-codex, with their token count (the session's
    ``before`` earlier turns of the same count in its total)."""

    def line(second: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"{day}T{minute}:{second}.000Z", "type": kind, "payload": payload}

    def said(role: str, kind: str, text: str) -> dict[str, Any]:
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    counts = {"input_tokens": 4200, "cached_input_tokens": 0, "output_tokens": 14}
    counts |= {"reasoning_output_tokens": 0, "total_tokens": 4214}
    total = {key: value * (before + 1) for key, value in counts.items()}
    info = {"total_token_usage": total, "last_token_usage": counts}
    return [
        line("01", "response_item", said("user", "input_text", prompt)),
        line("02", "turn_context", {"cwd": cwd, "model": "gpt-5.1-codex"}),
        line("05", "response_item", said("assistant", "output_text", f"answered {prompt}")),
        line("05", "event_msg", {"type": "token_count", "info": info}),
    ]


def test_a_codex_fork_under_cwd_leaves_its_parents_turns_to_the_parents_project(
    tmp_path: Path,
) -> None:
    """A Codex fork names its parent by id (``forked_from_id``); the parent's file, here
    renamed so that its name carries no id, is found by its first line."""
    root = tmp_path / "codex"
    first = "019b0000-0000-7000-8000-0000000000b1"
    second = "019b0000-0000-7000-8000-0000000000b2"
    parent_lines = _rollout(first, "2025-12-01", "/home/dev/alpha")
    _write(root / "2025" / "12" / "01" / "rollout-2025-12-01T09-00-00-backup.jsonl", parent_lines)
    fork_lines = _rollout(second, "2025-12-02", "/home/dev/beta", forked_from_id=first)
    copied = [{**line, "timestamp": "2025-12-02T08:59:59.000Z"} for line in parent_lines]
    more = _codex_turn("2025-12-02", "09:30", "/home/dev/beta", "more", before=1)
    fork = [fork_lines[0], *copied, *more]
    _write(root / "2025" / "12" / "02" / f"rollout-2025-12-02T09-00-00-{second}.jsonl", fork)
    everything = _stats(root, "--all")
    rows = _by_project(everything)
    assert [turns for turns, _ in rows.values()] == [1, 1]
    assert rows["/home/dev/beta"][1] == rows["/home/dev/alpha"][1] > 0
    alone = _stats(root, "--cwd", "/home/dev/beta")
    assert _by_project(alone) == {"/home/dev/beta": rows["/home/dev/beta"]}
    assert alone["turns_counted_elsewhere"] == 1


# --- 2. the price tables are Pi 0.73.1's -----------------------------------------------------


def test_a_dated_snapshot_with_a_price_of_its_own_keeps_it() -> None:
    """gpt-4o-2024-05-13 was priced as gpt-4o ($2.50/$10/$1.25): the dated rule ran before
    the lookup of the whole name (Pi prices it $5/$15/$0)."""
    assert codex_prices.prices("gpt-4o-2024-05-13") == (5.0, 15.0, 0.0)
    assert codex_prices.prices("openai/gpt-4o-2024-05-13") == (5.0, 15.0, 0.0)
    assert codex_prices.prices("gpt-4o-2024-08-06") == codex_prices.prices("gpt-4o")
    assert codex_prices.prices("gpt-5-codex-2025-09-15") == codex_prices.prices("gpt-5-codex")
    assert codex_prices.prices("gpt-9-imaginary") is None


def _pi_prices(pi_home: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Pi's own price table (pi-ai's models.generated.js), for the providers whose prices
    ours are: {provider: {model: {input, output, cacheRead, cacheWrite}}}."""
    table = pi_home / "node_modules" / "@mariozechner" / "pi-ai" / "dist" / "models.generated.js"
    if not table.is_file():
        table = next(pi_home.rglob("pi-ai/dist/models.generated.js"), table)
    if not table.is_file():
        unavailable(f"Pi's models.generated.js is missing under {pi_home}")
    script = (
        f"import {{ MODELS }} from {json.dumps(table.as_uri())};"
        "const out = {};"
        "for (const p of ['anthropic', 'openai'])"
        "  out[p] = Object.fromEntries(Object.entries(MODELS[p]).map(([id, m]) => [id, m.cost]));"
        "console.log(JSON.stringify(out));"
    )
    return json.loads(run_node(["--input-type=module", "-e", script]))


def test_every_model_pi_prices_is_priced_alike(pi_home: Path) -> None:
    """Every Anthropic and OpenAI model Pi 0.73.1 prices is priced here as Pi prices it
    (Codex has no cache-write price), and every model name our OpenAI table holds is one
    of Pi's: a Claude Code or Codex session costs what the same turns in Pi cost."""
    table = _pi_prices(pi_home)
    wrong: list[str] = []
    for model, cost in table["anthropic"].items():
        want = (cost["input"], cost["output"], cost["cacheRead"], cost["cacheWrite"])
        if claude_prices.prices(model) != want:
            wrong.append(f"anthropic {model}: ours {claude_prices.prices(model)}, Pi's {want}")
    for model, cost in table["openai"].items():
        want = (cost["input"], cost["output"], cost["cacheRead"])
        if codex_prices.prices(model) != want:
            wrong.append(f"openai {model}: ours {codex_prices.prices(model)}, Pi's {want}")
    assert not wrong, "\n".join(wrong)
    assert len(table["anthropic"]) > 20 and len(table["openai"]) > 40  # the table was read
    assert set(codex_prices._PRICES) <= set(table["openai"])


# --- 3. a cost past the float range ---------------------------------------------------------


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_cost_past_the_float_range_reads_overflow(value: float) -> None:
    assert fmt_cost(value) == "overflow"
    assert fmt_cost(1e308) == "$1e+308" and fmt_cost(-9.0) == "-$9.00"


def test_stats_all_says_overflow_for_costs_summed_past_the_float_range(tmp_path: Path) -> None:
    """Two answers of $1.7e308 each: the tables' cost column said "$inf". Such a cost is no
    amount a model call was billed (above $1e9): each counts as $0 (a single session's
    stats warns), so the sum stays finite (it said "overflow" until 0.2.51)."""
    lines = [
        _user("u1", None, "2026-11-30T00:57:10.000Z", "go"),
        _answer("a1", "u1", "2026-11-30T00:57:20.000Z", "one", 1.7e308),
        _answer("a2", "a1", "2026-11-30T00:57:30.000Z", "two", 1.7e308),
    ]
    root = tmp_path / "sessions"
    _pi_session(root, WEBAPP, "huge-01", "2026-11-30T00:57:00.000Z", lines)
    result = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(root)])
    assert result.exit_code == 0, result.output
    assert "$inf" not in result.stdout
    total = [line for line in result.stdout.splitlines() if line.startswith("total")]
    assert total and all(line.split()[-1] == "$0.00" for line in total), total


def test_stats_cwd_finds_a_forks_parent_in_a_restored_folder(forks: Path, tmp_path: Path) -> None:
    """Pi names a fork's parent by its absolute path: in a sessions folder restored from a
    backup or synced from another machine that path is gone, and `--cwd` billed the copied
    turns to the fork's project again (review 2026-12-07). The id in the path's file name
    finds it."""
    restored = tmp_path / "restored"
    shutil.copytree(forks, restored)
    assert _by_project(_stats(restored, "--cwd", OTHER)) == {OTHER: (1, 8.0)}
    assert _by_project(_stats(restored, "--cwd", THIRD)) == {THIRD: (1, 16.0)}
