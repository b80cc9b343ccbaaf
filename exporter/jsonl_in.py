"""JSONL lines -> parsed JSON values, as tolerant as Pi: one BOM, blank lines as JavaScript's
trim() sees them, integers of any length, and every unparsable line kept as a damaged record
with a diagnostic (the loader builds the session from what this yields).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from exporter.entries import DamagedLine
from exporter.formatting import clipped
from exporter.session import Diagnostic


def header_object(first_line: bytes) -> dict[str, Any]:
    """A file's first line as a JSON object (BOMs and spaces before it stripped, as Pi's trim
    does), ``{}`` when it is none: the cheap look at a header that code deciding before any
    load takes (publish's repo paths, redact's copies)."""
    try:
        header = json.loads(first_line.decode("utf-8").lstrip(JS_SPACE))
    except (ValueError, RecursionError):
        return {}
    return header if isinstance(header, dict) else {}


def shorten(text: str, limit: int = 80) -> str:
    """One line of at most ``limit`` characters, for a diagnostic; cut at a grapheme
    cluster's start (no emoji or accented letter broken before the ellipsis)."""
    text = text.replace("\n", " ").replace("\r", " ")
    return clipped(text, limit)


def reject_constant(name: str) -> Any:
    """NaN and Infinity are not JSON (JavaScript cannot read them back): the line is damaged."""
    raise ValueError(f"{name} is not valid JSON")


#: JSON as the loader reads a line: NaN and Infinity are damage, not numbers.
STRICT_JSON = json.JSONDecoder(parse_constant=reject_constant)


