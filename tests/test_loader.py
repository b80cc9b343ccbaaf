"""The loader: real fixtures, JSONL parsing rules, diagnostics, legacy migration, read-only.

Expected counts come from the fixtures README and from Pi 0.73.1's own SessionManager
(``tests/node/pi_reference.mjs``); the differential test re-checks them against Pi live.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections import Counter
from pathlib import Path

import pytest
from conftest import PI_ENTRY_TYPES

from exporter.discover import scan_summary
from exporter.entries import (
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    UnknownEntry,
)
from exporter.jsonl_out import dumps_line, session_to_jsonl
from exporter.loader import SessionFormatError, load_session, parse_session_bytes
from exporter.render import render_session
from exporter.session import Session

# name -> (version, entries, messages, leaf id, leaves, labels, name, entry types that must match)
EXPECTED = {
    "every-entry-type.jsonl": (
        3, 25, 16, "e25", 2, 1, "Sampler session",
        {"compaction": 1, "custom_message": 2, "custom": 1, "branch_summary": 1, "label": 1},
    ),
    "pi-branched-1.jsonl": (
        3, 212, 190, "8e17e3cc", 7, 9, None, {"branch_summary": 3, "compaction": 1, "label": 9},
    ),
    "pi-branched-2.jsonl": (
        3, 343, 315, "2ed5a06c", 7, 7, "Refactor auth module",
        {"custom_message": 3, "session_info": 1, "compaction": 1},
    ),
    "pi-branched-3.jsonl": (
        3, 318, 296, "e48888e5", 5, 6, None, {"custom_message": 4, "branch_summary": 2},
    ),
    "pi-branched-4.jsonl": (
        3, 1435, 1348, "26b59b92", 6, 63, "会话树导出", {"custom": 3, "compaction": 1},
    ),
    "pi-large-session.jsonl": (
        1, 1018, 914, "L1019", 1, 0, None, {"thinking_level_change": 103, "model_change": 1},
    ),
    "pi-v1-before-compaction.jsonl": (
        1, 1002, 990, "L1003", 1, 0, None, {"compaction": 2, "model_change": 5},
    ),
}  # fmt: skip


def parse(data: bytes, **kwargs) -> Session:
    return parse_session_bytes(data, **kwargs)


def kinds(session: Session) -> list[str]:
    return [d.kind for d in session.diagnostics]


# --- real fixtures ------------------------------------------------------------------------


def test_every_fixture_is_covered(fixtures_dir: Path) -> None:
    assert sorted(p.name for p in fixtures_dir.glob("*.jsonl")) == sorted(EXPECTED)


def test_fixture_loads_with_expected_counts(pi_fixture: Path) -> None:
    version, entries, messages, leaf, leaves, labels, name, types = EXPECTED[pi_fixture.name]
    session = load_session(pi_fixture)
    assert session.version == version
    assert len(session.entries) == entries
    assert sum(1 for _ in session.iter_messages()) == messages
    assert session.leaf_id == leaf == session.entries[-1].id
    assert len(session.leaf_ids) == len(session.branches()) == leaves
    assert len(session.labels) == labels
    assert session.name == name
    counted = Counter(e.type for e in session.entries)
    assert {t: counted[t] for t in types} == types
    # Real files are clean: nothing damaged, no warnings, one root, ids unique.
    assert session.damaged == []
    assert [d for d in session.diagnostics if d.severity != "info"] == []
    assert len(session.roots) == 1
    assert len(session.by_id) == entries
    # Every non-blank line after the header is one entry, in file order.
    raw_lines = [n for n, line in enumerate(pi_fixture.read_bytes().split(b"\n"), 1) if line]
    assert [e.line for e in session.entries] == raw_lines[1:]
    assert session.header.line == raw_lines[0]


def test_fixture_roles_match_readme(fixtures_dir: Path) -> None:
    v1 = load_session(fixtures_dir / "pi-v1-before-compaction.jsonl")
    roles = Counter(m.role for m in v1.iter_messages())
    assert roles["bashExecution"] == 3
    sampler = load_session(fixtures_dir / "every-entry-type.jsonl")
    assert set(Counter(m.role for m in sampler.iter_messages())) == {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
    }
    assert sorted({e.type for e in sampler.entries}) == sorted(PI_ENTRY_TYPES)
    hidden = [e for e in sampler.entries if isinstance(e, CustomMessageEntry) and not e.display]
    assert [e.custom_type for e in hidden] == ["hidden-ext"]


def test_fixture_header_fields(fixtures_dir: Path) -> None:
    v1 = load_session(fixtures_dir / "pi-v1-before-compaction.jsonl")
    assert v1.id == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert v1.header.cwd == "/Users/badlogic/workspaces/pi-mono"
    # v1's branchedFrom is the old name of parentSession.
    assert v1.header.parent_session.endswith("d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl")
    assert v1.header.raw["thinkingLevel"] == "off"  # legacy fields survive verbatim


# --- parsing rules ----------------------------------------------------------------------------


def _small(build) -> list[dict]:
    return [
        build.header(),
        build.user("u1", None, "first 会话 🌙"),
        build.assistant("a1", "u1", "answer"),
        build.user("u2", "a1", "second"),
    ]


def _shape(session: Session) -> list[tuple[str, str | None, str]]:
    return [(e.id, session.parent_of(e.id), e.type) for e in session.entries]


def test_bom_crlf_and_blank_lines_load_like_plain(build, dump) -> None:
    lines = _small(build)
    plain = parse(dump(lines))
    assert kinds(plain) == []
    variants = {
        "bom": b"\xef\xbb\xbf" + dump(lines),
        "crlf": dump(lines, newline=b"\r\n"),
        "bom+crlf": b"\xef\xbb\xbf" + dump(lines, newline=b"\r\n"),
        "blank lines": b"\n  \n" + dump(lines).replace(b"\n", b"\n\n \t\n\r\n") + b"\n\n",
    }
    for name, data in variants.items():
        session = parse(data)
        assert _shape(session) == _shape(plain), name
        assert kinds(session) == [], name
        assert session.damaged == [], name
        assert session.id == "sess-0001", name
        # CR never leaks into the values.
        assert session.first_prompt() == "first 会话 🌙", name
    # Line numbers stay the real ones even with blank lines in between.
    spaced = parse(b"\n" + dump(lines).replace(b"\n", b"\n\n"))
    assert [e.line for e in spaced.entries] == [4, 6, 8]


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("two BOMs", "\ufeff\ufeff", ""),
        ("NBSP and vertical tab", "\u00a0\v", ""),
        ("ideographic space, newline", "\u3000\n", ""),
        ("NBSP after the last line", "", "\u00a0"),
        ("NBSP and newline after it", "", "\u00a0\n\u2028\n"),
    ],
)
def test_what_js_trim_takes_from_the_file_s_ends_is_not_damage(
    build, dump, name: str, before: str, after: str
) -> None:
    """Pi reads `content.trim()`: any BOMs or Unicode spaces before the header and after the
    last entry. A second BOM or an NBSP made up a header (id from the file name, project
    "unknown"); one after the last entry moved it to the damaged lines (review 2026-12-01)."""
    lines = _small(build)
    plain = parse(dump(lines))
    body = dump(lines).rstrip(b"\n")
    session = parse(before.encode() + body + after.encode())
    assert _shape(session) == _shape(plain), name
    assert session.damaged == [] and kinds(session) == [], name
    assert session.id == "sess-0001", name


def test_an_nbsp_after_an_inner_line_is_still_damage(build, dump) -> None:
    """Only the file's ends are trimmed: inside, JSON.parse refuses the line as Python does."""
    lines = _small(build)
    rows = dump(lines).split(b"\n")
    rows[1] += "\u00a0".encode()  # the first entry's line
    session = parse(b"\n".join(rows))
    assert [d.line for d in session.damaged] == [2]


