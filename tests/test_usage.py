"""Tokens and cost: per message, all branches vs the active path, per branch, model and tool.

Totals on the real fixtures are checked against sums computed here straight from the raw JSON
lines (no exporter code), so a loader or tree bug cannot hide behind a matching usage bug.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from exporter.entries import UNNAMED_TOOL, MessageEntry
from exporter.loader import load_session, parse_session_bytes
from exporter.usage import Usage, compute_stats, sum_usage, turn_usage, usage_by_model


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def assistant_entry(build, dump, **usage_fields: Any) -> MessageEntry:
    usage = usage_fields.pop("usage", build.usage())
    line = build.assistant("a1", None, usage=usage, **usage_fields)
    if usage is None:
        del line["message"]["usage"]
    session = parse_session_bytes(dump([build.header(), line]))
    entry = session.entries[0]
    assert isinstance(entry, MessageEntry)
    return entry


# --- one message ------------------------------------------------------------------------------


def test_turn_usage_reads_every_field(build, dump) -> None:
    usage = {
        "input": 1200,
        "output": 345,
        "cacheRead": 50_000,
        "cacheWrite": 777,
        "totalTokens": 52_322,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.3, "cacheWrite": 0.4, "total": 1.5},
    }
    got = turn_usage(assistant_entry(build, dump, usage=usage))
    assert (got.turns, got.input, got.output, got.cache_read, got.cache_write) == (
        1,
        1200,
        345,
        50_000,
        777,
    )
    assert got.total_tokens == 52_322
    assert got.cost == 1.5  # cost.total wins over the parts when present
    assert got.context_tokens == 1200 + 50_000 + 777
    assert got.turns_without_usage == 0
    assert got.as_dict() == {
        "turns": 1,
        "input": 1200,
        "output": 345,
        "cache_read": 50_000,
        "cache_write": 777,
        "total_tokens": 52_322,
        "cost": 1.5,
        "turns_without_usage": 0,
    }


@pytest.mark.parametrize("total", ["missing", None, "1.5", True, [1], {"x": 1}])
def test_cost_total_falls_back_to_the_parts(build, dump, total: Any) -> None:
    cost: dict[str, Any] = {"input": 0.25, "output": 0.5, "cacheRead": 0.125, "cacheWrite": 1}
    if total != "missing":
        cost["total"] = total
    usage = build.usage(cost=None)
    usage["cost"] = cost
    assert turn_usage(assistant_entry(build, dump, usage=usage)).cost == 1.875


def test_bad_numbers_count_as_zero(build, dump) -> None:
    usage = {
        "input": "100",
        "output": True,
        "cacheRead": None,
        "cacheWrite": [5],
        "cost": {"input": "0.1", "output": False, "cacheRead": 0.5, "cacheWrite": {}},
    }
    got = turn_usage(assistant_entry(build, dump, usage=usage))
    assert (got.input, got.output, got.cache_read, got.cache_write) == (0, 0, 0, 0)
    assert got.total_tokens == 0  # missing totalTokens: the sum of the parts
    assert got.cost == 0.5
    assert got.turns_without_usage == 0


@pytest.mark.parametrize("usage", [None, "lots", [1, 2], 42])
def test_missing_usage_counts_as_zero_and_is_noted(build, dump, usage: Any) -> None:
    got = turn_usage(assistant_entry(build, dump, usage=usage))
    assert got == Usage(turns=1, turns_without_usage=1)
    assert got.cost == 0 and got.total_tokens == 0


def test_total_tokens_defaults_to_the_parts(build, dump) -> None:
    usage = build.usage(inp=7, out=3)
    del usage["totalTokens"]
    usage["cacheRead"] = 100
    assert turn_usage(assistant_entry(build, dump, usage=usage)).total_tokens == 110


def test_only_assistant_messages_count(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u1", None, "q", 1),
        build.assistant("a1", "u1", usage=build.usage(10, 5, 0.5), second=2),
        build.assistant("a2", "a1", usage=None, second=3),
        build.tool_result("t1", "a2", "c", "bash", 4),
        build.assistant("a3", "t1", usage=build.usage(1, 1, 0.25), second=5, model="gpt-5"),
    ]
    lines[3]["message"].pop("usage")
    lines[4]["message"]["usage"] = build.usage(999, 999, 99.0)  # not an assistant: ignored
    session = parse_session_bytes(dump(lines))
    total = sum_usage(session.entries)
    assert (total.turns, total.turns_without_usage) == (3, 1)
    assert (total.input, total.output) == (11, 6)
    assert total.cost == 0.75
    by_model = usage_by_model(session.entries)
    assert [(m, u.turns, u.cost) for m, u in by_model] == [
        ("anthropic/claude-x", 2, 0.5),
        ("anthropic/gpt-5", 1, 0.25),
    ]


def test_usage_add_accumulates_every_field() -> None:
    a = Usage(1, 2, 3, 4, 5, 6, 0.5, 0)
    a.add(Usage(1, 10, 20, 30, 40, 50, 0.25, 1))
    assert a == Usage(2, 12, 23, 34, 45, 56, 0.75, 1)


# --- real fixtures vs raw JSON ----------------------------------------------------------------


def raw_entries(path: Path) -> tuple[list[dict[str, Any]], int]:
    values = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    header, entries = values[0], values[1:]
    return entries, header.get("version") or 1


def raw_cost(entry: dict[str, Any]) -> tuple[float, int]:
    """(cost, tokens) of one assistant entry, computed the way Pi's HTML header does."""
    usage = entry["message"].get("usage") or {}
    cost = usage.get("cost") or {}
    parts = sum(cost.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite"))
    total = cost["total"] if isinstance(cost.get("total"), (int, float)) else parts
    tokens = sum(usage.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite"))
    return total, tokens


def is_assistant(entry: dict[str, Any]) -> bool:
    return entry["type"] == "message" and entry["message"]["role"] == "assistant"


def test_totals_all_vs_active_path_match_the_raw_json(pi_fixture: Path) -> None:
    entries, version = raw_entries(pi_fixture)
    if version == 1:
        on_path = entries  # a linear chain
    else:
        by_id = {e["id"]: e for e in entries}
        on_path, node = [], entries[-1]
        while node is not None:
            on_path.append(node)
            node = by_id.get(node["parentId"]) if node["parentId"] else None
    all_cost = sum(raw_cost(e)[0] for e in entries if is_assistant(e))
    all_tokens = sum(raw_cost(e)[1] for e in entries if is_assistant(e))
    path_cost = sum(raw_cost(e)[0] for e in on_path if is_assistant(e))
    path_turns = sum(1 for e in on_path if is_assistant(e))

    stats = compute_stats(load_session(pi_fixture))
    assert close(stats.all.cost, all_cost)
    assert stats.all.input + stats.all.output + stats.all.cache_read + stats.all.cache_write == (
        all_tokens
    )
    assert stats.all.turns == sum(1 for e in entries if is_assistant(e))
    assert close(stats.active_path.cost, path_cost)
    assert stats.active_path.turns == path_turns
    assert stats.all.cost > 0
    assert stats.active_path.cost <= stats.all.cost + 1e-9
    if version == 1:
        assert stats.active_path == stats.all


def test_branch_totals_add_up_to_the_all_total(pi_fixture: Path) -> None:
    session = load_session(pi_fixture)
    stats = compute_stats(session)
    summed = Usage()
    for branch in stats.branches:
        summed.add(branch.usage)
        assert branch.entries == len(branch.branch.entry_ids)
    assert sum(b.entries for b in stats.branches) == len(session.entries)
    assert close(summed.cost, stats.all.cost)
    assert summed.as_dict() | {"cost": 0} == stats.all.as_dict() | {"cost": 0}
    assert summed.turns_without_usage == stats.all.turns_without_usage
    active = stats.branches[0]
    assert active.branch.is_active
    assert close(active.usage.cost, stats.active_path.cost)  # the active branch owns its path


def test_per_model_totals_add_up(pi_fixture: Path) -> None:
    session = load_session(pi_fixture)
    stats = compute_stats(session)
    for rows, total in ((stats.by_model_all, stats.all), (stats.by_model_path, stats.active_path)):
        summed = Usage()
        for _, usage in rows:
            summed.add(usage)
        assert close(summed.cost, total.cost)
        assert (summed.turns, summed.input, summed.output) == (
            total.turns,
            total.input,
            total.output,
        )
        assert len({m for m, _ in rows}) == len(rows)
    raw_models = {
        f"{e['message'].get('provider')}/{e['message']['model']}"
        for e in raw_entries(pi_fixture)[0]
        if is_assistant(e)
    }
    assert {m for m, _ in stats.by_model_all} == raw_models
    assert set(raw_models) <= set(stats.models_used)


def test_every_entry_type_stats(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "every-entry-type.jsonl")
    stats = compute_stats(session)
    assert stats.all.as_dict() == {
        "turns": 4,
        "input": 400,
        "output": 200,
        "cache_read": 4000,
        "cache_write": 40,
        "total_tokens": 4640,
        "cost": 0.136,
        "turns_without_usage": 0,
    }
    assert stats.active_path.turns == 0  # the active branch e01 -> e24 -> e25 has no turns
    assert [(m, u.turns) for m, u in stats.by_model_all] == [
        ("anthropic/claude-x", 3),
        ("anthropic/gpt-5", 1),
    ]
    # model_change entries count as models used, not only assistant messages
    assert stats.models_used == ["anthropic/claude-x", "openai/gpt-5", "anthropic/gpt-5"]
    assert {n: (t.calls, t.errors, t.missing_results) for n, t in stats.tools.items()} == {
        name: (1, int(name == "find"), 0)
        for name in ("bash", "edit", "find", "grep", "ls", "read", "todo", "write")
    }
    assert stats.tool_calls == 8
    assert dict(stats.roles) == {"user": 3, "assistant": 4, "toolResult": 8, "bashExecution": 1}
    assert (stats.compactions, stats.labels, stats.errors, stats.aborted) == (1, 1, 1, 1)
    assert stats.started == datetime(2025, 6, 1, 10, 0, tzinfo=timezone.utc)
    assert stats.ended == datetime(2025, 6, 1, 10, 25, tzinfo=timezone.utc)
    assert stats.duration_seconds == 25 * 60
    assert [(b.branch.leaf_id, b.branch.fork_id, b.entries, b.labels) for b in stats.branches] == [
        ("e25", None, 3, ["important"]),
        ("e23", "e01", 22, []),
    ]
    assert stats.branches[1].first_prompt.endswith("please convert the file")


def test_tool_stats_count_every_call_and_missing_results(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u", None, "q", 1),
        build.assistant("a", "u", calls=[("c1", "bash"), ("c2", "bash"), ("c3", "read")]),
        build.tool_result("r1", "a", "c1", "bash", 3),
        build.tool_result("r2", "r1", "c2", "bash", 4, is_error=True),
        build.assistant("b", "r2", calls=[("c4", "edit")], second=5),
    ]
    lines[2]["message"]["content"].append({"type": "toolCall", "id": "c9", "name": 5})
    stats = compute_stats(parse_session_bytes(dump(lines)))
    assert {n: (t.calls, t.errors, t.missing_results) for n, t in stats.tools.items()} == {
        "bash": (2, 1, 0),
        "read": (1, 0, 1),
        "edit": (1, 0, 1),
        UNNAMED_TOOL: (1, 0, 1),
    }
    assert next(iter(stats.tools)) == "bash"  # most calls first


def test_tool_stats_on_branched_4_match_the_raw_json(fixtures_dir: Path) -> None:
    path = fixtures_dir / "pi-branched-4.jsonl"
    entries, _ = raw_entries(path)
    calls = [
        block["name"]
        for e in entries
        if is_assistant(e)
        for block in e["message"]["content"]
        if block.get("type") == "toolCall"
    ]
    stats = compute_stats(load_session(path))
    assert {n: t.calls for n, t in stats.tools.items()} == {n: calls.count(n) for n in set(calls)}
    assert stats.tool_calls == len(calls)


# --- context series ---------------------------------------------------------------------------


def test_context_series_follows_the_active_path(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "every-entry-type.jsonl")
    session.set_leaf("e23")
    series = compute_stats(session).context_series
    assert [(p.entry_id, p.compaction_before) for p in series] == [
        ("e03", None),
        ("e12", None),
        ("e13", None),
        ("e21", "e16"),  # the compaction e16 sits between e13 and e21
    ]
    assert all(p.context_tokens == 100 + 1000 + 10 for p in series)
    assert [round(p.cumulative_cost, 9) for p in series] == [0.034, 0.068, 0.102, 0.136]


def test_context_series_on_every_fixture(pi_fixture: Path) -> None:
    session = load_session(pi_fixture)
    stats = compute_stats(session)
    series = stats.context_series
    path_assistants = [
        e for e in session.active_entries() if isinstance(e, MessageEntry) and e.role == "assistant"
    ]
    # Turns that reported no usage (aborted, failed) have no context size: not plotted at 0.
    plotted = [e for e in path_assistants if turn_usage(e).context_tokens]
    assert [p.entry_id for p in series] == [e.id for e in plotted]
    path_assistants = plotted
    if series:
        assert close(series[-1].cumulative_cost, stats.active_path.cost)
    costs = [p.cumulative_cost for p in series]
    assert costs == sorted(costs)
    for point, entry in zip(series, path_assistants, strict=True):
        assert point.context_tokens == turn_usage(entry).context_tokens
    compactions_on_path = [e.id for e in session.active_entries() if e.type == "compaction"]
    marked = [p.compaction_before for p in series if p.compaction_before]
    assert marked == compactions_on_path[: len(marked)]
    if pi_fixture.name == "pi-v1-before-compaction.jsonl":
        assert marked == ["L360", "L629"]


def test_a_nameless_call_is_named_alike_everywhere_the_page_counts_it(build, dump) -> None:
    """The usage table said "(unnamed)", a turn's footer "unnamed", the card "(unnamed
    tool)": one call, three names (a reader could take them for three tools)."""
    from exporter.render import RenderOptions, render_session

    lines = [
        build.header(),
        build.user("u", None, "q", 1),
        build.assistant("a", "u", calls=[("c1", "bash")]),
    ]
    lines[2]["message"]["content"].append({"type": "toolCall", "id": "c9", "name": 5})
    html = render_session(parse_session_bytes(dump(lines)), RenderOptions())
    assert f"Tool calls</dt><dd>2 · {UNNAMED_TOOL} 1, bash 1" in html
    assert f'<th scope="row">{UNNAMED_TOOL}</th>' in html
    assert f"2 tool calls (1 {UNNAMED_TOOL}, 1 bash)" in html
    assert f'<span class="tool-name">{UNNAMED_TOOL}</span>' in html
    assert html.count("unnamed") == html.count(UNNAMED_TOOL)
