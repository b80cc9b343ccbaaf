"""Property tests: random session trees with random damage.

Whatever the bytes (truncated lines, junk bytes, duplicate ids, cycles, orphans, wrong field
types, BOM/CRLF, missing header), loading never raises (except SessionFormatError when nothing
in the file is a session), never loses an entry, and never hangs.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import PI_ENTRY_TYPES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from exporter.discover import scan_summary
from exporter.inspect_cli import stats_document
from exporter.jsonl_out import session_to_jsonl
from exporter.loader import SessionFormatError, parse_session_bytes
from exporter.markdown_doc import session_markdown
from exporter.session import Session
from exporter.usage import Usage, compute_stats
from tests.conftest import cpu_time_limit

MARKDOWN_VIEWER = MarkdownIt("commonmark", {"html": True})
SETTINGS = settings(
    max_examples=150,
    deadline=3000,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ENTRY_KINDS = ("entry", "known")
ID_POOL = [f"e{i}" for i in range(8)]  # small on purpose: collisions, cycles, forward refs
ENTRY_TYPES = [*sorted(PI_ENTRY_TYPES), "telepathy", ""]
SURROGATE = re.compile("[\ud800-\udfff]")
ROLES = ["user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "oracle"]


# --- strategies -------------------------------------------------------------------------------

junk_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=6),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["x", "id", "type"]), st.integers(0, 3), max_size=2),
)
text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
        st.sampled_from(["\u2028", "\u0085", "\n", "\r", "\ud800", "\udfff", "会", "🌙"]),
    ),
    max_size=12,
)
timestamp = st.one_of(
    st.integers(0, 86_399).map(
        lambda s: f"2025-01-01T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000Z"
    ),
    junk_value,
    st.just("0001-01-01T00:00:00+05:00"),
)
number = st.one_of(
    st.integers(0, 10**7), st.floats(0, 100, allow_nan=False), junk_value, st.just(10**30)
)


@st.composite
def usage(draw) -> Any:
    if draw(st.integers(0, 5)) == 0:
        return draw(junk_value)
    cost = {k: draw(number) for k in ("input", "output", "cacheRead", "cacheWrite", "total")}
    if draw(st.booleans()):
        del cost["total"]
    fields = {k: draw(number) for k in ("input", "output", "cacheRead", "cacheWrite")}
    return {**fields, "totalTokens": draw(number), "cost": cost}


@st.composite
def content(draw) -> Any:
    blocks = st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": text}),
        st.fixed_dictionaries(
            {"type": st.just("toolCall"), "id": st.sampled_from(["c1", "c2", 7]), "name": text}
        ),
        st.fixed_dictionaries({"type": st.just("thinking"), "thinking": text}),
        junk_value,
    )
    return draw(st.one_of(text, st.lists(blocks, max_size=3), junk_value))


@st.composite
def entry(draw, index: int, earlier: list[str]) -> dict[str, Any]:
    kind = draw(st.sampled_from(ENTRY_TYPES))
    value: dict[str, Any] = {"type": kind}
    entry_id = draw(
        st.one_of(st.just(f"n{index}"), st.sampled_from(ID_POOL), junk_value, st.just("MISSING"))
    )
    if entry_id != "MISSING":
        value["id"] = entry_id
    parents = [st.none(), st.sampled_from(ID_POOL), junk_value, st.just("MISSING")]
    if earlier:
        parents.append(st.sampled_from(earlier))
    parent = draw(st.one_of(*parents))
    if parent != "MISSING":
        value["parentId"] = parent
    value["timestamp"] = draw(timestamp)
    if kind == "message":
        message: dict[str, Any] = {"role": draw(st.sampled_from(ROLES)), "content": draw(content())}
        if message["role"] == "assistant":
            message.update(provider=draw(text), model=draw(text), usage=draw(usage()))
            message["stopReason"] = draw(st.sampled_from(["stop", "error", "aborted", 3]))
        if message["role"] == "toolResult":
            message.update(toolCallId=draw(st.sampled_from(["c1", "c2", 7])), isError=True)
        value["message"] = draw(st.one_of(st.just(message), junk_value))
    elif kind == "label":
        value.update(targetId=draw(st.one_of(st.sampled_from(ID_POOL), junk_value)))
        value["label"] = draw(st.one_of(text, junk_value))
    elif kind == "session_info":
        value["name"] = draw(st.one_of(text, junk_value))
    elif kind == "compaction":
        value["firstKeptEntryId"] = draw(st.one_of(st.sampled_from(ID_POOL), junk_value))
        value["firstKeptEntryIndex"] = draw(st.one_of(st.integers(-2, 30), junk_value))
        value["summary"] = draw(text)
    elif kind in ("custom_message", "branch_summary", "custom"):
        value.update(customType=draw(text), content=draw(content()), summary=draw(text))
    if draw(st.integers(0, 4)) == 0:
        value["extraField"] = draw(junk_value)
    return value


@st.composite
def session_objects(draw) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header: dict[str, Any] = {"type": "session"}
    version = draw(st.sampled_from([3, 3, 3, 2, 1, "MISSING", 99, "3"]))
    if version != "MISSING":
        header["version"] = version
    header["id"] = draw(st.one_of(st.just("sess"), junk_value))
    header["timestamp"] = draw(timestamp)
    header["cwd"] = draw(st.one_of(st.just("/p"), junk_value))
    entries: list[dict[str, Any]] = []
    earlier: list[str] = []
    for index in range(draw(st.integers(0, 20))):
        value = draw(entry(index, earlier))
        entries.append(value)
        if isinstance(value.get("id"), str):
            earlier.append(value["id"])
    return header, entries


def pi_line(value: Any) -> bytes:
    """JSON.stringify as Pi writes it: raw UTF-8, lone surrogates as escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def encode(value: Any, ascii_only: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")  # a raw surrogate: invalid UTF-8 bytes


@st.composite
def damaged_files(draw) -> bytes:
    header, entries = draw(session_objects())
    ascii_only = draw(st.booleans())
    lines = [encode(v, ascii_only) for v in [header, *entries]]
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["truncate", "junk", "flip", "blank", "dup", "scalar", "drop"]))
        at = draw(st.integers(0, len(lines)))
        if op == "truncate" and at < len(lines):
            lines[at] = lines[at][: draw(st.integers(0, max(0, len(lines[at]) - 1)))]
        elif op == "junk":
            lines.insert(at, draw(st.binary(max_size=20)).replace(b"\n", b""))
        elif op == "flip" and at < len(lines) and lines[at]:
            pos = draw(st.integers(0, len(lines[at]) - 1))
            byte = draw(st.binary(min_size=1, max_size=1).filter(lambda b: b != b"\n"))
            lines[at] = lines[at][:pos] + byte + lines[at][pos + 1 :]
        elif op == "blank":
            lines.insert(at, draw(st.sampled_from([b"", b"  ", b"\t", b"\r"])))
        elif op == "dup" and lines:
            lines.insert(at, lines[min(at, len(lines) - 1)])
        elif op == "scalar":
            lines.insert(at, draw(st.sampled_from([b"null", b"42", b"[1]", b'"s"', b"NaN", b"{}"])))
        elif op == "drop" and at < len(lines):
            del lines[at]
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = newline.join(lines)
    if draw(st.booleans()):
        data += newline
    if draw(st.integers(0, 4)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


# --- an independent view of the bytes ---------------------------------------------------------


def _reject(name: str) -> Any:
    raise ValueError(name)


# ECMAScript's WhiteSpace and LineTerminator code points: what Pi's line.trim() removes.
JS_TRIM = (
    "\t\n\v\f\r \xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000\ufeff")
)


