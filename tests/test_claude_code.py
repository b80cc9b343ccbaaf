"""Claude Code transcripts read as Pi sessions (exporter/claude_code.py).

The fixture (tests/data/claude-code/) has the shapes Claude Code's files have: one line per
content block of an answer (all repeating its usage), parallel calls whose results hang off
different lines, bookkeeping lines (snapshots, progress, turn durations, titles), a rewind, a
compaction (boundary line + summary line), a local command in both the old and the new
style, an API error, a line a resumed session copied, and a torn last line.
"""

from __future__ import annotations

import html as html_module
import json
import math
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter import discover
from exporter.claude_code import is_claude_code, session_digest
from exporter.claude_prices import prices
from exporter.cli import cli
from exporter.discover import claude_encode_cwd
from exporter.entries import CompactionEntry, MessageEntry, make_entry
from exporter.loader import SessionFormatError, load_session, parse_session_bytes
from exporter.markdown_doc import _tool
from exporter.render import RenderOptions, render_session
from exporter.render.entry_lines import outline_text
from exporter.render.tools import build_tool_view
from exporter.search import Pattern, search_file
from exporter.site import build_site
from exporter.usage import compute_stats
from tests.browser_util import CLAUDE_CODE_PATH, embedded_jsonl, fixture_paths
from tests.claude_code_corpus import sub_agent_session, u

SOURCE = CLAUDE_CODE_PATH


@pytest.fixture(scope="module")
def session():
    return load_session(SOURCE)


def message(session, entry_id: str) -> dict[str, Any]:
    entry = session.by_id[entry_id]
    assert isinstance(entry, MessageEntry), entry
    return entry.message


def test_header_title_and_notes(session) -> None:
    header = session.header.raw
    assert header["id"] == "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47"
    assert header["cwd"] == "/home/dev/projects/webapp"
    assert header["source"] == "Claude Code 2.0.46"
    assert header["gitBranch"] == "main"
    assert header["cost"].startswith("computed from the models' list prices")
    assert session.title == "Dark mode for settings"  # /rename's title beats the summaries
    notes = {d.kind: d.message for d in session.diagnostics if d.severity == "info"}
    kept = notes["claude-code-bookkeeping"]
    for kind in ("summary ×2", "file-history-snapshot ×1", "progress ×1", "custom-title ×1"):
        assert kind in kept
    assert "system turn_duration ×1" in kept
    assert notes["claude-code-copies"].startswith("1 line with an earlier line's uuid")
    problems = [d.kind for d in session.diagnostics if d.severity != "info"]
    assert problems == ["truncated"]  # the torn last line, kept as a damaged line
    assert [d.line for d in session.damaged] == [37]


def test_an_answers_lines_are_one_message_with_its_usage_once(session) -> None:
    answer = message(session, u(2))  # the answer's first line names the entry (it stays)
    kinds = [(b["type"], b.get("name")) for b in answer["content"]]
    assert kinds == [("thinking", None), ("text", None), ("toolCall", "read"), ("toolCall", "bash")]
    for gone in (u(3), u(4), u(5)):
        assert gone not in session.by_id
    assert answer["usage"]["input"] == 3  # not 4 × 3
    assert answer["usage"]["output"] == 187  # the largest streaming count
    assert answer["usage"]["cacheRead"] == 12000 and answer["usage"]["cacheWrite"] == 4200
    assert answer["stopReason"] == "toolUse"
    assert answer["model"] == "claude-sonnet-4-5-20250929"
    totals = compute_stats(session).all
    assert (totals.input, totals.output) == (36, 471)
    assert (totals.cache_read, totals.cache_write) == (96000, 7530)


def test_parallel_results_follow_their_answer_in_call_order_without_a_fork(session) -> None:
    read_result, bash_result = u(6), u(8)
    assert session.parent_of(read_result) == u(2)
    assert session.parent_of(bash_result) == read_result
    assert session.parent_of(u(9)) == bash_result  # the next answer: after the last result
    assert message(session, read_result)["toolName"] == "read"
    assert message(session, bash_result)["toolName"] == "bash"
    assert session.fork_ids == [u(12)]  # only the rewind forks
    assert session.children[u(12)] == [u(14), u(16)]
    assert session.parent_of(u(16)) == u(12)  # across the turn_duration line not shown


