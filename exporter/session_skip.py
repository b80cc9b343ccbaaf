"""``--skip`` of ``publish`` and ``export --all``: sessions kept out of a batch run. A team
publishing ``--all`` from cron, or building a site of every session, needs a way to keep one
session (a client's, a leaked key's) out for good, short of listing every other session by
hand; a file of them is that list."""

from __future__ import annotations

import filecmp
import os
import re
from collections.abc import Iterable
from pathlib import Path

import click

from exporter.cli import CliError
from exporter.discover import AmbiguousSessionError, SessionLookupError, resolve_session_arg
from exporter.formatting import plural, terminal_text
from exporter.fsutil import expand_user

__all__ = ["list_file_lines", "skip_help", "skipped_sessions", "without_skipped"]


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


def skipped_sessions(
    values: Iterable[str], sessions_dir: str | None, consequence: str, selected: list[Path]
) -> set[str]:
    """The real paths of the sessions ``--skip`` names. A value that names a list file is
    read as one; a value that names a session file, or no file, is a session. An unknown
    session or a list that cannot be read stops the run (exit 1, ``consequence`` saying what
    was left undone): a typo would put out what it was meant to keep out.

    An id resolves among the ``selected`` sessions first, as a SESSION argument among this
    project's: the id `list` printed for the sessions of ``--cwd .`` is taken there even
    when another project holds a different copy of it (that copy is not in the run). An id
    or prefix naming different sessions that the run selected is an error listing them:
    skipping one of them would put out the other. One naming only sessions the run did not
    select leaves nothing out. Byte-identical copies of a skipped session are kept out too
    (:func:`without_skipped`)."""
    found: set[str] = set()
    chosen = {os.path.realpath(path) for path in selected}
    for value in values:
        for session, where in _sessions_named(value, consequence):
            if session == "-":
                raise CliError("--skip names a session file, id or list file, not -", 1)
            try:
                path = resolve_session_arg(session, sessions_dir=sessions_dir, among=selected)
            except AmbiguousSessionError as error:
                named = {os.path.realpath(p) for p in error.files}
                if not named & chosen:  # none of them is in this run: said as left out of 0
                    found |= named
                    continue
                message = f"--skip {where}: {error}; {consequence}"
                raise CliError(terminal_text(message), 1) from None
            except SessionLookupError as error:
                message = f"--skip {where}: {error}; {consequence}"
                raise CliError(terminal_text(message), 1) from None
            found.add(os.path.realpath(path))
    return found


def _same_bytes(first: Path, other: Path) -> bool:
    """Copies of one session: the same non-empty bytes (sizes first; an unreadable file is
    no copy). Two empty files are not one session."""
    try:
        size = first.stat().st_size
        if not size or size != other.stat().st_size:
            return False
        return filecmp.cmp(first, other, shallow=False)
    except OSError:
        return False


def without_skipped(
    files: list[Path], skip: Iterable[str], sessions_dir: str | None, consequence: str
) -> list[Path]:
    """The selection less the ``--skip`` sessions, said on stderr; all of it skipped is exit 2
    (a run that would put out nothing is a mistake a cron job must see)."""
    skipped = skipped_sessions(skip, sessions_dir, consequence, files)
    if not skipped:
        return files
    by_size = _by_size(skipped)
    kept = [f for f in files if not _is_skipped(f, skipped, by_size)]
    left_out = len(files) - len(kept)
    click.echo(
        f"pi-session: --skip leaves out {left_out} of the {plural(len(files), 'session')} selected",
        err=True,
    )
    if not kept:
        raise CliError(f"--skip leaves out every selected session; {consequence}", 2)
    return kept


def _by_size(paths: Iterable[str]) -> dict[int, list[Path]]:
    """The files by their size (one stat each), so a copy is looked for among few."""
    sizes: dict[int, list[Path]] = {}
    for path in paths:
        try:
            sizes.setdefault(os.stat(path).st_size, []).append(Path(path))
        except OSError:
            continue
    return sizes


def _is_skipped(path: Path, skipped: set[str], by_size: dict[int, list[Path]]) -> bool:
    """A skipped file, or a byte-identical copy of one (the same session in another project
    folder, or under another name): the CLI counts copies as one session, so one kept out
    keeps them all out."""
    if os.path.realpath(path) in skipped:
        return True
    try:
        same_size = by_size.get(path.stat().st_size, [])
    except OSError:
        return False
    return any(_same_bytes(path, other) for other in same_size)


_COMMENT = re.compile(r"(?:^|\s)#")  # "# note", "abc123  # note"; not a "#" inside a name


def _sessions_named(value: str, consequence: str) -> list[tuple[str, str]]:
    """(session, where it was named) for one ``--skip`` value."""
    path = expand_user(value)
    if not path.is_file() or _is_session_file(path):
        return [(value, value)]
    try:
        lines = list_file_lines(path)
    except OSError as error:
        reason = error.strerror or error
        raise CliError(terminal_text(f"--skip {value}: {reason}; {consequence}"), 1) from None
    named = []
    for number, line in lines:
        session = _COMMENT.split(line, maxsplit=1)[0].strip()
        if session:
            named.append((session, f"{value}:{number}"))
    return named


def list_file_lines(path: Path) -> list[tuple[int, str]]:
    """A list file's lines, numbered from 1, as ``--skip`` and ``publish --deny`` read them:
    UTF-8 (a BOM, as Notepad writes, left out; bytes that are not UTF-8 kept as escapes),
    any line ending. What a line means (comments) is the caller's; OSError propagates."""
    text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")
    return list(enumerate(text.splitlines(), 1))


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
