"""Site mode, stop 66: a Codex day folder in a sessions folder hides none of the Pi and
Claude Code sessions beside it; deleting the last Codex session or the last Claude Code
project folder empties the site as deleting the last Pi session does; a Claude Code 2.0
sub-agent kept beside its session's file that changes alone renders the page again; the
index's text search says each result's project and date; sorting by last activity in the
browser orders sessions active in the same second as the server does.

The browser tests open the site over HTTP on 127.0.0.1 in Chromium (skipped without it
unless CI is set; see tests/browser_util.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd, session_files
from exporter.site import build_site
from exporter.site_manifest import MANIFEST_NAME
from tests.browser_util import CODEX, CODEX_PATH
from tests.claude_code_corpus import sub_agent_session
from tests.test_site_s62 import ask, build, expect, write_session

pytest_plugins = ["tests.browser_util", "tests.test_site_s62"]  # (its `served` site, `page` tab)

PI_ID = "a0000000-0000-4000-8000-000000000001"
CODEX_CWD = "/home/dev/projects/inventory"  # the rollout's session_meta says so
CLAUDE_CWD = "/w"  # claude_code_corpus.sub_agent_session's


def export_all(root: Path, site: Path, *extra: str) -> Result:
    args = ["export", "--all", "-j", "1", "--sessions-dir", str(root), "-o", str(site), *extra]
    return CliRunner().invoke(cli, args)


def codex_rollout(root: Path) -> Path:
    """The test rollout where Codex keeps it: ``<root>/2025/12/28/rollout-….jsonl``."""
    day = root / "2025" / "12" / "28"
    day.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(CODEX_PATH, day / CODEX))


def session_pages(site: Path) -> list[Path]:
    return sorted((site / "sessions").rglob("*.html"))


# --- 1. a Codex day folder beside Pi and Claude Code project folders ----------------------------


def test_a_codex_day_folder_hides_none_of_the_sessions_beside_it(tmp_path: Path) -> None:
    """With one Codex day folder (sessions/YYYY/MM/DD/) in it, a sessions folder was read as
    Codex's alone: `export --all` found the rollout only and deleted the Pi and Claude Code
    sessions' pages ("1 session: 1 rendered, 0 unchanged, 2 removed"), and `list --all`
    and `stats --all` saw the Codex session only."""
    root = tmp_path / "sessions"
    pi = write_session(root, "/home/alice/proj", PI_ID, ask("hello from pi"))
    claude = sub_agent_session(root / "-w")
    site = tmp_path / "site"
    first = export_all(root, site)
    assert first.exit_code == 0, first.output
    before = session_pages(site)
    assert len(before) == 2
    rollout = codex_rollout(root)
    assert sorted(session_files(root)) == sorted([pi, claude, rollout])
    assert session_files(root, "/home/alice/proj") == [pi]
    assert session_files(root, CLAUDE_CWD) == [claude]
    assert session_files(root, CODEX_CWD) == [rollout]
    again = export_all(root, site)
    assert again.exit_code == 0, again.output
    assert "3 sessions: 1 rendered, 2 unchanged, 0 removed" in again.output
    assert all(page.exists() for page in before)
    assert len(session_pages(site)) == 3
    listed = CliRunner().invoke(cli, ["list", "--all", "--json", "--sessions-dir", str(root)])
    assert listed.exit_code == 0, listed.output
    ids = {json.loads(line)["id"] for line in listed.stdout.splitlines() if line.strip()}
    assert len(ids) == 3, listed.stdout


# --- 2. the last Codex or Claude Code session deleted -------------------------------------------


@pytest.mark.parametrize("deleted", ["the rollout", "its whole year folder"])
def test_deleting_the_last_codex_session_empties_the_site(tmp_path: Path, deleted: str) -> None:
    """Deleting the last rollout and building again said "no Pi sessions for any project",
    exit 2, and the site kept listing the page: the rollout's day folder was never tried
    for the name the site's manifest keeps. A wrong --sessions-dir still leaves the site."""
    root = tmp_path / "sessions"
    rollout = codex_rollout(root)
    site = tmp_path / "site"
    assert export_all(root, site).exit_code == 0
    pages = session_pages(site)
    assert len(pages) == 1
    if deleted == "the rollout":
        rollout.unlink()
    else:
        shutil.rmtree(root / "2025")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "2025" / "12" / "28").mkdir(parents=True)
    wrong = export_all(elsewhere, site)
    assert wrong.exit_code == 2, wrong.output
    assert all(page.exists() for page in pages)  # a wrong folder empties no site
    result = export_all(root, site)
    assert result.exit_code == 0, result.output
    assert "0 sessions: 0 rendered, 0 unchanged, 1 removed" in result.output
    assert not any(page.exists() for page in pages)
    assert "No sessions." in (site / "index.html").read_text(encoding="utf-8")


