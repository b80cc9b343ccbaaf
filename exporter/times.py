"""Timestamps read one way everywhere: ISO 8601 (with ``Z``) or epoch milliseconds.

Its own module so an entry can keep its parsed time (``Entry.moment``) without importing
the session's other parts.
"""

from __future__ import annotations

import math
import re
from datetime import MAXYEAR, MINYEAR, datetime, timezone
from typing import Any

__all__ = [
    "clock_text",
    "js_date_ms",
    "js_number_text",
    "js_text_ms",
    "message_time",
    "parse_time",
    "read_iso",
    "utc_iso",
    "utc_moment",
]


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


_BASIC_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})", re.ASCII)


def read_iso(text: str) -> datetime | None:
    """An ISO 8601 date or date-time as Python 3.11's ``fromisoformat`` reads it, on every
    supported Python (3.10's refuses a fraction of other than 3 or 6 digits, nanoseconds and
    the basic format: ``--since 2024-05-01T10:00:00.12Z`` was an error there); None when
    it is not one."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    date = _BASIC_DATE.fullmatch(text)
    if date is None:
        return _iso_fallback(text)
    try:
        return datetime(int(date[1]), int(date[2]), int(date[3]))
    except ValueError:
        return None


def utc_moment(moment: datetime) -> datetime:
    """The moment in UTC, the one zone every output writes (times written at +05:30 and
    +00:00 side by side read out of order); one without a zone is UTC, as ``parse_time``
    reads it. (A moment ``parse_time`` made always has a UTC form.)"""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def clock_text(moment: datetime, timespec: str = "seconds", sep: str = " ") -> str:
    """``YYYY-MM-DD HH:MM:SS`` (to ``timespec``) of the moment's own clock, without a zone,
    the year in four digits: strftime's ``%Y`` wrote year 999 as "999" on Linux, a date
    no browser or ISO 8601 reader takes."""
    return moment.replace(tzinfo=None).isoformat(sep, timespec)


def utc_iso(moment: datetime) -> str:
    """The moment in UTC as the JSON outputs write times (``isoformat``: ``+00:00``); as
    written when it has no UTC form (9999-12-31T23:00-05:00 made other than by
    ``parse_time``)."""
    try:
        return utc_moment(moment).isoformat()
    except OverflowError:
        return moment.isoformat()


def message_time(moment: datetime | None, raw: Any) -> datetime | None:
    """An entry's time (``moment``, its ``timestamp`` read), else its message's own (epoch
    milliseconds): how `stats` dates a turn and `list` and `--since` a session's activity
    (they disagreed on entries without a time of their own). Pi's "modified"
    (getLastActivityTime) takes the message's number first: not done here while `list`'s
    fast scan reads only a line's start, where the entry's time is (the two would differ)."""
    if moment is None and isinstance(raw, dict):
        message = raw.get("message")
        if isinstance(message, dict):
            moment = parse_time(message.get("timestamp"))
    return moment


#: The most JavaScript's Date holds either side of 1970 (TimeClip), in milliseconds.
_JS_TIME_RANGE = 8.64e15


def js_date_ms(value: Any) -> float:
    """``new Date(value).getTime()`` for a JSON value, as Pi orders sibling entries by it:
    epoch milliseconds as themselves (whole, within Date's range), an ISO string read to the
    millisecond (``05.0009Z`` is ``05Z``), null as 0, a bool as 0 or 1, an array as its
    elements joined; NaN for what JavaScript reads as no time (an object, ``"bogus"``).
    Strings are read as this tool reads times (ISO 8601), except the forms V8 refuses
    (spaces around it, the basic ``20250101T…`` form, a decimal comma); the other forms V8
    still guesses at ("Jan 1 2025") are NaN here."""
    if value is None or isinstance(value, bool):
        return float(bool(value))
    if isinstance(value, (int, float)):
        number = _as_float(value)
        if not abs(number) <= _JS_TIME_RANGE:  # (NaN too)
            return math.nan
        return float(math.trunc(number)) + 0.0
    if isinstance(value, list):
        value = _js_joined(value)
    return js_text_ms(value, parse_time(value)) if isinstance(value, str) else math.nan


def js_text_ms(text: str, moment: datetime | None) -> float:
    """``js_date_ms`` of a string that ``parse_time`` read as ``moment`` (an entry's time
    is read once: ``Entry.moment``)."""
    if moment is None or text != text.strip() or _V8_REFUSES.search(text):
        return math.nan
    since_epoch = moment - _EPOCH
    micros = (since_epoch.days * 86_400 + since_epoch.seconds) * 1_000_000
    return float((micros + since_epoch.microseconds) // 1000)


def _as_float(value: int | float) -> float:
    """A JSON number as the double JavaScript parses it (an integer past the range of
    doubles is Infinity there; Python's float() refuses it)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: ISO forms Python reads and V8's Date does not: the basic form, a decimal comma.
_V8_REFUSES = re.compile(r"^[+-]?\d{8}|,")


def _js_joined(items: list[Any]) -> str:
    """An array as JavaScript turns it into a string (``[1, "a"]`` is ``"1,a"``)."""
    parts = []
    for item in items:
        if item is None:
            parts.append("")
        elif isinstance(item, bool):
            parts.append("true" if item else "false")
        elif isinstance(item, str):
            parts.append(item)
        elif isinstance(item, list):
            parts.append(_js_joined(item))
        elif isinstance(item, (int, float)):
            parts.append(js_number_text(item) or "")
        else:
            parts.append("[object Object]")
    return ",".join(parts)


def js_number_text(value: Any) -> str | None:
    """A JSON number as JavaScript's ``String()`` writes it (``1``, ``1.5``, ``1e+21``,
    ``0.000001``), the number Pi's JavaScript holds (``1.0`` is ``1``; an integer past
    2**53 is rounded as JSON.parse rounds it); None for anything else (a bool too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = _as_float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"  # -0 too
    mantissa, _, exponent = repr(abs(number)).partition("e")  # the shortest exact digits
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    power = int(exponent or 0) - len(fraction)  # the number is int(digits) * 10**power
    stripped = digits.rstrip("0")
    power += len(digits) - len(stripped)
    digits, count = stripped, len(stripped)
    point = count + power  # the number is 0.<digits> * 10**point
    sign = "-" if number < 0 else ""
    if count <= point <= 21:
        return f"{sign}{digits}{'0' * (point - count)}"
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    shown = digits[0] + (f".{digits[1:]}" if count > 1 else "")
    return f"{sign}{shown}e{'+' if point >= 1 else '-'}{abs(point - 1)}"
