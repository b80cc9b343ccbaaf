"""Stop 57: what a mutation fuzzer found (12,359 damaged files, ~122,000 command runs): a
Claude Code edit whose hunk's ``lines`` is no list crashed every command, a Claude Code
line repeating an earlier uuid with other text was dropped, and a session id holding a lone
surrogate stopped a whole publish."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli
from tests.browser_util import CLAUDE_CODE_PATH
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture
from tests.test_publish import hub_env, remote_json

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name

DATA = Path(__file__).parent / "data" / "fuzz_s57"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_patch_whose_lines_are_no_list_is_read(tmp_path: Path) -> None:
    """`"lines": 5` in a structuredPatch hunk: `TypeError: object of type 'int' has no
    len()` from stats, export, search and list (which then listed no session at all)."""
    source = DATA / "claude-patch-lines-not-a-list.jsonl"
    code, out, err = _run("stats", str(source))
    assert code == 0 and "Traceback" not in err and "1 tool result" in out, (out, err)
    code, _, err = _run("export", str(source), "-o", str(tmp_path / "p.html"))
    assert code == 0, err
    assert "updated" in (tmp_path / "p.html").read_text(encoding="utf-8")
    folder = tmp_path / "sessions" / "-tmp-p"
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / "22222222-2222-4222-8222-222222222222.jsonl")
    shutil.copyfile(CLAUDE_CODE_PATH, folder / CLAUDE_CODE_PATH.name)
    code, out, err = _run("list", "--all", "--sessions-dir", str(tmp_path / "sessions"), "--json")
    assert code == 0 and len(out.splitlines()) == 2, (out, err)  # both, not none


def test_a_repeated_uuid_on_a_line_that_differs_is_kept(tmp_path: Path) -> None:
    """A copy of an earlier line (a resumed session's) is shown once; a line that only
    shares its uuid was dropped without a word (BRAVO was in no page, search or count)."""
    source = DATA / "claude-uuid-repeated-other-text.jsonl"
    code, out, err = _run("export", str(source), "-o", str(tmp_path / "p.html"))
    assert code == 0, err
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "first question ALPHA" in page and "BRAVO" in page
    assert "line 3: the uuid u1 of line 1 again, on a line that differs: kept as u1~2" in err
    code, out, _ = _run("search", "BRAVO", str(source))
    assert code == 0 and "BRAVO" in out
    # an exact copy is still one entry
    copy = tmp_path / "copied.jsonl"
    lines = CLAUDE_CODE_PATH.read_text(encoding="utf-8").splitlines()
    copy.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    before = _run("stats", str(CLAUDE_CODE_PATH))[1].splitlines()[5]
    code, out, err = _run("stats", str(copy))
    assert code == 0 and out.splitlines()[5] == before and "duplicate-id" not in err


def test_a_session_id_with_a_lone_surrogate_is_published(fake_hub: FakeHub, tmp_path: Path) -> None:
    """`'utf-8' codec can't encode character '\\ud800'` (the id's HMAC) stopped the run,
    and every other session of it with it."""
    folder = tmp_path / "sessions" / "-tmp-p"
    folder.mkdir(parents=True)
    shutil.copyfile(DATA / "surrogate-id.jsonl", folder / "2025-06-01_odd.jsonl")
    result = CliRunner().invoke(
        cli,
        ["publish", "alice/sessions", "--all", "--sessions-dir", str(tmp_path / "sessions"),
         "--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert len(remote_json(fake_hub, "manifest.json")["sessions"]) == 1


def test_a_prompt_of_very_many_lines_is_shown_plain_and_whole(tmp_path: Path) -> None:
    """A pasted million-line prompt (2 MB) took 21 s and 640 MB to export: markdown-it
    over every line. Past 50,000 lines it is shown as plain text, folded, nothing left out."""
    import json

    from exporter.loader import load_session
    from exporter.render import render_session
    from exporter.render.markup import MAX_MARKDOWN_LINES

    text = "".join(f"row {n} of the log\n" for n in range(MAX_MARKDOWN_LINES + 10))
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/w"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "user", "content": text, "timestamp": 0}},
    ]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    page = render_session(load_session(path))
    assert f"More than {MAX_MARKDOWN_LINES:,} lines: shown as plain text" in page
    assert f"row {MAX_MARKDOWN_LINES + 9} of the log" in page and "row 0 of the log" in page