def test_split_on_newline_only(build, dump) -> None:
    tricky = "a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg\x1dh\x1ei\rj"
    lines = [build.header(), build.user("u1", None, tricky), build.user("u2", "u1", "next")]
    data = dump(lines)
    assert len(data.decode("utf-8").splitlines()) > 3  # str.splitlines would break these lines
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert session.entries[0].text == tricky
    assert kinds(session) == []


@pytest.mark.parametrize("space", ["\x0b", "\x0c \t", "\u00a0\u3000", "\ufeff"])
def test_lines_js_trim_empties_are_blank(build, dump, space: str) -> None:
    """Pi skips a line when ``line.trim()`` is empty: \\v, \\f and Unicode spaces count."""
    session = parse(dump([build.header(), build.user("u1", None), space, build.user("u2", "u1")]))
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert session.damaged == [] and session.diagnostics == []


@pytest.mark.parametrize("junk", ["\x1c\x1d", "\u0085"])
def test_junk_line_of_unicode_separators_is_reported(build, dump, junk: str) -> None:
    """Only what JavaScript's trim() removes (Pi's blank-line test) makes a line blank.

    Product bug: ``str.strip()`` also strips U+001C..U+001F and U+0085, so a line holding only
    those bytes is dropped silently (no diagnostic, no damaged record). Neither JSON nor JS's
    ``trim()`` treats them as whitespace.
    """
    session = parse(dump([build.header(), build.user("u1", None), junk, build.user("u2", "u1")]))
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert [(d.line, d.kind, d.text) for d in session.damaged] == [(3, "invalid-json", junk)]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(3, "invalid-json")]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_rejected(build, dump, constant: str) -> None:
    """Python's json reads NaN/Infinity, JavaScript (Pi) cannot: the line is damaged, and
    the message says which constant it was."""
    bad = '{"type":"message","id":"x","parentId":"u1","timestamp":"t","message":{"role":"assistant"'
    bad += ',"usage":{"input":' + constant + "}}}"
    data = dump([build.header(), build.user("u1", None), bad, build.user("u2", "u1")])
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert [(d.line, d.kind) for d in session.damaged] == [(3, "invalid-json")]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(3, "invalid-json")]
    assert session.damaged[0].text == bad
    # the message names the constant (every invalid-json message starts "not valid JSON",
    # so an ``or`` with that could not fail)
    expected = f"not valid JSON ({constant} is not valid JSON)"
    assert session.diagnostics[0].message == expected
    assert session.damaged[0].message == expected


@pytest.mark.parametrize("line", ["[1,2]", "42", '"text"', "null", "true", "{}"])
def test_non_object_or_typeless_lines_are_damaged(build, dump, line: str) -> None:
    data = dump([build.header(), build.user("u1", None), line, build.user("u2", "u1")])
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert len(session.damaged) == 1
    damaged = session.damaged[0]
    assert damaged.line == 3
    assert damaged.kind in {"not-an-object", "not-an-entry"}
    assert json.loads(damaged.text) == json.loads(line)
    assert [(d.line, d.kind) for d in session.diagnostics] == [(3, damaged.kind)]


