"""Stop 61 (helper hunt: the CLI): a project folder that cannot be read made `stats` and
`export` without SESSION say "no sessions", and an id in it "no session … matches", where
`list` and `search` said the folder could not be read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from tests.conftest import Build, dump_lines


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pi's sessions folder whose one project folder refuses to be read (as another user's
    would: root reads every folder, so the refusal is the kernel's words, put in place)."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)  # the project the commands look in without SESSION
    root = tmp_path / "sessions"
    folder = root / encode_cwd(str(project))
    folder.mkdir(parents=True)
    lines = [Build.header(session_id="01a229f4-9ff2", cwd=str(project)), Build.user("u", None)]
    (folder / "2025-01-01T00-00-00-000Z_01a229f4-9ff2.jsonl").write_bytes(dump_lines(lines))
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return folder


@pytest.mark.parametrize(
    "args", [["stats"], ["stats", "01a229f4"], ["export", "01a229f4-9ff2", "-o", "-"]]
)
def test_a_session_looked_for_in_an_unreadable_folder_says_so(locked: Path, args: list[str]):
    result = CliRunner().invoke(cli, [*args, "--sessions-dir", str(locked.parent)])
    assert result.exit_code == 2, result.output
    assert f"cannot read {locked}: Permission denied" in result.stderr, result.stderr
