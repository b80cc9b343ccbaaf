"""Regressions from review: outputs never overwrite the input; huge numbers never crash."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.render import render_session
from exporter.render.markup import MAX_HIGHLIGHT_CHARS, highlight_lines
from exporter.usage import compute_stats
from tests.conftest import FIXTURES_DIR

FIXTURE = FIXTURES_DIR / "pi-branched-1.jsonl"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "s.jsonl"
    shutil.copyfile(FIXTURE, target)
    return target


@pytest.mark.parametrize(
    "args",
    [
        ["export", "{s}", "-o", "{s}"],
        ["export", "{s}", "-o", "{o}", "--redact", "--report", "{s}"],
        ["redact", "{s}", "-o", "{s}"],
        ["redact", "{s}", "-o", "{o}", "--report", "{s}"],
        ["share", "{s}", "--dry-run", "--report", "{s}"],
    ],
)
def test_outputs_never_overwrite_the_input(copy: Path, args: list[str], tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = copy.read_bytes()
    out = tmp_path / "out.file"
    result = CliRunner().invoke(cli, [a.format(s=copy, o=out) for a in args])
    assert result.exit_code == 1, result.output
    assert "refusing to overwrite the input session" in result.output
    assert copy.read_bytes() == before
    assert not out.exists()  # refused before anything was written


def _with_huge_numbers(source: Path, target: Path) -> Path:
    lines = source.read_text(encoding="utf-8").split("\n")
    for index, line in enumerate(lines):
        if '"role":"assistant"' in line:
            record = json.loads(line)
            usage = record["message"]["usage"]
            usage["input"] = 10**400  # an int JSON number beyond float range
            lines[index] = json.dumps(record).replace('"total": ', '"total": 1e400, "x": ', 1)
            break
    target.write_text("\n".join(lines), encoding="utf-8")
    return target


def test_numbers_beyond_float_range_count_as_zero(copy: Path, tmp_path: Path) -> None:
    huge = _with_huge_numbers(copy, tmp_path / "huge.jsonl")
    session = load_session(huge)
    stats = compute_stats(session)
    assert stats.all.cost < 1e6 and stats.all.input < 1e12
    assert "data-entry-id" in render_session(session)
    project = tmp_path / "sessions" / "--tmp-project--"
    project.mkdir(parents=True)
    shutil.copyfile(huge, project / "huge.jsonl")
    listing = ["list", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions")]
    for command in (["stats", str(huge), "--json"], listing):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, result.output
        assert "Infinity" not in result.output and "Traceback" not in result.output
        assert '"cost"' in result.output


def test_highlighting_the_head_respects_the_size_limit() -> None:
    line = "x = 1; " * (MAX_HIGHLIGHT_CHARS // 5)
    lines = highlight_lines("\n".join([line] * 3), "python", first=2)
    assert "<span" not in "".join(lines)
