"""Codex transcripts (rollouts) read as Pi sessions (exporter/codex.py).

The fixture (tests/data/codex/) has the shapes Codex 0.77's files have: the enveloped lines
(session_meta, response_item, event_msg, turn_context, compacted), AGENTS.md and the
environment as user messages, events repeating messages and reasoning, encrypted-only
reasoning, parallel shell calls, the three ways Codex reports a command's outcome (a JSON
wrapper, "Exit code:" text, unified exec's "Process exited with code"), apply_patch as a
custom tool call, update_plan, a web search, an image, a command run with !, token counts
(one with no info, one repeated), an interrupted turn, a rollback, a model change, a
compaction, a thread name, and a torn last line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.codex import id_from_path, is_codex, session_cwd
from exporter.codex_prices import prices
from exporter.entries import CompactionEntry, MessageEntry
from exporter.loader import load_session, parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.render.entry_lines import outline_text
from exporter.render.tools import patch_diff
from exporter.usage import compute_stats
from tests.browser_util import (
    CLAUDE_CODE_PATH,
    CODEX_PATH,
    embedded_jsonl,
    fixture_path,
    fixture_paths,
)

SOURCE = CODEX_PATH
SESSION_ID = "019b64e5-57fa-7463-b644-fba7e456f905"
CWD = "/home/dev/projects/inventory"


@pytest.fixture(scope="module")
def session():
    return load_session(SOURCE)


@pytest.fixture(scope="module")
def page(session) -> str:
    return render_session(session)


def file_lines() -> list[dict[str, Any]]:
    """The fixture's lines as Codex wrote them (the torn last one left out)."""
    out = []
    for raw in SOURCE.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out


def messages(session, role: str) -> list[MessageEntry]:
    return [e for e in session.iter_messages() if e.role == role]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def find(session, role: str, needle: str) -> MessageEntry:
    found = [e for e in messages(session, role) if needle in text_of(e.message)]
    assert len(found) == 1, (needle, [e.id for e in found])
    return found[0]


# --- telling a rollout from other JSONL -------------------------------------------------


def test_a_rollout_is_told_from_pi_claude_code_and_other_jsonl() -> None:
    def parsed(path: Path) -> list[tuple[int, Any]]:
        lines = path.read_text(encoding="utf-8").splitlines()[:30]
        out = []
        for number, raw in enumerate(lines, 1):
            try:
                out.append((number, json.loads(raw)))
            except ValueError:
                continue
        return out

    assert is_codex(parsed(SOURCE))
    assert not is_codex(parsed(CLAUDE_CODE_PATH))
    for path in fixture_paths():  # Pi's own files, v1 to v3
        assert not is_codex(parsed(path)), path.name
    # a headerless Pi file: entries of type "message" hold a message object, not a role
    pi_entry = {"type": "message", "id": "a", "parentId": None, "message": {"role": "user"}}
    assert not is_codex([(1, {"id": "x", "timestamp": "2025-01-01T00:00:00Z"}), (2, pi_entry)])
    legacy = [
        (1, {"id": "c27a914d", "timestamp": "2025-08-20T13:20:47.060Z", "instructions": None}),
        (2, {"record_type": "state"}),
    ]
    assert is_codex(legacy)
    assert not is_codex([(1, {"type": "session_meta"})])  # no payload: not Codex's shape


def test_the_id_comes_from_the_header_else_the_file_name() -> None:
    assert id_from_path(f"/x/rollout-2025-12-28T13-18-30-{SESSION_ID}.jsonl") == SESSION_ID
    assert id_from_path("/x/notes.jsonl") == "notes"
    assert session_cwd(SOURCE) == CWD


# --- the header and the notes ---------------------------------------------------------


def test_header_title_and_notes(session) -> None:
    header = session.header.raw
    assert header["id"] == SESSION_ID
    assert header["cwd"] == CWD
    assert header["source"] == "Codex 0.77.0"
    assert header["originator"] == "codex_cli_rs"
    assert header["gitBranch"] == "main"
    assert header["cost"].startswith("computed from the models' list prices")
    assert session.agent == "Codex"
    assert session.file_kind == "Codex 0.77.0 transcript"
    assert session.title == "Fix price rounding in the stock report"  # thread_name_updated
    notes = {d.kind: d.message for d in session.diagnostics if d.severity == "info"}
    assert notes["codex"] == "a Codex transcript, read as a Pi session"
    kept = notes["codex-bookkeeping"]
    for said in (
        "reasoning (encrypted) ×1",
        "event_msg token_count (repeated) ×1",
        "event_msg token_count (rate limits only) ×1",
    ):
        assert said in kept
    assert notes["codex-repeats"].startswith("5 Codex events repeating")
    assert "rolled turns back 1 time" in notes["codex-rollback"]
    problems = [(d.line, d.kind) for d in session.diagnostics if d.severity != "info"]
    assert problems == [(len(SOURCE.read_bytes().splitlines()), "invalid-json")]  # torn line


