"""Session -> JSONL: the one way a session is written back (``redact -o``, the page's
embedded copy, uploads), as compact v3 lines the way Pi writes them.

The loader reads; this module writes. Lone surrogates (valid in JSON text, not in UTF-8)
stay as ``\\uXXXX`` escapes so that nothing is lost or replaced.
"""

from __future__ import annotations

import json
import os
from typing import Any

from exporter.formatting import escape_surrogates
from exporter.loader import CURRENT_VERSION
from exporter.session import Session

__all__ = ["dumps_line", "read_pristine_source", "session_records", "session_to_jsonl"]


def dumps_line(value: Any) -> str:
    """One JSONL line as Pi writes it (compact, UTF-8); lone surrogates stay as escapes."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def session_records(session: Session) -> list[dict[str, Any]]:
    """Header and entries as JSON objects in file order (v3 after migration)."""
    header = dict(session.header.raw)
    header["version"] = CURRENT_VERSION
    return [header, *(entry.raw for entry in session.entries)]


def session_to_jsonl(session: Session) -> str:
    """The session as v3 JSONL text (what `redact -o` writes and the page lets you download)."""
    return "".join(dumps_line(record) + "\n" for record in session_records(session))


def read_pristine_source(session: Session) -> bytes | None:
    """The file's bytes when it is still exactly what was loaded (see ``source_stamp``).

    Saves re-encoding every entry for the page's embedded copy; None when the session was
    transformed, repaired or migrated, or the file changed since it was read.
    """
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
