"""``--skip`` of ``publish`` and ``export --all``: sessions kept out of a batch run. A team
publishing ``--all`` from cron, or building a site of every session, needs a way to keep one
session (a client's, a leaked key's) out for good, short of listing every other session by
hand; a file of them is that list."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import click

from exporter.cli import CliError
from exporter.discover import SessionLookupError, resolve_session_arg
from exporter.formatting import plural, terminal_text

__all__ = ["skip_help", "skipped_sessions", "without_skipped"]


def skip_help(what_happens: str, condition: str = "") -> str:
    """``--skip``'s help, ``what_happens`` saying what becomes of a skipped session that an
    earlier run put out (a dataset's copy, a site's page); ``condition`` the options it needs
    ("With --all, ")."""
    leave = f"{condition}leave" if condition else "Leave"
    return (
        f"{leave} this session out (a path, id or id prefix), or every session a file lists "
        f"(one per line; '#' starts a comment). Repeatable. {what_happens} A session it cannot "
        "find is an error."
    )


def skipped_sessions(values: Iterable[str], sessions_dir: str | None, consequence: str) -> set[str]:
    """The real paths of the sessions ``--skip`` names. A value that names a list file is
    read as one; a value that names a session file, or no file, is a session. An unknown
    session or a list that cannot be read stops the run (exit 1, ``consequence`` saying what
    was left undone): a typo would put out what it was meant to keep out."""
    found: set[str] = set()
    for value in values:
        for session, where in _sessions_named(value, consequence):
            if session == "-":
                raise CliError("--skip names a session file, id or list file, not -", 1)
            try:
                path = resolve_session_arg(session, sessions_dir=sessions_dir)
            except SessionLookupError as error:
                message = f"--skip {where}: {error}; {consequence}"
                raise CliError(terminal_text(message), 1) from None
            found.add(os.path.realpath(path))
    return found


def without_skipped(
    files: list[Path], skip: Iterable[str], sessions_dir: str | None, consequence: str
) -> list[Path]:
    """The selection less the ``--skip`` sessions, said on stderr; all of it skipped is exit 2
    (a run that would put out nothing is a mistake a cron job must see)."""
    skipped = skipped_sessions(skip, sessions_dir, consequence)
    if not skipped:
        return files
    kept = [f for f in files if os.path.realpath(f) not in skipped]
    left_out = len(files) - len(kept)
    click.echo(
        f"pi-session: --skip leaves out {left_out} of the {plural(len(files), 'session')} selected",
        err=True,
    )
    if not kept:
        raise CliError(f"--skip leaves out every selected session; {consequence}", 2)
    return kept


_COMMENT = re.compile(r"(?:^|\s)#")  # "# note", "abc123  # note"; not a "#" inside a name


def _sessions_named(value: str, consequence: str) -> list[tuple[str, str]]:
    """(session, where it was named) for one ``--skip`` value."""
    path = Path(value).expanduser()
    if not path.is_file() or _is_session_file(path):
        return [(value, value)]
    try:
        text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")  # a BOM: Notepad
    except OSError as error:
        reason = error.strerror or error
        raise CliError(terminal_text(f"--skip {value}: {reason}; {consequence}"), 1) from None
    named = []
    for number, line in enumerate(text.splitlines(), 1):
        session = _COMMENT.split(line, maxsplit=1)[0].strip()
        if session:
            named.append((session, f"{value}:{number}"))
    return named


def _is_session_file(path: Path) -> bool:
    """A session (a .jsonl file, or one whose first line is an object) rather than a list of
    sessions: a damaged session is still one to keep out, not a list of its lines."""
    if path.name.lower().endswith((".jsonl", ".jsonl.gz")):
        return True
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{") or head.startswith(b"\x1f\x8b")  # gzip: refused later