def test_every_item_is_shown_once(session) -> None:
    """No item is lost and none is shown twice: a prompt or an output is the entry named
    after its line (``L<n>``); a request's items (reasoning, text, calls) are one message."""
    ids = [e.id for e in session.entries]
    assert len(ids) == len(set(ids))
    calls, texts = [], []
    for number, value in enumerate(file_lines(), 1):
        payload = value.get("payload", {})
        kind = payload.get("type")
        if value["type"] != "response_item":
            continue
        if kind == "function_call_output" or (kind == "message" and payload["role"] == "user"):
            assert f"L{number}" in session.by_id, (number, kind)
        elif kind in ("function_call", "custom_tool_call"):
            calls.append(payload["call_id"])
        elif kind == "message":
            texts.append(payload["content"][0]["text"])
    shown_calls = [
        b["id"]
        for e in messages(session, "assistant")
        for b in e.message["content"]
        if b["type"] == "toolCall" and b["name"] != "web_search"
    ]
    assert shown_calls == calls
    shown_texts = [
        b["text"]
        for e in messages(session, "assistant")
        for b in e.message["content"]
        if b["type"] == "text"
    ]
    assert shown_texts == texts


# --- messages -------------------------------------------------------------------------


def test_codex_context_is_hidden_and_the_prompt_shown_once(session) -> None:
    hidden = [e for e in session.entries if e.type == "custom_message"]
    kinds = [(e.raw["customType"], e.raw["display"]) for e in hidden]
    assert kinds == [("codex-context", False), ("codex-context", False)]
    assert hidden[0].raw["content"].startswith("# AGENTS.md instructions for")
    assert hidden[1].raw["content"].startswith("<environment_context>")
    prompts = [text_of(e.message) for e in messages(session, "user")]
    assert sum("rounds prices wrong" in p for p in prompts) == 1  # not again from the event
    assert "价格 should round half up 💸" in prompts[0]
    assert not any("AGENTS.md" in p or "environment_context" in p for p in prompts)


def test_a_request_is_one_assistant_message_and_its_outputs_follow_in_call_order(
    session,
) -> None:
    first = messages(session, "assistant")[0]
    content = first.message["content"]
    assert [(b["type"], b.get("name")) for b in content] == [
        ("thinking", None),
        ("toolCall", "bash"),
        ("toolCall", "bash"),
    ]
    assert content[0]["thinking"].startswith("**Locating the rounding code**")
    assert [b["arguments"]["command"] for b in content[1:]] == [
        'rg -n "round\\(" src/',  # ["bash", "-lc", ...] is the command it runs
        "cat src/report.py",  # a plain argv, joined as a shell would read it
    ]
    assert content[1]["arguments"]["timeout"] == 120  # timeout_ms -> seconds, as Pi's
    assert content[1]["arguments"]["workdir"] == CWD
    children = [e for e in session.entries if e.parent_id == first.id]
    results = [session.by_id[i] for i in session.path_to(session.leaf_id)]
    after = results[results.index(first) + 1 : results.index(first) + 3]
    assert [r.message["toolCallId"] for r in after] == ["call_Rg1", "call_Cat2"]
    assert len(children) == 1
    assert text_of(after[0].message) == 'src/report.py:14:    return f"{round(price, 2):.2f}"\n'
    assert not after[0].message["isError"]


def test_shell_outputs_lose_codexs_header_and_keep_the_exit_code(session) -> None:
    failed = [e for e in messages(session, "toolResult") if e.message["isError"]]
    assert len(failed) == 1
    text = text_of(failed[0].message)
    assert text.startswith("E   ModuleNotFoundError")
    assert text.endswith("\n\nCommand exited with code 1")  # as Pi's bash tool says it
    assert "Wall time" not in text
    unified = find(session, "toolResult", "4 passed")
    assert text_of(unified.message) == "4 passed in 0.31s\n"  # no Chunk ID, no token count
    call = session.call_block(session.call_for_result(unified.id))
    assert call["name"] == "bash" and call["arguments"]["command"] == "PYTHONPATH=src pytest -q"


def test_usage_is_codexs_own_count_once_per_request(session) -> None:
    """Every distinct token_count's last request counts once (repeats and rate-limit-only
    counts do not), split as Pi splits it: OpenAI's input includes the cached part."""
    seen, want_input, want_cached, want_output = None, 0, 0, 0
    for value in file_lines():
        payload = value.get("payload", {})
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if not isinstance(info, dict) or info["total_token_usage"] == seen:
            continue
        seen = info["total_token_usage"]
        last = info["last_token_usage"]
        want_input += last["input_tokens"]
        want_cached += last["cached_input_tokens"]
        want_output += last["output_tokens"]
    total = compute_stats(session).all
    assert total.input + total.cache_read == want_input
    assert total.cache_read == want_cached
    assert total.output == want_output
    first = messages(session, "assistant")[0].message["usage"]
    assert first["input"] == 8120 and first["output"] == 412 and first["cacheRead"] == 0
    price_in, price_out, _ = prices("gpt-5.1-codex")
    assert first["cost"]["total"] == pytest.approx((8120 * price_in + 412 * price_out) / 1e6)


