"""Timestamps read one way everywhere: ISO 8601 (with ``Z``) or epoch milliseconds.

Its own module so an entry can keep its parsed time (``Entry.moment``) without importing
the session's other parts.
"""

from __future__ import annotations

import re
from datetime import MAXYEAR, MINYEAR, datetime, timezone
from typing import Any

__all__ = ["message_time", "parse_time"]


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


def message_time(moment: datetime | None, raw: Any) -> datetime | None:
    """An entry's time (``moment``, its ``timestamp`` read), else its message's own (epoch
    milliseconds): how `stats` dates a turn and `list` and `--since` a session's activity
    (they disagreed on entries without a time of their own), as Pi's "modified" reads both."""
    if moment is None and isinstance(raw, dict):
        message = raw.get("message")
        if isinstance(message, dict):
            moment = parse_time(message.get("timestamp"))
    return moment
