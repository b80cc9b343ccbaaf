"""``publish --skip``: sessions kept out of a batch publish. A team publishing ``--all`` from
cron needs a way to keep one session (a client's, a leaked key's) out for good, short of
listing every other session by hand; a file of them is that list."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from exporter.cli import CliError
from exporter.discover import SessionLookupError, resolve_session_arg
from exporter.formatting import terminal_text

__all__ = ["SKIP_HELP", "skipped_sessions"]

SKIP_HELP = (
    "Leave this session out (a path, id or id prefix, as for SESSIONS), or every session a "
    "file lists (one per line; '#' starts a comment). Repeatable. With --prune, a skipped "
    "session the dataset holds is deleted from it. A session it cannot find is an error."
)


def skipped_sessions(values: Iterable[str], sessions_dir: str | None) -> set[str]:
    """The real paths of the sessions ``--skip`` names. A value that names a list file is
    read as one; a value that names a session file, or no file, is a session. An unknown
    session or a list that cannot be read stops the run (exit 1): a typo would publish what
    it was meant to keep out."""
    found: set[str] = set()
    for value in values:
        for session, where in _sessions_named(value):
            if session == "-":
                raise CliError("--skip names a session file, id or list file, not -", 1)
            try:
                path = resolve_session_arg(session, sessions_dir=sessions_dir)
            except SessionLookupError as error:
                raise CliError(terminal_text(f"--skip {where}: {error}; nothing sent"), 1) from None
            found.add(os.path.realpath(path))
    return found


_COMMENT = re.compile(r"(?:^|\s)#")  # "# note", "abc123  # note"; not a "#" inside a name


def _sessions_named(value: str) -> list[tuple[str, str]]:
    """(session, where it was named) for one ``--skip`` value."""
    path = Path(value).expanduser()
    if not path.is_file() or _is_session_file(path):
        return [(value, value)]
    try:
        text = path.read_text(encoding="utf-8-sig", errors="surrogateescape")  # a BOM: Notepad
    except OSError as error:
        raise CliError(f"--skip {value}: {error.strerror or error}; nothing sent", 1) from None
    named = []
    for number, line in enumerate(text.splitlines(), 1):
        session = _COMMENT.split(line, maxsplit=1)[0].strip()
        if session:
            named.append((session, f"{value}:{number}"))
    return named


def _is_session_file(path: Path) -> bool:
    """A session (JSONL: its first line an object) rather than a list of sessions."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{") or head.startswith(b"\x1f\x8b")  # gzip: refused later