def test_models_thinking_levels_and_the_compaction(session) -> None:
    changes = [
        (e.type, e.raw.get("modelId") or e.raw.get("thinkingLevel"))
        for e in session.entries
        if e.type in ("model_change", "thinking_level_change")
    ]
    assert changes == [
        ("model_change", "gpt-5.1-codex"),
        ("thinking_level_change", "medium"),
        ("thinking_level_change", "high"),
        ("model_change", "gpt-5.2-codex"),
    ]
    assert [e.message["model"] for e in messages(session, "assistant")][-1] == "gpt-5.2-codex"
    (compaction,) = [e for e in session.entries if isinstance(e, CompactionEntry)]
    assert compaction.raw["summary"].startswith("The user asked to fix rounding")
    assert compaction.raw["tokensBefore"] == 10640  # the last request's size before it
    assert compaction.raw["details"] == {"promptsKept": 2}


def test_an_interrupted_turn_and_a_rollback_make_a_branch(session) -> None:
    aborted = [e for e in messages(session, "assistant") if e.message["stopReason"] == "aborted"]
    assert len(aborted) == 1
    names = [b["name"] for b in aborted[0].message["content"]]
    assert names == ["web_search", "bash"]
    assert aborted[0].message["errorMessage"] == "Turn aborted (interrupted)"
    dropped = find(session, "user", "rename price_cell to format_price")
    kept = find(session, "user", "Never mind the rename")
    active = set(session.active_path)
    assert dropped.id not in active and kept.id in active
    assert dropped.parent_id == kept.parent_id == aborted[0].id  # both follow that turn
    assert len(session.leaf_ids) == 2


