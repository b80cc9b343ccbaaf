"""Stop 65: the default output name of a redacted export or share dry run kept a token
from the session file's name (`pi-session-debug-ghp_….html`), the token the page had just
had removed; `redact`'s own default copy name already follows the rule."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.share_env import isolated_share_env

TOKEN = "ghp_" + "R4nd0mT0k3nV4lu3F0rF1l3N4m3xyz12345a"  # a classic token's 36 characters


@pytest.fixture
def named_with_a_token(fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / f"debug-{TOKEN}.jsonl"
    shutil.copyfile(fixtures_dir / "every-entry-type.jsonl", path)
    return path


def _written(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".jsonl"))


@pytest.mark.parametrize("kind", [[], ["--format", "md"]])
def test_a_redacted_exports_default_name_holds_no_token(
    named_with_a_token: Path, kind: list[str]
) -> None:
    done = CliRunner().invoke(cli, ["export", str(named_with_a_token), "--redact", *kind])
    assert done.exit_code == 0, done.output
    (name,) = _written(named_with_a_token.parent)
    assert TOKEN not in name and name.startswith("pi-session-debug-REDACTED-github-token")
    assert TOKEN not in done.output


def test_an_unredacted_exports_default_name_stays_as_it_was(named_with_a_token: Path) -> None:
    done = CliRunner().invoke(cli, ["export", str(named_with_a_token)])
    assert done.exit_code == 0, done.output
    assert _written(named_with_a_token.parent) == [f"pi-session-debug-{TOKEN}.html"]


def test_a_share_dry_runs_files_hold_no_token_in_their_names(
    named_with_a_token: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_share_env(named_with_a_token.parent, "ghp_" + "T" * 36, monkeypatch)
    args = ["share", str(named_with_a_token), "--dry-run", "--with-markdown", "--with-jsonl"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    names = [n for n in _written(named_with_a_token.parent) if n.startswith("pi-session-share")]
    names += [p.name for p in named_with_a_token.parent.glob("pi-session-share-*.jsonl")]
    assert len(names) == 3 and not any(TOKEN in name for name in names), names
    assert TOKEN not in done.output