def classify(data: bytes) -> dict[int, str]:
    """Line number -> blank, bad, scalar, session, known or entry (no exporter code)."""
    kinds = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        line = raw.decode("utf-8", errors="replace")
        if not line.strip(JS_TRIM):
            kinds[number] = "blank"
            continue
        try:
            value = json.loads(line, parse_constant=_reject)
        except ValueError:
            kinds[number] = "bad"
            continue
        if isinstance(value, dict) and not isinstance(value.get("type"), str):
            # kept as an entry of unknown type when it has an id (as Pi keeps it) in a file
            # with ids; else a damaged line
            has_id = isinstance(value.get("id"), str) and value["id"]
            kinds[number] = "typeless" if has_id else "untyped"
        elif not isinstance(value, dict):
            kinds[number] = "scalar"
        elif value["type"] == "session":
            kinds[number] = "session"
        else:
            kinds[number] = "known" if value["type"] in PI_ENTRY_TYPES else "entry"
    return kinds


def assert_is_a_forest(session: Session) -> None:
    walked = list(session.walk())
    assert sorted(walked) == sorted(session.by_id)
    assert len(session.by_id) == len(session.entries)
    parent_depth: dict[str, int] = {}
    for entry_id in walked:  # pre-order: parents before children
        parent = session.parent_of(entry_id)
        parent_depth[entry_id] = 0 if parent is None else parent_depth[parent] + 1
    for entry in session.entries:
        path = session.path_to(entry.id)
        assert len(path) == parent_depth[entry.id] + 1 and path[0] in session.roots
    owned = [i for branch in session.branches() for i in branch.entry_ids]
    assert sorted(owned) == sorted(session.by_id)


# --- properties -------------------------------------------------------------------------------


