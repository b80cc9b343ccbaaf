"""`pi-session stats` cuts text between whole characters; `stats --all` keeps turns small (s68).

1. A title, first prompt or name cut to its room was cut by code point: an emoji sequence
   (a person with a skin tone, a zero width joiner's family, a flag) or a letter with a
   combining accent was split before the ellipsis, leaving a broken glyph.
2. `stats --all` kept every file's turn keys (tuples of entry ids, time stamps and usage,
   ~1 KB a turn) for the whole run, as every file is read before any is counted: ~350 MB
   over 4,000 sessions. Each turn is kept as digests of its keys now, counting the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.formatting import display_width, fit_columns, one_line, plain_line, short_path
from exporter.usage_report import session_usage
from tests.graphemes import CLUSTERS

_GLUE = {"\u200d", *map(chr, range(0x1F3FB, 0x1F400))}
_FLAG_LETTERS = "".join(map(chr, range(0x1F1E6, 0x1F200)))


def _assert_cut_whole(original: str, shown: str) -> None:
    """``shown`` is ``original`` cut before an ellipsis, between two whole characters: what
    follows the cut joins nothing kept, and the flag letters kept come in pairs."""
    assert shown.endswith("…"), shown
    kept = shown[:-1]
    assert original.startswith(kept), (original, shown)
    after = original[len(kept)]
    assert not unicodedata.category(after).startswith("M"), f"a mark cut off: {shown!r}"
    assert after not in _GLUE and not kept.endswith("\u200d"), f"a sequence cut: {shown!r}"
    flag_letters = len(kept) - len(kept.rstrip(_FLAG_LETTERS))  # (the text starts with none)
    assert flag_letters % 2 == 0, f"a flag cut in half: {shown!r}"


def _session(path: Path, name: str, prompt: str) -> Path:
    """A session named ``name`` whose one branch starts with ``prompt``."""
    when = "2025-06-01T10:00:00.000Z"
    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15}
    usage["cost"] = {"input": 0.01, "output": 0.01, "cacheRead": 0, "cacheWrite": 0, "total": 0.02}
    lines = [
        {"type": "session", "version": 3, "id": "s68-cut", "timestamp": when, "cwd": "/p"},
        {"type": "session_info", "id": "a1", "parentId": None, "timestamp": when, "name": name},
        {
            "type": "message",
            "id": "a2",
            "parentId": "a1",
            "timestamp": when,
            "message": {"role": "user", "content": prompt, "timestamp": 1748772000000},
        },
        {
            "type": "message",
            "id": "a3",
            "parentId": "a2",
            "timestamp": when,
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "done"}],
                "provider": "anthropic",
                "model": "claude-x",
                "usage": usage,
                "stopReason": "stop",
                "timestamp": 1748772001000,
            },
        },
    ]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("cluster", CLUSTERS.values(), ids=CLUSTERS.keys())
def test_stats_cuts_its_title_and_first_prompts_between_whole_characters(
    tmp_path: Path, cluster: str
) -> None:
    """Each offset puts the cut somewhere else in the sequences: never inside one."""
    for pad in range(1, 10):
        name, prompt = "Z" * pad + cluster * 120, "Q" * pad + cluster * 60
        path = _session(tmp_path / f"s{pad}.jsonl", name, prompt)
        result = CliRunner().invoke(cli, ["stats", str(path)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        title = lines[0]
        _assert_cut_whole(name, title)
        assert display_width(title) <= 100  # (the title's room, as wide as before)
        first_prompt = next(line for line in lines if "Q" in line)
        _assert_cut_whole(prompt, first_prompt[first_prompt.index("Q") :].rstrip())


@pytest.mark.parametrize("cluster", CLUSTERS.values(), ids=CLUSTERS.keys())
def test_every_cut_keeps_whole_characters(cluster: str) -> None:
    """The cuts other commands share (`list`'s titles, the page's previews, paths)."""
    for pad in range(1, 10):
        text = "a" * pad + cluster * 30
        for limit in range(4, 20):
            _assert_cut_whole(text, one_line(text, limit))
            _assert_cut_whole(text, plain_line(text, limit))
            _assert_cut_whole(text, fit_columns(text, limit))
            assert display_width(fit_columns(text, limit)) <= limit
        path = f"/home/dev/{'d' * pad}{cluster * 20}/notes/{'n' * pad}{cluster * 20}.md"
        shown = short_path(path, 40)
        head, tail = shown.split("…")
        _assert_cut_whole(path, head + "…")
        start = path.index(tail, len(head))
        assert start + len(tail) == len(path)
        before = path[start - 1]
        assert not unicodedata.category(path[start]).startswith("M")
        assert path[start] not in _GLUE and before != "\u200d", shown


def test_ordinary_text_is_cut_as_before() -> None:
    """(The values 0.2.51 gave.)"""
    text = "Refactor the session loader; then the page: " + "word " * 30
    assert one_line(text, 20) == "Refactor the sessio…"
    assert one_line(text, 45) == "Refactor the session loader; then the page…"
    assert fit_columns("漢字" * 40, 11) == "漢字漢字漢…"
    assert fit_columns("café au lait " * 9, 12) == "café au lai…"
    assert plain_line("**Fix** the `auth` [bug](u) " + "x" * 90, 20) == "Fix the auth bug xx…"
    path = "/home/alice/work/pi-mono/packages/coding-agent/src/core/session-manager.ts"
    assert short_path(path, 50) == "/home/alice/…/src/core/session-manager.ts"
    assert short_path(path, 30) == "/home/…/session-manager.ts"
    assert short_path("/tmp/" + "a" * 80, 30) == "/tmp/…" + "a" * 24


# (2) what `stats --all` keeps of each turn, and what it counts


def _strings_and_size(rows: list[Any]) -> tuple[set[str], int]:
    """The strings reachable from ``rows``, and the bytes of all that is (each object once)."""
    seen: set[int] = set()
    strings: set[str] = set()
    size = 0
    stack: list[Any] = [rows]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        size += sys.getsizeof(value)
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, (tuple, list)):
            stack.extend(value)
    return strings, size


def test_stats_all_keeps_a_turn_as_digests_not_its_ids_and_times(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """What a file's reading hands the report to hold until it is counted: no entry ids or
    time stamps (the keys' digests), a few hundred bytes a turn."""
    source = tmp_path / "pi-branched-4.jsonl"
    shutil.copyfile(fixtures_dir / "pi-branched-4.jsonl", source)
    lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    ids_and_times = {line.get(key) for line in lines for key in ("id", "timestamp")}
    rows = session_usage(source)["rows"]
    assert len(rows) > 500
    strings, size = _strings_and_size(rows)
    kept = sorted(strings & {str(value) for value in ids_and_times})
    assert not kept, f"{len(kept)} entry ids and time stamps kept: {kept[:3]}"
    assert size / len(rows) < 400, f"{size / len(rows):.0f} bytes a turn"


def _corpus(root: Path, fixtures_dir: Path) -> Path:
    """Sessions of two projects: the fixtures, a backup copy, a copy taken before its
    session grew, and a fork in the other project (its parent's turns copied)."""
    sessions = root / "sessions"
    webapp = sessions / "--home-dev-projects-webapp--"
    other = sessions / "--home-dev-other--"
    for folder in (webapp, other, sessions / "backup"):
        folder.mkdir(parents=True)
    for fixture in sorted(fixtures_dir.glob("*.jsonl")):
        shutil.copyfile(fixture, webapp / fixture.name)
    shutil.copyfile(fixtures_dir / "pi-branched-1.jsonl", sessions / "backup" / "b1.jsonl")
    lines = (fixtures_dir / "pi-branched-2.jsonl").read_text(encoding="utf-8").splitlines()
    early = "".join(line + "\n" for line in lines[: len(lines) * 3 // 5])
    (sessions / "backup" / "b2-early.jsonl").write_text(early, encoding="utf-8")
    parent = webapp / "pi-branched-3.jsonl"
    lines = parent.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header |= {"id": "01a24c8e-0000-7000-8000-000000000068", "cwd": "/home/dev/other"}
    header |= {"timestamp": "2026-12-01T00:00:00.000Z", "parentSession": str(parent)}
    answer = json.loads(next(line for line in reversed(lines) if '"role":"assistant"' in line))
    answer |= {"id": "f0ad0068", "parentId": json.loads(lines[-1])["id"]}
    answer |= {"timestamp": "2026-12-01T00:01:00.000Z"}  # (and one answer of its own)
    fork = [json.dumps(header), *lines[1:], json.dumps(answer)]
    (other / "fork.jsonl").write_text("".join(line + "\n" for line in fork), encoding="utf-8")
    return sessions


def _stats(sessions: Path, *args: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "exporter", "stats", "--json", "--sessions-dir"]
    env = {**os.environ, "TZ": "UTC", "PYTHONUTF8": "1"}
    done = subprocess.run(
        [*command, str(sessions), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _summary(document: dict[str, Any]) -> dict[str, Any]:
    """What the document counts (the numbers 0.2.51 gave, before turns were digests)."""
    tables = ("by_model", "by_project", "by_day")
    return {
        "counts": [
            document[key]
            for key in (
                "sessions_read",
                "sessions_with_turns",
                "copies",
                "repeated_turns",
                "turns_counted_elsewhere",
            )
        ],
        "total": [document["total"][key] for key in ("turns", "total_tokens", "cost")],
        **{
            table: [[*list(row.values())[:3], row["cost"]] for row in document[table]]
            for table in tables
        },
    }


def test_stats_all_and_cwd_count_what_they_counted_before(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    sessions = _corpus(tmp_path, fixtures_dir)
    everything = _summary(_stats(sessions, "--all", "--jobs", "2"))
    assert everything == EXPECTED_ALL
    assert _summary(_stats(sessions, "--all", "--jobs", "1")) == EXPECTED_ALL
    assert _summary(_stats(sessions, "--cwd", "/home/dev/other")) == EXPECTED_OTHER


#: What 0.2.51 (turn keys as tuples) counted of :func:`_corpus`, days in UTC.
EXPECTED_ALL: dict[str, Any] = {
    "counts": [10, 9, 1, 334, 0],
    "total": [2000, 227403486, 160.1748031],
    "by_model": [
        ["anthropic/claude-opus-4-5", 2, 1142, 93.8703705],
        ["anthropic/claude-sonnet-4-5", 6, 853, 66.1684326],
        ["anthropic/claude-x", 1, 3, 0.102],
        ["anthropic/gpt-5", 1, 1, 0.034],
        ["openai/gpt-5.1-codex", 1, 1, 0.0],
    ],
    "by_project": [
        ["/home/dev/projects/webapp", 5, 1058, 87.06839825],
        ["/Users/badlogic/workspaces/pi-mono", 2, 937, 72.9261052],
        ["/home/alice/proj", 1, 4, 0.136],
        ["/home/dev/other", 1, 1, 0.04429965],
    ],
    "by_day": [
        ["2025-06-01", 1, 4, 0.136],
        ["2025-11-20", 1, 30, 0.863538],
        ["2025-11-21", 1, 423, 29.4666597],
        ["2025-12-08", 1, 317, 26.27737225],
        ["2025-12-09", 1, 167, 16.31853525],
        ["2026-11-30", 5, 1058, 87.06839825],
        ["2026-12-01", 1, 1, 0.04429965],
    ],
}
EXPECTED_OTHER: dict[str, Any] = {
    "counts": [1, 1, 0, 0, 148],
    "total": [1, 140301, 0.04429965],
    "by_model": [["anthropic/claude-sonnet-4-5", 1, 1, 0.04429965]],
    "by_project": [["/home/dev/other", 1, 1, 0.04429965]],
    "by_day": [["2026-12-01", 1, 1, 0.04429965]],
}