def test_deleting_the_last_claude_code_project_folder_empties_the_site(tmp_path: Path) -> None:
    """The same for Claude Code: its project folder is named its way (``-w``), not Pi's
    (``--w--``), and with the folder gone no folder of the sessions folder held the name."""
    root = tmp_path / "sessions"
    sub_agent_session(root / "-w")
    site = tmp_path / "site"
    assert export_all(root, site).exit_code == 0
    pages = session_pages(site)
    assert len(pages) == 1
    shutil.rmtree(root / "-w")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "-w").mkdir(parents=True)
    (elsewhere / encode_cwd(CLAUDE_CWD)).mkdir()
    wrong = export_all(elsewhere, site)
    assert wrong.exit_code == 2, wrong.output
    assert all(page.exists() for page in pages)
    result = export_all(root, site)
    assert result.exit_code == 0, result.output
    assert "0 sessions: 0 rendered, 0 unchanged, 1 removed" in result.output
    assert not any(page.exists() for page in pages)


# --- 3. a Claude Code 2.0 sub-agent beside its session's file -----------------------------------


def _sidechain_line(text: str) -> str:
    """One line of a sub-agent's transcript that no session here names."""
    line = {"type": "user", "uuid": "u-other", "parentUuid": None, "isSidechain": True}
    line |= {"agentId": "ffff000", "sessionId": "someone-else", "cwd": CLAUDE_CWD}
    line |= {"timestamp": "2026-11-21T09:30:00.000Z"}
    line["message"] = {"role": "user", "content": text}
    return json.dumps(line) + "\n"


def test_a_beside_sub_agent_that_changes_alone_renders_its_page_again(tmp_path: Path) -> None:
    """A 2.0 sub-agent's transcript (``agent-<id>.jsonl`` beside the session's file) edited
    alone left the page as it was ("0 rendered, 1 unchanged"): only 2.1's
    ``<session>/subagents/`` folder was stamped. Another session's agent in the same
    folder, which this session does not name, still changes nothing of this page."""
    folder = tmp_path / "sessions" / "-w"
    session = sub_agent_session(folder, beside=True)
    other = folder / "agent-ffff000.jsonl"
    other.write_text(_sidechain_line("another session's agent"), encoding="utf-8")
    site = tmp_path / "site"

    def rebuild() -> Any:
        report = build_site([session], site, jobs=1, progress=False)
        assert not report.failed, report.failed
        return report

    assert rebuild().rendered == 1
    other.write_text(_sidechain_line("another session's agent, changed"), encoding="utf-8")
    unrelated = rebuild()
    assert (unrelated.rendered, unrelated.unchanged) == (0, 1)
    agent = folder / "agent-a1b2c3d.jsonl"
    edited = agent.read_text(encoding="utf-8").replace("Two files.", "Two files, edited.")
    agent.write_text(edited, encoding="utf-8")
    report = rebuild()
    assert (report.rendered, report.unchanged) == (1, 0)
    (page,) = session_pages(site)
    assert "Two files, edited." in page.read_text(encoding="utf-8")


# --- 4. same-named sessions in the text search's results ---------------------------------------


