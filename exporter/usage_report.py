"""Usage and cost over many sessions (`stats --all`): what was spent per model, project and
day, and in all.

Every branch counts: an abandoned branch's turns were paid for too (one session's
`stats` shows both scopes; over many sessions the question is the bill). A turn belongs to
the day of its own time stamp, in local time; with ``since``, only turns from then on count
(a turn without a readable time stamp cannot be placed, and is counted as "unknown" only
when no ``since`` is given).

A turn is counted once however many files hold it: a copy of a session (a backup, a folder
copied to another project) or a copy taken before it grew repeats turns it already paid
for. A turn is known by its entry id, its time stamp as written and its usage. A Codex fork
copies its parent's lines into its own file under new time stamps and, one header line
later, new entry ids (``L<line>``): a Codex turn is known by its place among the file's
answers, its usage and a digest of what it said and called.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from exporter.codex import KIND as CODEX
from exporter.entries import MessageEntry
from exporter.loader import LOAD_FAILURES, load_session, why_not_loaded
from exporter.session import Session, parse_time
from exporter.usage import Usage, turn_usage
from exporter.workers import results_of

UNKNOWN = "unknown"
_FIELDS = (
    "turns",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "cost",
    "turns_without_usage",
)


@dataclass(slots=True)
class UsageTotals:
    """One row of a table: the usage and the sessions it came from."""

    usage: Usage = field(default_factory=Usage)
    sessions: set[str] = field(default_factory=set)


@dataclass(slots=True)
class UsageReport:
    read: int = 0  # sessions loaded
    failed: list[tuple[Path, str]] = field(default_factory=list)
    total: UsageTotals = field(default_factory=UsageTotals)
    by_model: dict[str, UsageTotals] = field(default_factory=dict)
    by_project: dict[str, UsageTotals] = field(default_factory=dict)
    by_day: dict[str, UsageTotals] = field(default_factory=dict)
    seen: set[tuple[Any, ...]] = field(default_factory=set)  # the turns counted
    repeated_turns: int = 0  # turns of a file already counted from another
    copies: int = 0  # files whose every turn was counted from another

    def add(self, path: Path, found: dict[str, Any]) -> None:
        """Merge one session's turns (as :func:`session_usage` found them)."""
        if "error" in found:  # the loader's message may start with the path: said once
            self.failed.append((path, str(found["error"]).removeprefix(f"{path}: ")))
            return
        self.read += 1
        key = str(path)
        fresh = 0
        for turn, model, day, values in found["rows"]:
            if turn in self.seen:
                self.repeated_turns += 1
                continue
            self.seen.add(turn)
            fresh += 1
            usage = Usage(**dict(zip(_FIELDS, values, strict=True)))
            for table, name in (
                (self.by_model, model),
                (self.by_project, found["project"] or UNKNOWN),
                (self.by_day, day),
            ):
                row = table.setdefault(name, UsageTotals())
                row.usage.add(usage)
                row.sessions.add(key)
            self.total.usage.add(usage)
            self.total.sessions.add(key)
        self.copies += bool(found["rows"]) and not fresh

    def ranked(self, table: dict[str, UsageTotals]) -> list[tuple[str, UsageTotals]]:
        """Costliest first (then most turns, then by name): where the money went."""
        return sorted(table.items(), key=lambda kv: (-kv[1].usage.cost, -kv[1].usage.turns, kv[0]))

    def days(self) -> list[tuple[str, UsageTotals]]:
        """In date order; turns without a time last."""
        return sorted(self.by_day.items(), key=lambda kv: (kv[0] == UNKNOWN, kv[0]))


def session_usage(path: Path, since: datetime | None = None) -> dict[str, Any]:
    """One session's assistant turns summed by (model, local day); a file that cannot be
    read is ``{"error": …}``, which the report lists instead of stopping."""
    try:
        session = load_session(path)
    except LOAD_FAILURES as error:
        return {"error": why_not_loaded(error)}
    return usage_of(session, since)


def usage_of(session: Session, since: datetime | None = None) -> dict[str, Any]:
    """:func:`session_usage` of a session already loaded (the site's pages count a copy's
    turns once by these keys, from the session each page is made of: no second read)."""
    rows = []
    copied_by_forks = any(d.kind == CODEX for d in session.diagnostics)
    answers = (e for e in session.entries if isinstance(e, MessageEntry) and e.role == "assistant")
    for ordinal, entry in enumerate(answers):
        moment = entry.moment or parse_time(entry.message.get("timestamp"))
        if since is not None and (moment is None or moment < since):
            continue
        usage = turn_usage(entry)
        values = tuple(getattr(usage, name) for name in _FIELDS)
        if copied_by_forks:
            turn = (CODEX, ordinal, values, _content_digest(entry))
        else:
            turn = (entry.id, str(entry.raw.get("timestamp")), values)
        rows.append((turn, entry.model_key or UNKNOWN, _local_day(moment), values))
    return {"project": session.header.cwd, "rows": rows}


def _content_digest(entry: MessageEntry) -> str:
    """What an answer said and called (call ids are unique), as a short digest: with its
    place among the answers, how a Codex turn is known in a fork's copy of it."""
    content = json.dumps(entry.message.get("content"), sort_keys=True, default=str)
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _local_day(moment: datetime | None) -> str:
    if moment is None:
        return UNKNOWN
    try:
        return (moment.astimezone() if moment.tzinfo else moment).date().isoformat()
    except (OverflowError, ValueError, OSError):  # year 1 or 9999 moved across a day line
        return moment.date().isoformat()


def build_report(
    files: list[Path], since: datetime | None = None, jobs: int | None = None
) -> UsageReport:
    """Load every file (in ``jobs`` processes, a progress bar on a terminal) and sum their
    turns."""
    report = UsageReport()
    found = results_of(
        files,
        partial(session_usage, since=since),
        jobs=jobs,
        preload="exporter.usage_report",
        label="reading",
    )
    for path, result in zip(files, found, strict=True):
        report.add(path, result)
    return report
