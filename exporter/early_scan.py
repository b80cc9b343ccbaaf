"""Work on a big session file's own bytes that needs no parsing, done by a child process
forked before the load: the page's embedded copy (gzip + base64) and the scan for
credentials that `export` warns of.

Loading is one core's work; on a machine with two or more, the other idled through it, and
the compression and the scan then ran while the entries rendered (or alone, at the end).
The child reads the file while this process parses it. Its answer is used only for a
session that is that file as it was read (what ``jsonl_out.read_source_bytes`` would return
its bytes for: no copy, the same size and time); for anything else (a redacted copy, a file
changed meanwhile, a child that failed) the usual code runs, so the page is the same.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import stat
import tempfile
from dataclasses import dataclass
from typing import IO

from exporter.render import embedded_copy
from exporter.render.parallel import can_fork
from exporter.secret_warning import secrets_warning
from exporter.session import Session

__all__ = ["EARLY_MIN_BYTES", "EarlyScan", "start_early_scan"]

#: Below this a fork costs more than the child saves (a 4 MB file loads in ~0.1 s).
EARLY_MIN_BYTES = 4_000_000


@dataclass(frozen=True)
class _Answer:
    size: int
    mtime_ns: int
    embedded: str | None
    warning: str | None


class EarlyScan:
    """The child at work on the file at ``path``; :meth:`embedded_for` and
    :meth:`warning_for` wait for it, once; :meth:`close` stops it when no answer is due."""

    def __init__(self, path: str, embed: bool, warn_how: str | None) -> None:
        self.path = os.path.abspath(path)
        # the answer goes through an unlinked file, not a pipe: a pipe needs a reader while
        # the child writes megabytes, and a reader thread would stop the renderers' fork
        self._file: IO[bytes] | None = tempfile.TemporaryFile()  # noqa: SIM115 (closed in _collect)
        self._answer: _Answer | None = None
        pid = os.fork()
        if pid == 0:  # the child: its answer or nothing, never this process's exit path
            status = 1
            try:
                answer = _scan(self.path, embed, warn_how)
                os.pwrite(self._file.fileno(), pickle.dumps(answer, pickle.HIGHEST_PROTOCOL), 0)
                status = 0
            finally:
                os._exit(status)
        self._pid = pid

    def _collect(self) -> _Answer | None:
        if self._file is None:
            return self._answer
        handle, self._file = self._file, None
        try:
            _, status = os.waitpid(self._pid, 0)
            if status == 0:
                handle.seek(0)
                self._answer = pickle.loads(handle.read())
        except (OSError, pickle.UnpicklingError, EOFError):
            self._answer = None
        finally:
            handle.close()
        return self._answer

    def close(self) -> None:
        """Stop the child if it still works (an export that failed before its page) and
        reap it: it must not read on, or linger, after the export."""
        if self._file is None:
            return
        handle, self._file = self._file, None
        try:
            with contextlib.suppress(OSError):  # (done already: a zombie until reaped)
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
        finally:
            handle.close()

    def _for(self, session: Session) -> _Answer | None:
        """The answer when ``session`` is the file as the child read it."""
        answer = self._collect()
        if answer is None or session.source_data is not None or session.path is None:
            return None
        if os.path.abspath(session.path) != self.path:
            return None
        if session.source_stamp != (answer.size, answer.mtime_ns):
            return None
        try:  # the load read on past lines appended meanwhile: then the file is not these bytes
            now = os.stat(self.path)
        except OSError:
            return None
        return answer if (now.st_size, now.st_mtime_ns) == (answer.size, answer.mtime_ns) else None

    def embedded_for(self, session: Session) -> str | None:
        """The page's embedded copy of ``session``, or None: make it as usual."""
        answer = self._for(session)
        return answer.embedded if answer is not None else None

    def warning_for(self, session: Session) -> tuple[str | None] | None:
        """``(the credentials warning line, or None for none)``, or None: scan as usual."""
        answer = self._for(session)
        return (answer.warning,) if answer is not None else None


def _scan(path: str, embed: bool, warn_how: str | None) -> _Answer:
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        data = handle.read()
    if len(data) != info.st_size:  # growing as it was read: the parent's own check fails
        raise OSError("the file changed while it was read")
    return _Answer(
        info.st_size,
        info.st_mtime_ns,
        embedded_copy(data) if embed else None,
        secrets_warning(data, warn_how) if warn_how is not None else None,
    )


def start_early_scan(
    session_arg: str | None, embed: bool, warn_how: str | None
) -> EarlyScan | None:
    """A child at work on ``session_arg`` when it names a big regular file (an id or a
    pipe is left to the usual code), there is work for it, and forking is safe here."""
    if not session_arg or session_arg == "-" or not (embed or warn_how is not None):
        return None
    try:
        info = os.stat(session_arg)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size < EARLY_MIN_BYTES:
        return None
    if not can_fork() or len(os.sched_getaffinity(0)) < 2:  # (can_fork: Linux only)
        return None
    try:
        return EarlyScan(session_arg, embed, warn_how)
    except OSError:  # no temporary file, no fork: the usual code does it all
        return None
