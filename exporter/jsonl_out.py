"""Session -> JSONL: the one way a session is written back (``redact -o``, the page's
embedded copy, uploads), as compact v3 lines the way Pi writes them.

The loader reads; this module writes. Lone surrogates (valid in JSON text, not in UTF-8)
stay as ``\\uXXXX`` escapes so that nothing is lost or replaced.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from exporter.formatting import escape_surrogates
from exporter.loader import CURRENT_VERSION
from exporter.session import Session

__all__ = ["dumps_line", "read_source_bytes", "session_records", "session_to_jsonl"]


def dumps_line(value: Any) -> str:
    """One JSONL line as Pi writes it (compact, UTF-8); lone surrogates stay as escapes.

    Two valid inputs ``json.dumps`` cannot write back: a number too big for a float (``1e400``
    reads as infinity, which it would write as the non-JSON ``Infinity``) and nesting deeper
    than Python's recursion limit. Both go through a slower encoder that handles them.
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (ValueError, RecursionError):
        text = _encode_iteratively(value)
    return escape_surrogates(text)


# (from a run's first backslash: at each one of a long run it was quadratic)
_SURROGATE_ESCAPE = re.compile(r"(?<!\\)(\\+)u(d[89a-f][0-9a-f]{2})", re.IGNORECASE)


def lone_surrogates_replaced(text: str) -> tuple[str, int]:
    """JSON text with each escaped half of a character (``\\ud83d`` alone) written as
    U+FFFD, and how many: JSON allows one, but UTF-8 has no form for it, so Arrow (the
    ``datasets`` library, the Hub's viewer) refuses the whole file. Pairs stay."""
    if "\\u" not in text or not _SURROGATE_ESCAPE.search(text):
        return text, 0
    escapes = [m for m in _SURROGATE_ESCAPE.finditer(text) if len(m.group(1)) % 2 == 1]
    lone: list[re.Match[str]] = []
    index = 0
    while index < len(escapes):
        here = escapes[index]
        high = int(here.group(2), 16) < 0xDC00
        following = escapes[index + 1] if index + 1 < len(escapes) else None
        paired = following is not None and following.start() == here.end()
        if high and paired and int(following.group(2), 16) >= 0xDC00:  # one character
            index += 2
            continue
        lone.append(here)
        index += 1
    if not lone:
        return text, 0
    parts, last = [], 0
    for match in lone:
        start = match.end(1) - 1  # the escape's own backslash
        parts += [text[last:start], "\\ufffd"]
        last = match.end()
    parts.append(text[last:])
    return "".join(parts), len(lone)


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