def line_value(raw: bytes) -> Any:
    """A line's value, or None where the loader finds it damaged (NaN and Infinity too):
    for a quick look at a file's lines (a listing's scan, a search's sniff)."""
    try:
        return STRICT_JSON.decode(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
        return None


def iter_parsed_lines(
    lines: Iterable[bytes], diagnostics: list[Diagnostic], damaged: list[DamagedLine]
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, value)`` for every line that parses as JSON.

    Splits on ``\\n`` only (binary line iteration), ignores blank lines and what JavaScript's
    ``trim()`` takes from the file's two ends (BOMs, Unicode spaces), as Pi does, and keeps
    every unparsable line as a damaged record with a diagnostic.
    """
    # One key object per distinct key for the whole file (json only shares keys within a line).
    keys: dict[str, str] = {}
    decoder = json.JSONDecoder(
        parse_constant=reject_constant,
        object_pairs_hook=lambda pairs: {keys.setdefault(k, k): v for k, v in pairs},
    )
    pending: tuple[int, str, str, bool, Diagnostic | None] | None = None  # maybe "truncated"
    first_content = True
    for number, raw in enumerate(lines, start=1):
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
        if not text.strip(JS_SPACE):
            continue
        if first_content:  # Pi trims the whole file: BOMs and spaces before the header go
            text, first_content = text.lstrip(JS_SPACE), False
        if pending is not None:
            _flush(pending, diagnostics, damaged)
            pending = None
        try:
            value = decoder.decode(text)
        except ValueError as error:
            long_int = _LONG_INT in str(error)
            value = _with_long_ints(decoder.decode, text) if long_int else _NONE
            if value is _NONE:
                reason = TOO_LONG_INT if long_int else _json_error(error, text, decoder)
                pending = (number, text.rstrip("\r\n"), reason, ends_with_newline, bad_utf8)
                continue
        except RecursionError:  # ~1,000 nested arrays: valid JSON, deeper than Python parses
            reason = TOO_DEEP
            pending = (number, text.rstrip("\r\n"), reason, ends_with_newline, bad_utf8)
            continue
        if bad_utf8:
            diagnostics.append(bad_utf8)
        yield number, value
    if pending is not None:
        number, text, _, ends_with_newline, bad_utf8 = pending
        # ... and spaces after the last line (an NBSP after its "}")
        trimmed = text.rstrip(JS_SPACE)
        value = _NONE
        if trimmed != text:
            with contextlib.suppress(ValueError, RecursionError):
                value = decoder.decode(trimmed)
        if value is not _NONE:
            if bad_utf8:
                diagnostics.append(bad_utf8)
            yield number, value
        elif not ends_with_newline:
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
TOO_DEEP = "nested too deeply to read (the rest of the line was not checked)"
TOO_LONG_INT = (
    f"an integer of more than {MAX_INT_DIGITS:,} digits, this tool's limit (the rest of the "
    "line was not checked)"
)


def allow_long_integers() -> None:
    """Raise this process's integer-digit limit to ``MAX_INT_DIGITS``: JSON integers have no
    length limit and Pi reads any, but Python's 4,300 digits broke rendering and writing
    them (the CLI calls this once; the library leaves the process setting alone)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if limit:
        sys.set_int_max_str_digits(max(limit, MAX_INT_DIGITS))


def is_long_int_error(error: BaseException) -> bool:
    """Whether ``error`` is Python's refusal of an integer over its digit limit (4,300 by
    default), which ``json`` raises as a plain ValueError both ways."""
    return isinstance(error, ValueError) and _LONG_INT in str(error)


#: Threads inside :func:`long_integers_allowed`, and the limit the first found, which the
#: last one out puts back (see its docstring).
_LONG_INTS_LOCK = threading.Lock()
_long_int_users = 0
_limit_before: int | None = None


@contextlib.contextmanager
def long_integers_allowed() -> Iterator[None]:
    """Integers of up to ``MAX_INT_DIGITS`` digits, read or written, while this lasts; the
    process's own limit afterwards. The CLI raises it once for good
    (:func:`allow_long_integers`); a library caller's limit is theirs, so the loader and the
    writers raise it only around the line that needs it.

    The limit is one per process (per interpreter), not per thread. Each thread saving and
    restoring it on its own raced: two threads in at once, the second saved the first's
    raised limit and put it back last, raised for good (and the first's restore lowered it
    under the second, whose line then failed). So the threads inside are counted under a
    lock: the first in saves the limit, the last out restores it, and in between every
    thread sees the raised one. Meanwhile other threads of the process may read long
    integers too: only more is accepted, for as long as a line takes. A limit the caller
    changed meanwhile is theirs: it is left as they set it."""
    global _long_int_users, _limit_before
    if not hasattr(sys, "get_int_max_str_digits"):  # before 3.11 (and 3.10.7): no limit
        yield
        return
    with _LONG_INTS_LOCK:
        if _long_int_users == 0:
            limit = sys.get_int_max_str_digits()
            _limit_before = limit
            if limit and limit < MAX_INT_DIGITS:  # (0: no limit at all)
                sys.set_int_max_str_digits(MAX_INT_DIGITS)
        _long_int_users += 1
    try:
        yield
    finally:
        with _LONG_INTS_LOCK:
            _long_int_users -= 1
            if _long_int_users == 0 and _limit_before is not None:
                if sys.get_int_max_str_digits() == MAX_INT_DIGITS != _limit_before:
                    sys.set_int_max_str_digits(_limit_before)
                _limit_before = None


def _with_long_ints(function: Callable[[str], Any], text: str) -> Any:
    """``function(text)`` with integers up to ``MAX_INT_DIGITS`` digits allowed (valid JSON
    that Pi reads was a damaged line); ``_NONE`` if it still fails."""
    if not getattr(sys, "get_int_max_str_digits", lambda: 0)():
        return _NONE  # no limit: the line failed for another reason
    with long_integers_allowed():
        try:
            return function(text)
        except (ValueError, RecursionError):
            return _NONE


# What JavaScript's trim() removes, so a line Pi skips as blank is blank here too: \v and \f
# and Unicode spaces are; U+001C..U+001F and U+0085 (Python's str.strip() takes them) are not.
JS_SPACE = (
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


def _json_error(error: ValueError, text: str, decoder: json.JSONDecoder) -> str:
    """The parser's complaint without its own "line 1 column 5 (char 4)", which read like
    a line of the file: ``Expecting value at column 5``. A line cut off (the most common
    damage) says so: parsed with its newline, it read "Invalid control character" (the
    newline, inside the cut string) or "Expecting ',' delimiter at column 1" (of the next
    "line"). Only failed lines are parsed again, so good lines cost nothing more."""
    if not isinstance(error, json.JSONDecodeError):
        return str(error)
    line = text.rstrip("\r\n")
    try:
        decoder.decode(line)  # fails as ``text`` did, but at the line's end, not past it
    except json.JSONDecodeError as bare:
        if bare.msg.startswith("Unterminated string"):
            return f"the line ends inside a string, after column {len(line)}"
        if bare.pos >= len(line):
            return f"the line ends before the JSON does, after column {len(line)}"
        error = bare
    except (ValueError, RecursionError):
        pass  # as ``text`` failed: the first error stands
    # some messages end in " at" themselves ("Invalid control character at"); the column
    # counts from the line's start, not from a "line 2" begun by the newline
    return f"{error.msg.removesuffix(' at')} at column {error.pos + 1}"


def _record_bad_line(
    number: int, text: str, error: str, diagnostics: list[Diagnostic], damaged: list[DamagedLine]
) -> None:
    if error in (TOO_DEEP, TOO_LONG_INT):  # more than this tool reads (Pi may read it)
        message = f"unreadable JSON: {error}"
    else:
        message = f"not valid JSON ({shorten(error, 100)})"
    diagnostics.append(Diagnostic(number, "invalid-json", message))
    damaged.append(DamagedLine(number, "invalid-json", message, text))