def test_invalid_utf8_is_replaced_and_reported(build, dump) -> None:
    good = dump([build.user("u1", None, "caf\u00e9 XX")]).rstrip(b"\n")
    broken = good.replace("\u00e9".encode(), b"\xe9").replace(b"XX", b"\xff\xfe")
    data = dump([build.header()]) + broken + b"\n" + dump([build.user("u2", "u1")])
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert session.entries[0].text == "caf\ufffd \ufffd\ufffd"
    assert [(d.line, d.kind) for d in session.diagnostics] == [(2, "invalid-utf8")]
    assert session.damaged == []  # the line still parsed: it is an entry, not damage


def test_every_malformed_line_is_a_diagnostic_and_a_damaged_record(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u1", None),
        "{not json",
        "[1]",
        '{"no":"type"}',
        build.header(session_id="second-header"),
        '{"type":"message","id":"x",',
        build.user("u2", "u1"),
    ]
    session = parse(dump(lines))
    assert [e.id for e in session.entries] == ["u1", "u2"]
    damaged = sorted((d.line, d.kind) for d in session.damaged)
    assert damaged == [
        (3, "invalid-json"),
        (4, "not-an-object"),
        (5, "not-an-entry"),
        (6, "extra-header"),
        (7, "invalid-json"),
    ]
    assert sorted((d.line, d.kind) for d in session.diagnostics) == damaged
    for diagnostic in session.diagnostics:
        assert diagnostic.message
        assert diagnostic.as_dict() == {
            "line": diagnostic.line,
            "kind": diagnostic.kind,
            "message": diagnostic.message,
        }
        assert str(diagnostic).startswith(f"line {diagnostic.line}: ")
    assert {d.line: d.text for d in session.damaged}[3] == "{not json"
    assert session.id == "sess-0001"  # the second header is ignored, like Pi does


@pytest.mark.parametrize("cut", [1, 20, 60, -2])
def test_truncated_last_line_is_exactly_one_warning(build, dump, cut: int) -> None:
    last = dump([build.assistant("a2", "u2", "the end")]).rstrip(b"\n")
    data = dump([build.header(), build.user("u1", None), build.user("u2", "u1")]) + last[:cut]
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(4, "truncated")]
    assert [(d.line, d.kind, d.text) for d in session.damaged] == [
        (4, "truncated", last[:cut].decode())
    ]
    assert session.leaf_id == "u2"


def test_truncated_line_cut_inside_a_multibyte_character_is_one_warning(build, dump) -> None:
    """A writer killed mid-line easily cuts a CJK or emoji character in half.

    Product bug: the loader reports ``invalid-utf8`` AND ``truncated`` for the same line.
    """
    last = dump([build.user("u3", "u2", "会话树导出")]).rstrip(b"\n")
    cut = last.index("话".encode()) + 1  # one byte into a 3-byte character
    data = dump([build.header(), build.user("u1", None), build.user("u2", "u1")]) + last[:cut]
    session = parse(data)
    assert [e.id for e in session.entries] == ["u1", "u2"]
    assert [(d.line, d.kind) for d in session.damaged] == [(4, "truncated")]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(4, "truncated")]


def test_bad_line_in_the_middle_or_with_newline_is_not_truncation(build, dump) -> None:
    head = dump([build.header(), build.user("u1", None)])
    mid = parse(head + b'{"type":"mess\n' + dump([build.user("u2", "u1")]))
    assert kinds(mid) == ["invalid-json"]
    ended = parse(head + b'{"type":"mess\n')  # complete line (has its newline), still bad
    assert kinds(ended) == ["invalid-json"]
    trailing_blank = parse(head + b"\n\n" + b'{"type":"mess')
    assert kinds(trailing_blank) == ["truncated"]


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [""],
        ["", "   ", "\t"],
    ],
    ids=["empty", "newline", "whitespace"],
)
def test_empty_input_is_a_format_error(lines: list[str], dump) -> None:
    with pytest.raises(SessionFormatError, match="empty"):
        parse(dump(lines))


OTHER_FORMATS = {
    "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x08" + bytes(range(256)),
    "gzip": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(200, 256)) * 3,
    "random": bytes((i * 7919 + 13) % 256 for i in range(4096)),
    "utf16": "# Notes\n\n- a\n".encode("utf-16"),  # a UTF-16 session reads: see below
    "json-document": json.dumps({"name": "pkg", "version": "1.0"}, indent=2).encode(),
    "json-array": b'[{"type":"session","id":"x"}]\n',
    "other-jsonl": b'{"type":"user","uuid":"1","message":{"role":"user","content":"hi"}}\n'
    b'{"type":"assistant","uuid":"2","parentUuid":"1"}\n',
    "markdown": b"# Notes\n\n- a\n- b\n",
    "only-garbage": b"{oops\n{still bad\n",
}


@pytest.mark.parametrize("name", sorted(OTHER_FORMATS))
def test_other_formats_are_format_errors(name: str, tmp_path: Path) -> None:
    data = OTHER_FORMATS[name]
    with pytest.raises(SessionFormatError) as error:
        parse(data)
    # gzip is read uncompressed (a page's own .jsonl.gz download): this one is no gzip data
    said = "gzip-compressed, but the data is damaged" if name == "gzip" else "not a Pi session"
    assert said in str(error.value)
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(data)
    with pytest.raises(SessionFormatError, match=re.escape(str(path))):
        load_session(path)
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("bad", "'bad'"),
        ("2026-13-45T99:00:00Z", "'2026-13-45T99:00:00Z'"),  # the shape of a time, not one
        (1e308, "1e+308"),  # epoch milliseconds past the calendar
        (1767225600000, "1767225600000"),  # a time, but the session's start and end skip it
        (["2026-01-01"], "(a JSON array)"),
        (True, "(a JSON boolean)"),
        ({"at": "2026-01-01"}, "(a JSON object)"),
    ],
)
def test_an_unreadable_timestamp_is_one_warning(build, dump, written, said) -> None:
    """A header or entry whose timestamp was no time was skipped without a word, so the
    session "started" at its first readable entry. Every such line is counted, in one
    warning at the first of them; the entries all stay."""
    lines = _small(build)
    lines[0]["timestamp"] = written
    lines[2]["timestamp"] = written
    session = parse(dump(lines))
    assert [e.id for e in session.entries] == ["u1", "a1", "u2"]
    (warning,) = [d for d in session.diagnostics if d.kind == "bad-timestamp"]
    assert warning.line == 1 and warning.severity == "warning"
    expected = f"timestamp {said} is not an ISO date and time (and 1 more line);"
    assert warning.message.startswith(expected), warning.message
    assert "not counted in the session's start" in warning.message


