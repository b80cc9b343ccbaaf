"""The small values a ``Session`` hands out: diagnostics, branches, tool-call references,
and the ids damaged lines still show (``parse_time``, from ``exporter.times``, is handed on).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from exporter.entries import DamagedLine
from exporter.formatting import plural
from exporter.times import parse_time

__all__ = [
    "Branch",
    "Diagnostic",
    "ToolCallRef",
    "ids_on_damaged_lines",
    "parse_time",
    "unshown_lines_note",
]


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


def unshown_lines_note(kind: str, agent: str, skipped: Counter[str]) -> Diagnostic:
    """The note that an importer (Claude Code's, Codex's) shows ``skipped`` of the agent's
    bookkeeping lines nowhere, by kind, most first: the file keeps them, the page does not."""
    kinds = ", ".join(f"{name} ×{count:,}" for name, count in skipped.most_common())
    total = sum(skipped.values())
    return Diagnostic(
        0,
        kind,
        f"{plural(total, f'{agent} bookkeeping line')} {'is' if total == 1 else 'are'} "
        f"not shown ({kinds}); the session file keeps them",
        "info",
    )


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


_ID_FIELD = re.compile(r'"id"\s*:\s*"([^"\\\n]{1,200})"')


def ids_on_damaged_lines(damaged: Iterable[DamagedLine]) -> dict[str, int]:
    """Entry ids that damaged lines still show (``"id": "a2"`` in a truncated line) -> the
    first such line: an entry whose parent is missing was cut off from it there."""
    found: dict[str, int] = {}
    for line in damaged:
        for match in _ID_FIELD.finditer(line.text):
            found.setdefault(match.group(1), line.line)
    return found
