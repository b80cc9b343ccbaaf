"""`export --all` without redaction says when the site's pages hold credentials in clear,
as `export` says it of one page: once per build, the pages and kinds counted, never a value.
A rebuild that renders nothing says it again (the counts live in the manifest)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
PLANTED_GITHUB = "ghp_" + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja2Pq4"
PLANTED_AWS = "AKIA" + "QYLPMN5HFIQR7XQZ"


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A clean session, and a copy (another id) with two credentials in a tool result."""
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURE, folder / "clean.jsonl")
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["id"] = "planted-session"
    lines[0] = json.dumps(header)
    for index, line in enumerate(lines):
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "toolResult":
            message["content"][0]["text"] += (
                f"\nexport GITHUB_TOKEN={PLANTED_GITHUB}\naws_access_key_id = {PLANTED_AWS}\n"
            )
            lines[index] = json.dumps(record, ensure_ascii=False)
            break
    (folder / "planted.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "sessions"


def build(sessions: Path, site: Path, *args: str):
    result = CliRunner().invoke(
        cli, ["export", "--all", "--sessions-dir", str(sessions), "-o", str(site), *args]
    )
    assert result.exit_code == 0, result.output
    return result


def warnings(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if "in clear" in line]


def test_the_site_says_which_pages_hold_credentials_each_build(
    sessions: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    first = build(sessions, site)
    (line,) = warnings(first)
    assert line == (
        "pi-session: warning: 1 page of the site holds 2 credentials of a known format in "
        "clear (aws-access-key-id, github-token); --redact replaces them"
    )
    assert PLANTED_GITHUB not in first.output and PLANTED_AWS not in first.output
    again = build(sessions, site)
    assert "0 rendered, 2 unchanged" in again.stderr
    assert warnings(again) == [line]


def test_a_redacted_site_and_a_clean_one_say_nothing(sessions: Path, tmp_path: Path) -> None:
    assert warnings(build(sessions, tmp_path / "redacted", "--redact")) == []
    (sessions / "--p--" / "planted.jsonl").unlink()
    assert warnings(build(sessions, tmp_path / "clean")) == []


def test_a_tampered_count_in_the_manifest_is_left_out(sessions: Path, tmp_path: Path) -> None:
    """The manifest comes with the folder, from anywhere: counts that are not counts are
    ignored, not a traceback."""
    site = tmp_path / "site"
    build(sessions, site)
    path = site / ".pi-session-site.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for entry in manifest["sessions"].values():
        entry["credentials"] = {"github-token": "many", "x": -3, "y": True}
    path.write_text(json.dumps(manifest), encoding="utf-8")
    result = build(sessions, site)
    assert warnings(result) == []


def test_a_cut_without_redaction_still_says_what_its_pages_hold(
    sessions: Path, tmp_path: Path
) -> None:
    """A cut option alone (--no-thinking) leaves the credentials on the pages: the site
    says so as a plain build does (review h174/h175: it was silent). What is counted is the
    cut copy: --no-tool-output takes the tool result that held them, and says nothing."""
    site = tmp_path / "cut"
    (line,) = warnings(build(sessions, site, "--no-thinking"))
    assert "1 page of the site holds 2 credentials" in line
    pages = list((site / "sessions").rglob("*.html"))
    assert any(PLANTED_GITHUB in page.read_text(encoding="utf-8") for page in pages)
    without_output = tmp_path / "no-output"
    assert warnings(build(sessions, without_output, "--no-tool-output")) == []
    pages = list((without_output / "sessions").rglob("*.html"))
    assert pages and not any(PLANTED_GITHUB in p.read_text(encoding="utf-8") for p in pages)


def sub_agent_with_token(folder: Path) -> Path:
    """A Claude Code session whose sub-agent's transcript (only) holds a token."""
    from tests.claude_code_corpus import sub_agent_session

    path = sub_agent_session(folder)
    agent = path.parent / path.stem / "subagents" / "agent-a1b2c3d.jsonl"
    text = agent.read_text(encoding="utf-8")
    agent.write_text(text.replace("tests/a.py", f"tests/a.py {PLANTED_GITHUB}"), encoding="utf-8")
    assert PLANTED_GITHUB in agent.read_text(encoding="utf-8")
    assert PLANTED_GITHUB not in path.read_text(encoding="utf-8")
    return path


def test_a_claude_code_sub_agents_credentials_are_counted(tmp_path: Path) -> None:
    """The page shows the sub-agents' transcripts: what they hold is counted too (the
    session's own file was all that was read)."""
    from exporter.site import build_site

    path = sub_agent_with_token(tmp_path / "cc")
    site = tmp_path / "site"
    report = build_site([path], site, jobs=1, progress=False, count_credentials=True)
    assert report.credential_pages == 1 and report.credentials == {"github-token": 1}
    (page,) = (site / "sessions").rglob("*.html")
    assert PLANTED_GITHUB in page.read_text(encoding="utf-8")