def test_readable_and_missing_timestamps_say_nothing(build, dump) -> None:
    lines = _small(build)
    lines[2]["timestamp"] = "2026-01-01T00:00:00.123+14:00"
    del lines[3]["timestamp"]  # none at all: nothing to read, nothing wrong
    assert "bad-timestamp" not in kinds(parse(dump(lines)))


def test_missing_header_with_entries_synthesizes_one(build, write_session) -> None:
    path = write_session(
        [build.user("u1", None), build.assistant("a1", "u1")],
        name="2025-06-01T10-00-00-000Z_01a2b3c4-dead-beef.jsonl",
    )
    session = load_session(path)
    assert session.header.synthesized
    assert session.header.line == 0
    assert session.id == "01a2b3c4-dead-beef"  # from Pi's file name pattern
    assert session.version == 3
    assert [e.id for e in session.entries] == ["u1", "a1"]
    assert session.active_path == ["u1", "a1"]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(0, "missing-header")]
    assert session.header.timestamp == session.entries[0].timestamp


def test_an_entry_that_lost_its_type_keeps_its_place_in_the_tree(build, dump) -> None:
    """Dropped as damaged, an entry with an id but no ``type`` cut the active path there:
    its children became a new root (Pi keeps it in its tree; bug hunt 2026-12-05). It is an
    entry of unknown type now, said once; an object with no id either stays damaged."""
    lost = build.user("u2", "u1", "two", 2)
    del lost["type"]
    lines = [build.header(), build.user("u1", None), lost, build.user("u3", "u2"), '{"no":1}']
    session = parse(dump(lines))
    assert session.active_path == ["u1", "u2", "u3"]
    assert session.by_id["u2"].type == "unknown"
    assert [(d.line, d.kind) for d in session.diagnostics] == [(3, "no-type"), (5, "not-an-entry")]
    assert [(d.line, d.kind) for d in session.damaged] == [(5, "not-an-entry")]
    page = render_session(session)
    assert page.count('data-entry-id="u2"') == 1


def test_junk_object_before_the_header_does_not_hide_it(build, dump) -> None:
    """Product bug: the header is only looked for in the FIRST JSON object, whatever its type,
    so a stray ``{}`` line demotes the real header to a damaged "second session header" (its
    id and cwd are lost), or makes a header-only file "not a Pi session" at all."""
    session = parse(dump(["{}", build.header(), build.user("u1", None)]))
    assert not session.header.synthesized
    assert (session.id, session.header.cwd) == ("sess-0001", "/home/dev/proj")
    assert [(d.line, d.kind) for d in session.damaged] == [(1, "not-an-entry")]
    assert [e.id for e in session.entries] == ["u1"]
    header_only = parse(dump(['{"meta":1}', build.header()]))
    assert header_only.id == "sess-0001" and header_only.entries == []


def test_missing_header_on_legacy_entries_reads_them_as_v1(build, dump) -> None:
    session = parse(dump([build.user(None, None, "a"), build.user(None, None, "b")]))
    assert session.header.synthesized and session.version == 1
    assert session.active_path == ["L1", "L2"]
    assert kinds(session) == ["missing-header"]


def test_header_version_oddities(build, dump) -> None:
    newer = parse(dump([build.header(version=7), build.user("u1", None)]))
    assert kinds(newer) == ["newer-version"] and newer.entries[0].id == "u1"
    odd = parse(dump([build.header(version="3"), build.user("u1", None)]))
    assert kinds(odd) == ["bad-version"] and odd.version == 3


def test_header_without_string_id_is_reported_once(build, dump) -> None:
    """Product bug: the header line is also reported as a damaged "second session header"."""
    lines = [build.header(session_id=None), build.user("u1", None)]
    session = parse(dump(lines), path="2025-01-01T00-00-00-000Z_abc.jsonl")
    assert session.id == "abc"
    assert [e.id for e in session.entries] == ["u1"]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(1, "bad-header")]
    assert session.damaged == []


def test_wrong_field_types_never_raise_and_are_reported(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u1", None),
        # (a number is an id to Pi, as to this tool: tests/test_loader_s65.py)
        {"type": "message", "id": True, "parentId": "u1", "timestamp": 7, "message": "text"},
        {"type": "message", "id": "m2", "parentId": ["u1"], "message": {"role": 3}},
        {"type": "label", "id": "l1", "parentId": "m2", "targetId": [9], "label": {"x": 1}},
        {"type": "session_info", "id": "n1", "parentId": "l1", "name": 12},
        {"type": "compaction", "id": "c1", "parentId": "n1", "firstKeptEntryId": {"id": 4}},
        {"type": "model_change", "id": "mc", "parentId": "c1", "provider": [], "modelId": {}},
    ]
    session = parse(dump(lines))
    assert [e.id for e in session.entries] == ["u1", "L3", "m2", "l1", "n1", "c1", "mc"]
    assert set(kinds(session)) == {"missing-id", "bad-message", "bad-parent", "bad-timestamp"}
    assert session.name is None and session.labels == {}
    message = session.by_id["m2"]
    assert isinstance(message, MessageEntry) and message.role == "unknown"
    compaction = session.by_id["c1"]
    assert isinstance(compaction, CompactionEntry) and compaction.first_kept_entry_id is None
    assert session.by_id["mc"].model_key is None