def test_the_active_path_ends_at_the_last_main_line_answer_and_its_title(session) -> None:
    path = session.active_path
    assert path[0] == u(1) and path[-2] == u(32)
    assert u(14) not in path and u(16) in path
    title = session.by_id[session.leaf_id]  # as Pi keeps a /name: after the leaf
    assert title.type == "session_info" and title.raw["name"] == "Dark mode for settings"
    assert session.parent_of(title.id) == u(32) == path[-2]


def test_tools_get_pis_views(session) -> None:
    calls = {
        block["id"]: block
        for entry in session.iter_messages()
        for block in entry.message["content"]
        if isinstance(block, dict) and block.get("type") == "toolCall"
    }
    assert calls["toolu_01Read"]["arguments"] == {
        "path": "/home/dev/projects/webapp/src/settings.tsx"
    }
    bash = calls["toolu_01Bash"]["arguments"]
    assert bash["timeout"] == 120  # milliseconds in Claude Code, seconds in Pi
    assert bash["description"] == "Run the settings tests"
    edit = calls["toolu_01Edit"]["arguments"]
    assert edit["oldText"] == "  return <form />;" and edit["path"].endswith("settings.tsx")
    assert calls["toolu_01Todo"]["name"] == "TodoWrite"  # no Pi twin: as it is
    read_text = message(session, u(6))["content"][0]["text"]
    assert read_text == "export function Settings() {\n  return <form />;\n}\n"
    diff = message(session, u(11))["details"]["diff"]
    assert diff.split("\n") == [
        " 1 export function Settings() {",
        "-2   return <form />;",
        "+2   return <form><DarkModeToggle /></form>;",
        " 3 }",
    ]
    lint = message(session, u(18))
    assert lint["isError"] is True and lint["toolCallId"] == "toolu_01Lint"


def test_prompts_commands_images_and_errors(session) -> None:
    prompt = message(session, u(1))["content"]
    assert prompt[1]["type"] == "image" and prompt[1]["mimeType"] == "image/png"
    assert prompt[1]["data"].startswith("iVBORw0KGgo")
    assert "🌙" in prompt[0]["text"] and "日本語" in prompt[0]["text"]
    assert message(session, u(21))["content"] == "/cost"
    caveat = session.by_id[u(20)].raw
    assert caveat["type"] == "custom_message" and caveat["display"] is False
    output = session.by_id[u(22)].raw
    assert output["type"] == "custom_message" and output["display"] is True
    assert output["content"] == "Total cost: $0.21\nTotal duration (API): 31s"
    error = message(session, u(27))
    assert error["stopReason"] == "error" and "overloaded_error" in error["errorMessage"]
    assert error["content"] == []  # the text is the error, said once


def test_compaction_is_one_entry_in_the_tree(session) -> None:
    compaction = session.by_id[u(24)]  # the boundary line's id: written first, it stays
    assert isinstance(compaction, CompactionEntry)
    assert compaction.raw["tokensBefore"] == 17520
    assert compaction.raw["summary"].startswith("This session is being continued")
    assert session.parent_of(u(24)) == u(22)  # the boundary's logical parent, not a new root
    assert u(25) not in session.by_id  # the summary line is part of the entry
    assert session.parent_of(u(26)) == u(24)  # the summary line's child follows it
    assert session.roots == [u(1)]
    out_of_context = session.context_status()
    assert u(1) in out_of_context and u(22) in out_of_context
    assert u(26) not in out_of_context


def test_costs_are_the_list_prices(session) -> None:
    stats = compute_stats(session)
    price = prices("claude-sonnet-4-5-20250929")
    assert price == (3.0, 15.0, 0.3, 3.75)
    expected = (36 * 3 + 471 * 15 + 96000 * 0.3 + 7530 * 3.75) / 1e6
    assert math.isclose(stats.all.cost, expected, rel_tol=1e-9)
    assert prices("claude-opus-4-6") == (5.0, 25.0, 0.5, 6.25)
    assert prices("claude-opus-4-1-20250805") == (15.0, 75.0, 1.5, 18.75)
    assert prices("claude-3-5-haiku-20241022") == (0.8, 4.0, 0.08, 1.0)
    assert prices("<synthetic>") is None and prices("gpt-5") is None


