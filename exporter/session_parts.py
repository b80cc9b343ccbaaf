"""The small values a ``Session`` hands out: diagnostics, branches, tool-call references,
timestamps read one way everywhere (ISO with ``Z``, or epoch milliseconds), and the ids
damaged lines still show.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import MAXYEAR, MINYEAR, datetime, timezone
from typing import Any

from exporter.entries import DamagedLine

__all__ = ["Branch", "Diagnostic", "ToolCallRef", "ids_on_damaged_lines", "parse_time"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something wrong in the file, reported to the user (``line`` is 1-based, 0 = whole file)."""

    line: int
    kind: str
    message: str
    severity: str = "warning"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "message": self.message}

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.message} [{self.kind}]"


def quoted_id(value: str, limit: int = 60) -> str:
    """An id as a diagnostic quotes it: whole when short, else its start, its end (where a
    renamed duplicate's ``~2`` is) and its length (a damaged file's megabyte-long id was
    written out whole, in every warning naming it)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}…{value[-8:]!r} ({len(value):,} characters)"


@dataclass(slots=True)
class Branch:
    """One line of the page, ending at a leaf, and the entries that only it owns.

    ``fork_id`` is the entry where it leaves another line (None for the main line and for
    separate roots); ``entry_ids`` run from just below the fork down to ``leaf_id``, so the
    branches partition the tree and per-branch totals add up to the whole. ``is_active``:
    the line holding the active leaf.
    """

    leaf_id: str
    fork_id: str | None
    entry_ids: list[str]
    is_active: bool


@dataclass(frozen=True, slots=True)
class ToolCallRef:
    """Where a tool call lives: the assistant entry and the call's index in its content."""

    entry_id: str
    block_index: int
    call_id: str


def parse_time(value: Any) -> datetime | None:
    """Parse an ISO timestamp (with ``Z``) or epoch milliseconds; None when unusable."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            parsed = _iso_fallback(text)
            if parsed is None:
                return None
        if not parsed.tzinfo:
            return parsed.replace(tzinfo=timezone.utc)
        if parsed.year in (MINYEAR, MAXYEAR):  # 0001-01-01T00:00+14:00 is before year 1 in UTC
            try:
                parsed.astimezone(timezone.utc)
            except OverflowError:
                return None
        return parsed
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    return None


#: ISO 8601 date-times Python 3.10's ``fromisoformat`` refuses and 3.11's reads: a fraction
#: of other than 3 or 6 digits (``.12``, Go's nanoseconds) and the basic format.
_ISO_PARTS = re.compile(
    r"(\d{4})(?P<ds>-?)(\d{2})(?P=ds)(\d{2})[T ](\d{2})(?P<ts>:?)(\d{2})"
    r"(?:(?P=ts)(\d{2})(?:[.,](\d+))?)?(?:([+-])(\d{2})(?::?(\d{2}))?)?",
    re.ASCII,
)


def _iso_fallback(text: str) -> datetime | None:
    """``text`` in the form every supported Python reads, then read (None: not a date-time)."""
    match = _ISO_PARTS.fullmatch(text)
    if match is None:  # a date, and a time, each wholly basic or wholly extended
        return None
    year, _, month, day, hour, _, minute, second, fraction, sign, tz_hours, tz_minutes = (
        match.groups()
    )
    micro = ((fraction or "") + "000000")[:6]  # as 3.11 does: digits past 6 are cut
    zone = f"{sign}{tz_hours}:{tz_minutes or '00'}" if sign else ""
    try:
        return datetime.fromisoformat(
            f"{year}-{month}-{day}T{hour}:{minute}:{second or '00'}.{micro}{zone}"
        )
    except ValueError:
        return None


_ID_FIELD = re.compile(r'"id"\s*:\s*"([^"\\\n]{1,200})"')


def ids_on_damaged_lines(damaged: Iterable[DamagedLine]) -> dict[str, int]:
    """Entry ids that damaged lines still show (``"id": "a2"`` in a truncated line) -> the
    first such line: an entry whose parent is missing was cut off from it there."""
    found: dict[str, int] = {}
    for line in damaged:
        for match in _ID_FIELD.finditer(line.text):
            found.setdefault(match.group(1), line.line)
    return found