# --- legacy versions -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pi-large-session.jsonl", "pi-v1-before-compaction.jsonl"])
def test_v1_is_a_linear_chain_with_deterministic_ids(fixtures_dir: Path, name: str) -> None:
    first = load_session(fixtures_dir / name)
    assert first.version == 1
    second = load_session(fixtures_dir / name)
    assert [e.id for e in first.entries] == [e.id for e in second.entries]
    assert [e.raw for e in first.entries] == [e.raw for e in second.entries]
    ids = [e.id for e in first.entries]
    assert len(set(ids)) == len(ids)
    assert [first.parent_of(i) for i in ids] == [None, *ids[:-1]]
    assert first.active_path == ids
    assert first.fork_ids == [] and len(first.branches()) == 1
    # Migration happens in memory only and ids are recorded in the raw JSON, Pi's key order.
    assert list(first.entries[5].raw)[-2:] == ["id", "parentId"]


def test_v1_fixture_first_kept_entry_index(fixtures_dir: Path) -> None:
    """§1.6: index into every parsed value, header at 0 (the file has no blank/bad lines)."""
    session = load_session(fixtures_dir / "pi-v1-before-compaction.jsonl")
    compactions = [e for e in session.entries if isinstance(e, CompactionEntry)]
    assert [(c.line, c.first_kept_entry_id) for c in compactions] == [
        (360, "L294"),  # firstKeptEntryIndex 293 -> parsed[293] -> line 294
        (629, "L552"),  # firstKeptEntryIndex 551
    ]
    for compaction in compactions:
        assert "firstKeptEntryIndex" not in compaction.raw
        assert list(compaction.raw)[-3:] == ["id", "parentId", "firstKeptEntryId"]
    assert [c.tokens_before for c in compactions] == [175004, 185014]


def _v1_compaction_file(build, dump, index) -> bytes:
    return dump(
        [
            build.header(version=None),  # parsed[0]
            build.user(None, None, "one"),  # line 2, parsed[1]
            "{garbage",  # line 3, not parsed
            "",  # line 4, blank
            build.user(None, None, "two"),  # line 5, parsed[2]
            build.assistant(None, None, "three"),  # line 6, parsed[3]
            build.entry("compaction", None, None, 7, summary="s", firstKeptEntryIndex=index),
            build.user(None, None, "after"),  # line 8, parsed[5]
        ]
    )


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (2, "L5"),  # counts parsed values, not lines: the garbage and blank lines do not count
        (1, "L2"),
        (3, "L6"),
        (0, None),  # the header
        (4, None),  # itself: Pi stores its own new id here; the context is the same
        (5, None),  # forward index: no firstKeptEntryId
        (99, None),
        (-1, None),
        (True, None),
    ],
)
def test_v1_first_kept_entry_index_semantics(build, dump, index, expected) -> None:
    session = parse(_v1_compaction_file(build, dump, index))
    compaction = next(e for e in session.entries if isinstance(e, CompactionEntry))
    assert compaction.first_kept_entry_id == expected
    assert "firstKeptEntryIndex" not in compaction.raw
    assert ("firstKeptEntryId" in compaction.raw) == (expected is not None)
    assert [e.id for e in session.entries] == ["L2", "L5", "L6", "L7", "L8"]
    assert kinds(session) == ["invalid-json"]


def test_v2_hook_message_becomes_custom(build, dump) -> None:
    hook = build.entry(
        "message",
        "h1",
        "u1",
        3,
        message={"role": "hookMessage", "customType": "ext", "content": "hi", "display": True},
    )
    session = parse(dump([build.header(version=2), build.user("u1", None), hook]))
    assert session.version == 2
    entry = session.by_id["h1"]
    assert isinstance(entry, MessageEntry)
    assert entry.role == "custom" and entry.custom_type == "ext" and entry.display
    assert session.active_path == ["u1", "h1"]
    # v3 files keep a literal hookMessage role (no migration applies to them).
    v3 = parse(dump([build.header(version=3), build.user("u1", None), hook]))
    assert v3.by_id["h1"].role == "hookMessage"


def test_unknown_entry_types_roles_and_fields_are_preserved(build, dump) -> None:
    alien = build.entry("telepathy", "t1", "u1", 2, payload={"deep": [1, {"x": None}]}, extra=1)
    odd_role = build.entry(
        "message", "m1", "t1", 3, message={"role": "oracle", "content": "??", "mood": "calm"}
    )
    user = build.user("u2", "m1")
    user["futureField"] = {"kept": True}
    lines = [build.header(futureHeader=1), build.user("u1", None), alien, odd_role, user]
    session = parse(dump(lines))
    assert [e.id for e in session.entries] == ["u1", "t1", "m1", "u2"]
    unknown = session.by_id["t1"]
    assert isinstance(unknown, UnknownEntry) and not unknown.is_known_type
    assert unknown.raw == alien
    assert session.by_id["m1"].role == "oracle"
    assert session.by_id["m1"].raw == odd_role
    assert session.by_id["u2"].raw["futureField"] == {"kept": True}
    assert session.header.raw["futureHeader"] == 1
    assert [(d.kind, d.severity) for d in session.diagnostics] == [("unknown-type", "info")]
    assert session.active_path == ["u1", "t1", "m1", "u2"]
    # Nothing is lost when the session is written back out as JSONL.
    records = [json.loads(line) for line in session_to_jsonl(session).splitlines()]
    assert records[2] == alien and records[3] == odd_role and records[4] == user


