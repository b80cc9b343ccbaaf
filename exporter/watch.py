"""`pi-session watch`'s engine: a session file followed while it grows, and its page made
again after each change, for :mod:`exporter.live_server` to serve.

The file is only read, as everywhere. A change is seen by the file's identity, size and
modification time (and those of the transcripts of the sub-agents a Claude Code session
names: another agent's, at work for no call the page shows, makes no page); a last line
still being written (no newline yet), in the file or such a transcript, is given a moment
to end before the page is made, and the page is made of the bytes that were seen to end a
line, read once (a line begun after that look waits for the next one). A page the same as
the one on show (the file only touched, an empty file beside it) is no new version: the
open page reloads only for something to see.
A file that disappears or stops being a session keeps its last page on show, with the
problem named, until it is readable again.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from exporter.agent_context import AgentContext
from exporter.claude_code import (
    ended_sub_agent_lines_only,
    sub_agent_references,
    sub_agent_stamps,
    sub_agent_transcripts,
)
from exporter.formatting import plural
from exporter.loader import (
    GZIP_MAGIC,
    SessionFormatError,
    load_session,
    parse_session_bytes,
    wide_encoding,
)
from exporter.render import RenderOptions, render_session
from exporter.session import Session

__all__ = ["LivePage", "LiveState", "Prepare", "SessionWatch"]

#: Seconds a last line without its newline is waited for before the file is read as it is.
SETTLE_SECONDS = 2.0
#: Seconds between two looks for a newer session, when the watch follows a folder's newest.
FOLLOW_SECONDS = 3.0
#: Load warnings said per read, as `export` says them: a file with 100 damaged lines printed
#: 100 warnings when the watch began; the rest are one "… and N more".
WARNINGS_PER_READ = 20
#: How the page names its version (templates/page.html.j2): the one part of two pages made
#: of the same session that differs. In <head>, before any of the session's text.
_VERSION_META = b'<meta name="pi-session-live" content="'


@dataclass(frozen=True)
class LivePage:
    """One rendered version of the page: what the server sends until the next one."""

    version: str
    html: bytes
    updated_ms: int  # when it was made, in ms since the epoch (the page shows it locally)
    entries: int
    path: Path
    damaged: int = 0  # lines that could not be read (shown under the page's All)
    digest: bytes = b""  # of the page but for its version's name: what a new one must change


@dataclass(frozen=True)
class LiveState:
    """The page on show and, when the file could not be read again, why it is not newer.
    Replaced whole, so a request never sees half an update."""

    page: LivePage
    problem: str | None = None


#: device, inode, size, modification time (ns), and the names, sizes and times of a Claude
#: Code session's sub-agent transcripts (a sub-agent at work writes only to its own file);
#: then the file's mode, looked at, not compared
Stamp = tuple[int, int, int, int, str, int]

#: Appended to a stamp's sub-agent part when a transcript's last line was left out, being
#: written: no look gives it, so the next look waits for that line (then reads it as it is).
_UNENDED = "+unended"

#: A policy applied to each read (watch --redact): the session as the page shows it, and the
#: agent's context (``options.agent_context``, as read) redacted with it, in the same report.
Prepare = Callable[[Session, AgentContext | None], tuple[Session, AgentContext | None]]


@dataclass(frozen=True)
class _Snapshot:
    """The session file's bytes as one read took them, and the stamp they are of: the page
    is made of these, not of a second read that a writer may have reached meanwhile."""

    stamp: Stamp
    data: bytes | None  # None: not a regular file (read as the loader reads a pipe)
    # the sub-agents whose transcripts the stamp is of (None: all of them), as ``data`` names
    agents: frozenset[str] | None = None


class SessionWatch:
    """Follows one session file (or, with ``newest``, the newest session of a folder) and
    keeps its current page in :attr:`state`. :meth:`step` looks once; the caller loops.
    ``options.agent_context`` (read once, when the watch began) is on every version, through
    ``prepare`` when it is given.
    Pages are made with ``options.jobs``: more than one forks children, so the process that
    calls :meth:`step` (and makes the watch) must run no other thread then."""

    def __init__(
        self,
        path: Path,
        options: RenderOptions,
        *,
        leaf: str | None = None,
        newest: Callable[[], list[Path]] | None = None,
        prepare: Prepare | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.options = options
        self.leaf = leaf
        self.newest = newest
        self.prepare = prepare  # a share policy applied to each read (watch --redact)
        self.clock = clock
        self.wall_clock = wall_clock
        self.warnings: list[str] = []  # load diagnostics not yet reported (the caller prints)
        self._run = secrets.token_hex(4)  # a restarted watch never repeats a version name
        self._count = 0
        self._stamp: tuple[object, ...] | None = None
        self._unfinished_since: float | None = None
        self._unreadable: tuple[object, ...] | None = None  # the stamp its problem is of
        # what has been warned of in the file being read; a new file (/new, a file replaced
        # or rewritten shorter) has its own damaged lines, at the same numbers perhaps
        self._reported: set[object] = set()
        self._read_from: tuple[int, int, int] | None = None  # device, inode, size last read
        # whether to look at sub-agent transcripts: Claude Code's are the session's too; a
        # Pi or Codex session has none (a <session>/subagents/ folder beside it is not read)
        self._sub_agents = True
        # the sub-agents the last read named (None: all): a transcript no call of the
        # session's names cannot change the page, and a write to it made the page again
        self._agents: frozenset[str] | None = None
        # the folder's sessions when the watch began, and each one it has followed since
        self._known = {path, *newest()} if newest is not None else {path}
        self._followed_at = clock()
        self.state = LiveState(self._render(*self._first_load()))

    # --- one look -------------------------------------------------------------------------

    def step(self) -> str | None:
        """Look at the file once; make the page again if it changed. Returns what happened,
        in a few words for the terminal, or None when nothing did."""
        switched = self._follow()
        try:
            stamp = _stamp_of(self.path, self._sub_agents, self._agents)
        except FileNotFoundError:
            return self._problem("the session file is gone")
        except OSError as error:
            return self._problem(f"cannot read the session file ({_reason(error)})")
        if not stat.S_ISREG(stamp[5]):  # a FIFO would block the read, and the server with it
            return self._problem("the session file is not a regular file now")
        if stamp[:5] == self._stamp:
            if self.state.problem is not None and self._unreadable != self._stamp:
                # moved away and back, a FIFO swapped back, a stat that failed once: the
                # page shown is the file's again
                self.state = replace(self.state, problem=None)
                return switched or "the session file is back"
            return switched
        if not _ends_a_line(self.path, stamp) and not self._waited_enough():
            return switched
        if not self._sub_agent_lines_ended(self._agents) and not self._waited_enough():
            return switched  # (looked at before the read: the file is not read meanwhile)
        before = self.state.page
        try:
            snapshot = _snapshot(self.path, self._sub_agents, stamp)
        except OSError as error:  # gone since the look, or a chmod: tried again next look
            return self._problem(f"the session file cannot be read now: {_reason(error)}")
        if snapshot.data is None:  # replaced by a FIFO since the look: a read would block
            return self._problem("the session file is not a regular file now")
        if _whole_lines(snapshot.data) < len(snapshot.data) and not self._waited_enough():
            return switched  # rewritten since the look, and its last line not ended yet
        # again after the read's stamp, of the sub-agents it names (one may be new): a line
        # begun before that stamp is waited for; one begun after it is left out of the load,
        # and its bytes are the next look's change
        ended = self._sub_agent_lines_ended(snapshot.agents)
        if not ended and not self._waited_enough():
            return switched
        self._unfinished_since = None
        try:
            # after the wait, the transcripts are read as they are, as the file is
            session, context = self._load(snapshot, ended_lines_only=ended)
        except SessionFormatError as error:
            self._stamp = self._unreadable = snapshot.stamp[:5]  # not again until it changes
            self._agents = snapshot.agents  # (the sub-agents that stamp is of)
            # without the file's path: the page may be on a screen others see (watch
            # --redact), and the terminal said which file it watches when it began
            why = _without_path(error, self.path)
            return self._problem(f"the session file cannot be read now: {why}")
        except OSError as error:  # tried again at each look: a chmod changes no stamp
            return self._problem(f"the session file cannot be read now: {_reason(error)}")
        page = self._render(session, context)
        if page.digest == before.digest and self.state.problem is None and not switched:
            return None  # touched, or a change the page does not show: nothing to reload
        self.state = LiveState(page)
        if switched:
            return switched
        return f"updated: {plural(page.entries, 'entry', 'entries')} ({_change(before, page)})"

    def _follow(self) -> str | None:
        """Switch to a session that started after the watch did (Pi's /new): the newest such
        one not followed yet. Sessions that existed already never take over, however busy,
        and each new one takes over once (two at work do not take turns)."""
        if self.newest is None or self.clock() - self._followed_at < FOLLOW_SECONDS:
            return None
        self._followed_at = self.clock()
        fresh = [path for path in self.newest() if path not in self._known]  # newest first
        if not fresh:
            return None
        # all of them known now: two started within one look, the older took over next
        self._known.update(fresh)
        self.path, self._stamp, self._unfinished_since = fresh[0], None, None
        self._reported.clear()  # its damaged lines are new, whatever their numbers
        self._read_from = None
        self._sub_agents = True  # until its first read says which agent wrote it
        self._agents = None
        return f"now watching {fresh[0]}, a new session of this folder"

    def _waited_enough(self) -> bool:
        """A last line without its newline is probably being written: wait for it a while."""
        now = self.clock()
        if self._unfinished_since is None:
            self._unfinished_since = now
        return now - self._unfinished_since >= SETTLE_SECONDS

    def _sub_agent_lines_ended(self, agents: frozenset[str] | None) -> bool:
        """Whether the transcripts of ``agents`` (a Claude Code session's sub-agents) all end
        a line: one still being written is waited for as the session file's own is (it was
        read at once: a warning and a damaged line on the page, until the next write)."""
        if not self._sub_agents:
            return True
        return all(
            _ends_a_line_at(file, _size_of(file))
            for file in sub_agent_transcripts(self.path, agents)
        )

    def _problem(self, problem: str) -> str | None:
        """Keep the last page, say why it is not newer; tell the terminal once per problem."""
        known = self.state.problem == problem
        self.state = replace(self.state, problem=problem)
        return None if known else problem

    # --- the page -------------------------------------------------------------------------

    def _first_load(self) -> tuple[Session, AgentContext | None]:
        """The first page, made at once: of the file's whole lines when its last one is
        still being written (the next looks wait for it as for any, and a line that never
        ends is then read and warned of as it is); of all of it when it has no whole line
        or those alone are no session."""
        snapshot = _snapshot(self.path, True)
        data = snapshot.data
        whole = 0 if data is None else _whole_lines(data)
        started = self.clock()
        if data is not None and 0 < whole < len(data):
            # the stamp of what was read: the file's size differs, so the next look reads
            stamp = (*snapshot.stamp[:2], whole, *snapshot.stamp[3:])
            lines = replace(snapshot, stamp=stamp, data=data[:whole])
            try:
                loaded = self._load(lines, first=True, ended_lines_only=True)
            except (SessionFormatError, KeyError):
                pass  # read whole below, as the file is: its error or its page (the
                # --leaf asked for may be on the line still unended)
            else:
                self._unfinished_since = started
                self._wait_for_sub_agent_lines(snapshot.agents, started)
                return loaded
        loaded = self._load(snapshot, first=True, ended_lines_only=True)
        self._wait_for_sub_agent_lines(snapshot.agents, started)
        return loaded

    def _wait_for_sub_agent_lines(self, agents: frozenset[str] | None, started: float) -> None:
        """After the first read, which left out a sub-agent's line still being written: the
        next looks wait for it, as for the file's own (its stamp is no look's)."""
        if self._stamp is None or self._sub_agent_lines_ended(agents):
            return
        self._unfinished_since = started
        self._stamp = (*self._stamp[:4], f"{self._stamp[4]}{_UNENDED}")

    def _load(
        self, snapshot: _Snapshot, first: bool = False, ended_lines_only: bool = False
    ) -> tuple[Session, AgentContext | None]:
        """Parse what ``snapshot`` read (prepared, with the agent's context beside it); the
        first time, a ``leaf`` it does not have is an error (KeyError), later a warning (a
        rewritten file may have lost it). ``ended_lines_only``: a sub-agent transcript's
        last line without its newline is left for the next read."""
        stamp = snapshot.stamp
        with ended_sub_agent_lines_only() if ended_lines_only else contextlib.nullcontext():
            if snapshot.data is None:  # not a regular file: as the loader reads a pipe
                session = load_session(self.path)
            else:
                session = parse_session_bytes(snapshot.data, path=os.fspath(self.path))
        read_from = (stamp[0], stamp[1], stamp[2])
        if self._read_from is not None and (
            read_from[:2] != self._read_from[:2] or read_from[2] < self._read_from[2]
        ):  # replaced, or rewritten shorter: its damaged lines are new ones
            self._reported.clear()
        self._read_from = read_from
        self._stamp = stamp[:5]  # of the bytes read: a line added meanwhile is seen next time
        self._agents = snapshot.agents
        self._sub_agents = session.agent == "Claude Code"
        if not self._sub_agents:  # as the next look sees it
            self._stamp = (*stamp[:4], "")
        if self.leaf is not None:
            try:
                session.set_leaf(self.leaf)
            except KeyError as error:
                if first:
                    raise
                self._warn_once(f"--leaf: {error.args[0]}; showing the newest entry's branch")
        told = untold = 0  # past WARNINGS_PER_READ, one line says how many (as export)
        for diagnostic in session.diagnostics:
            key = (diagnostic.line, diagnostic.kind)  # once a problem and line: a count grows
            if diagnostic.severity == "info" or key in self._reported:
                continue
            if told < WARNINGS_PER_READ:
                self._warn_once(str(diagnostic), key)
                told += 1
            else:  # not said later either: a new line is what a later read warns of
                self._reported.add(key)
                untold += 1
        if untold:
            self.warnings.append(f"… and {untold:,} more")
        context = self.options.agent_context
        return self.prepare(session, context) if self.prepare is not None else (session, context)

    def _render(self, session: Session, context: AgentContext | None) -> LivePage:
        self._count += 1  # (a version not kept leaves a gap: names need only be new)
        version = f"{self._run}.{self._count}"
        options = replace(self.options, live_version=version, agent_context=context)
        html = render_session(session, options).encode("utf-8", "surrogateescape")
        return LivePage(
            version=version,
            html=html,
            updated_ms=int(self.wall_clock() * 1000),
            entries=len(session.entries),
            path=self.path,
            damaged=len(session.damaged),
            digest=_digest_without_version(html),
        )

    def _warn_once(self, message: str, key: object = None) -> None:
        """``message`` unless already said (or another under the same ``key``)."""
        key = message if key is None else key
        if key not in self._reported:
            self._reported.add(key)
            self.warnings.append(message)


def _change(before: LivePage, after: LivePage) -> str:
    """What a new version holds that the last did not, for the terminal's line: a line that
    could not be read made a version with as many entries, which said nothing of why."""
    said = [f"{after.entries - before.entries:+,}"] if after.entries != before.entries else []
    lines = after.damaged - before.damaged
    if lines:
        said.append(f"{lines:+,} unreadable line{'s' if abs(lines) != 1 else ''}")
    return ", ".join(said) or "no new entries"


def _stamp_of(path: Path, sub_agents: bool = True, agents: frozenset[str] | None = None) -> Stamp:
    """The look's stamp: ``agents``' transcripts (None: all) for a Claude Code session."""
    info = os.stat(path)
    subagents = sub_agent_stamps(path, agents) if sub_agents else ""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, subagents, info.st_mode)


def _size_of(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0  # gone since the listing: nothing to wait for (the read says what is wrong)


def _digest_without_version(html: bytes) -> bytes:
    """A page's digest but for its version's name, which differs from one version to the
    next. The first such meta tag is the page's: the session's text comes after it, and is
    escaped where it could look like one."""
    start = html.find(_VERSION_META)
    if start < 0:
        return hashlib.sha256(html).digest()
    start += len(_VERSION_META)
    end = html.find(b'"', start)
    return hashlib.sha256(html[:start] + html[end:]).digest()


def _ends_a_line(path: Path, stamp: Stamp) -> bool:
    """Whether the file ends a line at the size ``stamp`` saw (see :func:`_ends_a_line_at`)."""
    return _ends_a_line_at(path, stamp[2])


def _ends_a_line_at(path: Path, size: int) -> bool:
    """Whether the file ends a line at ``size`` (an empty file counts as ended): the last
    character a newline, in the file's encoding. A gzip file's last byte is its trailer's:
    it is read whole or not at all, so it never waits."""
    if size == 0:
        return True
    try:
        with open(path, "rb") as handle:
            newline = _newline_of(handle.read(4))
            if newline is None:
                return True
            if size < len(newline) or size % len(newline):
                return False
            handle.seek(size - len(newline))
            last = handle.read(len(newline))
    except OSError:
        return True  # let the read say what is wrong
    return last == newline or len(last) < len(newline)  # shorter now: let the read say


def _newline_of(start: bytes) -> bytes | None:
    """How a file starting with ``start`` ends its lines; None for gzip data, which has no
    lines to wait for (UTF-16's newline ends in a zero byte: every change waited)."""
    if start.startswith(GZIP_MAGIC):
        return None
    encoding = wide_encoding(start)  # (the loader's reading of the byte order mark)
    if encoding is None:
        return b"\n"
    big_endian = start.startswith((codecs.BOM_UTF32_BE, codecs.BOM_UTF16_BE))
    return "\n".encode(f"{encoding}-{'be' if big_endian else 'le'}")


def _whole_lines(data: bytes) -> int:
    """How many of ``data``'s bytes are whole lines: all of them when it ends a line (or is
    empty, or gzip data), else up to its last newline (0 for none)."""
    newline = _newline_of(data[:4])
    if newline is None or not data:
        return len(data)
    width = len(newline)
    end = len(data)
    while (at := data.rfind(newline, 0, end)) >= 0:
        if at % width == 0:  # a whole character, not the end of one and the start of another
            return at + width
        end = at + width - 1
    return 0


def _snapshot(path: Path, sub_agents: bool, looked: Stamp | None = None) -> _Snapshot:
    """The file's bytes, one read: up to the size the look ``looked`` saw end a line, when
    the file is the same and no shorter; else as far as it is now. Opened without waiting
    for a writer, so a FIFO put in its place is said, not waited on. With ``sub_agents``,
    the stamp is of the transcripts of the sub-agents those bytes name, taken after the
    read and before the load reads them: never newer than what the page shows."""

    def opener(name: str, flags: int) -> int:
        return os.open(name, flags | os.O_NONBLOCK)

    with open(path, "rb", opener=opener) as handle:
        info = os.fstat(handle.fileno())
        stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, "", info.st_mode)
        if not stat.S_ISREG(info.st_mode):
            agents = sub_agent_stamps(path) if sub_agents else ""
            return _Snapshot((*stamp[:4], agents, stamp[5]), None)
        if looked is not None and looked[:2] == stamp[:2] and looked[2] <= stamp[2]:
            stamp = looked  # the bytes the look saw end a line, not a line begun since
        data = handle.read(stamp[2])
    named = _sub_agents_named(path, data) if sub_agents else None
    agents = sub_agent_stamps(path, named) if sub_agents else ""
    return _Snapshot((*stamp[:4], agents, stamp[5]), data, named)


def _sub_agents_named(path: Path, data: bytes) -> frozenset[str] | None:
    """The sub-agents a Claude Code session file holding ``data`` names (None, all of them,
    for gzip data, which is not read for this)."""
    if data.startswith(GZIP_MAGIC):
        return None
    if (encoding := wide_encoding(data)) is not None:  # as the loader reads it
        data = data.decode(encoding, errors="replace").encode("utf-8")
    return sub_agent_references(path, data)


def _without_path(error: SessionFormatError, path: Path) -> str:
    """The loader's message without the file's path it starts with: the page's status line
    showed the home folder and user name, under watch --redact too."""
    text, name = str(error), os.fspath(path)
    if text.startswith(f"{name}: "):
        return text[len(name) + 2 :]
    return text.replace(name, path.name)


def _reason(error: Exception) -> str:
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    return str(error)
