"""``publish --deny REGEX|FILE``: sessions kept out of a dataset by what they say.

``--skip`` keeps a session out by its id or file; a team also needs to keep out every
session that names a customer, an internal host or a private project, whichever session
that is (pi-share-hf's ``collect --deny``). A pattern is matched against the session as it
would be published: after redaction (a secret replaced is gone, so a match inside it does
not deny), over each string value and object key of its JSONL records, decoded (a word
after a newline, or one written with ``\\uXXXX`` escapes, is not hidden by how the JSON
text spells it). One ``re.search`` per string and pattern: linear in the session's size.
The matching runs in the worker that redacts the session (``hub_plan._prepare_one``), so
it costs no second pass over the file. The matched text is never said: it may be what the
pattern is there to keep private.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exporter.fsutil import expand_user

__all__ = [
    "Denied",
    "DenyPattern",
    "DenyUsageError",
    "deny_patterns",
    "first_match",
]


class DenyUsageError(ValueError):
    """A --deny value that cannot be used (invalid regex, unreadable list file)."""


@dataclass(frozen=True)
class DenyPattern:
    """One pattern and how messages name it: ``'acme corp'`` as typed (shell-quoted), or
    ``pattern 2 of deny.txt (line 4)`` from a list file (its patterns are not repeated)."""

    text: str
    label: str


@dataclass(frozen=True)
class Denied:
    """A session a pattern matched: not published. ``where``: the first record it matched
    in (an entry's id, or "the header"); ``published``: the dataset holds a copy of it
    (at ``repo_path``), which ``--prune`` deletes (``removed``)."""

    path: Path
    repo_path: str
    pattern: DenyPattern
    where: str
    published: bool = False
    removed: bool = False


def deny_patterns(values: Iterable[str]) -> list[DenyPattern]:
    """The patterns of the --deny values, in order. A value naming an existing file is a
    list of patterns (one per line, spaces around it dropped; blank lines and lines starting
    with ``#`` left out: a pattern may itself hold ``#``, so there are no end-of-line
    comments); any other value is a pattern. Invalid regex syntax, or a pattern that
    matches an empty string (it would deny every session), raises :class:`DenyUsageError`
    naming it."""
    from exporter.session_skip import list_file_lines

    patterns: list[DenyPattern] = []
    for value in values:
        path = expand_user(value)
        if not value or not path.is_file():  # ("" is no path: Path("") is this folder)
            if value:
                _refuse_missing_list(value, path)
            typed = shlex.quote(value)  # as it could be typed again
            patterns.append(_checked(value, f"pattern {typed}", f"--deny {typed}"))
            continue
        try:
            lines = list_file_lines(path)
        except OSError as error:
            raise DenyUsageError(f"--deny {value}: {error.strerror or error}") from None
        first = next((line.lstrip() for _, line in lines if line.strip()), "")
        if path.name.lower().endswith((".jsonl", ".jsonl.gz")) or first[:1] in ("{", "\x1f"):
            raise DenyUsageError(
                f"--deny {value}: a session file, not a list of patterns (one per line)"
            )
        number = 0
        for line_number, line in lines:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            number += 1
            label = f"pattern {number} of {value} (line {line_number})"
            patterns.append(_checked(text, label, f"--deny {value}:{line_number}"))
        if not number:  # a list emptied by mistake would keep nothing out, silently
            raise DenyUsageError(f"--deny {value}: the file lists no pattern")
    return patterns


#: Names a list of patterns is kept under: such a value that names no file is a list that
#: is missing (a relative path run from another folder, a typo), not a pattern.
_LIST_SUFFIXES = (".txt", ".list", ".lst", ".deny", ".conf", ".cfg")


def _refuse_missing_list(value: str, path: Path) -> None:
    """A folder, or a missing file that is plainly meant as a list, is refused: read as a
    regex it would deny nothing (or every session naming that folder), and the sessions the
    list names would be published."""
    if path.exists():
        raise DenyUsageError(f"--deny {value}: a folder, not a file of patterns")
    looks_like_a_path = value.startswith(("./", "../", "~/")) or (
        value.lower().endswith(_LIST_SUFFIXES) and not any(c in value for c in "\\^$|()[]{}*+?")
    )
    if looks_like_a_path:
        raise DenyUsageError(
            f"--deny {value}: no such file (a pattern that looks like a file name: write it "
            "as a regex, e.g. with its dot escaped)"
        )


def _checked(text: str, label: str, where: str) -> DenyPattern:
    """The pattern, compiled once here so that a mistake is a usage error before any
    session is read (the workers compile it again: ``re`` caches it)."""
    try:
        compiled = re.compile(text)
    except re.error as error:
        raise DenyUsageError(f"{where}: not a valid regular expression: {error}") from None
    if compiled.search("") is not None:
        raise DenyUsageError(
            f"{where}: the pattern matches an empty string, so it would deny every session"
        )
    return DenyPattern(text, label)


def _strings(value: Any) -> Iterator[str]:
    """Every string value and object key inside ``value``, without recursion (records
    can be nested deeper than Python's recursion limit)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for key, member in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(member)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def first_match(
    records: Iterable[dict[str, Any]], patterns: Sequence[str]
) -> tuple[int, str] | None:
    """(index of the pattern, where) of the first record a pattern matches, or None.
    ``where`` is the record's entry id (``the header`` for the first record, ``record N``
    for an entry without one); never the text that matched."""
    compiled = [re.compile(p) for p in patterns]
    if not compiled:
        return None
    for number, record in enumerate(records):
        for text in _strings(record):
            for index, pattern in enumerate(compiled):
                if pattern.search(text) is not None:
                    return index, _where(number, record)
    return None


def _where(number: int, record: dict[str, Any]) -> str:
    if number == 0:
        return "the header"
    entry_id = record.get("id")
    if isinstance(entry_id, str) and entry_id:
        return f"entry {entry_id}"
    return f"record {number + 1}"
