"""`pi-session list` and `pi-session stats`: sessions at a glance, and one session's facts
and usage tables (this path vs all branches, per model, branch and tool).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import click

from exporter.cli import (
    CWD_TYPE,
    SESSIONS_DIR_HELP,
    SESSIONS_DIR_TYPE,
    CliError,
    echo_json,
    echo_text,
    existing_sessions_dir,
    listed_session_files,
    open_session,
    project_folder,
    project_scope,
    scope_conflict,
    session_argument,
)
from exporter.discover import (
    SessionSummary,
    active_since,
    id_from_name,
    newest_first,
    no_sessions_said,
    scan_summary,
    session_files,
    shown_id,
)
from exporter.formatting import (
    fit_columns,
    fmt_cost,
    fmt_datetime,
    fmt_duration,
    fmt_int,
    local_minute,
    one_line,
    prompt_line,
    render_table,
    terminal_text,
)
from exporter.header_counts import entries_line, tree_said
from exporter.session import Session
from exporter.summary_cache import remembered
from exporter.times import utc_iso
from exporter.usage import (
    SessionStats,
    compute_stats,
    models_said,
    models_with_answers,
    usage_rows,
)

# --- list ---------------------------------------------------------------------------------


@click.command("list")
@click.option(
    "--cwd",
    "cwd",
    type=CWD_TYPE,
    callback=project_folder,
    help="Project folder (default: .).",
)
@click.option(
    "--all",
    "all_projects",
    is_flag=True,
    help="Sessions of every project (with --cwd: of that project, as --cwd alone).",
)
@click.option(
    "--sessions-dir",
    type=SESSIONS_DIR_TYPE,
    metavar="DIRECTORY",
    callback=existing_sessions_dir,
    help=SESSIONS_DIR_HELP,
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option(
    "--since",
    metavar="DATE",
    help="Only sessions active on or after DATE (YYYY-MM-DD local midnight, ISO time, 7d, "
    "12h, 2w), as export --all and publish read it.",
)
def list_command(
    cwd: str | None, all_projects: bool, sessions_dir: str | None, as_json: bool, since: str | None
) -> None:
    """List sessions, newest first, without parsing every message."""
    since_at, when = None, None
    if since is not None:
        from exporter.redact_cli import since_moment, since_said  # ~40 ms: only here

        since_at = since_moment(since)
        when = since_said(since, since_at)
    scope = project_scope(cwd, all_projects)
    listed = listed_session_files(sessions_dir, scope)  # (a missing PI_CODING_AGENT_DIR: exit 2)
    with remembered():  # other agents' transcripts are read whole: their summaries kept
        summaries = newest_first(scan_summary(p) for p in listed)
    older = 0
    if since_at is not None:  # last activity, as export --all and publish read it
        recent = [s for s in summaries if active_since(s, since_at)]
        older, summaries = len(summaries) - len(recent), recent
    if not summaries:  # said on stderr, so `--json` output stays empty for a script
        # not an error (exit 0): "which sessions are there?" has "none" for an answer
        then = "drop --cwd to list {them}" if all_projects else "--all lists {them}"
        said = no_sessions_said(sessions_dir, scope, then, when, older=older)
        click.echo(terminal_text(f"pi-session: {said}"), err=True)
        return
    if as_json:
        for summary in summaries:
            echo_json(_json_row(summary))
        return
    # unique among every session, not only those listed: SESSION is looked up in this
    # folder's project first, then everywhere, so the prefix must name one file anywhere
    everywhere = listed if scope is None else session_files(sessions_dir, None)  # scanned once
    every = [id_from_name(p) for p in everywhere]
    shortest = dict(zip(every, unique_prefixes(every), strict=True))
    ids = [shortest.get(i, i) for i in (id_from_name(s.path) for s in summaries)]
    rows = [
        [
            local_minute(s.modified),
            fit_columns(s.title, 48),
            fit_columns(s.cwd, 30),
            fmt_int(s.messages),
            str(s.branches),
            fmt_int(s.tokens),
            fmt_cost(s.cost),
            shown_id(short_id),  # one line (a name may hold a newline); SESSION takes it
        ]
        for s, short_id in zip(summaries, ids, strict=True)
    ]
    # local time (each row in its own offset: a July row is summer time); not today's zone
    # name, which a row half a year away is not in
    headers = ["last activity (local)", "session", "project", "messages", "branches"]
    headers += ["tokens", "cost"]
    headers.append("id")
    right = {"messages", "branches", "tokens", "cost"}
    keep = [i for i, h in enumerate(headers) if scope is None or h != "project"]
    shown = [headers[i] for i in keep]
    echo_text(
        render_table(
            shown,
            [[r[i] for i in keep] for r in rows],
            right={n for n, h in enumerate(shown) if h in right},
        )
    )


def _json_row(summary: SessionSummary) -> dict[str, Any]:
    """A `list --json` row, its times in UTC in the other JSON times' form (``+00:00``):
    each as its session wrote it, ``sort_by(.modified)`` put one written at +09:00 out of
    order."""
    row = summary.as_dict()
    row["started"] = utc_iso(summary.started) if summary.started else None
    row["modified"] = utc_iso(summary.modified) if summary.modified else None
    return row


def unique_prefixes(ids: list[str], shortest: int = 8) -> list[str]:
    """Each id cut to the shortest prefix (at least ``shortest``) no other id shares, so
    what ``list`` shows can be passed back as SESSION. Pi's ids are UUIDv7: sessions
    started within a minute share their first 8 digits."""
    ordered = sorted(set(ids))
    need = {i: len(i) for i, n in Counter(ids).items() if n > 1}  # two files, one id: all of it
    for before, after in itertools.pairwise(ordered):
        pairs = enumerate(zip(before, after, strict=False))
        common = next((n for n, (a, b) in pairs if a != b), min(len(before), len(after)))
        need[before] = max(need.get(before, 0), common + 1)
        need[after] = max(need.get(after, 0), common + 1)
    return [i[: max(shortest, need.get(i, 0))] for i in ids]


# --- stats --------------------------------------------------------------------------------


def stats_document(session: Session) -> dict[str, Any]:
    """The `stats --json` object; later tools and checks rely on these keys."""
    stats = compute_stats(session)
    return {
        "id": session.id,
        "name": session.name,
        "title": session.title,
        "cwd": session.header.cwd,
        "parent_session": session.header.parent_session,
        "version": session.version,
        "path": session.path,
        "entries": len(session.entries),
        "leaf_id": session.leaf_id,
        "active_path": session.active_path,
        "branches": len(stats.branches),
        "forks": len(session.fork_ids),
        "labels": dict(session.labels),
        "created": utc_iso(stats.created) if stats.created else None,
        "started": utc_iso(stats.started) if stats.started else None,
        "ended": utc_iso(stats.ended) if stats.ended else None,
        "duration_seconds": stats.duration_seconds,
        "models": stats.models_used,
        # picked (a model change) but no assistant turn of theirs said a word
        "models_never_answered": [
            m.name for m in models_with_answers(session, stats) if not m.answers
        ],
        "messages": dict(stats.roles),
        "compactions": stats.compactions,
        "branch_summaries": stats.branch_summaries,
        "custom_messages": stats.custom_messages,
        "errors": stats.errors,
        "aborted": stats.aborted,
        "length_stops": stats.length_stops,  # answers cut off at the output-token limit
        "cost_note": session.cost_note,  # how the dollars were worked out, when said
        "usage": {
            "all": stats.all.as_dict(),
            "active_path": stats.active_path.as_dict(),
            "by_model": [{"model": m, **u.as_dict()} for m, u in stats.by_model_all],
            "by_model_active_path": [{"model": m, **u.as_dict()} for m, u in stats.by_model_path],
            "by_branch": [
                {
                    "leaf_id": b.branch.leaf_id,
                    # what --leaf takes for it: an id used twice names its latest copy
                    "leaf_name": session.leaf_name(b.branch.leaf_id),
                    "fork_id": b.branch.fork_id,
                    "active": b.branch.is_active,
                    "entries": b.entries,
                    "first_prompt": b.first_prompt,
                    "last_activity": utc_iso(b.last_activity) if b.last_activity else None,
                    **b.usage.as_dict(),
                }
                for b in stats.branches
            ],
        },
        "tools": {name: {"calls": t.calls, "errors": t.errors} for name, t in stats.tools.items()},
        "diagnostics": [d.as_dict() for d in session.diagnostics],
    }


def _leaf_said(session: Session, leaf_id: str, said: dict[str, str]) -> str:
    """A branch's leaf as ``--leaf`` takes it: its id, cut (see ``said``) unless the cut
    names another entry as a whole; an earlier copy of an id the file uses again (which
    names the latest copy) by its own name: ``u2~1``, where "u2" chose the other branch."""
    name = session.leaf_name(leaf_id)
    if name != leaf_id:
        return name
    cut = said.get(leaf_id, leaf_id)
    return cut if session.named_entry(cut) in (None, leaf_id) else leaf_id


def _made_line(session: Session, stats: SessionStats) -> list[str]:
    """The session this one was forked from, and when; or when its file was made, where
    that is not when it started (as the page says)."""
    made = stats.created_apart
    if session.header.parent_session:
        when = f" at {fmt_datetime(made)}" if made else ""
        return [f"  forked    from {one_line(session.header.parent_session, None)}{when}"]
    # (the file's, as the page says: a line "created" above "started" read as a contradiction)
    return [f"  file      created {fmt_datetime(made)}"] if made else []


def _cost_line(session: Session) -> list[str]:
    note = session.cost_note
    return [f"  cost      {_flat(note)}"] if note else []


def _flat(text: str) -> str:
    """Session text on one line, whole: a model name with a newline forged header lines
    (a table's cells are one line each already: ``render_table``)."""
    return one_line(text, None)


#: The title line of `stats`: wider than `list`'s column, still one terminal line.
TITLE_WIDTH = 100
USAGE_HEADERS = ["model", "turns", "input", "output", "cache read", "cache write", "cost"]


@click.command("stats")
@session_argument
@click.option(
    "--leaf", metavar="ID", help="Entry id (or unique prefix) to treat as the active leaf."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--all",
    "all_sessions",
    is_flag=True,
    help="Usage and cost of every session (of all projects, or of --cwd), per model, project "
    "and day; every branch counts.",
)
@click.option(
    "--cwd",
    type=CWD_TYPE,
    callback=project_folder,
    help="The usage of every session of this project folder (with or without --all).",
)
@click.option(
    "--since",
    metavar="DATE",
    help="With --all or --cwd: only turns on or after DATE (YYYY-MM-DD local midnight, ISO "
    "time, 7d, 12h, 2w).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    help="With --all or --cwd: processes loading sessions (default or 0: one per CPU).",
)
def stats_command(
    session: str | None,
    demo: bool,
    sessions_dir: str | None,
    leaf: str | None,
    as_json: bool,
    all_sessions: bool,
    cwd: str | None,
    since: str | None,
    jobs: int | None,
) -> None:
    """Header facts and usage tables: this path vs all branches, per model, branch and tool.

    With --all: what every session spent, per model, project and day; with --cwd DIR (or
    --all --cwd DIR), what every session of that project spent.
    """
    if all_sessions or cwd is not None:  # `list --cwd X` lists X's sessions: this counts them
        if session or demo:
            raise scope_conflict("SESSION" if session else "--demo")
        if leaf:
            raise CliError("--leaf is for one session: not with --all or --cwd", 1)
        from exporter.usage_report_cli import print_usage_report

        print_usage_report(sessions_dir, cwd, since, jobs, as_json, all_sessions)
        return
    if since is not None or jobs is not None:
        raise CliError(
            "--since and --jobs are for the usage of many sessions: add --all or --cwd DIR", 1
        )
    loaded = open_session(session, demo, sessions_dir, leaf)
    if as_json:
        echo_json(stats_document(loaded), indent=2)
        return
    stats = compute_stats(loaded)
    numeric = {1, 2, 3, 4, 5, 6}
    # a branch's ids cut to 10 characters (Pi's 8 hex digits are whole) when no other
    # entry's id starts so, else whole: Claude Code's uuids all read "00000000-0"
    ids = [entry.id for entry in loaded.entries]
    said = {i: i if len(p) > 10 else p for i, p in zip(ids, unique_prefixes(ids, 10), strict=True)}
    # one line each, as `list` shows them: a pasted multi-line first prompt flooded the
    # header, and a name with newlines could fake its lines ("\n  id        other")
    lines = [
        fit_columns(loaded.title, TITLE_WIDTH) or "Untitled session",
        f"  id        {one_line(loaded.id, None)}  ({loaded.file_kind})",
        f"  project   {one_line(loaded.header.cwd, None) or 'unknown'}",
        *_made_line(loaded, stats),
        f"  started   {fmt_datetime(stats.started)}",
        f"  ended     {fmt_datetime(stats.ended)}  ({fmt_duration(stats.duration_seconds)})",
        f"  models    {models_said(models_with_answers(loaded, stats), _flat)}",
        *_cost_line(loaded),
        f"  entries   {_flat(entries_line(stats, len(loaded.entries)))}",
        f"  tree      {_flat(tree_said(stats, loaded))}",
        "",
        "Usage on this path (root → leaf)",
        render_table(USAGE_HEADERS, usage_rows(stats.by_model_path, "total"), numeric),
        "",
        "Usage on all branches",
        render_table(USAGE_HEADERS, usage_rows(stats.by_model_all, "total"), numeric),
        "",
        "Branches (a branch owns the entries from where it forks to its leaf; * active)",
        render_table(
            ["", "leaf", "forks at", "entries", "tokens", "cost", "first prompt"],
            [
                [
                    "*" if b.branch.is_active else "",
                    _leaf_said(loaded, b.branch.leaf_id, said),
                    said.get(b.branch.fork_id, b.branch.fork_id) if b.branch.fork_id else "root",
                    fmt_int(b.entries),
                    fmt_int(b.usage.total_tokens),
                    fmt_cost(b.usage.cost),
                    prompt_line(b.first_prompt, 50) if b.first_prompt else "",
                ]
                for b in stats.branches
            ],
            {3, 4, 5},
        ),
    ]
    if stats.tools:
        lines += [
            "",
            "Tools (all branches)",
            render_table(
                ["tool", "calls", "errors"],
                [[n, fmt_int(t.calls), fmt_int(t.errors)] for n, t in stats.tools.items()],
                {1, 2},
            ),
        ]
    echo_text("\n".join(lines))