@pytest.mark.browser
def test_text_search_results_say_each_sessions_project_and_date(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """Two sessions of one title (one in /home/alice/proj, one in /home/bob/proj) gave two
    results both headed "Sampler session · 1 match": which was which could not be told.
    Each now says its project and last activity, as its row in the table does."""
    root = tmp_path / "sessions"
    for n, cwd in enumerate(["/home/alice/proj", "/home/bob/proj"], start=1):
        sid = f"b000000{n}-0000-4000-8000-00000000000{n}"
        write_session(root, cwd, sid, ask("Sampler session", "raw html <b>here</b>"))
    site, base = served
    build(root, site)
    page.goto(f"{base}/index.html")
    page.fill("#text-query", "raw html")
    page.press("#text-query", "Enter")
    expect(page.locator("#text-status")).to_have_text("2 matches in 2 sessions")
    rows = page.eval_on_selector_all(
        "#session-table tbody tr",
        "rs => rs.map(r => [r.cells[1].querySelector('a').getAttribute('href'),"
        " r.querySelector('td.project').textContent.trim(),"
        " r.cells[0].querySelector('time').textContent.trim()])",
    )
    heads = page.eval_on_selector_all(
        "section.text-hits h3",
        "hs => hs.map(h => [h.querySelector('a').getAttribute('href'), h.textContent])",
    )
    assert len(heads) == 2
    said = {href: text for href, text in heads}
    assert {project for _, project, _ in rows} == {"/home/alice/proj", "/home/bob/proj"}
    for href, project, when in rows:
        assert when and said[href] == f"Sampler session · {project} · {when} · 1 match"
    assert page.locator("section.text-hits b").count() == 0  # session text stays text


# --- 5. sorting by last activity, to the millisecond ------------------------------------------


def timed_session(root: Path, sid: str, prompt: str, last: str, cost: float) -> Path:
    """A Pi session whose answer (costing ``cost``) is its last activity, at ``last``."""
    cwd = "/home/dev/alpha"
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}
    usage["cost"] = {"input": cost, "output": 0, "total": cost}
    lines = [
        {"type": "session", "version": 3, "id": sid, "timestamp": "2026-11-10T08:00:00.000Z"}
        | {"cwd": cwd},
        {"type": "message", "id": f"{sid[:4]}0001", "parentId": None}
        | {"timestamp": "2026-11-10T08:00:01.000Z"}
        | {"message": {"role": "user", "content": [{"type": "text", "text": prompt}]}},
        {"type": "message", "id": f"{sid[:4]}0002", "parentId": f"{sid[:4]}0001"}
        | {"timestamp": last}
        | {
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "ok"}],
                "usage": usage,
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
            }
        },
    ]
    path = folder / f"2026-11-10T08-00-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.browser
def test_sorting_by_last_activity_orders_sessions_of_one_second_as_the_server_does(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The rows' sort keys were whole seconds: sessions last active at 39.315, 39.313 and
    39.294 tied, and clicking Cost then Last activity left them in cost order, unlike the
    newest-first order the page is served in."""
    root = tmp_path / "sessions"
    sessions = [("alpha", "39.315", 0.01), ("bravo", "39.313", 0.03), ("charlie", "39.294", 0.02)]
    for n, (prompt, second, cost) in enumerate(sessions, start=1):
        sid = f"c0000000-0000-4000-8000-00000000000{n}"
        timed_session(root, sid, prompt, f"2026-11-10T09:00:{second}Z", cost)
    site, base = served
    build(root, site)
    manifest = json.loads((site / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert len(manifest["sessions"]) == 3
    page.goto(f"{base}/index.html")
    titles = "#session-table tbody tr td.title > a"
    newest_first = ["alpha", "bravo", "charlie"]
    expect(page.locator(titles)).to_have_text(newest_first)  # as served
    page.click("#session-table thead th:nth-child(8) button")  # Cost, most first
    expect(page.locator(titles)).to_have_text(["bravo", "charlie", "alpha"])
    page.click("#session-table thead th:nth-child(1) button")  # Last activity, newest first
    expect(page.locator(titles)).to_have_text(newest_first)
    page.click("#session-table thead th:nth-child(1) button")  # and oldest first
    expect(page.locator(titles)).to_have_text(newest_first[::-1])


def test_publish_takes_a_session_whose_named_beside_sub_agent_changed_for_changed(
    tmp_path: Path,
) -> None:
    """The same gap in `publish`: a session's digest (what says it must be sent again) was
    its file's alone when its 2.0 sub-agent, beside the file, changed. An agent of another
    session in the folder, which this session does not name, still leaves it as it was."""
    from exporter.claude_code import session_digest

    folder = tmp_path / "sessions" / "-w"
    session = sub_agent_session(folder, beside=True)
    other = folder / "agent-ffff000.jsonl"
    other.write_text(_sidechain_line("another session's agent"), encoding="utf-8")
    file_digest = "0" * 64
    before = session_digest(session, file_digest)
    other.write_text(_sidechain_line("another session's agent, changed"), encoding="utf-8")
    assert session_digest(session, file_digest) == before
    agent = folder / "agent-a1b2c3d.jsonl"
    edited = agent.read_text(encoding="utf-8").replace("Two files.", "Two files, edited.")
    agent.write_text(edited, encoding="utf-8")
    assert session_digest(session, file_digest) != before
