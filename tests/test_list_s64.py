"""Stop 64 (hunt: list and stats): a CJK title was cut at 48 characters, 96 terminal
columns, so `list`'s rows and `stats`' one-line title overflowed the terminal; `list --json`
left U+2028 raw, which line-splitting readers (Python's ``splitlines``) split inside a
string; `--pick` in a project showed an empty project column; a zero-width space or joiner
counted as a column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.formatting import display_width, one_line
from tests.conftest import Build, dump_lines

CJK_TITLE = "汉字" * 60


def _session(root: Path, project: Path, sid: str, prompt: str) -> Path:
    folder = root / encode_cwd(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl"
    header = Build.header(session_id=sid, cwd=str(project))
    path.write_bytes(dump_lines([header, Build.user("u", None, prompt)]))
    return path


def _run(*args: str, answer: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=answer, catch_exceptions=False)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A sessions folder with a CJK-titled and a plain session of one project (the cwd)."""
    project, root = tmp_path / "proj", tmp_path / "sessions"
    project.mkdir()
    _session(root, project, "s1", CJK_TITLE)
    _session(root, project, "s2", "a plain title")
    monkeypatch.chdir(project)
    return root, project


def test_list_cuts_a_wide_title_to_its_columns(folder: tuple[Path, Path]) -> None:
    root, _ = folder
    lines = _run("list", "--sessions-dir", str(root)).stdout.splitlines()
    cjk_row = next(line for line in lines if "汉字" in line)
    plain_row = next(line for line in lines if "a plain title" in line)
    title = max(cjk_row.split("  "), key=lambda cell: cell.count("汉"))
    assert title.strip().endswith("…") and display_width(title.strip()) <= 48, title
    # the rows line up as they did for a plain folder (197 columns against 124 before)
    assert display_width(cjk_row.rstrip()) <= display_width(plain_row.rstrip()) + 2, lines


def test_stats_title_stays_one_terminal_line(folder: tuple[Path, Path]) -> None:
    root, project = folder
    path = next((root / encode_cwd(str(project))).glob("*_s1.jsonl"))
    out = _run("stats", str(path)).stdout
    title_line = next(line for line in out.splitlines() if "汉字" in line)
    assert display_width(title_line) <= 120, (display_width(title_line), title_line)


def test_pick_in_a_project_has_no_empty_project_column(folder: tuple[Path, Path]) -> None:
    root, _ = folder
    result = _run("stats", "--pick", "--sessions-dir", str(root), "--json", answer="1\n")
    assert result.exit_code == 0, result.stderr
    assert "project" not in result.stderr.split("\n", 2)[1], result.stderr


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_list_json_is_one_object_per_line_for_any_line_splitter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, separator: str
) -> None:
    project, root = tmp_path / "proj", tmp_path / "sessions"
    project.mkdir()
    _session(root, project, "s1", f"first{separator}second")
    monkeypatch.chdir(project)
    out = _run("list", "--sessions-dir", str(root), "--json").stdout
    lines = out.splitlines()  # splits at U+2028 and U+2029 too
    assert len(lines) == 1, lines
    assert separator in json.dumps(json.loads(lines[0]), ensure_ascii=False)  # the same value


@pytest.mark.parametrize(
    ("text", "columns"),
    [("\u200b", 0), ("a\u200db", 2), ("e\u0301", 1), ("汉", 2), ("\u2764\ufe0f", 2)],
)
def test_zero_width_characters_take_no_column(text: str, columns: int) -> None:
    assert display_width(text) == columns


def test_fit_columns_is_one_line_for_ascii_and_fits_wide_text() -> None:
    from exporter.formatting import fit_columns  # (new in 0.2.47)

    for text in ("a" * 200, "hello world. this is it", "short"):
        for columns in (5, 10, 48):
            assert fit_columns(text, columns) == one_line(text, columns)
    cut = fit_columns(CJK_TITLE, 48)
    assert cut.endswith("…") and 46 <= display_width(cut) <= 48
