"""`search --redact` (and the other policy options): search what a shared copy of each
session would hold, as `share` and `publish` make it, instead of the files; a team checks
that a token, a customer's name or a host is not in what goes out."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.conftest import FIXTURE_FILES

PLANTED = "ghp_" + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"
ENV_VALUE = "q8Zr2mXw" + "7Lp4Vn9t"  # a value only this environment says is secret
BRANCHED = next(path for path in FIXTURE_FILES if path.name == "pi-branched-1.jsonl")


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A sessions folder: the small fixtures, and pi-branched-1 with a GitHub token and a
    customer's name in a tool result and a word only its thinking says."""
    folder = tmp_path / "sessions" / "--project--"
    folder.mkdir(parents=True)
    for path in FIXTURE_FILES:  # the small ones: each search redacts every session
        if path.stat().st_size < 500_000:
            shutil.copy(path, folder / path.name)
    lines = BRANCHED.read_text(encoding="utf-8").splitlines()
    result_done = thinking_done = False
    for index, line in enumerate(lines):
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "toolResult" and not result_done:
            text = f"\nexport GITHUB_TOKEN={PLANTED}\ncustomer acme-widgets-gmbh ref {ENV_VALUE}\n"
            message["content"][0]["text"] += text
            result_done = True
        elif message.get("role") == "assistant" and not thinking_done:
            thought = [b for b in message["content"] if b.get("type") == "thinking"]
            if thought:
                thought[0]["thinking"] += " zebrathought"
                thinking_done = True
        lines[index] = json.dumps(record, ensure_ascii=False)
    assert result_done and thinking_done
    (folder / "planted.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "sessions"


def search(sessions: Path, *args: str) -> tuple[list[dict], str]:
    result = CliRunner().invoke(
        cli, ["search", *args, "--all", "--sessions-dir", str(sessions), "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return rows, result.stderr


def test_a_token_in_the_files_is_not_in_the_redacted_copies(sessions: Path) -> None:
    raw, _ = search(sessions, PLANTED[:12])
    assert [Path(r["path"]).name for r in raw] == ["planted.jsonl"]
    redacted, said = search(sessions, PLANTED[:12], "--redact")
    assert redacted == []
    assert "no matches in the redacted copies" in said
    # what took its place is in the copy, though no file's bytes hold it
    placeholders, said = search(sessions, "REDACTED:github-token", "--redact")
    assert [Path(r["path"]).name for r in placeholders] == ["planted.jsonl"]
    assert placeholders[0]["entry_id"] == raw[0]["entry_id"]
    assert PLANTED not in json.dumps(placeholders)
    assert "1 entry in 1 session in the redacted copies" not in said  # --json: rows only
    none, _ = search(sessions, "REDACTED:github-token")
    assert none == []


def test_a_given_secret_and_a_cut_are_searched_as_they_leave(sessions: Path) -> None:
    name = "acme-widgets-gmbh"
    assert len(search(sessions, name)[0]) == 1
    # --secret implies --redact: the name is replaced in the copy
    assert search(sessions, name, "--secret", name)[0] == []
    assert len(search(sessions, "zebrathought")[0]) == 1
    kept, _ = search(sessions, "zebrathought", "--redact")
    assert len(kept) == 1  # redacting keeps thinking
    cut, said = search(sessions, "zebrathought", "--no-thinking")
    assert cut == [] and "no matches in the cut copies" in said


def test_the_count_says_what_was_searched(sessions: Path) -> None:
    result = CliRunner().invoke(
        cli, ["search", "zebrathought", "--all", "--sessions-dir", str(sessions), "--redact"]
    )
    assert result.exit_code == 0, result.output
    assert "pi-session: 1 entry in 1 session in the redacted copies" in result.stderr
    assert "zebrathought" in result.stdout


def test_report_is_refused(sessions: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["search", "x", "--all", "--sessions-dir", str(sessions), "--report", "r.json"]
    )
    assert result.exit_code == 1
    assert "--report is for commands that write a copy" in result.stderr
    assert not (tmp_path / "r.json").exists()


def test_this_environment_s_secret_values_are_searched_as_removed(
    sessions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Share and publish remove the values of sensitive environment variables: so does the
    copy searched, in the worker processes too."""
    monkeypatch.setenv("ACME_API_TOKEN", ENV_VALUE)
    assert len(search(sessions, ENV_VALUE)[0]) == 1
    kept = search(sessions, ENV_VALUE, "--redact", "--no-env-secrets", "-j", "2")[0]
    assert len(kept) == 1  # no detector takes it: only the environment says it is secret
    assert search(sessions, ENV_VALUE, "--redact", "-j", "2")[0] == []


def test_the_help_says_search_writes_nothing() -> None:
    """--redact's help is shared with share and export ("before anything is written");
    search's says what it searches instead (review h175 F7)."""
    shown = " ".join(CliRunner().invoke(cli, ["search", "--help"]).output.split())
    assert "--redact / --no-redact Search each session redacted as share redacts it" in shown
    # (not "the copy share would send": share drops hidden entries, search keeps them)
    assert "hidden entries are searched too unless --drop-hidden" in shown
    assert "nothing is written" in shown and "before anything is written" not in shown