def test_a_recorded_cost_is_kept_and_an_unknown_model_is_said(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()[:-1]]
    for line in lines:
        if line.get("type") == "assistant" and line["message"].get("id") == "msg_01C":
            line["costUSD"] = 0.5
        if line.get("type") == "assistant" and line["message"].get("id") == "msg_01H":
            line["message"]["model"] = "gateway-model-x"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    session = load_session(path)
    assert message(session, u(12))["usage"]["cost"] == {"total": 0.5}
    assert "cost" not in message(session, u(32))["usage"]
    assert "no price known for gateway-model-x" in session.header.raw["cost"]
    for line in lines:
        if line.get("type") == "assistant":
            line["costUSD"] = 0.25
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    recorded = load_session(path)
    assert recorded.header.raw["cost"] == "as Claude Code recorded it"
    assert math.isclose(compute_stats(recorded).all.cost, 0.25 * 9)  # once per answer


def test_the_file_is_read_not_written_and_the_download_is_the_file() -> None:
    before = SOURCE.read_bytes()
    session = load_session(SOURCE)
    page = render_session(session, RenderOptions())
    assert SOURCE.read_bytes() == before
    (embedded,) = embedded_jsonl(page)
    assert embedded == before
    again = parse_session_bytes(embedded, path=str(SOURCE))
    assert [e.id for e in again.entries] == [e.id for e in session.entries]
    assert again.active_path == session.active_path
    assert "Claude Code 2.0.46" in page
    assert "<title>Dark mode for settings · Claude Code session</title>" in page


def test_a_sub_agents_file_is_a_session_of_its_own(tmp_path: Path) -> None:
    """Every line of agent-<id>.jsonl carries the parent's session id and the agent's id."""
    lines = [v for v in _lines() if v.get("type") in ("user", "assistant")][:8]
    for line in lines:
        line |= {"isSidechain": True, "agentId": "a1b2c3d"}
    path = tmp_path / "agent-a1b2c3d.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    session = load_session(path)
    assert session.id == "agent-a1b2c3d"
    assert session.header.parent_session == "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47"
    assert session.leaf_id == u(9)  # sidechain lines are its main line here
    assert session.active_path[0] == u(1)


def test_pi_files_are_never_taken_for_claude_code() -> None:
    for path in fixture_paths():
        with open(path, "rb") as handle:
            parsed = [(n, json.loads(line)) for n, line in enumerate(handle, 1) if n <= 50]
        assert not is_claude_code(parsed), path.name


def test_look_alikes_are_not_claude_code() -> None:
    sdk = {"type": "assistant", "session_id": "s", "uuid": "x", "message": {"role": "assistant"}}
    assert not is_claude_code([(1, sdk)])  # `claude -p` stream-json: snake_case
    with pytest.raises(SessionFormatError, match="not a Pi session"):
        parse_session_bytes(b'{"type":"summary","summary":"only a title","leafUuid":"x"}\n')


def _lines() -> list[Any]:
    return [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()[:-1]]


def _load(values: list[Any]):
    data = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode("utf-8")
    session = parse_session_bytes(data, path="cc.jsonl")
    render_session(session, RenderOptions())
    return session


@pytest.mark.parametrize("index", range(35))
def test_any_one_line_missing_still_loads(index: int) -> None:
    values = _lines()
    gone = values.pop(index)
    session = _load(values)
    uuids = {v.get("uuid") for v in values if isinstance(v, dict)}
    for entry in session.entries:  # every entry is a line of the file (or one of its parts)
        assert entry.id.split(".")[0].split("~")[0] in uuids
    if gone.get("type") == "user" and gone["uuid"] not in uuids:  # (one line was a copy)
        assert gone["uuid"] not in session.by_id


