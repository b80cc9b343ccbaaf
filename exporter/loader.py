"""Bytes -> Session: tolerant JSONL parsing, diagnostics and in-memory v1/v2 -> v3 migration.

This is the only module that knows JSON quirks and legacy versions. It never writes: the
file is opened read-only, and legacy files are migrated in memory (Pi rewrites them on disk).
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import json
import os
import stat as stat_module
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from exporter.entries import KNOWN_ENTRY_TYPES, DamagedLine, Entry, Header, as_str, make_entry
from exporter.session import Diagnostic, Session

CURRENT_VERSION = 3
_BOM = b"\xef\xbb\xbf"


class SessionFormatError(ValueError):
    """The input holds nothing usable as a Pi session (empty, binary, another JSON format)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _short(text: str, limit: int = 80) -> str:
    text = text.replace("\n", " ").replace("\r", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def iter_parsed_lines(
    lines: Iterable[bytes], diagnostics: list[Diagnostic], damaged: list[DamagedLine]
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every line that parses as JSON.

    Splits on ``\\n`` only (binary line iteration), strips one BOM, ignores blank lines (what
    JavaScript's ``trim()`` empties, as Pi does) and keeps every unparsable line as a damaged record
    with a diagnostic.
    """
    # One key object per distinct key for the whole file (json only shares keys within a line).
    keys: dict[str, str] = {}
    decoder = json.JSONDecoder(
        parse_constant=_reject_constant,
        object_pairs_hook=lambda pairs: {keys.setdefault(k, k): v for k, v in pairs},
    )
    pending: tuple[int, str, str, bool, Diagnostic | None] | None = None  # maybe "truncated"
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        ends_with_newline = raw.endswith(b"\n")
        bad_utf8: Diagnostic | None = None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            bad_utf8 = Diagnostic(
                number, "invalid-utf8", "invalid UTF-8 bytes replaced with U+FFFD"
            )
            if not ends_with_newline and _cut_inside_a_character(raw):
                bad_utf8 = None  # the truncation warning below explains it
        if not text.strip(_JS_SPACE):
            continue
        if pending is not None:
            _flush(pending, diagnostics, damaged)
            pending = None
        try:
            value = decoder.decode(text)
        except ValueError as error:
            value = _with_long_ints(decoder.decode, text) if _LONG_INT in str(error) else _NONE
            if value is _NONE:
                reason = _json_error(error)
                pending = (number, text.rstrip("\r\n"), reason, ends_with_newline, bad_utf8)
                continue
        except RecursionError:  # ~1,000 nested arrays: valid JSON, deeper than Python parses
            reason = "JSON nested too deeply to read"
            pending = (number, text.rstrip("\r\n"), reason, ends_with_newline, bad_utf8)
            continue
        if bad_utf8:
            diagnostics.append(bad_utf8)
        yield number, value
    if pending is not None:
        number, text, _, ends_with_newline, bad_utf8 = pending
        if not ends_with_newline:
            if bad_utf8:
                diagnostics.append(bad_utf8)
            diagnostics.append(
                Diagnostic(
                    number,
                    "truncated",
                    "last line is cut off (the session was still being written?)",
                )
            )
            damaged.append(DamagedLine(number, "truncated", "last line is cut off", text))
        else:
            _flush(pending, diagnostics, damaged)


_NONE = object()
_LONG_INT = "set_int_max_str_digits"  # in the error for an integer over 4,300 digits
#: Digits an integer in a session may have (Python's default limit is 4,300; JSON has none).
MAX_INT_DIGITS = 100_000


def allow_long_integers() -> None:
    """Raise this process's integer-digit limit to ``MAX_INT_DIGITS``: JSON integers have no
    length limit and Pi reads any, but Python's 4,300 digits broke rendering and writing
    them (the CLI calls this once; the library leaves the process setting alone)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit:
        sys.set_int_max_str_digits(max(limit, MAX_INT_DIGITS))


def _with_long_ints(function: Callable[[str], Any], text: str) -> Any:
    """``function(text)`` with integers up to ``MAX_INT_DIGITS`` digits allowed (valid JSON
    that Pi reads was a damaged line); ``_NONE`` if it still fails."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit:
        return _NONE
    sys.set_int_max_str_digits(max(limit, MAX_INT_DIGITS))
    try:
        return function(text)
    except (ValueError, RecursionError):
        return _NONE
    finally:
        sys.set_int_max_str_digits(limit)


# What JavaScript's trim() removes, so a line Pi skips as blank is blank here too: \v and \f
# and Unicode spaces are; U+001C..U+001F and U+0085 (Python's str.strip() takes them) are not.
_JS_SPACE = (
    " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def _cut_inside_a_character(raw: bytes) -> bool:
    """True when the only bad UTF-8 is an incomplete character at the very end."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _flush(
    pending: tuple[int, str, str, bool, Diagnostic | None],
    diagnostics: list[Diagnostic],
    damaged: list[DamagedLine],
) -> None:
    number, text, error, _, bad_utf8 = pending
    if bad_utf8:
        diagnostics.append(bad_utf8)
    _record_bad_line(number, text, error, diagnostics, damaged)


def _json_error(error: ValueError) -> str:
    """The parser's complaint without its own "line 1 column 5 (char 4)", which read like
    a line of the file: ``Expecting value at column 5``."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at column {error.colno}"
    return str(error)


def _json_kind(value: Any) -> str:
    """JSON's own name for a parsed value (not Python's: NoneType, str, list)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "value"


def _record_bad_line(
    number: int, text: str, error: str, diagnostics: list[Diagnostic], damaged: list[DamagedLine]
) -> None:
    message = f"not valid JSON ({_short(error, 100)})"
    diagnostics.append(Diagnostic(number, "invalid-json", message))
    damaged.append(DamagedLine(number, "invalid-json", message, text))


def _has_known_type(value: dict[str, Any]) -> bool:
    entry_type = value.get("type")  # may be any JSON value, even an unhashable list
    return isinstance(entry_type, str) and entry_type in KNOWN_ENTRY_TYPES


def _looks_like_entry(value: dict[str, Any]) -> bool:
    entry_type = value.get("type")
    if not isinstance(entry_type, str) or entry_type == "session":
        return False
    return entry_type in KNOWN_ENTRY_TYPES or ("id" in value and "parentId" in value)


def header_id_from_path(path: str | None) -> str:
    if not path:
        return "unknown"
    stem = Path(path).name.rsplit(".", 1)[0]
    return stem.rsplit("_", 1)[-1] or stem


def header_version(version: Any) -> int:
    """How a header's ``version`` field is read: absent is v1 (Pi's oldest files), 1-3 and
    newer numbers are themselves, anything else (``"3"``, ``true``, ``0``) is read as v3."""
    if version is None:
        return 1
    if isinstance(version, int) and not isinstance(version, bool) and version >= 1:
        return version
    return CURRENT_VERSION


def _version_of(header: dict[str, Any], diagnostics: list[Diagnostic], line: int) -> int:
    version = header.get("version")
    number = header_version(version)
    whole = isinstance(version, int) and not isinstance(version, bool) and version >= 1
    if version is None or (whole and number <= CURRENT_VERSION):
        return number
    if whole:
        try:
            shown = _short(str(version), 20)
        except ValueError:  # more digits than Python will print
            shown = "with thousands of digits"
        message = f"file version {shown} is newer; read as v3"
        diagnostics.append(Diagnostic(line, "newer-version", message))
    else:
        message = f"version {_short(repr(version), 40)} unknown; read as v3"
        diagnostics.append(Diagnostic(line, "bad-version", message))
    return number


_VERSIONLESS_TREE = (
    "the header has no version, so the file is read as v1, as Pi does: the entries' own ids "
    "and branches are replaced by one linear chain (their labels then point nowhere); if the "
    'header lost its version, adding "version":3 to it keeps the tree'
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
    header: Header | None = None
    first_object = next(
        ((n, v) for n, v in parsed if isinstance(v, dict) and isinstance(v.get("type"), str)),
        None,
    )
    if first_object and first_object[1].get("type") == "session":
        line, raw = first_object
        header = Header(raw=raw, line=line, version=_version_of(raw, diagnostics, line))
        if raw.get("version") is None and any(
            isinstance(v, dict) and isinstance(v.get("id"), str) and "parentId" in v
            for _, v in parsed
        ):
            diagnostics.append(Diagnostic(line, "versionless-tree", _VERSIONLESS_TREE))
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
        name = f"{path}: " if path else ""
        if not parsed and not damaged:
            raise SessionFormatError(f"{name}file is empty, not a Pi session")
        raise SessionFormatError(
            f"{name}not a Pi session file (no session header and no Pi entries"
            f"{f'; {len(damaged)} unparsable line{_s(len(damaged))}' if damaged else ''})"
        )
    if not isinstance(header.raw.get("id"), str):
        header.raw["id"] = header_id_from_path(path)
    entries = _make_entries(parsed, header, diagnostics, damaged)
    header.raw.setdefault("version", header.version)
    return Session.build(
        header, entries, damaged=damaged, diagnostics=diagnostics, path=path, leaf_id=leaf_id
    )


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
    for index, (number, value) in enumerate(parsed):
        if value is header.raw:
            continue
        if not isinstance(value, dict):
            kind = "not-an-object"
            message = f"line is a JSON {_json_kind(value)}, not an object"
            diagnostics.append(Diagnostic(number, kind, message))
            damaged.append(DamagedLine(number, kind, message, _dump_raw(value)))
            continue
        entry_type = value.get("type")
        if entry_type == "session":
            message = (
                "a second session header; ignored like Pi does"
                if not header.synthesized
                else "a session header after the first entry; ignored (its id and cwd unused)"
            )
            diagnostics.append(Diagnostic(number, "extra-header", message))
            damaged.append(DamagedLine(number, "extra-header", message, _dump_raw(value)))
            continue
        if not isinstance(entry_type, str):
            message = "object has no string 'type'; not a session entry"
            diagnostics.append(Diagnostic(number, "not-an-entry", message))
            damaged.append(DamagedLine(number, "not-an-entry", message, _dump_raw(value)))
            continue
        if legacy:
            entry_id = f"L{number}"
            value["id"] = entry_id
            value["parentId"] = previous_id
            _migrate_v1_compaction(value, parsed, id_at_index)
            id_at_index[index] = entry_id
            parent_id = previous_id
        else:
            entry_id, parent_id = _v3_ids(value, number, diagnostics)
        if header.version < 3 and entry_type == "message":
            message = value.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
        if entry_type == "message" and not isinstance(value.get("message"), dict):
            diagnostics.append(
                Diagnostic(number, "bad-message", "message entry without a message object")
            )
        if entry_type not in KNOWN_ENTRY_TYPES:
            diagnostics.append(
                Diagnostic(
                    number, "unknown-type", f"unknown entry type {_short(entry_type, 40)!r}", "info"
                )
            )
        entries.append(make_entry(value, number, entry_id, parent_id))
        previous_id = entry_id
    return entries


def _v3_ids(
    value: dict[str, Any], number: int, diagnostics: list[Diagnostic]
) -> tuple[str, str | None]:
    raw_id = value.get("id")
    if isinstance(raw_id, str) and raw_id:
        entry_id = raw_id
    else:
        entry_id = f"L{number}"
        diagnostics.append(
            Diagnostic(number, "missing-id", f"entry has no string id; using {entry_id!r}")
        )
    parent = value.get("parentId", _MISSING)
    if parent is None:
        return entry_id, None
    if isinstance(parent, str):
        return entry_id, parent
    kind = "missing-parent" if parent is _MISSING else "bad-parent"
    diagnostics.append(Diagnostic(number, kind, "entry has no usable parentId; shown as a root"))
    return entry_id, None


_MISSING = object()


def _migrate_v1_compaction(
    value: dict[str, Any], parsed: list[tuple[int, Any]], id_at_index: dict[int, str]
) -> None:
    """v1 ``firstKeptEntryIndex`` -> ``firstKeptEntryId`` with Pi's exact index semantics."""
    if value.get("type") != "compaction" or "firstKeptEntryIndex" not in value:
        return
    index = value.pop("firstKeptEntryIndex")
    if isinstance(index, int) and not isinstance(index, bool) and index in id_at_index:
        value["firstKeptEntryId"] = id_at_index[index]


def _dump_raw(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def parse_session_bytes(
    data: bytes, *, path: str | None = None, leaf_id: str | None = None
) -> Session:
    """Load a session from bytes already in memory (tests, stdin, downloads)."""
    lines = data.split(b"\n")
    # Re-attach the newline so the truncation check sees which lines were complete.
    with_newlines = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    diagnostics: list[Diagnostic] = []
    damaged: list[DamagedLine] = []
    with _gc_paused():
        parsed = list(iter_parsed_lines(with_newlines, diagnostics, damaged))
        return build_session(parsed, diagnostics, damaged, path=path, leaf_id=leaf_id)


def load_session(path: str | os.PathLike[str], *, leaf_id: str | None = None) -> Session:
    """Read a session file read-only. Raises SessionFormatError or OSError with clear text."""
    file_path = os.fspath(path)
    kind = os.stat(file_path).st_mode
    if not (stat_module.S_ISREG(kind) or stat_module.S_ISDIR(kind)):  # open() says "a folder"
        # a FIFO blocks until someone writes, a device like /dev/zero never ends
        raise SessionFormatError(f"{file_path}: not a regular file, not a Pi session")
    diagnostics: list[Diagnostic] = []
    damaged: list[DamagedLine] = []
    with _gc_paused():
        with open(file_path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            parsed = list(iter_parsed_lines(_lines(handle), diagnostics, damaged))
        session = build_session(parsed, diagnostics, damaged, path=file_path, leaf_id=leaf_id)
    if _is_pristine(session):
        session.source_stamp = (stat.st_size, stat.st_mtime_ns)
    return session


def _is_pristine(session: Session) -> bool:
    """True when re-serialising the session would only reproduce the file's own content."""
    header = session.header
    return (
        header.version == CURRENT_VERSION
        and not header.synthesized
        and not session.damaged
        and not session.diagnostics
    )


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Parsed JSON has no reference cycles: the cyclic GC only slows a big load down."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    yield from handle


def session_from_records(
    records: Iterable[dict[str, Any]], *, path: str | None = None, leaf_id: str | None = None
) -> Session:
    """Build a Session from JSON objects (e.g. a redacted copy); line numbers are positions."""
    parsed = [(number, record) for number, record in enumerate(records, start=1)]
    return build_session(parsed, [], [], path=path, leaf_id=leaf_id)