def test_lone_surrogates_cjk_and_emoji_survive(build, dump) -> None:
    text = "lone \ud800 high, \udfff low, 会话树导出, emoji 🌙👩‍💻, pair \U0001f600"
    lines = [build.header(), build.user("u1", None, text), build.name("n1", "u1", "名前 \udc00")]
    data = dump(lines)
    assert b"\\ud800" in data and b"\\udfff" in data  # Pi escapes lone surrogates
    session = parse(data)
    assert session.entries[0].text == text
    assert session.name == "名前 \udc00"
    assert kinds(session) == []
    line = dumps_line(session.entries[0].raw)
    line.encode("utf-8")  # writable as UTF-8: the surrogates stay escaped
    assert "\\ud800" in line and "会话树导出" in line and "🌙" in line
    assert json.loads(line) == session.entries[0].raw


# --- read-only -------------------------------------------------------------------------------


def _fingerprint(path: Path) -> tuple[str, int, int, int]:
    info = path.stat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode)


def test_loading_never_touches_the_input(fixtures_dir: Path, tmp_path: Path, build, dump) -> None:
    """Pi rewrites v1/v2 files and truncates invalid ones on open; we must not change a byte."""
    copies = []
    for source in sorted(fixtures_dir.glob("*.jsonl")):
        copy = tmp_path / source.name
        copy.write_bytes(source.read_bytes())
        copies.append(copy)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(
        b"\xef\xbb\xbf" + dump([build.header(version=2), build.user("u1", None), "{bad"])[:-3]
    )
    headless = tmp_path / "headless.jsonl"
    headless.write_bytes(dump([build.user("u1", None)]))
    copies += [damaged, headless]
    old = 1_500_000_000
    for index, path in enumerate(copies):
        os.utime(path, ns=(old * 10**9, (old + index) * 10**9))
        path.chmod(0o444)  # a read-only file must load too
    before = {p: _fingerprint(p) for p in copies}
    for path in copies:
        session = load_session(path)
        if session.entries:
            session.set_leaf(session.entries[0].id)
        scan_summary(path)
        load_session(str(path), leaf_id=session.entries[0].id)
    assert {p: _fingerprint(p) for p in copies} == before
    assert all(_fingerprint(p)[2] == (old + i) * 10**9 for i, p in enumerate(copies))


def test_a_versionless_header_over_a_tree_is_flagged(fixtures_dir: Path) -> None:
    """Without "version" a file is v1, and Pi (so we) replace its ids with one chain: a
    branched v3 file whose header lost the field went flat without a word."""
    lines = (fixtures_dir / "pi-branched-1.jsonl").read_bytes().split(b"\n")
    header = json.loads(lines[0])
    del header["version"]
    data = b"\n".join([json.dumps(header).encode(), *lines[1:]])
    session = parse_session_bytes(data)
    assert session.version == 1 and len(session.branches()) == 1  # as Pi reads it
    (flag,) = [d for d in session.diagnostics if d.kind == "versionless-tree"]
    assert '"version":3' in flag.message
    v1 = load_session(fixtures_dir / "pi-v1-before-compaction.jsonl")
    assert not [d for d in v1.diagnostics if d.kind == "versionless-tree"]


def test_messages_speak_json_not_python() -> None:
    """A review found "line is JSON NoneType", "Expecting value: line 1 column 1 (char 0)"
    on file line 3 (which line?), a 4,001-digit version echoed whole, and "no header ...
    synthesized" next to "a second session header" when there was only one."""
    header = '{"type":"session","version":%s,"id":"s","timestamp":"2025-01-01T00:00:00Z"}'
    data = "\n".join([header % ("9" * 4001), "null", "[1]", "{oops", "{}"]).encode() + b"\n"
    messages = [str(d) for d in parse_session_bytes(data).diagnostics]
    text = "\n".join(messages)
    assert "line 2: line is a JSON null, not an object" in text
    assert "line 3: line is a JSON array, not an object" in text
    assert (
        "line 4: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
        in text
    )
    assert "NoneType" not in text and "char " not in text
    assert all(len(m) < 200 for m in messages), messages
    late = b'{"type":"custom","id":"c","parentId":null}\n' + (header % 3).encode() + b"\n"
    (late_said,) = parse_session_bytes(late).diagnostics
    assert late_said.kind == "missing-header" and "after an entry" in late_said.message


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_a_line_cut_off_mid_file_says_so_at_its_end(newline: bytes) -> None:
    """A review: a line cut inside a string read "Invalid control character at column 122"
    (the newline, which the parser saw), and one without its closing braces "Expecting ','
    delimiter at column 1" (of a second "line" the newline began)."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z"}'
    whole = b'{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi"}}'
    in_string = whole[: whole.index(b"hi") + 1]  # ...,"content":"h
    no_braces = whole[:-2]
    later = b'{"type":"custom","id":"c","parentId":null}'
    data = newline.join([header, in_string, no_braces, later]) + newline
    session = parse(data)
    bad = {d.line: d for d in session.diagnostics}
    assert (bad[2].kind, bad[3].kind) == ("invalid-json", "invalid-json")
    assert bad[2].message == (
        f"not valid JSON (the line ends inside a string, after column {len(in_string)})"
    )
    assert bad[3].message == (
        f"not valid JSON (the line ends before the JSON does, after column {len(no_braces)})"
    )
    assert [d.kind for d in session.damaged] == ["invalid-json", "invalid-json"]
    assert [e.id for e in session.entries] == ["c"]


def test_json_beyond_what_python_reads_is_not_called_invalid(build, dump) -> None:
    """A 200,000-digit integer (Pi reads it, as Infinity) was "not valid JSON (Exceeds the
    limit ... use sys.set_int_max_str_digits...)": Python's advice, and untrue."""
    lines = _small(build)
    huge = (
        b'{"type":"custom","customType":"n","id":"c1","parentId":"u2","data":'
        + b"9" * 100_001
        + b"}"
    )
    session = parse(dump(lines) + huge + b"\n")
    (line,) = session.damaged
    assert line.message.startswith("unreadable JSON: an integer of more than 100,000 digits")
    assert "sys." not in line.message


