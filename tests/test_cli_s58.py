"""Stop 58 (helper hunts: a new user, a dataset's user): --deny let a matching file name go
out, a token after ``-`` in a file name went out, a Claude Code user with no Pi folder got
no hint, ``search`` cut entry types to 12 characters, SESSION ``-`` was "/dev/stdin", and the
dataset card said nothing of signatures or of branches in its trace view."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import claude_encode_cwd, encode_cwd
from exporter.policy import RedactionPolicy
from exporter.publish.dataset_card import render_card
from exporter.redact import name_scrubber
from tests.conftest import FIXTURES_DIR
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_publish import Corpus, hub_env, publish, session_paths

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name

DATA = Path(__file__).parent / "data"
HF = "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"


def _one_session(root: Path, name: str) -> Corpus:
    folder = root / encode_cwd("/home/bob/names")
    folder.mkdir(parents=True)
    path = folder / name
    lines = [
        {"type": "session", "version": 3, "id": "66666666-6666-4666-8666-666666666666",
         "timestamp": "2026-03-05T10:00:00.000Z", "cwd": "/home/bob/names"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-03-05T10:00:01.000Z",
         "message": {"role": "user", "content": "look at the incident", "timestamp": 1}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return Corpus(root, [path], [])


def test_deny_matches_the_file_name_that_would_go_out(fake_hub: FakeHub, tmp_path: Path) -> None:
    corpus = _one_session(tmp_path / "sessions", "acme-bigbank-incident.jsonl")
    denied = publish(fake_hub, corpus, "--deny", "bigbank")
    assert denied.exit_code != 0
    assert "--deny pattern bigbank matches (first in its file name); not published" in (
        denied.stderr
    )
    assert not fake_hub.commits
    allowed = publish(fake_hub, corpus, "--deny", "otherbank")
    assert allowed.exit_code == 0, allowed.output
    assert [p.rsplit("/", 1)[-1] for p in session_paths(fake_hub)] == [
        "acme-bigbank-incident.jsonl"
    ]


def test_a_token_after_a_dash_in_a_file_name_is_redacted() -> None:
    scrub = name_scrubber(RedactionPolicy())
    assert scrub(f"fix-{HF}.jsonl") == "fix-REDACTED-huggingface-token.jsonl"
    assert scrub(f"notes.{HF}.jsonl") == "notes.REDACTED-huggingface-token.jsonl"
    anthropic = "sk-ant-api03-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d"
    assert scrub(f"{anthropic}.jsonl") == "REDACTED-anthropic-key.jsonl"  # its own dashes
    for plain in [
        *(p.name for p in FIXTURES_DIR.glob("*.jsonl")),
        "2026-03-03T10-00-00-000Z_33333333-3333-4333-8333-333333333333.jsonl",
        "rollout-2025-12-28T13-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl",
        "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl",
        "fix-hf-loader-bug.jsonl",
    ]:
        assert scrub(plain) == plain


def test_a_claude_code_user_without_a_pi_folder_is_told_how_to_read_theirs(
    tmp_path: Path, monkeypatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    claude = tmp_path / "claude-config"
    folder = claude / "projects" / claude_encode_cwd(str(work))
    folder.mkdir(parents=True)
    source = next((DATA / "claude-code").glob("*.jsonl"))
    (folder / source.name).write_bytes(source.read_bytes())
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.pi at all
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.chdir(work)
    hint = f"Claude Code has some: add --sessions-dir {claude / 'projects'}"
    for args in (["list", "--all"], ["stats", "--all"], ["search", "x", "--all"], ["export"]):
        result = CliRunner().invoke(cli, args)
        assert "(it does not exist)" in result.output, (args, result.output)
        assert hint in result.output, (args, result.output)


def test_search_names_entry_types_as_the_page_does() -> None:
    result = CliRunner().invoke(
        cli, ["search", "-E", ".*", str(FIXTURES_DIR / "every-entry-type.jsonl"), "--limit", "30"]
    )
    assert result.exit_code == 0, result.output
    said = result.stdout
    for words in ("thinking level", "shell command", "extension message", "branch summary",
                  "extension state", "session name", "model change", "tool result"):  # fmt: skip
        assert f"  {words}" in said, (words, said)
    assert "…" not in "".join(line.split(":", 1)[0] for line in said.splitlines())
    raw = CliRunner().invoke(
        cli, ["search", "-E", ".*", str(FIXTURES_DIR / "every-entry-type.jsonl"), "--json"]
    )
    kinds = {json.loads(line)["kind"] for line in raw.stdout.splitlines()}
    assert {"thinking_level_change", "bashExecution"} <= kinds  # the JSON keeps the file's


def test_session_dash_is_said_as_standard_input(tmp_path: Path) -> None:
    out = str(tmp_path / "x.html")
    command = [sys.executable, "-m", "exporter", "export", "-", "-o", out]
    for given, said in (
        (b"", "standard input (SESSION -): nothing was piped in, not a Pi session"),
        (b"junk\n", "standard input (SESSION -): not a Pi session file"),
    ):
        result = subprocess.run(command, input=given, capture_output=True, timeout=60)
        stderr = result.stderr.decode("utf-8")
        assert result.returncode == 2 and said in stderr, stderr
        assert "/dev/stdin" not in stderr
    with open(os.devnull, "rb") as nothing:  # `< /dev/null`: a device, not a pipe
        result = subprocess.run(command, stdin=nothing, capture_output=True, timeout=60)
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 2 and "standard input (SESSION -): nothing was piped in" in stderr


def test_the_card_says_signatures_go_and_how_branches_read() -> None:
    card = render_card("alice/traces", [], {}, RedactionPolicy()).decode("utf-8")
    assert "`thinkingSignature`" in card and "cannot be sent back to its provider" in card
    assert "follow `parentId` from the last entry back to the root" in card


def test_nothing_active_since_is_said_one_way_by_every_command(tmp_path: Path, monkeypatch) -> None:
    """`list` left out how many sessions are older, `publish` the --since as given."""
    folder = tmp_path / "home" / ".pi" / "agent" / "sessions" / encode_cwd("/work/p")
    folder.mkdir(parents=True)
    (folder / "s.jsonl").write_bytes((FIXTURES_DIR / "pi-branched-1.jsonl").read_bytes())
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    said = []
    for command in (["list"], ["stats"], ["search", "foo"], ["publish", "alice/x", "--dry-run"]):
        result = CliRunner().invoke(cli, [*command, "--all", "--since", "1h"])
        line = result.stderr.strip().splitlines()[-1]
        said.append(line.split("active since ", 1)[-1].removesuffix("; nothing sent"))
    assert len(set(said)) == 1 and said[0].endswith(" (1h); 1 session there is older"), said


def test_search_never_writes_an_entry_types_terminal_codes(tmp_path: Path) -> None:
    """A role holding an OSC sequence (sets the terminal's title) reached the terminal."""
    path = tmp_path / "esc.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "esc-1", "timestamp": "2026-03-05T10:00:00.000Z",
         "cwd": "/w"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-03-05T10:00:01.000Z",
         "message": {"role": "\x1b]0;pwned\x07odd", "content": "findme", "timestamp": 1}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    result = CliRunner().invoke(cli, ["search", "findme", str(path)])
    assert result.exit_code == 0, result.output
    assert "findme" in result.stdout and "\x1b" not in result.stdout and "\x07" not in result.stdout
