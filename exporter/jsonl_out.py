"""Session -> JSONL: the one way a session is written back (``redact -o``, the page's
embedded copy, uploads), as compact v3 lines the way Pi writes them. A copy of a file
(:func:`copy_to_jsonl`) writes a record it did not change as its own line's bytes, and
the others' numbers as JavaScript's ``JSON.stringify`` does (``0.00003``, not ``3e-05``).

The loader reads; this module writes. Lone surrogates (valid in JSON text, not in UTF-8)
stay as ``\\uXXXX`` escapes so that nothing is lost or replaced.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
from collections.abc import Sequence
from typing import Any

from exporter.formatting import escape_surrogates, surrogates_as_replacement_escapes
from exporter.fsutil import hashed_prefix
from exporter.jsonl_in import (
    JS_SPACE,
    is_long_int_error,
    long_integers_allowed,
    reject_constant,
)
from exporter.loader import CURRENT_VERSION
from exporter.session import Session
from exporter.times import js_number_text

__all__ = [
    "REWRITTEN_NOTE",
    "copy_to_jsonl",
    "download_bytes",
    "download_copy",
    "dumps_line",
    "js_number",
    "read_source_bytes",
    "session_records",
    "session_to_jsonl",
]


def dumps_line(value: Any, *, escape: bool = True, javascript_numbers: bool = False) -> str:
    """One JSONL line as Pi writes it (compact, UTF-8); lone surrogates stay as escapes
    (``escape`` False: as they are, for :func:`session_to_utf8_jsonl`). With
    ``javascript_numbers``, floats as JavaScript writes them (``0.00003``; see
    :func:`js_number`), as in a line Pi wrote; else as Python does (``3e-05``).

    Valid inputs ``json.dumps`` cannot write back: a number too big for a float (``1e400``
    reads as infinity, which it would write as the non-JSON ``Infinity``) and nesting deeper
    than Python's recursion limit go through a slower encoder that handles them; an integer
    of more digits than Python's limit (4,300), which the loader reads, is written under the
    loader's limit (:func:`~exporter.jsonl_in.long_integers_allowed`), so a library caller,
    whose process keeps Python's limit, can write what it loaded.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError):
        with long_integers_allowed():  # (only this rare line pays for it)
            text = _encode_iteratively(value)
    if javascript_numbers and _PYTHON_FLOAT.search(text):  # (most lines have no such float)
        text = _JSON_TOKEN.sub(_as_javascript_writes, text)
    return escape_surrogates(text) if escape else text


#: Where Python writes a float otherwise than JavaScript: with an exponent (``3e-05``,
#: ``1e+16``; JavaScript below 1e-6 and from 1e21 up only, as ``1e-7``) or as ``5.0``.
_PYTHON_FLOAT = re.compile(r"[0-9]e[-+][0-9]|[0-9]\.0(?=[,\]}]|\Z)")
#: A JSON string (left as it is) or a number, in compact JSON text
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9.eE+\-]*')


def _as_javascript_writes(token: re.Match[str]) -> str:
    text = token.group()
    if text[0] == '"' or not ("." in text or "e" in text or "E" in text):
        return text  # a string, or an integer (written exactly, whatever its length)
    value = float(text)
    return js_number(value) if math.isfinite(value) else text  # (1e999: as the file said)


def js_number(value: float) -> str:
    """A finite float as JavaScript's ``JSON.stringify`` writes it: the shortest digits
    that read back as the same number (Python's too), with no exponent from 1e-6 up to 1e21
    (``0.00003``, ``15000000000000000``), else ``1e-7``, ``1.5e+21``; ``5.0`` is ``5``: the
    rule of ``times.js_number_text`` (its ``String()``, the same for a finite number)."""
    return js_number_text(value) or repr(value)


class _Literal(str):
    """Output text on the encoder's stack (a value there is never of this exact type)."""

    __slots__ = ()