def test_damaged_lines_that_parse_are_kept_as_written(tmp_path: Path) -> None:
    """A line that is JSON but no entry was shown written out again ("1e5" as "100000.0",
    spacing and escapes changed) under "kept as they are in the file"."""
    header = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z"}'
    array = '["\\u00e9\\u0041", 1.0, 1e5, {"b":1,  "a":2}]'
    odd = '{"key":"x","val":1E2,"s":"\\ud83d\\ude00"}'
    second = '{"type":"session",  "id":"again"}'
    text = "\n".join([header, array, odd, second, "not json at all"]) + "\n"
    source = tmp_path / "s.jsonl"
    source.write_text(text, encoding="utf-8")
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    sessions = [load_session(source), parse_session_bytes(text.encode("utf-8"))]
    for session in [*sessions, load_session(crlf)]:
        assert sorted((d.line, d.text) for d in session.damaged) == [
            (2, array), (3, odd), (4, second), (5, "not json at all")
        ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-01T00:00:00.12Z", "2024-01-01T00:00:00.120000+00:00"),
        ("2024-01-01T00:00:00.123456789Z", "2024-01-01T00:00:00.123456+00:00"),  # Go's nanos
        ("20240101T000000Z", "2024-01-01T00:00:00+00:00"),  # the basic format
        ("2024-01-01T00:00:00.5+0530", "2024-01-01T00:00:00.500000+05:30"),
        ("2024-01-01T10:00:00,25Z", "2024-01-01T10:00:00.250000+00:00"),
        ("2024-13-01T00:00:00Z", None),
        ("yesterday", None),
        ("2026-11-30T00:5707Z", None),  # a time half basic, half extended: 3.11 refuses it
        ("2026-1130T00:57Z", None),
        ("2024-01-01T00:00:00+05", "2024-01-01T00:00:00+05:00"),  # an hour-only offset
    ],
)
def test_times_read_the_same_on_every_supported_python(text: str, expected: str | None) -> None:
    """`requires-python >= 3.10`, and 3.10's fromisoformat refuses what 3.11's reads: those
    sessions' times were "unknown" there (start, end, order, the cost-per-day chart). The
    fallback is tested directly, so this fails on 3.11 too when it breaks (code review
    2026-12-01)."""
    from exporter.times import _iso_fallback, parse_time

    fallback = _iso_fallback(text.replace("Z", "+00:00"))
    assert (fallback.isoformat() if fallback else None) == expected
    parsed = parse_time(text)
    assert (parsed.isoformat() if parsed else None) == expected


def test_a_gzip_compressed_session_reads_as_the_session(fixtures_dir: Path, tmp_path: Path):
    """The page's download without a script is `<id>.jsonl.gz`; given back, it was "not a
    Pi session file (134 unparsable lines)". Read from a file or a pipe, it is the session;
    cut short, it says so."""
    import gzip

    source = fixtures_dir / "pi-branched-1.jsonl"
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    plain = load_session(source)
    for session in (load_session(packed), parse_session_bytes(packed.read_bytes())):
        assert [e.raw for e in session.entries] == [e.raw for e in plain.entries]
        assert session.leaf_id == plain.leaf_id and session.source_data == source.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:300])
    with pytest.raises(SessionFormatError, match="gzip-compressed, but the data is damaged"):
        load_session(cut)
    # two members (`gzip -c a >> s.gz`) are read as one file, as gunzip does; bytes after
    # the gzip data are left out with a warning (gunzip's "trailing garbage ignored")
    half = len(source.read_bytes()) // 2
    joined = tmp_path / "joined.jsonl.gz"
    joined.write_bytes(
        gzip.compress(source.read_bytes()[:half]) + gzip.compress(source.read_bytes()[half:])
        + b"garbage"
    )  # fmt: skip
    session = load_session(joined)
    assert [e.raw for e in session.entries] == [e.raw for e in plain.entries]
    assert [d.kind for d in session.diagnostics] == ["gzip-trailing-data"]
    # a small file unpacking to more than the limit stops before holding it all
    from exporter import loader

    with pytest.raises(SessionFormatError, match="unpacks to more than 1 MB"):
        loader._gunzip(gzip.compress(bytes(3 << 20)), "bomb.jsonl.gz", limit=1 << 20)