@SETTINGS
@given(damaged_files())
def test_damaged_files_never_raise_lose_entries_or_hang(data: bytes) -> None:
    kinds = classify(data)
    with cpu_time_limit(10):
        try:
            session = parse_session_bytes(data)
        except SessionFormatError:
            # Never when a line is one of Pi's entry types. (A junk object line before a
            # valid header also makes it raise: see test_loader.)
            assert "known" not in kinds.values()
            return
        # Every non-blank line is accounted for: the header, an entry or a damaged record.
        # (A header without a string id is ALSO listed as damaged: see test_loader.)
        entry_lines = [e.line for e in session.entries]
        damaged_lines = [d.line for d in session.damaged]
        header = set() if session.header.synthesized else {session.header.line}
        assert len(set(entry_lines)) == len(entry_lines)
        assert len(set(damaged_lines)) == len(damaged_lines)
        assert not set(entry_lines) & (set(damaged_lines) | header)
        accounted = set(entry_lines) | set(damaged_lines) | header
        assert accounted == {n for n, k in kinds.items() if k != "blank"}
        # Never lose an entry: every object line with a string type (not a header) is one;
        # one without a type but with an id may be one too (the loader's `no-type`), and in
        # a v1 file (ids given by position) any object is, as Pi migrates it into the chain
        typed = {n for n, k in kinds.items() if k in ENTRY_KINDS}
        untyped = ("typeless", "untyped") if session.header.version < 2 else ("typeless",)
        typeless = {n for n, k in kinds.items() if k in untyped}
        assert typed <= set(entry_lines) <= typed | typeless
        for damaged in session.damaged:
            assert kinds[damaged.line] in ("bad", "scalar", "session", "typeless", "untyped")
            assert any(d.line == damaged.line for d in session.diagnostics)
        assert all(kinds[d.line] != "blank" for d in session.diagnostics if d.line)
        if session.entries:
            assert session.leaf_id == session.entries[-1].id
        else:
            assert session.leaf_id is None and session.active_path == []
        assert_is_a_forest(session)

        stats = compute_stats(session)
        total = Usage()
        for branch in stats.branches:
            total.add(branch.usage)
        assert total.turns == stats.all.turns
        assert math.isclose(total.cost, stats.all.cost, rel_tol=1e-9, abs_tol=1e-6)
        json.dumps(stats_document(session))
        # The Markdown document: written for any file, valid UTF-8, no session text as HTML.
        document = session_markdown(session)
        document.encode("utf-8")
        tokens = [t for b in MARKDOWN_VIEWER.parse(document) for t in [b, *(b.children or ())]]
        assert not [t for t in tokens if t.type in ("html_block", "html_inline", "image")]
        assert set(session.context_status()) <= set(session.active_path)
        # Written back out, the session is valid UTF-8 JSONL with every entry.
        again = session_to_jsonl(session).encode("utf-8")
        reloaded = parse_session_bytes(again)
        assert len(reloaded.entries) == len(session.entries)
        assert reloaded.damaged == []


@SETTINGS
@given(damaged_files())
def test_scan_summary_never_raises_or_hangs(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "2025-01-01T00-00-00-000Z_x.jsonl"
        path.write_bytes(data)
        with cpu_time_limit(10):
            summary = scan_summary(path)
        if summary.error is not None:  # only for what load_session refuses too
            assert summary.error in ("not a Pi session file", "empty file")
            with pytest.raises(SessionFormatError):
                parse_session_bytes(data)
        assert summary.entries >= 0 and summary.messages <= summary.entries
        json.dumps(summary.as_dict())


@st.composite
def pi_sessions(draw) -> bytes:
    """Undamaged sessions as Pi writes them: unique ids, parents written earlier, key order."""
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/p"}]
    ids: list[str] = []
    for index in range(draw(st.integers(0, 25))):
        entry_id = f"{index:08x}"
        parent = draw(st.one_of(st.none(), st.sampled_from(ids))) if ids else None
        if ids and draw(st.integers(0, 3)):
            parent = ids[-1]  # mostly a chain, with forks now and then
        kind = draw(st.sampled_from(["message"] * 4 + ["label", "session_info", "custom"]))
        value: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent}
        value["timestamp"] = f"2025-01-01T00:00:{index % 60:02d}.000Z"
        if kind == "message":
            role = draw(st.sampled_from(["user", "assistant", "toolResult", "custom"]))
            message: dict[str, Any] = {"role": role, "content": draw(content())}
            if role == "assistant":
                message["usage"] = draw(usage())
            value["message"] = message
        elif kind == "label":
            value.update(targetId=draw(st.sampled_from(ids or ["x"])), label=draw(text))
        elif kind == "session_info":
            value["name"] = draw(st.one_of(text, st.none()))
        lines.append(value)
        ids.append(entry_id)
    return b"".join(pi_line(line) + b"\n" for line in lines)


@SETTINGS
@given(pi_sessions())
def test_scan_summary_agrees_with_the_loader_on_pi_shaped_sessions(data: bytes) -> None:
    session = parse_session_bytes(data)
    stats = compute_stats(session)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "2025-01-01T00-00-00-000Z_s.jsonl"
        path.write_bytes(data)
        summary = scan_summary(path)
    assert summary.messages == sum(1 for _ in session.iter_messages())
    assert summary.entries == len(session.entries)
    assert summary.branches == len(session.branches())
    assert summary.name == session.name
    assert summary.first_prompt == session.first_prompt()
    assert (summary.input, summary.output, summary.cache_read, summary.cache_write) == (
        stats.all.input,
        stats.all.output,
        stats.all.cache_read,
        stats.all.cache_write,
    )
    assert math.isclose(summary.cost, stats.all.cost, rel_tol=1e-9, abs_tol=1e-9)