def test_a_message_line_without_its_message_is_a_damaged_line_kept_as_written() -> None:
    data = SOURCE.read_bytes().split(b"\n")
    number = next(i for i, line in enumerate(data) if u(16).encode() in line and b'"user"' in line)
    data[number] = data[number].replace(b'"message":{"role":"user",', b'"message":7,"x":{')
    session = parse_session_bytes(b"\n".join(data), path="cc.jsonl")
    (kept,) = [d for d in session.damaged if d.kind == "not-an-entry"]
    assert kept.line == number + 1 and kept.text == data[number].decode("utf-8")
    assert "a Claude Code user line without message" in kept.message
    assert any(d.kind == "not-an-entry" and d.line == number + 1 for d in session.diagnostics)
    assert u(16) not in session.by_id and u(17) in session.by_id  # its child: a root now


ODD_VALUES: list[Any] = [None, 7, "text", [], {}, [1, "x", None], {"type": 5}]


@pytest.mark.parametrize("odd", ODD_VALUES, ids=repr)
@pytest.mark.parametrize(
    "where",
    [
        ("message",),
        ("message", "content"),
        ("message", "usage"),
        ("message", "id"),
        ("message", "model"),
        ("message", "stop_reason"),
        ("parentUuid",),
        ("timestamp",),
        ("toolUseResult",),
        ("logicalParentUuid",),
        ("compactMetadata",),
        ("content",),
    ],
    ids="/".join,
)
def test_odd_values_anywhere_never_break_the_load(where: tuple[str, ...], odd: Any) -> None:
    values = _lines()
    for value in values[1::2]:  # every other line: some messages stay for the format check
        target = value
        for key in where[:-1]:
            target = target.get(key) if isinstance(target, dict) else None
        if isinstance(target, dict):
            target[where[-1]] = odd
    session = _load(values)
    assert session.entries


def test_cli_export_markdown_stats_and_redact(tmp_path: Path) -> None:
    runner = CliRunner()
    page = tmp_path / "page.html"
    result = runner.invoke(cli, ["export", str(SOURCE), "-o", str(page)])
    assert result.exit_code == 0, result.output
    assert "Dark mode for settings" in page.read_text(encoding="utf-8")
    notes = tmp_path / "notes.md"
    result = runner.invoke(cli, ["export", str(SOURCE), "-o", str(notes)])
    assert result.exit_code == 0, result.output
    text = notes.read_text(encoding="utf-8")
    assert "# Dark mode for settings" in text and "npx eslint src" in text
    assert "(Claude Code 2.0.46 transcript)" in text
    result = runner.invoke(cli, ["stats", str(SOURCE), "--json"])
    stats = json.loads(result.stdout)
    assert stats["usage"]["all"]["output"] == 471
    assert stats["title"] == "Dark mode for settings"
    result = runner.invoke(cli, ["stats", str(SOURCE)])
    assert "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47  (Claude Code 2.0.46 transcript)" in result.stdout
    clean = tmp_path / "clean.jsonl"
    result = runner.invoke(cli, ["redact", str(SOURCE), "-o", str(clean), "--keep-hidden"])
    assert result.exit_code == 0, result.output
    header = json.loads(clean.read_text(encoding="utf-8").split("\n", 1)[0])
    assert header["type"] == "session" and header["version"] == 3  # now a Pi session file
    copy = load_session(clean)
    original = load_session(SOURCE)
    assert copy.active_path == original.active_path
    assert not any(d.kind.startswith("claude-code") for d in copy.diagnostics)


PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>"