@pytest.mark.parametrize(
    "encoding, bom",
    [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-32-le", b"\xff\xfe\x00\x00")],
)
def test_a_session_saved_as_utf16_or_utf32_reads_as_the_session(
    fixtures_dir: Path, tmp_path: Path, encoding: str, bom: bytes
) -> None:
    """PowerShell 5's `>` writes UTF-16 LE with a byte order mark: such a copy of a session
    was "not a Pi session file (2 unparsable lines)". It now reads as the session, with a
    warning that says what the file is and that Pi cannot open it; the page's download
    and a redacted copy are UTF-8 again. The file itself is never written."""
    source = fixtures_dir / "every-entry-type.jsonl"  # CJK, emoji, an escaped lone surrogate
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(bom + source.read_text(encoding="utf-8").encode(encoding))
    before = hashlib.sha256(wide.read_bytes()).hexdigest()
    plain = load_session(source)
    for session in (load_session(wide), parse_session_bytes(wide.read_bytes())):
        assert [e.raw for e in session.entries] == [e.raw for e in plain.entries]
        assert session.leaf_id == plain.leaf_id
        assert session.source_data == source.read_bytes()  # the download: UTF-8
        notes = [d for d in session.diagnostics if d.kind == "not-utf8"]
        name = "UTF-16" if "16" in encoding else "UTF-32"
        assert len(notes) == 1 and f"the file is {name}, not UTF-8" in notes[0].message
        assert "Pi reads only UTF-8" in notes[0].message
        others = [d.kind for d in session.diagnostics if d.kind != "not-utf8"]
        assert others == [d.kind for d in plain.diagnostics]
    assert hashlib.sha256(wide.read_bytes()).hexdigest() == before


def test_gzip_input_holds_no_more_than_a_plain_one(fixtures_dir: Path) -> None:
    """A 22 KB gzip file of a session and 20 MB of blank lines took 550 MB (every line a
    list item; 5 GB at 200 MB) and a file of many small members minutes (the rest of the
    input copied per member), where the plain file streams (security review 2026-12-01)."""
    import gzip
    import tracemalloc

    source = (fixtures_dir / "every-entry-type.jsonl").read_bytes()
    blank = b"\n" * (2 << 20)
    members = gzip.compress(source) + b"".join(gzip.compress(b"") for _ in range(3000))
    tracemalloc.start()
    try:
        for data in (gzip.compress(source + blank), members, source + blank):
            tracemalloc.reset_peak()
            session = parse_session_bytes(data)
            peak = tracemalloc.get_traced_memory()[1]
            assert len(session.entries) == len(
                load_session(fixtures_dir / "every-entry-type.jsonl").entries
            )
            assert peak < 4 * (len(source) + len(blank)) + (2 << 20), peak  # the data, a copy
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("output", "fixture"),
    [
        ("page", "every-entry-type.jsonl"),
        ("page", "pi-v1-before-compaction.jsonl"),  # compaction dividers with their time
        ("markdown", "every-entry-type.jsonl"),
        ("usage report", "every-entry-type.jsonl"),
        ("listing", "every-entry-type.jsonl"),
    ],
)
def test_every_entry_time_is_read_once_for_load_and_page(
    fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str, fixture: str
) -> None:
    """An entry's time was parsed ~4 times (the loader's check, the statistics, the turn
    summaries, its heading): 33 ms of a 25 MB session's export. It is read once
    (``Entry.moment``), and every reader uses that reading: each module's ``parse_time``
    is counted, so a reader that parses the text again fails here. (The listing reads a
    gzipped file through the loader.)"""
    import gzip
    import sys

    from exporter.markdown_doc import session_markdown
    from exporter.render import RenderOptions, render_session
    from exporter.times import parse_time
    from exporter.usage_report import session_usage

    source = fixtures_dir / fixture
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(source.read_bytes()))
    reads: Counter[object] = Counter()

    def counted(value: object) -> object:
        reads[value] += 1
        return parse_time(value)

    for name, module in list(sys.modules.items()):
        if name.startswith("exporter") and getattr(module, "parse_time", None) is parse_time:
            monkeypatch.setattr(module, "parse_time", counted)
    stamps = [e.raw.get("timestamp") for e in load_session(source).entries]
    reads.clear()
    if output == "page":
        render_session(load_session(source), RenderOptions(jobs=1))
    elif output == "markdown":
        assert "2025" in session_markdown(load_session(source))  # its headings say the times
    elif output == "usage report":
        assert session_usage(source)["rows"]
    else:
        assert scan_summary(packed).modified is not None
    assert len(set(stamps)) > 20
    assert {stamp: reads[stamp] for stamp in stamps} == Counter(stamps)


def test_a_read_time_shows_as_its_text_does() -> None:
    """The heading gets the entry's time already read; it shows as the same time written
    would, in UTC (a +14:00 time too), and an unreadable one as written."""
    from exporter.render.environment import time_tag
    from exporter.times import parse_time

    for text in ("2026-01-01T09:30:15.250Z", "2026-01-01T09:30:15+14:00", "20260101T093015Z"):
        moment = parse_time(text)
        assert moment is not None and time_tag(moment) == time_tag(text)
        assert time_tag(moment).startswith('<time datetime="20')
    assert str(time_tag("soon<b>")) == "<time>soon&lt;b&gt;</time>"  # (not for page.js to read)


def test_an_entry_keeps_its_time_through_pickle_and_copy() -> None:
    """A library user may pickle or copy entries; one whose time was not read yet must read
    it afterwards (a bare ``object()`` marker came back as another object, and that object
    was handed out as the time)."""
    import copy
    import pickle
    from datetime import datetime, timezone

    from exporter.entries import make_entry

    raw = {"type": "message", "id": "a", "timestamp": "2026-01-02T03:04:05Z", "message": {}}
    expected = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    for read_first in (False, True):
        entry = make_entry(raw, 1, "a", None)
        if read_first:
            assert entry.moment == expected
        for again in (pickle.loads(pickle.dumps(entry)), copy.deepcopy(entry), copy.copy(entry)):
            assert again.moment == expected
