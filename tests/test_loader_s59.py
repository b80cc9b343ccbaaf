"""Stop 59 (helper hunt: v1/v2 files against Pi's own migration): a header's odd ``version``
(``"2"``, ``true``, ``0``) was read as v3 where Pi compares it as a JavaScript number and
migrates; a v1 object without a ``type`` was dropped where Pi keeps it in the chain (and a
compaction's kept span starts there); a headerless v1 file with its header further down
fell apart into one root per entry."""

from __future__ import annotations

from typing import Any

import pytest

from exporter.discover import scan_summary
from exporter.loader import parse_session_bytes
from tests.conftest import Build, dump_lines


def _hook_tree(version: Any) -> list[dict[str, Any]]:
    """u1 -> hookMessage -> a1, and u1 -> u2 -> a2: a tree with a v2 role."""
    hook = Build.entry("message", "h1", "u1", 2,
                       message={"role": "hookMessage", "customType": "ext", "content": "x",
                                "display": True, "timestamp": 2})  # fmt: skip
    return [
        Build.header(version=version),
        Build.user("u1", None),
        hook,
        Build.assistant("a1", "h1", second=3),
        Build.user("u2", "u1", "again", second=4),
        Build.assistant("a2", "u2", second=5),
    ]


@pytest.mark.parametrize(
    ("version", "read_as"),
    [("2", 2), (2.0, 2), (2.5, 2), ([2], 2),  # v2 -> v3: the role is renamed, the tree stays
     ("1", 1), (0, 1), (True, 1), (False, 1), ("", 1), (-1, 1), (1.5, 1),  # v1: one chain
     ("3", 3), ({}, 3), ("x", 3), ("+", 3), (3.5, 3)],  # no number, or 3: as it is
)  # fmt: skip
def test_an_odd_version_is_read_as_pi_reads_it(version: Any, read_as: int) -> None:
    session = parse_session_bytes(dump_lines(_hook_tree(version)))
    assert session.version == read_as
    kinds = {d.kind for d in session.diagnostics}
    assert "bad-version" in kinds
    roles = [e.raw["message"]["role"] for e in session.entries]
    assert roles[1] == ("hookMessage" if read_as == 3 else "custom")
    if read_as == 1:  # Pi's v1 migration: ids replaced by one chain, and said so
        assert len(session.branches()) == 1 and session.entries[0].id.startswith("L")
        assert "versionless-tree" in kinds
    else:
        assert len(session.branches()) == 2 and session.entries[0].id == "u1"
        assert "versionless-tree" not in kinds


def test_plain_versions_say_nothing_new() -> None:
    for version, read_as in ((1, 1), (2, 2), (3, 3)):
        lines = _hook_tree(version)
        if version == 1:  # a v1 file has no ids
            lines = [lines[0]] + [{k: v for k, v in e.items() if k not in ("id", "parentId")}
                                  for e in lines[1:]]  # fmt: skip
        session = parse_session_bytes(dump_lines(lines))
        assert session.version == read_as and not session.diagnostics, session.diagnostics


def test_a_v1_object_without_a_type_keeps_its_place_in_the_chain() -> None:
    lines = [
        Build.header(version=None),
        Build.user(None, None, "first"),
        {"note": "a line some tool wrote"},  # index 2 (the header is 0)
        Build.assistant(None, None, "kept reply", second=3),
        Build.entry(
            "compaction", None, None, 4, summary="sum", firstKeptEntryIndex=2, tokensBefore=100
        ),
        Build.user(None, None, "after", second=5),
    ]
    session = parse_session_bytes(dump_lines(lines))
    assert [e.id for e in session.entries] == ["L2", "L3", "L4", "L5", "L6"]
    assert session.active_path == ["L2", "L3", "L4", "L5", "L6"]
    compaction = session.entries[3]
    assert compaction.raw["firstKeptEntryId"] == "L3"
    assert not session.damaged
    assert [d.kind for d in session.diagnostics] == ["no-type"]


def test_a_v1_file_whose_header_came_second_is_one_chain() -> None:
    body = [Build.user(None, None, f"u{n}", second=n) for n in range(2, 6)]
    lines = [Build.user(None, None, "stray", second=1), Build.header(version=None), *body]
    session = parse_session_bytes(dump_lines(lines))
    assert session.version == 1
    assert len(session.branches()) == 1 and len(session.entries) == 5
    assert {d.kind for d in session.diagnostics} <= {"missing-header", "extra-header"}


def test_list_counts_a_typeless_v1_object_as_the_loader_does(tmp_path) -> None:
    lines = [Build.header(version=None), Build.user(None, None), {"note": "x"},
             Build.user(None, None, "b", second=3)]  # fmt: skip
    path = tmp_path / "v1.jsonl"
    path.write_bytes(dump_lines(lines))
    assert scan_summary(path).entries == len(parse_session_bytes(path.read_bytes()).entries) == 3