def test_a_command_run_with_bang_and_an_image(session) -> None:
    (shell,) = messages(session, "bashExecution")
    assert shell.message["command"] == "git status --short"
    assert shell.message["exitCode"] == 0
    assert shell.message["output"] == " M src/report.py\n?? tests/test_rounding.py"
    prompt = find(session, "user", "Screenshot of the report")
    images = [b for b in prompt.message["content"] if b["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png"


# --- tools on the page ---------------------------------------------------------------


def test_apply_patch_is_a_diff_of_every_file() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    x = 1\n"
        "+    x = 2\n*** Add File: c.py\n+print(1)\n*** Delete File: d.py\n*** End Patch\n"
    )
    read = patch_diff(patch)
    assert read is not None
    assert [f.label() for f in read.files] == ["M a.py -> b.py", "A c.py", "D d.py"]
    assert [(f.added, f.removed) for f in read.files] == [(1, 1), (1, 0), (0, 0)]
    assert (read.added, read.removed) == (2, 1)
    assert read.diff.splitlines()[:4] == ["--- a.py", "+++ b.py", "@@ def f(): @@", "-    x = 1"]
    assert "+++ /dev/null" in read.diff and "--- /dev/null" in read.diff
    assert patch_diff("just text") is None


def test_the_page_shows_codex_tools_with_their_own_views(session, page: str) -> None:
    assert "<title>Fix price rounding in the stock report · Codex session</title>" in page
    # apply_patch: a coloured diff of both files, with their counts
    assert "<del>-    return f&quot;{round(price, 2):.2f}&quot;</del>" in page or (
        '<del>-    return f"{round(price, 2):.2f}"</del>' in page
    )
    assert "<ins>+def test_half_up():</ins>" in page
    assert "+8 −2 · 2 files" in page
    # update_plan: a checklist, its explanation as a note
    assert "✓ Find the rounding code" in page and "○ Note the change in CHANGELOG.md" in page
    assert "Rounding fixed; docs next." in page
    # web search: the query, and no "no result" for a result never recorded
    assert "python csv writer Decimal formatting" in page
    assert "results not recorded" in page
    # shell calls say where they ran instead of a JSON block of "workdir"
    assert "in ~/projects/inventory" in page or f"in {CWD}" in page
    assert "&quot;workdir&quot;" not in page and '"workdir"' not in page
    # exec_command's limits in words, not as a block of JSON
    assert "waits up to 10s · output up to 4,000 tokens" in page
    assert "yield_time_ms" not in page and "max_output_tokens" not in page
    # Codex's own messages to the model: hidden, and said to be Codex's, not an extension's
    assert page.count("<h3>Codex context</h3>") == 2 and "Extension message" not in page
    assert "own message to the model (AGENTS.md, the environment, …)" in page
    # untrusted text stays text
    assert "<script>alert(1)</script>" not in page
    outline = [outline_text(e)[0] for e in session.entries]
    assert "[update_plan: 2 of 3 done]" in " ".join(outline)
    assert "[apply_patch: 2 files]" in " ".join(outline)


def test_markdown_has_the_patch_and_the_plan(tmp_path: Path) -> None:
    out = tmp_path / "codex.md"
    result = CliRunner().invoke(cli, ["export", str(SOURCE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "**apply_patch** `M src/report.py`, `A tests/test_rounding.py` · +8 −2" in text
    assert '+    return f"{cents}"' in text
    assert "- [x] Find the rounding code\n- [x] Round half up with Decimal\n- [ ] Note" in text
    assert "\n## Transcript" in text and "AGENTS.md" not in text
    assert "leaves out: 2 Codex context messages." in text


# --- older files, odd lines ---------------------------------------------------------


def test_a_file_from_before_the_envelope_reads_too() -> None:
    lines = [
        {
            "id": "c27a914d",
            "timestamp": "2025-08-20T13:20:47.060Z",
            "instructions": None,
            "git": {"branch": "main"},
        },
        {"record_type": "state"},
        {
            "type": "message",
            "id": None,
            "role": "user",
            "content": [{"type": "input_text", "text": "index the old rollouts"}],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
        {
            "type": "function_call",
            "id": "fc_1",
            "name": "shell",
            "arguments": '{"command":["ls"]}',
            "call_id": "call_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "README.md"},
        {
            "type": "message",
            "id": None,
            "role": "assistant",
            "content": [{"type": "output_text", "text": "listed the directory"}],
        },
        {"record_type": "state"},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    session = parse_session_bytes(data, path="rollout-2025-08-20-c27a914d.jsonl")
    assert session.id == "c27a914d" and session.agent == "Codex"
    roles = [e.role for e in session.iter_messages()]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assistant = [e for e in session.iter_messages() if e.role == "assistant"]
    assert assistant[0].message["content"][0]["arguments"] == {"command": "ls"}
    assert all(e.timestamp == "2025-08-20T13:20:47.060Z" for e in session.entries)
    assert not [d for d in session.diagnostics if d.severity != "info"]


def test_lines_codex_did_not_finish_are_kept_and_said(tmp_path: Path) -> None:
    meta = {
        "timestamp": "2025-12-28T12:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "s1", "timestamp": "2025-12-28T12:00:00.000Z", "cwd": "/p"},
    }
    broken = {"timestamp": "2025-12-28T12:00:01.000Z", "type": "response_item"}
    unknown = {"timestamp": "2025-12-28T12:00:02.000Z", "type": "world_state", "payload": {}}
    prompt = {
        "timestamp": "2025-12-28T12:00:03.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "hi"}],
        },
    }
    orphan = {
        "timestamp": "2025-12-28T12:00:04.000Z",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "nowhere", "output": 7},
    }
    path = tmp_path / "rollout-x.jsonl"
    data = "".join(json.dumps(v) + "\n" for v in (meta, broken, unknown, prompt, orphan))
    path.write_text(data, encoding="utf-8")
    before = path.read_bytes()
    session = load_session(path)
    assert [d.line for d in session.damaged] == [2]
    problems = [d.kind for d in session.diagnostics if d.severity != "info"]
    assert problems == ["not-an-entry"]
    notes = " ".join(d.message for d in session.diagnostics)
    assert "world_state line ×1" in notes
    result = session.by_id["L5"]
    assert text_of(result.message) == "7"  # a number output: shown as written
    html = render_session(session)
    assert "no matching tool call was found above this result" in html
    assert path.read_bytes() == before


def test_an_unknown_model_is_counted_at_no_price_and_said(tmp_path: Path) -> None:
    data = SOURCE.read_text(encoding="utf-8").replace("gpt-5.2-codex", "gpt-9-imaginary")
    session = parse_session_bytes(data.encode(), path=str(SOURCE))
    assert session.header.raw["cost"].endswith("no price known for gpt-9-imaginary: counted as $0")
    assert prices("openai/gpt-5-codex-2025-09-15") == prices("gpt-5-codex")


# --- finding Codex's sessions -----------------------------------------------------------


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex"
    day = home / "sessions" / "2025" / "12" / "28"
    day.mkdir(parents=True)
    shutil.copy(SOURCE, day / SOURCE.name)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    (tmp_path / "pi" / "sessions").mkdir(parents=True)
    return home


def test_codexs_sessions_folder_is_listed_and_searched_by_id(codex_home: Path) -> None:
    root = str(codex_home / "sessions")
    runner = CliRunner()
    listed = runner.invoke(cli, ["list", "--sessions-dir", root, "--all", "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = [json.loads(line) for line in listed.output.splitlines()]
    assert row["id"] == SESSION_ID and row["cwd"] == CWD
    assert row["name"] == "Fix price rounding in the stock report"
    here = runner.invoke(cli, ["list", "--sessions-dir", root, "--cwd", CWD, "--json"])
    assert json.loads(here.output)["id"] == SESSION_ID  # its project, from its first line
    elsewhere = runner.invoke(cli, ["list", "--sessions-dir", root, "--cwd", "/tmp", "--json"])
    assert elsewhere.stdout == ""
    stats = runner.invoke(cli, ["stats", "019b64e5", "--sessions-dir", root])
    assert stats.exit_code == 0, stats.output
    assert "(Codex 0.77.0 transcript)" in stats.output
    found = runner.invoke(cli, ["search", "ROUND_HALF_UP", "--sessions-dir", root, "--all"])
    assert found.exit_code == 0, found.output
    assert "Fix price rounding in the stock report" in found.stdout
    assert "L16  assistant:" in found.stdout  # the patch, by the entry that made it


def test_no_pi_sessions_says_where_codexs_are(codex_home: Path) -> None:
    result = CliRunner().invoke(cli, ["list", "--cwd", CWD])
    assert f"Codex has some: add --sessions-dir {codex_home / 'sessions'}" in result.output
    other = CliRunner().invoke(cli, ["list", "--cwd", "/somewhere/else"])
    assert "Codex" not in other.output


def test_the_download_is_the_file_and_redaction_reaches_outputs(tmp_path: Path) -> None:
    page = render_session(load_session(SOURCE))
    assert embedded_jsonl(page) == [SOURCE.read_bytes()]  # the rollout as Codex wrote it
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    data = SOURCE.read_text(encoding="utf-8").replace("4 passed in 0.31s", f"4 passed {token}")
    source = tmp_path / SOURCE.name
    source.write_text(data, encoding="utf-8")
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["export", str(source), "--redact", "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    assert token not in html
    assert all(token.encode() not in blob for blob in embedded_jsonl(html))
    assert "[REDACTED:" in html


def test_entry_ids_name_file_lines_and_appear_once_on_the_page() -> None:
    assert fixture_path(SOURCE.name) == SOURCE
    page = render_session(load_session(SOURCE), RenderOptions(embed_jsonl=False))
    assert page.count('data-entry-id="L8"') == 1  # the first request: file line 8 onwards
    assert page.count('data-entry-id="L6.2"') == 1  # line 6's second entry (its effort)


ODD_VALUES = [None, 7, "", [], {"a": 1}, [None, "x"], "\ud800"]
FIELDS = {"type", "payload", "role", "content", "arguments", "output", "info", "call_id"}
FIELDS |= {"summary", "action", "input", "message", "model", "command", "num_turns", "text"}


def test_any_field_of_any_line_may_hold_anything() -> None:
    """Every field Codex's lines are read by, holding a value of another JSON type (or a
    lone surrogate): the session still loads, its statistics count and its page renders,
    each entry once; an output's line is never lost."""
    lines = SOURCE.read_text(encoding="utf-8").splitlines()

    def mutations(value: Any, path: tuple = ()):  # (path, new value) for the named fields
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in FIELDS:
                    for odd in ODD_VALUES:
                        yield (*path, key), odd
                if len(path) < 3:
                    yield from mutations(inner, (*path, key))
        elif isinstance(value, list):
            for index, inner in enumerate(value[:3]):
                yield from mutations(inner, (*path, index))

    def replaced(value: Any, path: tuple, new: Any) -> Any:
        if not path:
            return new
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[path[0]] = replaced(value[path[0]], path[1:], new)
        return copy

    cases = 0
    for index, raw in enumerate(lines[:-1]):  # the last, torn line stays as it is
        value = json.loads(raw)
        for path, odd in mutations(value):
            line = json.dumps(replaced(value, path, odd), ensure_ascii=False)
            data = "\n".join([*lines[:index], line, *lines[index + 1 :]]) + "\n"
            session = parse_session_bytes(data.encode("utf-8", "surrogatepass"), path="r.jsonl")
            compute_stats(session)
            ids = [e.id for e in session.entries]
            assert len(ids) == len(set(ids)), (index, path, odd)
            if odd is None:  # one page per field: rendering is the slow part
                page = render_session(session, RenderOptions(embed_jsonl=False))
                for entry_id in ids:
                    assert page.count(f'data-entry-id="{entry_id}"') == 1, (index, path)
            cases += 1
    assert cases > 1000


def test_an_empty_prompt_is_shown_and_a_rollback_past_the_first_turn_starts_a_root() -> None:
    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps(
            {"timestamp": "2025-12-28T12:00:00.000Z", "type": kind, "payload": payload}
        )

    def prompt(text: str | None) -> str:
        content = [] if text is None else [{"type": "input_text", "text": text}]
        return line("response_item", {"type": "message", "role": "user", "content": content})

    data = "\n".join(
        [
            line("session_meta", {"id": "s2", "cwd": "/p"}),
            prompt(None),
            prompt("first"),
            line("event_msg", {"type": "thread_rolled_back", "num_turns": 5}),
            prompt("again"),
        ]
    )
    session = parse_session_bytes(data.encode(), path="r.jsonl")
    users = [e for e in session.iter_messages() if e.role == "user"]
    assert [text_of(e.message) for e in users] == ["", "first", "again"]
    assert users[0].message["content"] == []
    assert users[2].parent_id is None  # every turn was rolled back: a new root
    assert session.active_path == [users[2].id]


def test_the_files_table_counts_what_patches_changed(session) -> None:
    """apply_patch is Codex's only file tool: a file it adds is a write, one it updates an
    edit, each with its lines (Codex reads files with shell commands, not counted)."""
    from exporter.render.files_touched import files_touched

    touched = {f.path: f for f in files_touched(session, lambda p: p)}
    assert set(touched) == {"src/report.py", "tests/test_rounding.py"}
    report, test = touched["src/report.py"], touched["tests/test_rounding.py"]
    assert (report.edits, report.writes, report.added, report.removed) == (1, 0, 3, 2)
    assert (test.edits, test.writes, test.added, test.removed) == (0, 1, 5, 0)
    assert report.changes == test.changes == ["L19"]  # the patch's result


# --- shapes of other Codex builds (found in review) -------------------------------------


def rollout(*payloads: tuple[str, dict[str, Any]]) -> bytes:
    """A rollout of (line type, payload) pairs after a session_meta, one second apart."""
    lines = [("session_meta", {"id": "s9", "timestamp": "2025-11-01T10:00:00Z", "cwd": "/p"})]
    lines += payloads
    return "".join(
        json.dumps(
            {
                "timestamp": f"2025-11-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
                "type": kind,
                "payload": payload,
            }
        )
        + "\n"
        for n, (kind, payload) in enumerate(lines)
    ).encode()


def item(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": kind, **fields})


def said(role: str, text: str) -> tuple[str, dict[str, Any]]:
    kind = "output_text" if role == "assistant" else "input_text"
    return item("message", role=role, content=[{"type": kind, "text": text}])


def call(call_id: str, command: str = "ls") -> tuple[str, dict[str, Any]]:
    arguments = json.dumps({"command": ["bash", "-lc", command]})
    return item("function_call", name="shell", arguments=arguments, call_id=call_id)


def output(call_id: str, text: str = "ok") -> tuple[str, dict[str, Any]]:
    return item("function_call_output", call_id=call_id, output=text)


def tokens(total: int, last: int) -> tuple[str, dict[str, Any]]:
    usage = {"input_tokens": total, "output_tokens": 1, "total_tokens": total + 1}
    step = {"input_tokens": last, "output_tokens": 1, "total_tokens": last + 1}
    return (
        "event_msg",
        {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": step}},
    )


CONTEXT = ("turn_context", {"cwd": "/p", "model": "gpt-5-codex"})


def test_a_prompt_after_codexs_request_marker_is_the_prompt() -> None:
    """Codex's IDE and desktop clients write the IDE's context, then "## My request for
    Codex:", then the words typed: those are the prompt (and the title), the rest context."""
    text = (
        "# Context from my IDE setup:\n## Open tabs:\n- a.py\n\n"
        "## My request for Codex:\nfix the flaky login test"
    )
    session = parse_session_bytes(rollout(said("user", text), CONTEXT, said("assistant", "done")))
    (prompt,) = [e for e in session.iter_messages() if e.role == "user"]
    assert text_of(prompt.message) == "fix the flaky login test"
    assert session.title == "fix the flaky login test"
    (context,) = [e for e in session.entries if e.type == "custom_message"]
    assert context.raw["content"] == "# Context from my IDE setup:\n## Open tabs:\n- a.py"
    bare = parse_session_bytes(rollout(said("user", "## My request for Codex:\nhello")))
    assert [text_of(e.message) for e in bare.iter_messages()] == ["hello"]
    action = parse_session_bytes(rollout(said("user", "<user_action>review done</user_action>")))
    assert not [e for e in action.iter_messages() if e.role == "user"]  # Codex's, not typed


def test_builds_that_count_a_request_before_its_items_are_read_by_request() -> None:
    """Late-2025 builds: a turn_context before every request, its token count next, then
    its items, each call followed by its output. Parallel calls stay one message, and each
    request's tokens go to its own message."""
    data = rollout(
        said("user", "hi"),
        CONTEXT,
        tokens(100, 100),
        item("reasoning", summary=[{"type": "summary_text", "text": "t"}]),
        call("a"),
        output("a"),
        call("b"),
        output("b"),
        CONTEXT,
        tokens(300, 200),
        said("assistant", "done 1"),
        said("user", "next"),
        CONTEXT,
        tokens(600, 300),
        said("assistant", "done 2"),
    )
    session = parse_session_bytes(data)
    answers = [e for e in session.iter_messages() if e.role == "assistant"]
    calls = [[b["id"] for b in e.message["content"] if b["type"] == "toolCall"] for e in answers]
    assert calls == [["a", "b"], [], []]
    assert [e.message["usage"]["input"] for e in answers] == [100, 200, 300]
    roles = [e.role for e in session.iter_messages()]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]


def test_a_refused_patch_is_an_error_and_changes_no_file() -> None:
    from exporter.render.files_touched import files_touched

    patch = "\n*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    for refusal in (
        "apply_patch verification failed: Failed to find expected lines in src/a.py",
        "Exit code: 1\nWall time: 0 seconds\nOutput:\nerror: hunk did not apply\n",
    ):
        data = rollout(
            said("user", "patch it"),
            CONTEXT,
            item("custom_tool_call", name="apply_patch", call_id="p1", input=patch),
            item("custom_tool_call_output", call_id="p1", output=refusal),
        )
        session = parse_session_bytes(data)
        (result,) = [e for e in session.iter_messages() if e.role == "toolResult"]
        assert result.message["isError"] is True, refusal
        assert "Wall time" not in text_of(result.message)
        (touched,) = files_touched(session, lambda p: p)
        assert (touched.edits, touched.failed_edits, touched.added) == (0, 1, 0)
        assert "(not applied)" in render_session(session)  # the blank line before: still a patch
    # a refused patch that adds a file is a write not made, not a failed edit (code review
    # 2026-12-02)
    add = "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch\n"
    data = rollout(
        said("user", "add it"),
        CONTEXT,
        item("custom_tool_call", name="apply_patch", call_id="p1", input=add),
        item("custom_tool_call_output", call_id="p1", output="apply_patch verification failed"),
    )
    (touched,) = files_touched(parse_session_bytes(data), lambda p: p)
    assert (touched.writes, touched.failed_writes, touched.failed_edits) == (0, 1, 0)


def test_a_moved_file_is_counted_where_it_now_is() -> None:
    """A patch's "*** Move to:" was counted under the old name, so the file's later edits
    (under its new name) made a second row and the old row named a file that was gone."""
    from exporter.render.files_touched import files_touched

    move = (
        "*** Begin Patch\n*** Update File: src/old_name.py\n*** Move to: src/new_name.py\n"
        "@@\n-x = 1\n+x = 2\n*** End Patch\n"
    )
    edit = "*** Begin Patch\n*** Update File: src/new_name.py\n@@\n-y = 1\n+y = 2\n*** End Patch\n"
    data = rollout(
        said("user", "rename it, then fix it"),
        CONTEXT,
        item("custom_tool_call", name="apply_patch", call_id="p1", input=move),
        item("custom_tool_call_output", call_id="p1", output="Success. Updated files."),
        item("custom_tool_call", name="apply_patch", call_id="p2", input=edit),
        item("custom_tool_call_output", call_id="p2", output="Success. Updated files."),
    )
    session = parse_session_bytes(data)
    (touched,) = files_touched(session, lambda p: p)
    assert (touched.path, touched.moved_from) == ("src/new_name.py", ["src/old_name.py"])
    assert (touched.edits, touched.added, touched.removed, len(touched.changes)) == (2, 2, 2, 2)
    page = render_session(session)
    assert (
        '<code>src/<wbr>new_name.py</code> <span class="muted">(moved from '
        "<code>src/<wbr>old_name.py</code>)" in page
    )


def test_an_interrupt_after_a_requests_outputs_stops_the_next_request() -> None:
    data = rollout(
        said("user", "hi"),
        CONTEXT,
        call("a"),
        tokens(100, 100),
        output("a"),
        ("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        said("user", "next"),
    )
    session = parse_session_bytes(data)
    answers = [e for e in session.iter_messages() if e.role == "assistant"]
    assert [e.message["stopReason"] for e in answers] == ["toolUse", "aborted"]
    assert answers[1].message["content"] == [] and answers[1].parent_id == "L6"  # the output


def test_server_side_tools_end_no_request_and_a_generated_image_is_shown() -> None:
    png = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
        "RU5ErkJggg=="
    )
    data = rollout(
        said("user", "draw a cat"),
        CONTEXT,
        item(
            "image_generation_call",
            id="ig_1",
            status="completed",
            revised_prompt="a cat",
            result=png,
        ),
        said("assistant", "here"),
        tokens(50, 50),
    )
    session = parse_session_bytes(data)
    (answer,) = [e for e in session.iter_messages() if e.role == "assistant"]
    assert answer.message["stopReason"] == "stop"
    (result,) = [e for e in session.iter_messages() if e.role == "toolResult"]
    assert result.message["content"][0]["mimeType"] == "image/png"
    assert result.message["toolCallId"] == "ig_1"
    html = render_session(session)
    assert f"data:image/png;base64,{png}" in html and "no result" not in html


def test_absurd_token_counts_count_as_none() -> None:
    huge = rollout(said("user", "hi"), CONTEXT, said("assistant", "x"), tokens(10**400, 10**400))
    session = parse_session_bytes(huge)
    assert compute_stats(session).all.input == 0
    assert "Overflow" not in render_session(session)


def test_a_request_counted_after_the_last_message_still_counts() -> None:
    """In a file whose counts come before their request's items, a last count with no item
    after it (a request of encrypted reasoning only) goes to the last message."""
    data = rollout(
        said("user", "hi"),
        CONTEXT,
        tokens(10, 10),
        call("a"),
        output("a"),
        CONTEXT,
        tokens(30, 20),
    )
    session = parse_session_bytes(data)
    assert compute_stats(session).all.input == 30
    (answer,) = [e for e in session.iter_messages() if e.role == "assistant"]
    assert answer.message["usage"]["input"] == 30


def test_list_reads_an_old_rollout_as_codexs(tmp_path: Path) -> None:
    lines = [
        {"id": "c27a914d", "timestamp": "2025-08-20T13:20:47.060Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ]
    day = tmp_path / "sessions" / "2025" / "08" / "20"
    day.mkdir(parents=True)
    (day / "rollout-2025-08-20T13-20-47-c27a914d.jsonl").write_text(
        "".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli, ["list", "--sessions-dir", str(tmp_path / "sessions"), "--all", "--json"]
    )
    row = json.loads(result.stdout)
    assert row["id"] == "c27a914d" and row["first_prompt"] == "hi"
    assert row["started"].startswith("2025-08-20T13:20:47")


@pytest.mark.parametrize("source", [SOURCE, CLAUDE_CODE_PATH], ids=["codex", "claude-code"])
def test_list_reads_another_agent_s_file_once(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`list` scanned every line of a Codex or Claude Code file as a Pi session's before it
    gave up and had the loader read the file again: a first line of a type Pi never writes
    now sends it to the loader at once (20 rollouts of 3 MB: 6.6 s -> 5.2 s)."""
    import exporter.discover as discover

    scanned: list[int] = []
    real = discover._scan_line
    monkeypatch.setattr(
        discover, "_scan_line", lambda summary, raw, n: scanned.append(n) or real(summary, raw, n)
    )
    summary = discover.scan_summary(source)
    assert scanned == [] and summary.error is None and summary.messages > 0
    assert (summary.id, summary.entries) == (
        load_session(source).id,
        len(load_session(source).entries),
    )


def test_after_a_rollback_usage_and_an_interrupt_stay_on_the_new_branch() -> None:
    """The dropped turn's answer is the last one read, but not on the branch that goes on."""
    data = rollout(
        said("user", "one"),
        CONTEXT,
        said("assistant", "a1"),
        tokens(10, 10),
        said("user", "two"),
        CONTEXT,
        said("assistant", "a2"),
        tokens(30, 20),
        ("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
        ("event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
    )
    session = parse_session_bytes(data)
    by_text = {text_of(e.message): e for e in session.iter_messages() if e.role == "assistant"}
    assert by_text["a2"].message["stopReason"] == "stop"  # dropped, and finished
    assert by_text["a1"].message["stopReason"] == "aborted"  # the branch the turn went on


@pytest.mark.parametrize(
    ("name", "arguments", "want_name", "want_arguments"),
    [
        ("shell", {"command": ["zsh", "-lc", "make test"]}, "bash", {"command": "make test"}),
        ("shell", {"command": ["/bin/bash", "-c", "ls"]}, "bash", {"command": "ls"}),
        ("shell", {"command": ["rg", "a b", "src/"]}, "bash", {"command": "rg 'a b' src/"}),
        (
            "container.exec",
            {"command": ["ls"], "timeout": 5000},
            "bash",
            {"command": "ls", "timeout": 5.0},
        ),
        (
            "shell_command",
            {"command": "pytest", "timeout_ms": "soon"},
            "bash",
            {"command": "pytest", "timeout_ms": "soon"},
        ),  # not a number: kept as written
        (
            "exec_command",
            {"cmd": "npm test", "tty": True},
            "bash",
            {"command": "npm test", "tty": True},
        ),
        (
            "shell",
            {"command": ["apply_patch", "*** Begin Patch\n*** End Patch"]},
            "apply_patch",
            {"input": "*** Begin Patch\n*** End Patch"},
        ),
        ("shell", {"command": "not a list"}, "bash", {"command": "not a list"}),
        ("shell", {"command": [1, 2]}, "shell", {"command": [1, 2]}),  # not argv: as sent
        ("apply_patch", {"patch": "*** Begin Patch"}, "apply_patch", {"input": "*** Begin Patch"}),
        ("update_plan", {"plan": []}, "update_plan", {"plan": []}),
    ],
)
def test_codexs_tool_calls_as_pis(name: str, arguments: dict, want_name: str, want_arguments: dict):
    from exporter.codex import _pi_tool

    assert _pi_tool(name, arguments) == (want_name, want_arguments)


def test_a_local_shell_call_and_a_running_command_read_as_bash() -> None:
    data = rollout(
        said("user", "go"),
        CONTEXT,
        item(
            "local_shell_call",
            call_id="ls1",
            status="completed",
            action={
                "type": "exec",
                "command": ["bash", "-lc", "sleep 100"],
                "timeout_ms": 2000,
                "working_directory": "/p",
            },
        ),
        item(
            "function_call_output",
            call_id="ls1",
            output=(
                "Chunk ID: ab12\nWall time: 10.0 seconds\nProcess running with session ID 7\n"
                "Output:\npartial\n"
            ),
        ),
    )
    session = parse_session_bytes(data)
    (answer,) = [e for e in session.iter_messages() if e.role == "assistant"]
    (block,) = answer.message["content"]
    assert block["name"] == "bash" and block["arguments"]["command"] == "sleep 100"
    assert block["arguments"]["timeout"] == 2.0
    (result,) = [e for e in session.iter_messages() if e.role == "toolResult"]
    assert text_of(result.message) == "partial\n\n(the command was still running: session 7)"
    assert result.message["isError"] is False
