"""`--pick`: choose a session from a numbered list instead of typing its id.

The list is `list`'s view of this folder's sessions (every project's when it has none),
newest first, on stderr, so a page written to stdout (`export --pick -o -`) stays clean.
The answer is read from stdin: a terminal, or a number piped in by a script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from exporter.cli import CliError, current_folder_if_any, listed_session_files
from exporter.discover import newest_first, no_sessions_said, scan_summary
from exporter.formatting import (
    cluster_cut,
    fit_columns,
    fmt_cost,
    fmt_int,
    local_minute,
    path_said,
    render_table,
    terminal_text,
)
from exporter.summary_cache import remembered

#: How many sessions the list offers (the newest).
PICK_LIMIT = 30


def pick_session(sessions_dir: str | None) -> Path:
    """Show the newest sessions numbered and return the path of the one chosen."""
    here = current_folder_if_any()  # deleted (a removed worktree): it has no sessions
    files = listed_session_files(sessions_dir, here) if here is not None else []
    every_project = not files  # (this folder's: no project column, as `list`)
    if every_project:
        files = listed_session_files(sessions_dir, None)
    if not files:  # as every command says it
        raise CliError(no_sessions_said(sessions_dir, None), 2)
    if here is None:
        where = "any project (this folder is deleted)"
    else:
        where = "any project" if every_project else f"this folder ({path_said(here)})"
    with remembered():
        summaries = newest_first(scan_summary(path) for path in files)
    shown = summaries[:PICK_LIMIT]
    # measured as stderr writes them (escaped where its encoding has no character)
    rows = [
        [
            str(number),
            local_minute(s.modified),
            fit_columns(s.title, 50, sys.stderr),
            fmt_int(s.messages),
            fmt_cost(s.cost),
            *([fit_columns(s.cwd, 30, sys.stderr)] if every_project else []),
        ]
        for number, s in enumerate(shown, 1)
    ]
    headers = ["#", "last activity (local)", "session", "messages", "cost"]
    headers += ["project"] if every_project else []
    more = f" (the newest {len(shown)} of {len(summaries)})" if len(summaries) > len(shown) else ""
    click.echo(terminal_text(f"Sessions of {where}{more}:"), err=True)
    click.echo(render_table(headers, rows, {0, 3, 4}, sys.stderr), err=True)
    if not sys.stdin.isatty():
        return shown[_piped_answer(len(shown)) - 1].path
    try:
        number = click.prompt(
            "Session number", default=1, type=click.IntRange(1, len(shown)), err=True
        )
    except click.Abort as error:
        # click says Ctrl-C and Ctrl-D alike (Abort); the one it caught is the context.
        # Ctrl-C is said as every other one (exit 130); Ctrl-D is the end of the answer
        if isinstance(error.__context__, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise CliError("--pick needs the session's number (nothing was read)", 1) from None
    return shown[number - 1].path


def _piped_answer(count: int) -> int:
    """The number a script piped in, read once: a wrong one is one error (click's prompt
    said it, asked again, met the end of input and said a second error)."""
    click.echo("Session number [1]: ", nl=False, err=True)
    line = sys.stdin.readline()
    click.echo("", err=True)  # a piped answer is not echoed: end the prompt's line
    if not line:
        raise CliError("--pick needs the session's number (nothing was read)", 1)
    answer = line.strip() or "1"
    if not answer.isdecimal() or not 1 <= int(answer) <= count:
        kept = answer if len(answer) <= 20 else answer[: cluster_cut(answer, 20)] + "…"
        shown = terminal_text(kept)
        raise CliError(f"--pick: {shown!r} is not a session number from 1 to {count}", 1)
    return int(answer)
