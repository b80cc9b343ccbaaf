"""`pi-session stats --all`: the usage report over many sessions, as tables or JSON."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from exporter.cli import CliError, echo_json, echo_text, listed_session_files, warn
from exporter.discover import files_active_since, no_sessions_said, session_files
from exporter.formatting import (
    fmt_cost,
    fmt_int,
    local_minute,
    one_line,
    path_said,
    plural,
    render_table,
)
from exporter.redact_cli import since_moment, since_said
from exporter.times import utc_iso
from exporter.usage_report import UsageReport, UsageTotals, build_report

_HEADERS = ["sessions", "turns", "input", "output", "cache read", "cache write", "cost"]


def print_usage_report(
    sessions_dir: str | None,
    cwd: str | None,
    since: str | None,
    jobs: int | None,
    as_json: bool,
    all_given: bool = True,
) -> None:
    """Find the sessions, read them (in parallel), print what they spent (``all_given``:
    --all was typed, so dropping --cwd counts every project; `stats --cwd X` adds it)."""
    since_at = since_moment(since)
    scope = os.path.abspath(cwd) if cwd else None
    files = listed_session_files(sessions_dir, scope)
    if not files:  # with the other projects' there, as search, export and publish say
        then = "drop --cwd to count {them}" if all_given else "`stats --all` counts {them}"
        raise CliError(no_sessions_said(sessions_dir, scope, then), 2)
    if since_at is not None:
        recent = files_active_since(files, since_at)
        if not recent:  # as search and export --all say it: three tables of zeros said nothing
            when = since_said(since or "", since_at)
            raise CliError(no_sessions_said(sessions_dir, scope, since=when, older=len(files)), 2)
        files = recent
    # a project's forks of other projects' sessions: their parents' turns are counted there
    # (as `stats --all` counts them), so the other sessions are looked at for the parents
    others = (lambda: session_files(sessions_dir)) if scope else None
    report = build_report(files, since_at, jobs, others)
    for path, error in report.failed:
        warn(f"{path}: {error}; left out")
    if files and not report.read:
        raise CliError("no session could be read (the warnings above say why)", 2)
    if as_json:
        echo_json(_document(report, scope, since_at), indent=2)
    else:
        echo_text(_tables(report, scope, since_at))


def _scope_line(report: UsageReport, scope: str | None, since: datetime | None) -> str:
    where = f"the project {one_line(path_said(scope), None)}" if scope else "all projects"
    when = f", turns since {local_minute(since)} (local time)" if since else ""  # as given
    spent = len(report.total.sessions)
    idle = report.read - spent - report.copies
    return (
        f"Usage of {plural(spent, 'session')} ({where}{when}; every branch counts)"
        + (f"; {fmt_int(idle)} more read with no turn" if idle > 0 else "")
        + (
            f"; {plural(report.copies, 'copy', 'copies')} of another file not counted again"
            if report.copies
            else ""
        )
        + (
            f"; {plural(report.repeated_turns, 'turn')} found in more than one file counted once"
            if report.repeated_turns
            else ""
        )
        + (
            f"; {plural(report.counted_elsewhere, 'turn')} forked from another project's "
            "session counted there"
            if report.counted_elsewhere
            else ""
        )
    )


def _priced_lines(report: UsageReport) -> list[str]:
    """Where the dollars of Claude Code's and Codex's turns come from (they record tokens):
    list prices, and the models with none, counted as $0, which the tables showed as
    "$0.00" unexplained (the page's header and one session's `stats` say it)."""
    if not report.list_priced:
        return []
    said = [
        "Claude Code and Codex turns' cost is computed from list prices "
        f"({', '.join(sorted(report.list_priced))})"
    ]
    if report.unpriced:
        said.append(f"no price known for {', '.join(sorted(report.unpriced))}: counted as $0")
    return [one_line("; ".join(said), None)]


def _rows(items: list[tuple[str, UsageTotals]]) -> list[list[str]]:
    """A table's rows (``render_table`` puts each cell on one line)."""
    return [
        [
            key,
            fmt_int(len(row.sessions)),
            fmt_int(row.usage.turns),
            fmt_int(row.usage.input),
            fmt_int(row.usage.output),
            fmt_int(row.usage.cache_read),
            fmt_int(row.usage.cache_write),
            fmt_cost(row.usage.cost),
        ]
        for key, row in items
    ]


def _tables(report: UsageReport, scope: str | None, since: datetime | None) -> str:
    right = set(range(1, 8))
    total = _rows([("total", report.total)])
    sections = [_scope_line(report, scope, since), *_priced_lines(report)]
    for title, first, items in (
        ("By model", "model", report.ranked(report.by_model)),
        ("By project", "project", report.ranked(report.by_project)),
        ("By day (local time)", "day", report.days()),
    ):
        rows = _rows(items) + total
        sections += ["", title, render_table([first, *_HEADERS], rows, right)]
    return "\n".join(sections)


def _document(report: UsageReport, scope: str | None, since: datetime | None) -> dict[str, Any]:
    """The `stats --all --json` object."""

    def rows(items: list[tuple[str, UsageTotals]], key: str) -> list[dict[str, Any]]:
        return [
            {key: name, "sessions": len(row.sessions), **row.usage.as_dict()} for name, row in items
        ]

    return {
        "cwd": path_said(scope) if scope else None,  # its UTF-8, as the sessions' own cwd
        "since": utc_iso(since) if since else None,  # (UTC, as every JSON time)
        "sessions_read": report.read,
        "sessions_with_turns": len(report.total.sessions),
        "copies": report.copies,  # files whose every turn another file holds (counted once)
        "repeated_turns": report.repeated_turns,
        # turns a fork here copied from another project's session: counted in that project
        "turns_counted_elsewhere": report.counted_elsewhere,
        # models whose cost was computed from list prices, and those with no price ($0)
        "list_priced_models": sorted(report.list_priced),
        "unpriced_models": sorted(report.unpriced),
        "failed": [{"path": str(path), "error": error} for path, error in report.failed],
        "total": report.total.usage.as_dict(),
        "by_model": rows(report.ranked(report.by_model), "model"),
        "by_project": rows(report.ranked(report.by_project), "project"),
        "by_day": rows(report.days(), "day"),
    }
