"""Bytes -> Session: headers and versions, in-memory v1/v2 -> v3 migration, entries and
their diagnostics (``jsonl_in`` turns the lines into JSON values first).

With ``jsonl_in``, the only place that knows JSON quirks and legacy versions. It never
writes: the file is opened read-only, and legacy files are migrated in memory (Pi rewrites
them on disk).
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import gzip
import hashlib
import io
import json
import math
import os
import re
import stat as stat_module
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from exporter import claude_code, codex
from exporter.entries import (
    KNOWN_ENTRY_TYPES,
    DamagedLine,
    Entry,
    Header,
    MessageEntry,
    as_str,
    id_key,
    make_entry,
)
from exporter.fsutil import hashed_prefix
from exporter.jsonl_in import STRICT_JSON, iter_parsed_lines, shorten
from exporter.session import Diagnostic, Session, parse_time
from exporter.session_parts import quoted_id
from exporter.times import js_number_text
from exporter.usage import MAX_TURN_COST, unusable_costs, unusable_token_counts

CURRENT_VERSION = 3


class SessionFormatError(ValueError):
    """The input holds nothing usable as a Pi session (empty, binary, another JSON format)."""


#: What a batch (search, stats --all) catches when one session cannot be loaded.
LOAD_FAILURES = (SessionFormatError, OSError, MemoryError)


def why_not_loaded(error: BaseException) -> str:
    """One of ``LOAD_FAILURES`` as a batch's warning says it."""
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    if isinstance(error, MemoryError):
        return "too large for memory"
    return str(error) or type(error).__name__


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _json_kind(value: Any) -> str:
    """JSON's own name for a parsed value (not Python's: NoneType, str, list)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "value"


def _has_known_type(value: dict[str, Any]) -> bool:
    entry_type = value.get("type")  # may be any JSON value, even an unhashable list
    return isinstance(entry_type, str) and entry_type in KNOWN_ENTRY_TYPES


def _looks_like_entry(value: dict[str, Any]) -> bool:
    entry_type = value.get("type")
    if not isinstance(entry_type, str) or entry_type == "session":
        return False
    return entry_type in KNOWN_ENTRY_TYPES or ("id" in value and "parentId" in value)


def header_id_from_path(path: str | None) -> str:
    """The id of a file without a header line, from Pi's name ``<time>_<id>.jsonl`` (a name
    without one is its own id); ``list`` matches SESSION prefixes against the same."""
    if not path:
        return "unknown"
    stem = Path(path).name.rsplit(".", 1)[0]
    return stem.rsplit("_", 1)[-1] or stem


def header_version(version: Any) -> int:
    """How Pi reads a header's ``version``: absent or null is v1 (Pi's oldest files);
    otherwise it compares the value as JavaScript does, so below 2 (``0``, ``true``, ``"1"``)
    is v1, below 3 (``"2"``, ``2.5``) is v2, and 3, newer numbers and what is no number
    (``"x"``, ``{}``) are migrated no further."""
    if version is None:
        return 1
    number = _js_number(version)
    if number < 2:
        return 1
    if number < 3:
        return 2
    whole = _whole_number(version)
    return whole if whole is not None else CURRENT_VERSION


def _whole_number(value: Any) -> int | None:
    """A JSON number that is a whole number, as JavaScript holds it: ``3.0`` is ``3`` (JSON
    numbers are one type there); None for anything else (``true``, ``"3"``, ``2.5``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_json(value: Any, limit: int = 40) -> str:
    """A JSON value as the file writes it, shortened for a message (``"1"``, ``2.0``,
    ``{}``), not as Python prints it (``'1'``)."""
    try:
        return shorten(json.dumps(value, ensure_ascii=False), limit)
    except ValueError:  # an integer of more digits than Python will print
        return "with thousands of digits"
    except RecursionError:
        return f"(a JSON {_json_kind(value)} nested too deeply to print)"


#: A string JavaScript's ``Number()`` reads as a decimal number (``""`` is 0).
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


def _js_number(value: Any) -> float:
    """A JSON value as JavaScript's ``Number()`` reads it (NaN when it is none; hexadecimal
    and other literals aside)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if abs(value) < 1e308 else (math.inf if value > 0 else -math.inf)
    if isinstance(value, list):  # an array is read as its elements joined by commas
        if len(value) > 1:
            return math.nan
        value = "" if not value or value[0] is None else value[0]
        return _js_number(value) if isinstance(value, (str, list)) else _js_number(str(value))
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        if _JS_DECIMAL.fullmatch(text):
            return float(text.replace("Infinity", "inf"))
    return math.nan


def _version_of(header: dict[str, Any], diagnostics: list[Diagnostic], line: int) -> int:
    """The header's version as Pi reads it, and a word when it is not written as Pi writes
    one: ``2.0`` is JavaScript's ``2`` (not unknown), ``"1"`` reads as 1, ``"x"`` as 3."""
    version = header.get("version")
    number = header_version(version)
    whole = _whole_number(version)
    as_pi_writes = isinstance(version, int) and whole is not None and 1 <= whole <= CURRENT_VERSION
    if version is None or as_pi_writes:
        return number
    shown = _as_json(version, 20 if whole is not None else 40)
    if whole is not None and whole > CURRENT_VERSION:
        message = f"file version {shown} is newer; read as v3"
        diagnostics.append(Diagnostic(line, "newer-version", message))
    elif whole is not None and whole >= 1:  # 2.0: the same number as 2 to Pi's JavaScript
        message = f"version {shown} is written as a decimal; read as v{number}, as Pi does"
        diagnostics.append(Diagnostic(line, "bad-version", message, "info"))
    else:
        said = "is not a plain number" if _js_number(version) in (1, 2, 3) else "unknown"
        message = f"version {shown} {said}; read as v{number}, as Pi does"
        diagnostics.append(Diagnostic(line, "bad-version", message))
    return number


def _versionless_tree(version: Any) -> str:
    """Why a file whose entries carry a tree is read as one chain (a header that lost or
    garbled its version: Pi reads it as v1)."""
    said = "has no version" if version is None else f"says version {_as_json(version)}"
    return (
        f"the header {said}, so the file is read as v1, as Pi does: the entries' own ids "
        "and branches are replaced by one linear chain (their labels then point nowhere); if "
        'the header lost its version, setting "version":3 in it keeps the tree'
    )


@dataclass(frozen=True)
class AgentReader:
    """Another agent's transcript format, read as a Pi session: how its first lines are
    told, how its lines become a Pi header and entries, and its id from a file name."""

    detects: Callable[[list[tuple[int, Any]]], bool]
    convert: Callable[..., list[tuple[int, Any]]]
    id_from_path: Callable[[str | None], str]


#: Claude Code's and Codex's transcripts: the loader's one door for other agents' files.
AGENT_READERS = (
    AgentReader(claude_code.is_claude_code, claude_code.convert, header_id_from_path),
    AgentReader(codex.is_codex, codex.convert, codex.id_from_path),
)


def other_agent(parsed: list[tuple[int, Any]]) -> AgentReader | None:
    """The reader of the agent whose transcript these (first) lines are, or None (Pi's)."""
    return next((reader for reader in AGENT_READERS if reader.detects(parsed)), None)


#: A header after an entry: ignored, the session took its id from the file's name and its
#: project was "unknown", and two warnings contradicted each other (none and a second one).
LATE_HEADER = (
    "the session header comes after an entry: Pi reads this file as empty (and would start "
    "it over); read here with this header"
)


def build_session(
    parsed: list[tuple[int, Any]],
    diagnostics: list[Diagnostic],
    damaged: list[DamagedLine],
    *,
    path: str | None = None,
    leaf_id: str | None = None,
) -> Session:
    """Turn parsed JSON lines into a Session (header rules, migration, typed entries)."""
    _name_byte_order_marks(diagnostics, damaged)
    header: Header | None = None
    reader = other_agent(parsed)
    if reader is not None:
        parsed = reader.convert(parsed, diagnostics, damaged, path)
        damaged.sort(key=lambda d: d.line)
        if not parsed[0][1]["id"]:
            parsed[0][1]["id"] = reader.id_from_path(path)
    first_object = next(
        ((n, v) for n, v in parsed if isinstance(v, dict) and isinstance(v.get("type"), str)),
        None,
    )
    # Pi's own reads take the first "session" line wherever it is (getHeader, the version's
    # migration); only its open refuses a file whose first line is not one
    session_line = next(
        ((n, v) for n, v in parsed if isinstance(v, dict) and v.get("type") == "session"), None
    )
    if session_line is not None:
        line, raw = session_line
        header = Header(raw=raw, line=line, version=_version_of(raw, diagnostics, line))
        if first_object is None or first_object[1] is not raw:
            diagnostics.append(Diagnostic(line, "missing-header", LATE_HEADER))
        version = raw.get("version")
        if (
            header.version == 1
            and not (type(version) in (int, float) and version == 1)  # (a v1 file: no tree)
            and any(
                isinstance(v, dict) and id_key(v.get("id")) is not None and "parentId" in v
                for _, v in parsed
            )
        ):
            message = _versionless_tree(version)
            diagnostics.append(Diagnostic(line, "versionless-tree", message))
        if not isinstance(raw.get("id"), str):
            raw_id = header_id_from_path(path)
            diagnostics.append(
                Diagnostic(line, "bad-header", f"header has no string id; using {raw_id!r}")
            )
    elif any(isinstance(v, dict) and _has_known_type(v) for _, v in parsed):
        first_entry = next(v for _, v in parsed if isinstance(v, dict) and _looks_like_entry(v))
        has_ids = any(isinstance(v, dict) and "id" in v for _, v in parsed)
        synthesized = {
            "type": "session",
            "version": CURRENT_VERSION if has_ids else 1,
            "id": header_id_from_path(path),
            "timestamp": as_str(first_entry.get("timestamp")) or "",
            "cwd": "",
        }
        header = Header(raw=synthesized, line=0, version=synthesized["version"], synthesized=True)
        diagnostics.append(
            Diagnostic(0, "missing-header", "no session header line; a header was synthesized")
        )
    if header is None:
        name = f"{_said_path(path)}: " if path else ""
        if not parsed and not damaged:
            what = "nothing was piped in" if path == STDIN_PATH else "file is empty"
            raise SessionFormatError(f"{name}{what}, not a Pi session")
        if not damaged and (kinds := claude_code.without_messages(parsed)) is not None:
            raise SessionFormatError(f"{name}{claude_code.no_messages_said(kinds)}")
        raise SessionFormatError(
            f"{name}not a Pi session file (no session header, no Pi entries, no Claude Code"
            " or Codex messages"
            f"{f'; {len(damaged)} unparsable line{_s(len(damaged))}' if damaged else ''})"
        )
    if not isinstance(header.raw.get("id"), str):
        header.raw["id"] = header_id_from_path(path)
    entries = _make_entries(parsed, header, diagnostics, damaged)
    notes = (
        _unreadable_times(header, entries),
        _unusable_token_counts(entries),
        _unusable_costs(entries),
    )
    for note in notes:
        if note:
            diagnostics.append(note)
    header.raw.setdefault("version", header.version)
    session = Session.build(header, entries, damaged=damaged, diagnostics=diagnostics, path=path)
    if leaf_id is not None:
        try:
            session.set_leaf(leaf_id)
        except KeyError as error:  # the loaders' errors are these two kinds (KeyError quoted)
            raise SessionFormatError(str(error.args[0])) from None
    return session


#: A byte order mark (U+FEFF): the first character of a file some editors save.
_BOM = "\ufeff"


def _name_byte_order_marks(diagnostics: list[Diagnostic], damaged: list[DamagedLine]) -> None:
    """Say so when a line is not JSON because it starts with a byte order mark: files joined
    with ``cat`` put the second one's in the middle. Pi drops such a line too (it trims only
    the file's own start), so it stays damaged; "Expecting value at column 1" did not say
    why, nor that the JSON after the mark is whole."""
    said: dict[int, str] = {}
    for damaged_line in damaged:
        if damaged_line.kind != "invalid-json" or not damaged_line.text.startswith(_BOM):
            continue
        try:
            STRICT_JSON.decode(damaged_line.text.lstrip(_BOM))
            after = "whole"
        except (ValueError, RecursionError):
            after = "damaged too"
        damaged_line.message = said[damaged_line.line] = (
            "not valid JSON: the line starts with a byte order mark (U+FEFF; files joined "
            f"with cat?), for which Pi drops it too; the JSON after the mark is {after}"
        )
    if said:
        diagnostics[:] = [
            Diagnostic(d.line, d.kind, said[d.line], d.severity)
            if d.kind == "invalid-json" and d.line in said
            else d
            for d in diagnostics
        ]


def _make_entries(
    parsed: list[tuple[int, Any]],
    header: Header,
    diagnostics: list[Diagnostic],
    damaged: list[DamagedLine],
) -> list[Entry]:
    legacy = header.version < 2
    entries: list[Entry] = []
    previous_id: str | None = None
    # Pi resolves v1 firstKeptEntryIndex against every parsed JSON value, header at index 0.
    id_at_index: dict[int, str] = {}
    first_index = _header_slots(parsed, header, damaged) if legacy else 0
    names_written: set[str] | None = None  # read only if an entry has no id of its own
    number_suffix: str | None = None  # read only if an id is a number
    # v1 array lines: Pi gives them an id and a place in the chain (not a message, so what a
    # compaction keeps from one it keeps from the next entry on), we show them as damaged
    arrays_before: list[int] = []
    for index, (number, value) in enumerate(parsed, start=first_index):
        if value is header.raw:
            continue
        if not isinstance(value, dict):
            if legacy and isinstance(value, list):
                arrays_before.append(index)
            kind = "not-an-object"
            message = f"line is a JSON {_json_kind(value)}, not an object"
            diagnostics.append(Diagnostic(number, kind, message))
            damaged.append(DamagedLine(number, kind, message, _dump_raw(value)))
            continue
        entry_type = value.get("type")
        if entry_type == "session":
            message = "a second session header; ignored like Pi does"
            diagnostics.append(Diagnostic(number, "extra-header", message))
            damaged.append(DamagedLine(number, "extra-header", message, _dump_raw(value)))
            continue
        typeless = not isinstance(entry_type, str)
        # v1 gives every object an id and a place in the chain, typed or not (Pi does, and a
        # compaction's firstKeptEntryIndex may name it); v3 keeps a typeless one with an id
        if typeless and not legacy and not id_key(value.get("id")):
            message = "object has no string 'type'; not a session entry"
            diagnostics.append(Diagnostic(number, "not-an-entry", message))
            damaged.append(DamagedLine(number, "not-an-entry", message, _dump_raw(value)))
            continue
        if typeless:  # an entry that lost its type: Pi keeps it in its tree, and so its
            # children on their path (dropped, the path was cut there)
            message = "entry has no string 'type'; kept in the tree, of unknown type"
            diagnostics.append(Diagnostic(number, "no-type", message))
        if legacy:
            entry_id = f"L{number}"
            value["id"] = entry_id
            value["parentId"] = previous_id
            for array_index in arrays_before:
                id_at_index[array_index] = entry_id
            arrays_before.clear()
            _migrate_v1_compaction(value, id_at_index)
            id_at_index[index] = entry_id
            parent_id = previous_id
        else:
            if names_written is None and not id_key(value.get("id")):
                names_written = _names_written(parsed)
            if number_suffix is None and _has_number_id(value):
                number_suffix = _number_id_suffix(parsed, diagnostics)
            entry_id, parent_id = _v3_ids(
                value, number, diagnostics, names_written or set(), number_suffix or ""
            )
        if header.version < 3 and entry_type == "message":
            message = value.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
        if entry_type == "message" and not isinstance(value.get("message"), dict):
            diagnostics.append(
                Diagnostic(number, "bad-message", "message entry without a message object")
            )
        if not typeless and entry_type not in KNOWN_ENTRY_TYPES:
            diagnostics.append(
                Diagnostic(
                    number,
                    "unknown-type",
                    f"unknown entry type {shorten(entry_type, 40)!r}",
                    "info",
                )
            )
        entries.append(make_entry(value, number, entry_id, parent_id, number_suffix or ""))
        previous_id = entry_id
    return entries


def _unreadable_times(header: Header, entries: list[Entry]) -> Diagnostic | None:
    """One warning for every line whose ``timestamp`` is not a time: the page shows an
    entry's as written, but the session's start and end skipped them without a word, so a
    header dated "bad" made the first readable entry the start. One diagnostic, not one a
    line: a tool that writes its own format would fill the warnings with the same news.
    Read as the session reads it (``.timestamp``: a string), so epoch milliseconds, which
    the start and end skip too, are said as well."""
    lines: list[tuple[int, Any]] = []
    if header.raw.get("timestamp") is not None and parse_time(header.timestamp) is None:
        lines.append((header.line, header.raw["timestamp"]))
    for entry in entries:  # parsed once here, kept for the session's readers (Entry.moment)
        value = entry.raw.get("timestamp")
        if value is not None and entry.moment is None:
            lines.append((entry.line, value))
    if not lines:
        return None
    line, value = lines[0]
    if isinstance(value, str):
        written = repr(shorten(value, 40))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        written = shorten(repr(value), 40)
    else:
        written = f"(a JSON {_json_kind(value)})"
    more = f" (and {len(lines) - 1:,} more line{_s(len(lines) - 1)})" if len(lines) > 1 else ""
    message = (
        f"timestamp {written} is not an ISO date and time{more};"
        " not counted in the session's start, end or last activity"
    )
    return Diagnostic(line, "bad-timestamp", message)


def _unusable_token_counts(entries: list[Entry]) -> Diagnostic | None:
    """One warning for the assistant turns whose usage gives a token count that is no whole
    number from 0 to 2**53 (``1e308``, ``-500``, ``1.5``, ``"100"``): each is counted as 0,
    as another agent's are; 1e308 was a 309-digit count that widened every table."""
    lines: list[tuple[int, Any]] = []
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            unusable = unusable_token_counts(entry.message.get("usage"))
            if unusable:
                lines.append((entry.line, unusable[0]))
    if not lines:
        return None
    line, value = lines[0]
    more = f" (and {len(lines) - 1:,} more turn{_s(len(lines) - 1)})" if len(lines) > 1 else ""
    message = (
        f"token count {_as_json(value)} in a turn's usage is not a whole number from 0 to "
        f"2**53{more}; counted as 0 tokens"
    )
    return Diagnostic(line, "bad-usage", message)


def _unusable_costs(entries: list[Entry]) -> Diagnostic | None:
    """One warning for the assistant turns whose usage gives a cost that is no amount from
    $0 to ``MAX_TURN_COST`` (``-5``, ``1e300``, ``1e400``, which JavaScript reads as
    Infinity): each is counted as $0, as a bad token count is counted as 0. -5 took $5 off
    every total, 1e300 read "$1e+300", and 1e400 was $0 without a word."""
    found: list[tuple[MessageEntry, tuple[str, Any]]] = []
    for entry in entries:
        if isinstance(entry, MessageEntry) and entry.role == "assistant":
            unusable = unusable_costs(entry.message.get("usage"))
            if unusable:
                found.append((entry, unusable[0]))
    if not found:
        return None
    entry, (name, value) = found[0]
    if isinstance(value, float) and not math.isfinite(value):  # not "Infinity", which
        said = "a number past the float range"  # reads as JSON no file can hold
        said = said if value > 0 else f"a negative {said.removeprefix('a ')}"
    else:
        said = _as_json(value)
    more = f" (and {len(found) - 1:,} more turn{_s(len(found) - 1)})" if len(found) > 1 else ""
    message = (
        f"{name} in the usage of entry {quoted_id(entry.id)} is {said}, not an amount "
        f"from $0 to ${MAX_TURN_COST:,.0f}{more}; counted as $0"
    )
    return Diagnostic(entry.line, "bad-usage", message)


def _header_slots(parsed: list[tuple[int, Any]], header: Header, damaged: list[DamagedLine]) -> int:
    """How many places before the first parsed value Pi's v1 writer counted in a
    ``firstKeptEntryIndex``: the header's, when no parsed value holds it. A header line that
    is damaged (not JSON: not parsed) or was deleted (the first line is an entry) still had
    index 0 when the index was written; one that parsed as something else (``[]``, an
    object that lost its ``type``) takes that place itself, as Pi counts it."""
    if not header.synthesized or not parsed:
        return 0
    first_line, first_value = parsed[0]
    if any(d.line < first_line for d in damaged):
        return 1  # the header's line is there, damaged
    if isinstance(first_value, dict) and _looks_like_entry(first_value):
        return 1  # the header's line is gone
    return 0


#: The fields in which a line names an entry by its id.
_ID_FIELDS = ("id", "parentId", "targetId", "firstKeptEntryId")


def _names_written(parsed: list[tuple[int, Any]]) -> set[str]:
    """Every id the file writes, as an entry's own or as a reference to one: an id made up
    for an entry without one must be none of them, or a child, a label or a compaction
    written for that id would be taken for the made-up one's."""
    names: set[str] = set()
    for _, value in parsed:
        if isinstance(value, dict):
            names.update(v for key in _ID_FIELDS if isinstance(v := value.get(key), str))
    return names


def _made_up_id(number: int, names_written: set[str]) -> str:
    """``L<line>`` for an entry without an id, unless the file writes that name itself."""
    entry_id = f"L{number}"
    count = 2
    while entry_id in names_written:
        entry_id = f"L{number}~{count}"
        count += 1
    return entry_id


def _has_number_id(value: dict[str, Any]) -> bool:
    """Whether a line names an entry by a number (``"id": 1``), as a file another tool
    wrote may: Pi's JavaScript finds entries by such ids too."""
    return any(type(value.get(key)) in (int, float) for key in _ID_FIELDS)  # (not a bool)


def _number_id_suffix(parsed: list[tuple[int, Any]], diagnostics: list[Diagnostic]) -> str:
    """What a number id ends with as this file's key: nothing (``1`` is ``"1"`` here, the
    name a page and ``--leaf`` use), unless the file also writes the string ``"1"``, which
    Pi's JavaScript tells apart from the number (its Map does): then ``" (number)"``, and a
    warning says why."""
    strings: set[str] = set()
    numbers: set[str] = set()
    for _, value in parsed:
        if isinstance(value, dict):
            for key in _ID_FIELDS:
                written = value.get(key)
                if isinstance(written, str):
                    strings.add(written)
                elif (text := js_number_text(written)) is not None:
                    numbers.add(text)
    both = sorted(strings & numbers)
    if not both:
        return ""
    suffix = " (number)"
    while any(text + suffix in strings for text in numbers):
        suffix += "'"
    message = (
        f"the file writes {_as_json(both[0])} both as a number and as a string: two ids to "
        f"Pi, so its number ids are named like {quoted_id(both[0] + suffix)} here"
    )
    diagnostics.append(Diagnostic(0, "number-ids", message))
    return suffix


def _v3_ids(
    value: dict[str, Any],
    number: int,
    diagnostics: list[Diagnostic],
    names_written: set[str],
    number_suffix: str = "",
) -> tuple[str, str | None]:
    """An entry's id and its parent's as written: strings, or numbers as JavaScript writes
    them (``1``, ``1.5``): Pi finds entries by those too, so ``"id":1`` … ``"parentId":1``
    is one conversation (each was a root of its own here, with seven warnings)."""
    raw_id = value.get("id")
    if key := id_key(raw_id, number_suffix):
        entry_id = key
    else:
        entry_id = _made_up_id(number, names_written)
        taken = "" if entry_id == f"L{number}" else f" ('L{number}' is an id the file writes)"
        message = f"entry has no string id; using {entry_id!r}{taken}"
        diagnostics.append(Diagnostic(number, "missing-id", message))
    parent = value.get("parentId", _MISSING)
    if parent is None:
        return entry_id, None
    if isinstance(parent, str):
        return entry_id, parent
    if (parent_key := id_key(parent, number_suffix)) is not None:
        return entry_id, parent_key
    kind = "missing-parent" if parent is _MISSING else "bad-parent"
    diagnostics.append(Diagnostic(number, kind, "entry has no usable parentId; shown as a root"))
    return entry_id, None


_MISSING = object()


def _migrate_v1_compaction(value: dict[str, Any], id_at_index: dict[int, str]) -> None:
    """v1 ``firstKeptEntryIndex`` -> ``firstKeptEntryId`` with Pi's exact index semantics."""
    if value.get("type") != "compaction" or "firstKeptEntryIndex" not in value:
        return
    index = value.pop("firstKeptEntryIndex")
    if isinstance(index, float) and index.is_integer():  # 3.0: the same index to Pi's JS
        index = int(index)
    if isinstance(index, int) and not isinstance(index, bool) and index in id_at_index:
        value["firstKeptEntryId"] = id_at_index[index]


def _dump_raw(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


#: The first bytes of gzip data.
GZIP_MAGIC = b"\x1f\x8b"

#: Byte order marks of the encodings Windows tools save text in (PowerShell 5's ">" and
#: Out-File write UTF-16 LE): UTF-32's first, as its little-endian mark starts as UTF-16's.
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def wide_encoding(data: bytes) -> str | None:
    """The encoding a file starting with ``data`` declares with its byte order mark, when it
    is UTF-16 or UTF-32 (Pi writes UTF-8; a session re-saved on Windows is often UTF-16)."""
    return next((name for bom, name in _WIDE_BOMS if data.startswith(bom)), None)


def _wide_note(encoding: str) -> str:
    upper = encoding.upper()
    return (
        f"the file is {upper}, not UTF-8 (saved again by an editor or a PowerShell redirect?): "
        f"read as {upper}; Pi reads only UTF-8, so it cannot open this file as it is"
    )


def is_gzip_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file holds gzip data (False when it cannot be read: its reader says why)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError:
        return False


def is_wide_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file is UTF-16 or UTF-32 by its byte order mark (False when it cannot be
    read: its reader says why)."""
    try:
        with open(path, "rb") as handle:
            return wide_encoding(handle.read(4)) is not None
    except OSError:
        return False


def _gunzip(data: bytes, path: str | None, limit: int | None = None) -> tuple[bytes, str | None]:
    """The data uncompressed (every member, as gunzip reads them), and a note on bytes after
    the gzip data, which gunzip ignores with a warning too. Past ``limit`` unpacked bytes
    (a small file can unpack to gigabytes) it stops with a clear error.

    The input is fed in pieces from a view, never copied whole: taking the rest of the input
    after each member (or the unread rest after each step) made a file of many small members
    take minutes. Pieces start small (a member may be a few bytes) and grow to 64 KB, which
    unpacks to at most ~66 MB: the limit is checked that often."""
    limit = MAX_PIPE_BYTES if limit is None else limit
    name = f"{path}: " if path else ""
    out = bytearray()
    view = memoryview(data)
    offset = 0
    while data[offset : offset + 2] == GZIP_MAGIC:
        inflater = zlib.decompressobj(31)  # a gzip header and trailer
        size = 1 << 10
        try:
            while not inflater.eof:
                if offset >= len(data):
                    raise SessionFormatError(
                        f"{name}gzip-compressed, but the data is damaged (cut short)"
                    )
                piece = view[offset : offset + size]
                out += inflater.decompress(piece)
                offset += len(piece) - len(inflater.unused_data)
                size = min(size * 2, _GZIP_PIECE)
                if len(out) > limit:
                    raise SessionFormatError(
                        f"{name}gzip data that unpacks to more than {limit >> 20:,} MB; "
                        "unpack it to a file first"
                    )
        except zlib.error as error:
            raise SessionFormatError(
                f"{name}gzip-compressed, but the data is damaged ({error})"
            ) from None
    left = len(data) - offset
    note = f"{left:,} bytes after the gzip data were left out" if left else None
    return bytes(out), note


_GZIP_PIECE = 1 << 16


def parse_session_bytes(
    data: bytes | bytearray | memoryview,
    *,
    path: str | os.PathLike[str] | None = None,
    leaf_id: str | None = None,
) -> Session:
    """Load a session from bytes already in memory (tests, stdin, downloads); gzip data
    (the page's own download without a script is a ``.jsonl.gz``) is read uncompressed.
    ``path`` only names the source (messages, the page's footer). Raises SessionFormatError
    (nothing usable, or a ``leaf_id`` that names no entry) and TypeError for text (a str:
    the session's bytes are wanted, as the file holds them)."""
    data = _session_bytes(data)
    path = None if path is None else os.fsdecode(path)
    diagnostics: list[Diagnostic] = []
    if data[:2] == GZIP_MAGIC:
        data, note = _gunzip(data, path)
        if note:
            diagnostics.append(Diagnostic(0, "gzip-trailing-data", note))
    if (encoding := wide_encoding(data)) is not None:
        data = data.decode(encoding, errors="replace").encode("utf-8")
        diagnostics.append(Diagnostic(0, "not-utf8", _wide_note(encoding)))
    # Lines with their newlines (the truncation check sees which were complete), one at a
    # time as from a file: a list of them all took ~34 bytes per blank line (GBs for a small
    # gzip file of newlines)
    damaged: list[DamagedLine] = []
    with gc_paused():
        parsed = list(iter_parsed_lines(io.BytesIO(data), diagnostics, damaged))
        session = build_session(parsed, diagnostics, damaged, path=path, leaf_id=leaf_id)
    _keep_as_written(damaged, io.BytesIO(data))
    session.source_data = None if _holds_other_files(session) else data
    return session


def _session_bytes(data: Any) -> bytes:
    """``data`` as bytes: a bytearray or memoryview copied (the session keeps its source
    bytes for the page's download, which must not change with the caller's buffer); text
    and other types are refused with a TypeError that says what to pass."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        raise TypeError(
            "parse_session_bytes takes the session's bytes, not a str: pass text.encode() "
            "(UTF-8), or load_session(path) for a file"
        )
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError(
            f"parse_session_bytes takes bytes (or a bytearray or memoryview), not "
            f"{type(data).__name__}"
        ) from None


def session_lines(path: str | os.PathLike[str]) -> io.BufferedIOBase:
    """A session file's lines as the loader reads them: gzip data uncompressed, UTF-16 and
    UTF-32 (by their byte order mark) as UTF-8; for a look at its first lines or a pass over
    them that needs no parse."""
    with open(path, "rb") as handle:
        start = handle.read(4)
        encoding = wide_encoding(start)
        if encoding is not None:  # read whole, as the loader does
            text = (start + handle.read()).decode(encoding, errors="replace")
            return io.BytesIO(text.encode("utf-8"))
    return gzip.open(path, "rb") if start[:2] == GZIP_MAGIC else open(path, "rb")


#: Where SESSION ``-`` is read from.
STDIN_PATH = "/dev/stdin"


def _said_path(path: str) -> str:
    """A path as an error says it: SESSION ``-`` is the standard input, not /dev/stdin."""
    return "standard input (SESSION -)" if path == STDIN_PATH else path


def load_session(
    path: str | bytes | os.PathLike[str] | os.PathLike[bytes], *, leaf_id: str | None = None
) -> Session:
    """Read a session file read-only. Raises SessionFormatError (also for a ``leaf_id`` that
    names no entry) or OSError with clear text. A bytes path is decoded as the file system
    encodes names (``os.fsdecode``: odd bytes kept as surrogates): ``Session.path`` is a str."""
    file_path = os.fsdecode(path)
    kind = os.stat(file_path).st_mode
    if stat_module.S_ISFIFO(kind):  # piped in (`-`, `<(...)`): read once, kept as read
        with open(file_path, "rb") as handle:
            return parse_session_bytes(_read_pipe(handle), path=file_path, leaf_id=leaf_id)
    if not (stat_module.S_ISREG(kind) or stat_module.S_ISDIR(kind)):  # open() says "a folder"
        # a device like /dev/zero never ends
        if file_path == STDIN_PATH:  # `< /dev/null`, or a terminal's device
            raise SessionFormatError(f"{_said_path(file_path)}: nothing was piped in")
        raise SessionFormatError(f"{file_path}: not a regular file, not a Pi session")
    diagnostics: list[Diagnostic] = []
    damaged: list[DamagedLine] = []
    with open(file_path, "rb") as handle:
        start = handle.read(4)
        # the page's own .jsonl.gz download, say, or a file an editor saved as UTF-16
        if start[:2] == GZIP_MAGIC or wide_encoding(start) is not None:
            return parse_session_bytes(start + handle.read(), path=file_path, leaf_id=leaf_id)
        handle.seek(0)
        stat = os.fstat(handle.fileno())
        read = _HashedLines(handle)
        with gc_paused():
            parsed = list(iter_parsed_lines(read, diagnostics, damaged))
            session = build_session(parsed, diagnostics, damaged, path=file_path, leaf_id=leaf_id)
    if any(d.kind in _PARSED_BUT_DAMAGED for d in damaged):  # rare: read those lines again
        _reread_damaged(file_path, damaged, read)
    if not _holds_other_files(session):
        session.source_stamp = (stat.st_size, stat.st_mtime_ns)
        session.source_read = (read.size, read.digest.digest())
    return session


def _holds_other_files(session: Session) -> bool:
    """Its tree holds entries of other files (a Claude Code session's sub-agents): the file
    alone is not the session, so a download is the session written out as one Pi file."""
    return any(d.kind == claude_code.SUB_AGENTS for d in session.diagnostics)


#: Damaged lines that parsed as JSON: their text was the value written out again ("1e5"
#: became "100000.0", spacing and escapes changed), not the line "as it is in the file".
_PARSED_BUT_DAMAGED = frozenset({"not-an-object", "extra-header", "not-an-entry"})


def _reread_damaged(path: str, damaged: list[DamagedLine], read: _HashedLines) -> None:
    """:func:`_keep_as_written` from the file read again, when its first ``read.size`` bytes
    are still the ones loaded: Pi appends while a page is made, and a file that only grew
    still holds those lines as written (they keep the text as parsed when it changed)."""
    try:
        with open(path, "rb") as handle:
            data = hashed_prefix(handle, read.size, read.digest.digest())
    except OSError:  # gone or unreadable since: the texts as parsed
        return
    if data is not None:
        _keep_as_written(damaged, io.BytesIO(data))


def _keep_as_written(damaged: list[DamagedLine], lines: Iterable[bytes]) -> None:
    """Give the damaged lines that parsed their text as the file has it."""
    wanted = {d.line: d for d in damaged if d.kind in _PARSED_BUT_DAMAGED}
    last = max(wanted, default=0)
    for number, raw in enumerate(lines, start=1):
        if number > last:
            return
        if number in wanted:
            text = raw.decode("utf-8", errors="replace")
            wanted[number].text = text.removesuffix("\n").removesuffix("\r")  # CRLF files


#: The most a pipe may bring: `cat /dev/zero | pi-session stats -` must end, and a session
#: this big is a file (loaded without a copy held).
MAX_PIPE_BYTES = 2 << 30


def _read_pipe(handle: BinaryIO, limit: int | None = None) -> bytes:
    """All a pipe brings, or a clear error past ``limit`` bytes (never the whole stream)."""
    limit = MAX_PIPE_BYTES if limit is None else limit
    data = bytearray()  # grows in place: one copy, not a list of chunks and their join
    while chunk := handle.read(1 << 20):
        data += chunk
        if len(data) > limit:
            raise SessionFormatError(
                f"{handle.name}: more than {limit >> 20:,} MB arrived through the pipe; "
                "save the session to a file and name the file"
            )
    return bytes(data)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Parsed JSON has no reference cycles: the cyclic GC only slows a big load down (and a
    redacted copy of it: ``redact.apply_policy``, a quarter of its time at 200,000 entries).
    On the way out what was made meanwhile goes to the oldest generation unwalked
    (:func:`promote_unwalked`)."""
    enabled = gc.isenabled()
    if enabled:  # the caller's young objects first (see promote_unwalked)
        gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            promote_unwalked()
            gc.enable()


def promote_unwalked() -> None:
    """Move every object of the young generations to the oldest one without walking them.

    Objects made while the GC was paused still counted as young: the first allocation after
    it was enabled again ran a young collection that walked the whole loaded session (for
    no garbage: ~20 ms of a 5 MB export's CPU, ~70 ms with --redact's copy), and later ones
    walked it again. ``gc.freeze()``
    then ``gc.unfreeze()`` are two list splices that also zero the young count: nothing
    stays frozen, and later full collections see the session as they would have.

    Promoted so, objects do not count towards the next full collection: the caller's cyclic
    garbage among them then lived on (a loop of loads grew by all it made between them).
    So :func:`gc_paused` first collects the young generations (the caller's few thousand
    objects at most; a load makes no cyclic garbage): only the load's objects are promoted.

    ``gc.unfreeze()`` thaws every frozen object, so this is skipped when some are (a
    caller's own ``gc.freeze()``, a render under way in another thread): the next young
    collection then walks the session as before (slower, never wrong)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    yield from handle


class _HashedLines:
    """A file's lines (:func:`_lines`), counted and hashed as the load reads them: Pi
    appends while a page is made, and the page's copy is the file's first bytes only when
    they are the ones read (``Session.source_read``; ~2 ms a MB)."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.size = 0
        self.digest = hashlib.sha256()

    def __iter__(self) -> Iterator[bytes]:
        update = self.digest.update
        for line in _lines(self.handle):
            update(line)
            self.size += len(line)
            yield line


def session_from_records(
    records: Iterable[dict[str, Any]], *, path: str | None = None, leaf_id: str | None = None
) -> Session:
    """Build a Session from JSON objects (e.g. a redacted copy); line numbers are positions."""
    parsed = [(number, record) for number, record in enumerate(records, start=1)]
    return build_session(parsed, [], [], path=path, leaf_id=leaf_id)