def _encode_iteratively(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))`` without recursion; an infinite float
    becomes ``1e999`` (what the file said: a number beyond a float's range)."""
    out: list[str] = []
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if type(item) is _Literal:
            out.append(item)
        elif isinstance(item, dict):
            pairs = list(item.items())
            todo.append(_Literal("}"))
            for index in range(len(pairs) - 1, -1, -1):
                key, member = pairs[index]
                todo.append(member)
                todo.append(_Literal(("," if index else "") + _scalar(str(key)) + ":"))
            todo.append(_Literal("{"))
        elif isinstance(item, (list, tuple)):
            todo.append(_Literal("]"))
            for index in range(len(item) - 1, -1, -1):
                todo.append(item[index])
                if index:
                    todo.append(_Literal(","))
            todo.append(_Literal("["))
        else:
            out.append(_scalar(item))
    return "".join(out)


def _scalar(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "null" if math.isnan(value) else ("1e999" if value > 0 else "-1e999")
    return json.dumps(value, ensure_ascii=False)


def session_records(session: Session) -> list[dict[str, Any]]:
    """Header and entries as JSON objects in file order (v3 after migration)."""
    return [_header_record(session), *(entry.raw for entry in session.entries)]


def _header_record(session: Session) -> dict[str, Any]:
    header = dict(session.header.raw)
    header["version"] = CURRENT_VERSION
    return header


def session_to_jsonl(session: Session) -> str:
    """The session as v3 JSONL text (what `redact -o` writes and the page lets you download)."""
    return "".join(dumps_line(record) + "\n" for record in session_records(session))


def copy_to_jsonl(copy: Session, source: bytes | None, source_lines: Sequence[int]) -> bytes:
    """:func:`session_to_jsonl` (as UTF-8) for a copy of the session read from ``source``
    (its bytes, or None when they cannot be had: each record is then written out). A record
    the copy did not change is written as its own line of ``source`` (``source_lines``: the
    line each record of the copy, header first, was read from): ``redact`` turned Pi's
    ``0.00003`` into ``3e-05`` and changed nearly every line of a session it found nothing
    in. A line is taken only when it holds exactly the record (its value, once each key):
    an earlier duplicate of a key, which no reader sees and the redaction never scanned,
    must not go out."""
    data = source or b""
    starts = _line_starts(data) if source is not None else []  # (not a copy of every line)

    def written(record: dict[str, Any], position: int) -> bytes:
        number = source_lines[position - 1] if 0 < position <= len(source_lines) else 0
        if 0 < number <= len(starts):
            end = starts[number] - 1 if number < len(starts) else len(data)
            own = _as_written(data[starts[number - 1] : end], record)
            if own is not None:
                return own
        return dumps_line(record, javascript_numbers=True).encode("utf-8")

    # one line at a time into one buffer: a join held every line and the whole copy at once
    out = io.BytesIO()
    for record, position in itertools.chain(
        [(_header_record(copy), copy.header.line)], ((e.raw, e.line) for e in copy.entries)
    ):
        out.write(written(record, position))
        out.write(b"\n")
    return out.getvalue()


def _line_starts(data: bytes) -> list[int]:
    """Where each line of ``data`` starts, split on ``\\n`` as the loader splits them."""
    starts = [0]
    end = data.find(b"\n")
    while end >= 0:
        starts.append(end + 1)
        end = data.find(b"\n", end + 1)
    return starts


class _RepeatedKey(ValueError):
    """An object of the line names a key twice."""


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _RepeatedKey
    return value


#: JSON as a line is checked against a record: NaN and Infinity are no JSON, a key twice
#: hides a value (see :func:`copy_to_jsonl`)
_EXACT_JSON = json.JSONDecoder(object_pairs_hook=_once_each, parse_constant=reject_constant)


def _as_written(line: bytes, record: dict[str, Any]) -> bytes | None:
    """The line (without the spaces, BOM or CR around it) when it is ``record`` as Pi writes
    one: exactly its value, compact. None when it is not, is no valid UTF-8 (its bytes would
    stay invalid), or has blanks between its tokens (``json.dumps``' ``", "``, a file made
    by hand): that is written as Pi would, as every copy was."""
    try:
        text = line.decode("utf-8")
        value = text.strip(JS_SPACE)
        if not _compact(value) or _exact_value(value) != record:
            return None
    except (ValueError, RecursionError):  # (UnicodeDecodeError, a repeated key too)
        return None
    return line if value == text else value.encode("utf-8")


def _exact_value(text: str) -> Any:
    """``text``'s value by :data:`_EXACT_JSON`; an integer past Python's digit limit, which
    the loader read, is read again as the loader did (the line was written out anew)."""
    try:
        return _EXACT_JSON.decode(text)
    except ValueError as error:
        if not is_long_int_error(error):
            raise
    with long_integers_allowed():
        return _EXACT_JSON.decode(text)


#: A JSON string, blanks and all.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
#: An object's first key followed by a blank: ``{"type": "session", …}``
_SPACED_START = re.compile(r'\{\s*"[^"\\]*"\s*:\s|\{\s')


def _compact(text: str) -> bool:
    """Whether JSON ``text`` has no blank outside its strings (as ``JSON.stringify`` writes)."""
    if " " not in text and "\t" not in text:
        return True
    if _SPACED_START.match(text):  # (a quick no for ``json.dumps``' lines, read whole else)
        return False
    outside = _JSON_STRING.sub("", text)
    return " " not in outside and "\t" not in outside


def session_to_utf8_jsonl(session: Session) -> tuple[str, int]:
    """:func:`session_to_jsonl` for readers that want UTF-8 in every string, and how many
    lone surrogates it replaced: a lone one (half an emoji, as a cut string leaves it) is
    valid JSON as an escape, but Arrow (the ``datasets`` library, the Hub's viewer) refused
    the whole file over it, so it is written ``\\ufffd``. Halves that make a pair are
    joined into their character."""
    text = "".join(dumps_line(record, escape=False) + "\n" for record in session_records(session))
    return surrogates_as_replacement_escapes(text)


def download_bytes(session: Session) -> bytes:
    """What a page's download of the session holds: the file's own bytes when they are the
    session, else the session written out (a copy, or one read from several files)."""
    return download_copy(session)[0]


#: What a page says of its copy when the file changed otherwise than by lines appended.
REWRITTEN_NOTE = (
    "the session as it was read, written out anew: the file has changed since "
    "(not only grown), or can no longer be read"
)


def download_copy(session: Session) -> tuple[bytes, str | None]:
    """:func:`download_bytes`, and what the page should say of it when it is not the file's
    bytes though the session is that file as read (:data:`REWRITTEN_NOTE`); None when
    it is the file's bytes, or a copy (redacted, several files) that says so itself."""
    data = read_source_bytes(session)
    if data is not None:
        return data, None
    note = REWRITTEN_NOTE if session.source_stamp is not None else None
    return session_to_jsonl(session).encode("utf-8", "replace"), note


def read_source_bytes(session: Session) -> bytes | None:
    """The session's own bytes, as they were read (see ``Session.source_stamp``).

    The page's download is then the file itself, damaged lines and all, and no entry is
    encoded again. Pi appends to a session while a page is made (and a ``watch`` page is
    made again and again): the file's first bytes are then still the ones read, when they
    are as many and hash the same (``Session.source_read``); not so when it was rewritten
    (the size alone would not tell). None for a copy (redacted, rebuilt) or a file changed
    otherwise since it was read.
    """
    if session.source_data is not None:
        return session.source_data
    if session.source_stamp is None or session.path is None:
        return None
    read = session.source_read
    try:
        with open(session.path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            unchanged = (stat.st_size, stat.st_mtime_ns) == session.source_stamp
            # only as many bytes as were read or stamped: Pi may append between the fstat
            # and the read (then a whole read() brought one line more than was stamped)
            if unchanged and (read is None or read[0] == stat.st_size):  # (no hash needed)
                data = handle.read(stat.st_size)
                return data if len(data) == stat.st_size else None
            return None if read is None else hashed_prefix(handle, *read)
    except OSError:
        return None