def _markup_census(page: str) -> Counter[str]:
    """Elements that could run or load something, and every on* attribute."""
    census: Counter[str] = Counter()

    class Census(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in ("script", "img", "svg", "iframe", "object", "embed", "link", "style"):
                census[tag] += 1
            census.update(f"@{name}" for name, _ in attrs if name.startswith("on"))

    Census().feed(page)
    return census


def test_claude_code_fields_never_become_markup() -> None:
    values = _lines()
    for value in values:
        value["version"] = PAYLOAD
        value["gitBranch"] = PAYLOAD
        if value.get("type") == "custom-title":
            value["customTitle"] = PAYLOAD
        message = value.get("message")
        if isinstance(message, dict) and value.get("type") == "assistant":
            message["model"] = PAYLOAD
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    block["name"] = PAYLOAD + block["name"]
        if isinstance(message, dict) and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "image":
                    block["source"]["media_type"] = PAYLOAD
        if value.get("subtype") == "local_command":
            value["content"] = f"<local-command-stdout>{PAYLOAD}</local-command-stdout>"
        if value.get("subtype") == "compact_boundary":
            value["compactMetadata"]["trigger"] = PAYLOAD
    hostile = _load(values)
    page = render_session(hostile, RenderOptions())
    assert hostile.title == PAYLOAD and "Claude Code " + PAYLOAD in hostile.header.raw["source"]
    baseline = _markup_census(render_session(load_session(SOURCE), RenderOptions()))
    census = _markup_census(page)
    assert census == baseline  # (the prompt's image shows: its bytes say PNG, whatever its type)
    assert "alert(1)" in html_module.unescape(page)  # shown as text


def test_claude_codes_project_folder_names() -> None:
    assert claude_encode_cwd("/home/me/web.app_x") == "-home-me-web-app-x"
    assert claude_encode_cwd("C:\\claude\\ClaudeCode") == "C--claude-ClaudeCode"
    assert claude_encode_cwd("/srv/日本") == "-srv---"


def test_claude_codes_folder_as_the_sessions_dir(tmp_path: Path, monkeypatch) -> None:
    """``--sessions-dir ~/.claude/projects``: this folder's sessions, every project's, an id
    prefix and the latest session, as for Pi's folder."""
    work = tmp_path / "work" / "web.app"
    work.mkdir(parents=True)
    root = tmp_path / "claude-projects"
    folder = root / claude_encode_cwd(str(work))
    folder.mkdir(parents=True)
    (folder / SOURCE.name).write_bytes(SOURCE.read_bytes())
    (root / "-elsewhere").mkdir()
    (root / "-elsewhere" / "notes.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    monkeypatch.chdir(work)
    runner = CliRunner()
    listed = runner.invoke(cli, ["list", "--sessions-dir", str(root)])
    assert listed.exit_code == 0, listed.output
    assert "Dark mode for settings" in listed.stdout and "$0.064" in listed.stdout
    listing = runner.invoke(cli, ["list", "--all", "--json", "--sessions-dir", str(root)])
    rows = [json.loads(line) for line in listing.stdout.splitlines()]
    by_name = {Path(row["path"]).name: row for row in rows}
    row = by_name[SOURCE.name]
    assert (row["id"], row["name"], row["entries"], row["branches"]) == (
        "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47",
        "Dark mode for settings",
        25,
        2,
    )
    assert row["modified"].startswith("2026-11-20T10:01:20") and row["error"] is None
    assert by_name["notes.jsonl"]["error"] == "not a Pi session file"
    stats = runner.invoke(cli, ["stats", "--sessions-dir", str(root), "--json"])  # the latest
    assert json.loads(stats.stdout)["title"] == "Dark mode for settings"
    page = tmp_path / "p.html"
    exported = runner.invoke(
        cli, ["export", "7f3c9a", "--sessions-dir", str(root), "-o", str(page)]
    )
    assert exported.exit_code == 0, exported.output
    assert "Claude Code session" in page.read_text(encoding="utf-8")


def test_a_to_do_list_reads_as_a_list() -> None:
    """TodoWrite (sent every few turns) as its items and their states, not as JSON."""
    call = {"type": "toolCall", "id": "t", "name": "TodoWrite"}
    todos = [
        {"content": "Import the <toggle>", "status": "completed", "activeForm": "Importing"},
        {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
        {"content": "Ship it", "status": "pending", "priority": "high", "id": "3"},
        {"content": "Odd one", "status": "blocked"},
    ]
    view = build_tool_view({**call, "arguments": {"todos": todos}}, None)
    assert (view.kind, view.subtitle, view.args_json, view.other_args) == (
        "todo",
        "1 of 4 done",
        None,
        None,
    )
    assert str(view.body.visible).split("\n") == [
        "✓ Import the &lt;toggle&gt;",
        "▸ Write tests",
        '○ Ship it  (priority: "high")',
        '? Odd one  (state: "blocked")',
    ]
    assert outline_text(make_entry({"type": "message", "message": {
        "role": "assistant", "content": [{**call, "arguments": {"todos": todos}}]
    }}, 1, "a", None))[0] == "assistant: [TodoWrite: 1 of 4 done]"  # fmt: skip
    odd = [*todos, {"content": "x", "owner": "bob"}]  # a field the list would not show
    view = build_tool_view({**call, "arguments": {"todos": odd}}, None)
    assert view.kind == "generic" and view.args_json is not None
    page = render_session(load_session(SOURCE), RenderOptions())
    assert "✓ Import the toggle" in page and "[TodoWrite: 1 of 1 done]" in page


@pytest.mark.parametrize("beside", [False, True], ids=["2.1-subagents", "2.0-beside"])
def test_a_sub_agents_transcript_is_a_branch_after_its_task_call(
    tmp_path: Path, beside: bool
) -> None:
    path = sub_agent_session(tmp_path, beside)
    session = load_session(path)
    assert session.parent_of(u(10)) == u(3)  # right after the Task call's result
    assert session.fork_ids == [u(3)] and session.active_path[-1] == u(4)
    assert [u(10), u(11), u(12), u(13)] == session.path_to(u(13))[-4:]
    (branch,) = [b for b in session.branches() if not b.is_active]
    assert session.first_prompt(branch.entry_ids) == "List the test files"
    stats = compute_stats(session)
    assert (stats.active_path.input, stats.all.input) == (20, 40)  # its turns were paid for
    assert any(d.kind == "claude-code-sub-agents" for d in session.diagnostics)
    page = render_session(session, RenderOptions())
    for entry in session.entries:
        assert page.count(f'data-entry-id="{entry.id}"') == 1, entry.id
    (embedded,) = embedded_jsonl(page)  # the session as one Pi file: the agent's lines too
    copy = parse_session_bytes(embedded)
    assert [(e.id, copy.parent_of(e.id)) for e in copy.entries] == [
        (e.id, session.parent_of(e.id)) for e in session.entries
    ]
    assert copy.active_path == session.active_path


@pytest.mark.parametrize("beside", [False, True], ids=["2.1-subagents", "2.0-beside"])
def test_a_sub_agent_is_counted_with_its_parent_not_as_a_session(
    tmp_path: Path, beside: bool
) -> None:
    """Claude Code 2.0 keeps a sub-agent's transcript beside its parent's: every listing
    counted it as a session of its own as well, its turns and cost twice in `stats --all`
    and the site (consistency hunt 2026-12-05). A file of that name without the
    sub-agent's mark is a session as any other."""
    from exporter.discover import session_files

    folder = tmp_path / "sessions" / "-w"
    path = sub_agent_session(folder, beside)
    assert session_files(tmp_path / "sessions") == [path]
    report = CliRunner().invoke(
        cli, ["stats", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions")]
    )
    assert report.exit_code == 0, report.output
    doc = json.loads(report.output)
    assert (doc["sessions_read"], doc["total"]["turns"], doc["total"]["input"]) == (1, 4, 40)
    mine = folder / "agent-notes.jsonl"  # a session someone named so
    mine.write_bytes(path.read_bytes())
    assert mine in session_files(tmp_path / "sessions")


def test_a_sub_agent_file_that_cannot_be_read_or_named_is_left_out(tmp_path: Path) -> None:
    path = sub_agent_session(tmp_path)
    agent = tmp_path / path.stem / "subagents" / "agent-a1b2c3d.jsonl"
    agent.write_bytes(b'{"torn\n' + agent.read_bytes())
    session = load_session(path)
    (warning,) = [d for d in session.diagnostics if d.kind == "sub-agent"]
    assert warning.message.startswith("agent-a1b2c3d.jsonl: 1 line could not be read")
    assert u(13) in session.by_id
    agent.unlink()
    plain = load_session(path)
    assert u(10) not in plain.by_id and not any(d.kind == "sub-agent" for d in plain.diagnostics)
    (embedded,) = embedded_jsonl(render_session(plain, RenderOptions()))
    assert embedded == path.read_bytes()  # no sub-agent joined: the file as read
    text = path.read_text(encoding="utf-8").replace('"agentId": "a1b2c3d"', '"agentId": "../x"')
    path.write_text(text, encoding="utf-8")
    assert len(load_session(path).entries) == len(plain.entries)  # no path outside its folder


def test_search_finds_what_only_a_sub_agent_said(tmp_path: Path) -> None:
    path = sub_agent_session(tmp_path)
    assert b"Two files" not in path.read_bytes()  # the main file cannot hold it
    found = search_file(path, Pattern("two files"))
    assert [m["entry_id"] for m in found["matches"]] == [u(13)]
    # read, not ruled out by its bytes: a conversion writes texts no byte holds (a diff, a
    # command's exit), which a folder search missed (bug hunt 2026-12-05)
    nowhere = search_file(path, Pattern("zzz-nowhere"))
    assert "skipped" not in nowhere and nowhere["matches"] == []


def test_a_site_and_a_dataset_see_a_sub_agent_change_alone(tmp_path: Path, monkeypatch) -> None:
    """A sub-agent's transcript is part of its session: a site renders the session again,
    and publish's digest changes, when only it changed; a Pi session's digest is its file's."""
    path = sub_agent_session(tmp_path / "projects" / "-w")
    site = tmp_path / "site"
    first = build_site([path], site, jobs=1, progress=False)
    assert (first.rendered, first.unchanged) == (1, 0)
    assert build_site([path], site, jobs=1, progress=False).unchanged == 1
    digest = session_digest(path, "f" * 64)
    agent = path.parent / path.stem / "subagents" / "agent-a1b2c3d.jsonl"
    line = json.loads(agent.read_text(encoding="utf-8").splitlines()[-1])
    line |= {"uuid": u(14), "parentUuid": u(13), "timestamp": "2026-11-21T09:00:14.000Z"}
    with open(agent, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    again = build_site([path], site, jobs=1, progress=False)
    assert (again.rendered, again.unchanged) == (1, 0)
    assert session_digest(path, "f" * 64) != digest
    assert session_digest(SOURCE, "f" * 64) == "f" * 64  # no sub-agents: the file's own


def test_no_pi_sessions_but_claude_codes_says_how_to_read_them(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    claude = tmp_path / "claude-config"
    folder = claude / "projects" / claude_encode_cwd(str(work))
    folder.mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    (tmp_path / "pi-agent" / "sessions").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.chdir(work)
    runner = CliRunner()
    hint = f"Claude Code has some: add --sessions-dir {claude / 'projects'}"
    site = str(tmp_path / "site")
    commands = (
        ["export"],
        ["list"],
        ["stats", "--all"],
        ["search", "x"],
        ["export", "--all", "-o", site],
    )
    assert all(hint not in runner.invoke(cli, args).output for args in commands)  # none yet
    (folder / SOURCE.name).write_bytes(SOURCE.read_bytes())
    for args in commands:
        result = runner.invoke(cli, args)
        assert hint in result.output, (args, result.output)
    result = runner.invoke(cli, ["export", "--sessions-dir", str(claude / "projects")])
    assert result.exit_code == 0, result.output


def test_a_site_says_whose_sessions_it_lists(tmp_path: Path) -> None:
    claude_only = tmp_path / "claude-site"
    build_site([SOURCE], claude_only, jobs=1, progress=False)
    index = (claude_only / "index.html").read_text(encoding="utf-8")
    assert "<h1>Claude Code sessions</h1>" in index
    both = tmp_path / "site"
    build_site([SOURCE, fixture_paths()[0]], both, jobs=1, progress=False)
    assert "<h1>Sessions</h1>" in (both / "index.html").read_text(encoding="utf-8")
    pi_only = tmp_path / "pi-site"
    build_site([fixture_paths()[0]], pi_only, jobs=1, progress=False)
    assert "<h1>Pi sessions</h1>" in (pi_only / "index.html").read_text(encoding="utf-8")


def test_a_to_do_list_in_markdown_is_a_task_list() -> None:
    todos = [
        {"content": "Import the <toggle> *now*", "status": "completed"},
        {"content": "Write tests", "status": "in_progress", "priority": "high"},
        {"content": "Ship it", "status": "pending"},
    ]
    call = {"type": "toolCall", "id": "t", "name": "TodoWrite", "arguments": {"todos": todos}}
    assert "\n".join(_tool(call, None)) == "\n".join(
        [
            "**TodoWrite** · 1 of 3 done · *no result*",
            "",
            "- [x] Import the &lt;toggle> \\*now\\*",  # "<" as "&lt;": see escaped()
            '- [ ] Write tests *(under way)* *(priority: "high")*',
            "- [ ] Ship it",
        ]
    )


def test_another_tools_jsonl_is_not_loaded_whole_to_tell_it_is_no_claude_code(
    tmp_path: Path, monkeypatch
) -> None:
    other = tmp_path / "metrics.jsonl"
    other.write_text('{"type": "metric", "step": 1}\n' * 5000, encoding="utf-8")

    def no_load(path, **kwargs):
        raise AssertionError(f"{path} was loaded whole")

    monkeypatch.setattr(discover, "load_session", no_load)
    assert discover.scan_summary(other).error == "not a Pi session file"


def test_claude_codes_own_messages_are_headed_as_its_context(session) -> None:
    """An isMeta line (a caveat Claude Code adds before a local command's output) is hidden
    and headed as Claude Code's context, a local command as Claude Code's, not as a Pi
    extension's message."""
    html = render_session(session)
    assert html.count("<h3>Claude Code context</h3>") == 1
    assert html.count("<h3>Claude Code command</h3>") == 1
    assert "Claude Code&#39;s own message to the model, not typed by the user" in html
    assert "Extension message" not in html


def test_markdown_heads_claude_codes_own_messages_as_its_own(tmp_path: Path) -> None:
    out = tmp_path / "cc.md"
    result = CliRunner().invoke(cli, ["export", str(SOURCE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "### Claude Code command ·" in text and "Extension message" not in text
    assert "leaves out: 1 Claude Code context message." in text  # one, not "messages"


def test_absurd_token_counts_count_as_none() -> None:
    """A 400-digit count (damage, or a hand-made file) is no count: no price can multiply it
    (it raised OverflowError), as Codex's reader already said."""
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "x"}],
                "usage": {"input_tokens": 10**400, "output_tokens": 7},
            },
        },
    ]
    session = parse_session_bytes("".join(json.dumps(v) + "\n" for v in lines).encode())
    usage = compute_stats(session).all
    assert (usage.input, usage.output) == (0, 7)
    assert "x" in render_session(session)


def test_an_answer_claude_code_made_itself_is_said_as_from_the_model_it_asked(session) -> None:
    """Claude Code writes "<synthetic>" as the model of a message it made itself (here the
    API error 529 it could not get past). The page said "also selected, never answered:
    anthropic/<synthetic>" and gave it a usage row, as if the user had chosen such a model
    (visual review 2026-12-04). The turn is the asked model's failed turn, as Pi writes one."""
    answers = [e for e in session.entries if isinstance(e, MessageEntry) and e.role == "assistant"]
    models = [e.message.get("model") for e in answers]
    failed = [e for e in answers if e.message.get("stopReason") == "error"]
    assert failed and "<synthetic>" not in models, models
    for entry in failed:
        before = [e for e in answers[: answers.index(entry)] if e.message.get("model")]
        assert entry.message["model"] == before[-1].message["model"]
    page = render_session(session)
    assert "synthetic" not in page and "never answered" not in page
    stats = compute_stats(session)
    assert {name for name, _ in stats.by_model_all} == {f"anthropic/{models[0]}"}
    assert stats.models_used == [f"anthropic/{models[0]}"]
