"""`list` and `--pick` remember other agents' summaries (exporter/summary_cache.py): a
Codex or Claude Code transcript is read whole to be listed, so a second listing reads it
again only when it changed."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import exporter.discover as discover
from exporter.cli import cli
from tests.browser_util import CLAUDE_CODE_PATH, CODEX_PATH


@pytest.fixture
def codex_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two agents' transcripts in a Codex day folder, and a cache folder of this test's."""
    monkeypatch.delenv("PI_SESSION_NO_LIST_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    day = tmp_path / "sessions" / "2025" / "12" / "28"
    day.mkdir(parents=True)
    shutil.copyfile(CODEX_PATH, day / CODEX_PATH.name)
    return tmp_path / "sessions"


def listing(folder: Path, loads: list[Path]) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["list", "--all", "--json", "--sessions-dir", str(folder)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the loader read to list them."""
    seen: list[Path] = []
    real = discover._load_converted_summary

    def counted(path: Path) -> Any:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(discover, "_load_converted_summary", counted)
    return seen


def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "pi-session-export" / "summaries" / "converted.json"


def test_a_second_listing_reads_nothing_again(codex_folder: Path, tmp_path: Path, loads) -> None:
    first = listing(codex_folder, loads)
    assert len(loads) == 1 and first[0]["first_prompt"] and first[0]["tokens"]["total_tokens"]
    second = listing(codex_folder, loads)
    assert len(loads) == 1 and second == first  # the same rows, from the cache
    cache = cache_file(tmp_path)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600  # it holds first prompts
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700


def test_a_deleted_transcript_s_prompts_leave_the_cache(
    codex_folder: Path, tmp_path: Path, loads
) -> None:
    """The cache kept a deleted transcript's title and first prompt for good (20,000 rows
    before the oldest went): the next listing, of any folder, forgets it."""
    first = listing(codex_folder, loads)
    prompt = first[0]["first_prompt"]
    cache = cache_file(tmp_path)

    def prompts() -> list[str]:
        rows = json.loads(cache.read_text(encoding="utf-8"))["rows"].values()
        return [row["fields"]["first_prompt"] for row in rows]

    assert prompts() == [prompt]
    next(codex_folder.rglob("rollout-*.jsonl")).unlink()
    other = tmp_path / "elsewhere"
    other.mkdir()
    listing(other, loads)  # nothing there to list: the cache is still looked through
    assert prompts() == []


def test_a_changed_file_is_read_again(codex_folder: Path, loads) -> None:
    first = listing(codex_folder, loads)
    rollout = next(codex_folder.rglob("rollout-*.jsonl"))
    line = {
        "timestamp": "2025-12-28T14:00:00.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "one more thing"}],
        },
    }
    with open(rollout, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    second = listing(codex_folder, loads)
    assert len(loads) == 2 and second[0]["messages"] == first[0]["messages"] + 1


@pytest.mark.parametrize(
    "damage",
    [
        b"not json",
        b'{"tool": "0.0.1", "rows": {}}',  # another version's
        None,  # a row of the wrong types: a count as a string
    ],
)
def test_a_damaged_cache_is_made_again(
    codex_folder: Path, tmp_path: Path, loads, damage: bytes | None
) -> None:
    first = listing(codex_folder, loads)
    cache = cache_file(tmp_path)
    if damage is None:
        document = json.loads(cache.read_bytes())
        (row,) = document["rows"].values()
        row["fields"]["messages"] = "many"
        damage = json.dumps(document).encode()
    cache.write_bytes(damage)
    assert listing(codex_folder, loads) == first and len(loads) == 2
    assert json.loads(cache.read_bytes())["rows"]  # written again, whole


def test_claude_code_files_are_remembered_too_and_the_cache_can_be_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "projects" / "-home-dev-proj"
    project.mkdir(parents=True)
    shutil.copyfile(CLAUDE_CODE_PATH, project / CLAUDE_CODE_PATH.name)
    listing(tmp_path / "projects", loads)
    listing(tmp_path / "projects", loads)
    assert len(loads) == 2 and not cache_file(tmp_path).exists()  # off (conftest sets it)
    monkeypatch.delenv("PI_SESSION_NO_LIST_CACHE")
    listing(tmp_path / "projects", loads)
    listing(tmp_path / "projects", loads)
    assert len(loads) == 3 and cache_file(tmp_path).exists()


def test_a_cache_folder_others_may_write_in_is_not_used(
    codex_folder: Path, tmp_path: Path, loads
) -> None:
    folder = cache_file(tmp_path).parent
    folder.mkdir(parents=True)
    os.chmod(folder, 0o777)
    listing(codex_folder, loads)
    listing(codex_folder, loads)
    assert len(loads) == 2 and not cache_file(tmp_path).exists()
