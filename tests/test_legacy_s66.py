"""Stop 66, legacy files: a v1 file's compaction that keeps context from an array line (Pi
gives every JSON value of a v1 file an id and a place in the chain; we show the array as
damaged), and search calling a v2 ``hookMessage`` extension state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from tests.test_differential_pi import roles_in_context

COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": COST}


def _said(role: str, text: str, second: int) -> dict:
    message = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 0}
    if role == "assistant":
        message |= {"provider": "p", "model": "m", "api": "x", "stopReason": "stop"}
        message["usage"] = USAGE
    return {"type": "message", "timestamp": f"2025-12-08T10:00:{second:02d}Z", "message": message}


def _v1_with_array(tmp_path: Path, kept_from: int) -> Path:
    """Header, q1, a1, ``[1]``, q2, a2, a compaction keeping from index ``kept_from``
    (the header is 0, the array 3), q3."""
    lines = [
        {"type": "session", "id": "arr", "timestamp": "2025-12-08T10:00:00Z", "cwd": "/p"},
        _said("user", "q1", 1),
        _said("assistant", "a1", 2),
        [1],
        _said("user", "q2", 3),
        _said("assistant", "a2", 4),
        {"type": "compaction", "timestamp": "2025-12-08T10:00:05Z", "summary": "S",
         "firstKeptEntryIndex": kept_from, "tokensBefore": 9},
        _said("user", "q3", 6),
    ]  # fmt: skip
    path = tmp_path / "v1-array.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


def _context_texts(path: Path) -> list[str]:
    session = load_session(path)
    dropped = session.context_status()
    return [e.text for e in session.active_entries() if e.type == "message" and e.id not in dropped]


def test_kept_from_an_array_line_keeps_what_follows_it(tmp_path: Path) -> None:
    """Pi sends q2 and a2 (kept from the array on); we sent q3 alone and marked q2 and a2
    "not in the model's context"."""
    path = _v1_with_array(tmp_path, 3)
    before = path.read_bytes()
    session = load_session(path)
    assert roles_in_context(session) == ["compactionSummary", "user", "assistant", "user"]
    assert _context_texts(path) == ["q2", "a2", "q3"]
    assert [d.kind for d in session.damaged] == ["not-an-object"]  # still shown as damaged
    assert path.read_bytes() == before


AROUND = [(2, ["a1", "q2", "a2", "q3"]), (4, ["q2", "a2", "q3"]), (5, ["a2", "q3"])]


@pytest.mark.parametrize(("kept_from", "kept"), AROUND)
def test_the_entries_around_the_array_keep_their_own_indices(
    tmp_path: Path, kept_from: int, kept: list[str]
) -> None:
    assert _context_texts(_v1_with_array(tmp_path, kept_from)) == kept


def test_search_says_an_extension_message_is_one(tmp_path: Path) -> None:
    """A message of role ``custom`` (a v2 ``hookMessage`` after Pi's migration) was listed
    as "extension state", the ``custom`` entry that never reaches the model, and its
    ``--json`` kind was that entry's: the two could not be told apart."""
    lines = [
        {"type": "session", "version": 2, "id": "s", "timestamp": "2025-12-08T10:00:00Z",
         "cwd": "/p"},
        {"type": "custom", "id": "c1", "parentId": None, "timestamp": "2025-12-08T10:00:01Z",
         "customType": "x", "data": {"note": "needle state"}},
        {"type": "message", "id": "m1", "parentId": "c1", "timestamp": "2025-12-08T10:00:02Z",
         "message": {"role": "hookMessage", "customType": "x", "content": "needle hook",
                     "display": True, "timestamp": 0}},
    ]  # fmt: skip
    path = tmp_path / "v2.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    said = CliRunner().invoke(cli, ["search", "needle", str(path)])
    assert said.exit_code == 0, said.output
    rows = {line.split()[0]: line for line in said.stdout.splitlines() if "needle" in line}
    assert "extension state:" in rows["c1"] and "extension message:" in rows["m1"], rows
    as_json = CliRunner().invoke(cli, ["search", "needle", str(path), "--json"])
    kinds = {m["entry_id"]: m["kind"] for m in map(json.loads, as_json.stdout.splitlines())}
    assert kinds == {"c1": "custom", "m1": "custom_message"}
