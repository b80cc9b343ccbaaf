"""Session -> JSONL: the one way a session is written back (``redact -o``, the page's
embedded copy, uploads), as compact v3 lines the way Pi writes them.

The loader reads; this module writes. Lone surrogates (valid in JSON text, not in UTF-8)
stay as ``\\uXXXX`` escapes so that nothing is lost or replaced.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from exporter.formatting import escape_surrogates, surrogates_as_replacement_escapes
from exporter.loader import CURRENT_VERSION
from exporter.session import Session

__all__ = ["dumps_line", "read_source_bytes", "session_records", "session_to_jsonl"]


def dumps_line(value: Any, *, escape: bool = True) -> str:
    """One JSONL line as Pi writes it (compact, UTF-8); lone surrogates stay as escapes
    (``escape`` False: as they are, for :func:`session_to_utf8_jsonl`).

    Two valid inputs ``json.dumps`` cannot write back: a number too big for a float (``1e400``
    reads as infinity, which it would write as the non-JSON ``Infinity``) and nesting deeper
    than Python's recursion limit. Both go through a slower encoder that handles them.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError):
        text = _encode_iteratively(value)
    return escape_surrogates(text) if escape else text


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
    header = dict(session.header.raw)
    header["version"] = CURRENT_VERSION
    return [header, *(entry.raw for entry in session.entries)]


def session_to_jsonl(session: Session) -> str:
    """The session as v3 JSONL text (what `redact -o` writes and the page lets you download)."""
    return "".join(dumps_line(record) + "\n" for record in session_records(session))


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
    data = read_source_bytes(session)
    return data if data is not None else session_to_jsonl(session).encode("utf-8", "replace")


def read_source_bytes(session: Session) -> bytes | None:
    """The session's own bytes, as they were read (see ``Session.source_stamp``).

    The page's download is then the file itself, damaged lines and all, and no entry is
    encoded again; None for a copy (redacted, rebuilt) or a file changed since it was read.
    """
    if session.source_data is not None:
        return session.source_data
    if session.source_stamp is None or session.path is None:
        return None
    try:
        with open(session.path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            if (stat.st_size, stat.st_mtime_ns) != session.source_stamp:
                return None
            data = handle.read()
    except OSError:
        return None
    return data if len(data) == session.source_stamp[0] else None
