"""Where sessions live, how a SESSION argument resolves, and a cheap summary for listings.

Listing must stay fast with thousands of sessions, so :func:`scan_summary` reads each line's
fixed-order prefix (Pi writes ``{"type","id","parentId","timestamp",...}``) and parses only
the small parts it needs (usage objects, the first prompt, names) instead of every message.
A prefix whose id, parentId or role holds a JSON escape, or a message whose role it does not
show, is parsed instead (the raw bytes are not the value, and ``list`` disagreed with ``stats``).
Damage the loader repairs or rejects (repeated or missing ids, parent loops, a cut-off line,
NaN in a usage object) is counted as ``stats`` counts it. A NaN elsewhere in a line is not
looked for: Pi never writes one (``JSON.stringify`` turns NaN into null), and finding it
costs every listing a search of every byte (~20 % on 1,000 sessions, measured 2026-11-30).
For the same reason a line that is well-formed at both ends but broken inside (two writers
interleaved) is counted as an entry, where ``stats`` reports it as damaged.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from exporter import claude_code, codex, summary_cache
from exporter.entries import KNOWN_ENTRY_TYPES, as_dict, as_str, blocks_text
from exporter.formatting import one_line, prompt_line, terminal_text
from exporter.fsutil import expand_user, home
from exporter.jsonl_in import JS_SPACE, STRICT_JSON, header_object, line_value
from exporter.loader import (
    GZIP_MAGIC,
    SessionFormatError,
    header_id_from_path,
    header_version,
    load_session,
    other_agent,
    wide_encoding,
)
from exporter.session import CONVERTED_KINDS, TITLE_CHARS, Session, parse_time, prompt_words
from exporter.times import message_time
from exporter.usage import compute_stats, usage_from_raw

DEMO_FILE_NAME = "demo-session.jsonl"
#: What a command that reads one session says after "no Pi sessions" for SESSION left out.
PASS_A_SESSION = "pass a SESSION file or id, or --demo"


class SessionLookupError(LookupError):
    """A SESSION argument matched no file, or several."""


class AmbiguousSessionError(SessionLookupError):
    """An id or prefix naming different sessions: ``files`` are all it names, so ``--skip``
    can tell whether any of them is one its run selected."""

    def __init__(self, message: str, files: list[Path]) -> None:
        super().__init__(message)
        self.files = files


def agent_dir(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("PI_CODING_AGENT_DIR")
    return expand_user(configured) if configured else home() / ".pi" / "agent"


def sessions_root(sessions_dir: str | os.PathLike[str] | None = None) -> Path:
    return expand_user(sessions_dir) if sessions_dir else agent_dir() / "sessions"


def encode_cwd(cwd: str) -> str:
    """Pi's folder name for a project: ``--<cwd minus one leading slash, / \\ : as ->--``."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    return "--" + re.sub(r"[/\\:]", "-", trimmed) + "--"


def claude_encode_cwd(cwd: str) -> str:
    """Claude Code's project folder for a working directory (under ``~/.claude/projects``):
    every character but an ASCII letter or digit becomes "-" (``/home/me/web.app`` ->
    ``-home-me-web-app``)."""
    return _NOT_ALNUM.sub("-", cwd)


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def claude_projects_dir(env: dict[str, str] | None = None) -> Path:
    """Where Claude Code keeps its sessions: ``$CLAUDE_CONFIG_DIR/projects``, else
    ``~/.claude/projects``."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR")
    return (expand_user(configured) if configured else home() / ".claude") / "projects"


def codex_sessions_dir(env: dict[str, str] | None = None) -> Path:
    """Where Codex keeps its sessions: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``."""
    env = os.environ if env is None else env
    configured = env.get("CODEX_HOME")
    return (expand_user(configured) if configured else home() / ".codex") / "sessions"


def other_agents_hint(sessions_dir: str | os.PathLike[str] | None, cwd: str | None) -> str:
    """What to add to "no Pi sessions" when Claude Code or Codex has some for that folder
    (or for any, with ``cwd`` None) and the search was in Pi's own folder: how to read
    them."""
    if sessions_dir is not None:
        return ""
    hints = []
    claude = claude_projects_dir()
    codex_root = codex_sessions_dir()
    try:
        if cwd is not None:
            found = any(
                any((claude / claude_encode_cwd(here)).glob("*.jsonl"))
                for here in _project_paths(cwd)
            )
        else:
            found = any(claude.glob("*/*.jsonl"))
        if found:
            hints.append(f"Claude Code has some: add --sessions-dir {claude}")
        if session_files(codex_root, cwd) if codex_root.is_dir() else False:
            hints.append(f"Codex has some: add --sessions-dir {codex_root}")
    except OSError:
        pass
    return "".join(f"; {hint}" for hint in hints)


def other_projects_hint(
    sessions_dir: str | os.PathLike[str] | None, cwd: str | None, then: str
) -> str:
    """What to add to "no Pi sessions for CWD" when the folder holds other projects'
    (run from another directory, a first-time user met a bare "no sessions"): how many,
    and ``then``, what to do."""
    if cwd is None:
        return ""
    try:
        count = len(session_files(sessions_dir, None))
    except OSError:
        return ""
    said = (
        f"{count:,} sessions of other projects are"
        if count != 1
        else "1 session of another project is"
    )
    return f"; {said} there: {then.format(them='them' if count != 1 else 'it')}" if count else ""


def no_sessions_said(
    sessions_dir: str | os.PathLike[str] | None,
    cwd: str | None,
    then: str | None = None,
    since: str | None = None,
    older: int = 0,
) -> str:
    """The "no Pi sessions for <cwd> under <folder>" line, said one way by every command
    that finds none (``list``, ``stats``, ``search``, ``export``, ``redact``, ``share``,
    ``watch``, ``publish``, ``--pick``; SESSION left out too), with the sessions other
    agents have there, and other projects' with ``then`` (what to do; ``{them}`` is "it"
    or "them"). ``since``: only sessions active since then were wanted (the moment, as
    said), and ``older`` of the project's are there from before it; ``cwd`` None: any
    project."""
    root = sessions_root(sessions_dir)
    where = "any project" if cwd is None else cwd
    text = f"no Pi sessions for {where} under {root}"
    if not root.is_dir():  # a Claude Code or Codex user's first run: how to read theirs
        return text + " (it does not exist)" + other_agents_hint(sessions_dir, cwd)
    if since is not None:  # the other projects' may be older too: no count of them
        if older:
            there = "1 session there is" if older == 1 else f"{older:,} sessions there are"
            return f"{text} active since {since}; {there} older"
        return f"{text} active since {since}"
    text += other_agents_hint(sessions_dir, cwd)
    return text + (other_projects_hint(sessions_dir, cwd, then) if then else "")


def demo_session_path() -> Path:
    """The real branched session shipped inside the package for ``--demo``."""
    return Path(str(resources.files("exporter") / "demo" / DEMO_FILE_NAME))


def session_files(
    sessions_dir: str | os.PathLike[str] | None = None,
    cwd: str | None = None,
    unreadable: list[tuple[Path, OSError]] | None = None,
) -> list[Path]:
    """Session files of one project (``cwd``) or of all projects, newest first (by mtime).
    A folder that cannot be read (another user's, say), or a ``*.jsonl`` in one that cannot
    be looked at (a dangling link), is added to ``unreadable`` with its error, so a listing
    can say its sessions are missing instead of leaving them out unsaid."""
    root = sessions_root(sessions_dir)
    codex_days = codex_day_folders(root)
    folders = _session_folders(root, cwd, codex_days)
    # one path per file: a symlink (or hard link) to a session listed elsewhere would count
    # it, its tokens and its cost twice; the real path wins over a link to it
    by_file: dict[tuple[int, int], tuple[float, Path]] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        try:
            with os.scandir(folder):  # glob says nothing of a folder it may not read
                pass
        except OSError as error:
            if unreadable is not None:
                unreadable.append((folder, error))
            continue
        # a Pi project folder (--home-dev-app--) holds no Claude Code file: its files are not
        # opened to look for messages (every listing and each watch poll would pay for it)
        pi_folder = folder.name.startswith("--") and folder.name.endswith("--")
        for path in folder.glob("*.jsonl"):
            try:
                info = path.stat()
            except OSError as error:  # a dangling link, a loop of links: said, as a folder is
                if unreadable is not None:
                    unreadable.append((path, error))
                continue
            if not stat.S_ISREG(info.st_mode):  # a FIFO named *.jsonl would block every reader
                continue
            if claude_code.is_beside_sub_agent(path):  # its parent's session holds it
                continue
            if not pi_folder and claude_code.holds_no_messages(path, info.st_size):  # quit unused
                continue
            key = (info.st_dev, info.st_ino)
            seen = by_file.get(key)
            if seen is None or _preferred(path, seen[1]):
                by_file[key] = (info.st_mtime, path)
    files = sorted(by_file.values(), key=lambda item: (-item[0], str(item[1])))
    if cwd is None:
        return [path for _, path in files]
    heres = _project_paths(cwd)
    codex_places = {*codex_days, root} if codex_days else set()
    return [
        path
        for _, path in files
        if (
            codex.session_cwd(path) in heres  # a rollout: its first line names the project
            if path.parent in codex_places
            else not _another_project_here(path, heres)
        )
    ]


def _another_project_here(path: Path, heres: list[str]) -> bool:
    """True for a Pi session of another project that Pi's folder naming put in this one's
    folder (``/a/b-c`` and ``/a/b/c`` are both ``--a-b-c--``): its header names a folder
    that is not this project yet encodes the same. A session whose header names a folder
    encoding elsewhere (a project moved, its sessions copied over) stays this project's."""
    folder = path.parent.name
    if not folder.startswith("--") or folder not in {encode_cwd(here) for here in heres}:
        return False  # (a Claude Code folder's files hold no Pi header)
    try:
        with open(path, "rb") as handle:
            header = header_object(handle.readline(_HEADER_LIMIT))
    except OSError:
        return False
    there = header.get("cwd") if header.get("type") == "session" else None
    if not isinstance(there, str) or not there or encode_cwd(there) != folder:
        return False
    return not any(_same_folder(there, here) for here in heres)


def _same_folder(there: str, here: str) -> bool:
    """Whether a header's cwd is this project folder, however spelled (``C:/x`` and
    ``C:\\x``, a trailing slash, a link to it)."""

    def plain(folder: str) -> str:
        return os.path.normcase(os.path.normpath(folder.replace("\\", "/")))

    if plain(there) == plain(here):
        return True
    try:
        return os.path.samefile(there, here)
    except (OSError, ValueError):
        return False


#: A Pi header is a few hundred bytes; a first line longer than this is not read for its cwd.
_HEADER_LIMIT = 64 * 1024


def _session_folders(root: Path, cwd: str | None, codex_days: list[Path]) -> list[Path]:
    """The folders :func:`session_files` looks in (some may not exist). Codex's day folders
    (sessions/YYYY/MM/DD/, a project's rollouts told by each file's first line) come on top
    of the project folders beside them, not instead: one Codex day folder in a shared
    sessions folder hid every Pi and Claude Code session, and a site build deleted their
    pages."""
    codex_folders = [*codex_days, root] if codex_days else []
    if cwd is not None:  # Pi's folder for it, or Claude Code's (a --sessions-dir of its)
        mine = [
            root / encode(here) for here in _project_paths(cwd) for encode in PROJECT_FOLDER_NAMES
        ]
        return [*codex_folders, *mine]
    if not root.is_dir():
        return []
    folders = [p for p in root.iterdir() if p.is_dir()]
    return list(dict.fromkeys([*codex_folders, *folders, root]))


def gzip_files_left_out(
    sessions_dir: str | os.PathLike[str] | None = None, cwd: str | None = None
) -> list[Path]:
    """The ``*.jsonl.gz`` files in the folders :func:`session_files` looks in (of one
    project, or of all), which it does not list: no command finds them there (they are read
    when named). One beside a ``.jsonl`` of the same name (a page's own gzip download of
    it) is a copy, not counted. Sorted by path."""
    root = sessions_root(sessions_dir)
    found: list[Path] = []
    for folder in dict.fromkeys(_session_folders(root, cwd, codex_day_folders(root))):
        try:
            paths = list(folder.glob("*.jsonl.gz"))
        except OSError:
            continue
        for path in paths:
            with contextlib.suppress(OSError):
                if stat.S_ISREG(path.stat().st_mode) and not path.with_suffix("").exists():
                    found.append(path)
    return sorted(found)


#: The names a project's folder has under a sessions folder: Pi's, Claude Code's.
PROJECT_FOLDER_NAMES = (encode_cwd, claude_encode_cwd)


def _project_paths(cwd: str) -> list[str]:
    """A project folder as an agent records it: the path as given (absolute) and, when a
    symbolic link is on it, the real path too. Pi, Claude Code and Codex record the
    process's working folder, which is the real path (``cd`` through a link, then ``pi``),
    so ``--cwd ~/link`` found nothing where running from ``~/link`` found its sessions."""
    given = os.path.abspath(cwd)
    try:
        real = os.path.realpath(given)
    except (OSError, ValueError):
        real = given
    return list(dict.fromkeys((given, real)))


#: Codex's folders: sessions/<year>/<month>/<day>/rollout-….jsonl
_YEAR, _MONTH_OR_DAY = re.compile(r"\d{4}"), re.compile(r"\d{2}")


def codex_day_folders(root: Path) -> list[Path]:
    """The day folders under a Codex sessions folder, or [] for any other folder."""
    try:
        years = [p for p in root.iterdir() if _YEAR.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return []
    days = []
    for year in years:
        for month in _subfolders(year):
            days += _subfolders(month)
    return days


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if _MONTH_OR_DAY.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return []


def _preferred(path: Path, other: Path) -> bool:
    """Of two paths to one file: the one that is no link (to the file, or through a linked
    project folder), then the first by name. Resolved only when a file shows up twice."""
    return (_linked(path), str(path)) < (_linked(other), str(other))


def _linked(path: Path) -> bool:
    try:
        return os.path.realpath(path) != os.path.abspath(path)
    except (OSError, ValueError):
        return True


def _is_pipe(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def id_from_name(path: Path) -> str:
    """The session id in Pi's file name ``<time>_<id>.jsonl`` (the loader's rule: a name
    without one is its own id) or Codex's ``rollout-<time>-<id>.jsonl``, what SESSION
    prefixes are matched against."""
    if path.name.startswith("rollout-"):
        return codex.id_from_path(str(path))
    return header_id_from_path(str(path))


def _with_id_anywhere(root: Path, session_id: str) -> list[Path]:
    """Session files, in any project, whose name carries exactly this id: found by name
    (no stat of every session), so a whole id wins over a longer one that starts with it."""
    if not session_id or "/" in session_id or not root.is_dir():
        return []
    name = glob.escape(session_id)
    try:
        found = {
            os.path.realpath(p): p
            for pattern in (f"*_{name}.jsonl", f"{name}.jsonl", f"rollout-*-{name}.jsonl")
            for folder in ("", "*/", "[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/")
            for p in root.glob(folder + pattern)
            if id_from_name(p) == session_id and p.is_file()
        }
    except UnicodeEncodeError:  # an id no file name can hold here (LC_ALL=C): none has it
        return []  # (Python 3.13's glob stats a part without wildcards, and raised)
    return list(found.values())


def resolve_session_arg(
    session: str | None,
    *,
    demo: bool = False,
    sessions_dir: str | os.PathLike[str] | None = None,
    cwd: str | None = None,
    notes: list[str] | None = None,
    among: list[Path] | None = None,
) -> Path:
    """A path; else a session id or unique id prefix (this project first); else the latest.

    An id found in several files that are byte-identical copies (a project folder renamed
    or moved, its sessions copied) names one session: the copy in this project's folder,
    else the newest, is taken and ``notes`` gets a line saying so. Copies that differ are
    two sessions: this project's is taken when it holds one of them (the id `list` printed
    here), and ``notes`` names the others; from anywhere else the id is ambiguous.
    ``among``: the files that count as "this project's" instead of ``cwd``'s sessions
    (``--skip``: those its command selected)."""
    if demo:
        return demo_session_path()
    if session is None:
        cwd = cwd or os.getcwd()
        unreadable: list[tuple[Path, OSError]] = []
        latest = session_files(sessions_dir, cwd, unreadable)
        if not latest:  # in the words of every other command, then what to pass instead
            said = no_sessions_said(sessions_dir, cwd, "`pi-session list --all` shows {them}")
            raise SessionLookupError(f"{said}{_unread(unreadable)}; {PASS_A_SESSION}")
        return latest[0]
    if session == "-":  # `cat s.jsonl | pi-session export -`
        if sys.stdin is None or sys.stdin.isatty():
            raise SessionLookupError("SESSION - reads a session piped in, and stdin is a terminal")
        return Path("/dev/stdin")
    candidate = expand_user(session)
    if candidate.is_file() or _is_pipe(candidate):  # a pipe: `<(ssh host cat s.jsonl)`
        return candidate
    if candidate.exists():
        raise SessionLookupError(f"{session!r} is not a file")
    if os.path.islink(candidate):  # a moved file's link, or a loop: say so, not "no id"
        try:
            os.stat(candidate)
        except OSError as error:
            reason = (
                "a broken symbolic link"
                if isinstance(error, FileNotFoundError)
                else (error.strerror or str(error))
            )
            raise SessionLookupError(f"{session}: {reason}") from None
    # an id: this project's sessions first, none when the current folder was deleted (a
    # removed worktree); a path (above) needs no current folder at all
    cwd = cwd or _current_folder()
    unreadable = []
    if among is not None:
        here = among
    else:
        here = session_files(sessions_dir, cwd, unreadable) if cwd else []
    found = _with_id(session, sessions_dir, here, notes, unreadable)
    if found is None:  # an id as `list` shows it, of a name a terminal cannot show as it is
        found = _with_shown_id(session, sessions_dir, here, notes)
    if found is None:
        raise SessionLookupError(
            f"no session file or session id matches {session!r}{_unread(unreadable)}"
        )
    return found


def _with_id(
    session: str,
    sessions_dir: str | os.PathLike[str] | None,
    here: list[Path],
    notes: list[str] | None,
    unreadable: list[tuple[Path, OSError]],
) -> Path | None:
    """The session file whose id (in its name, else its header) is ``session`` or starts
    with it, this project's (``here``, its session files) first; None when there is none."""
    exact = [p for p in here if id_from_name(p) == session]
    if len(exact) == 1:
        return _this_projects(session, exact[0], sessions_dir, notes)
    exact = _with_id_anywhere(sessions_root(sessions_dir), session)  # "notes" beside "notes2"
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        return _one_of(session, exact, here, notes)
    for files in (here, None):  # this project first; all of them only when needed
        if files is None:
            files = session_files(sessions_dir, None, unreadable)
        unique = [p for p in files if id_from_name(p).startswith(session)]
        if len(unique) == 1:
            return _this_projects(session, unique[0], sessions_dir, notes, files is here)
        if len(unique) > 1:
            return _one_of(session, unique, here, notes)
    by_header = _with_header_id(session_files(sessions_dir, None), session)
    if len(by_header) == 1:
        return by_header[0]
    if len(by_header) > 1:
        return _one_of(session, by_header, here, notes)
    return None


def shown_id(session_id: str) -> str:
    """An id (or id prefix) as `list` shows it: on one line (a tab or a line break in a
    file name as a space), a control as a sign, a byte that is no UTF-8 as U+FFFD."""
    return terminal_text(one_line(session_id, None))


def _with_shown_id(
    session: str,
    sessions_dir: str | os.PathLike[str] | None,
    here: list[Path],
    notes: list[str] | None,
) -> Path | None:
    """The session file whose id `list` shows as ``session`` (or as a text that starts so),
    when its file name holds what a terminal cannot show: `list` showed ``tab<TAB>name``
    as ``tab name`` and ``bad<0xFE>name`` with a U+FFFD, which matched no session. This
    project's first; None when there is none."""
    for files in (here, None):
        if files is None:
            files = session_files(sessions_dir, None)
        ids = [(path, id_from_name(path)) for path in files]
        shown = [(path, said) for path, name in ids if (said := shown_id(name)) != name]
        exact = [path for path, said in shown if said == session]
        found = exact or [path for path, said in shown if said.startswith(session)]
        if len(found) == 1:
            return _this_projects(session, found[0], sessions_dir, notes, files is here)
        if len(found) > 1:
            return _one_of(session, found, here, notes)
    return None


def _current_folder() -> str | None:
    """The current folder; None when it was deleted under the shell."""
    try:
        return os.getcwd()
    except FileNotFoundError:
        return None


def _unread(unreadable: list[tuple[Path, OSError]]) -> str:
    """What a "none found" must add when a project folder could not be read: its sessions
    were not looked at ("no sessions" where `list` said "cannot read … (Permission denied)")."""
    if not unreadable:
        return ""
    folders = list(dict.fromkeys(folder for folder, _ in unreadable))
    folder, error = unreadable[0]
    reason = error.strerror or type(error).__name__
    more = f" and {len(folders) - 1} more" if len(folders) > 1 else ""
    what = "it was" if folder.suffix == ".jsonl" and not more else "its sessions were"
    return f" (cannot read {folder}{more}: {reason}; {what} not looked at)"


#: How many of the files an ambiguous id names the error lists.
_AMBIGUOUS_SHOWN = 8


def _this_projects(
    session: str,
    chosen: Path,
    sessions_dir: str | os.PathLike[str] | None,
    notes: list[str] | None,
    local: bool = True,
) -> Path:
    """``chosen``, the one file of this project ``session`` names; when a file of the same
    id elsewhere differs from it (a moved project's copy that went on), ``notes`` says so,
    as a user who saw the other copy's id in `list --all` would otherwise not know which
    one was read. Copies with the same bytes are one session: nothing to say."""
    if not local or notes is None:
        return chosen
    mine = os.path.realpath(chosen)
    others = [
        path
        for path in _with_id_anywhere(sessions_root(sessions_dir), id_from_name(chosen))
        if os.path.realpath(path) != mine and not _identical([chosen, path])
    ]
    if others:
        notes.append(_other_copies_note(session, chosen, others))
    return chosen


def _other_copies_note(session: str, chosen: Path, others: list[Path]) -> str:
    """The note for this project's file taken where ``others``, files that differ from it,
    carry the same id (copies that went on apart) or another that ``session`` starts."""
    listed = ", ".join(_pasteable(p) for p in others[:_AMBIGUOUS_SHOWN])
    more = f" and {len(others) - _AMBIGUOUS_SHOWN} more" if len(others) > _AMBIGUOUS_SHOWN else ""
    copies = all(id_from_name(p) == id_from_name(chosen) for p in others)
    if len(others) == 1:
        what = "a different copy in" if copies else "another session in"
    else:
        what = f"{len(others)} different copies:" if copies else f"{len(others)} other files:"
    using = f"using this project's {_pasteable(chosen)}"
    return f"{session!r} also names {what} {listed}{more}; {using}"


def _one_of(session: str, files: list[Path], here: list[Path], notes: list[str] | None) -> Path:
    """The file an id naming several stands for, when they are copies of one file (the
    same bytes): this project's copy, else the newest. Files that differ are different
    sessions: this project's wins when its own files among them are one session (with a
    note naming the others), as `list` here printed its id. Otherwise the id is
    ambiguous, and the error lists the files as paths to pass instead (they were relative
    to the sessions folder, which could not be pasted back)."""
    mine = {os.path.realpath(p) for p in here}
    local = [p for p in files if os.path.realpath(p) in mine]
    if _identical(files):
        chosen = local[0] if local else max(files, key=_mtime_then_name)
        if notes is not None:
            where = "this project's copy" if local else "the newest"
            notes.append(
                f"{session!r} names {len(files)} identical copies of one session; using "
                f"{where}: {_pasteable(chosen)}"
            )
        return chosen
    if local and _identical(local):  # this project holds one of the sessions: its own
        chosen = local[0]
        if notes is not None:
            others = [p for p in files if p not in local and not _identical([chosen, p])]
            notes.append(_other_copies_note(session, chosen, others))
        return chosen
    listed = ", ".join(_pasteable(p) for p in files[:_AMBIGUOUS_SHOWN])
    more = f" and {len(files) - _AMBIGUOUS_SHOWN} more" if len(files) > _AMBIGUOUS_SHOWN else ""
    raise AmbiguousSessionError(
        f"session id prefix {session!r} is ambiguous, it names {len(files)} files: "
        f"{listed}{more}; pass the path of the one you mean",
        files,
    )


def _pasteable(path: Path) -> str:
    """A path a shell takes back as one argument: absolute, quoted when it must be."""
    import shlex

    return shlex.quote(os.path.abspath(path))


def _mtime_then_name(path: Path) -> tuple[float, str]:
    try:
        return path.stat().st_mtime, str(path)
    except OSError:
        return 0.0, str(path)


def _identical(files: list[Path]) -> bool:
    """Whether the files hold the same bytes: sizes first (one stat each), contents only
    when every size agrees."""
    import filecmp

    try:
        sizes = {p.stat().st_size for p in files}
        return len(sizes) == 1 and all(filecmp.cmp(files[0], p, shallow=False) for p in files[1:])
    except OSError:
        return False


#: A header line longer than this is not read for its id (a first line of megabytes).
_HEADER_LINE_LIMIT = 1 << 16


def _with_header_id(files: list[Path], session: str) -> list[Path]:
    """Session files whose header's id is ``session`` or, when none is, starts with it: the
    id `list` and `stats` print is the header's, and a file not named ``<time>_<id>.jsonl``
    (a copy, a renamed file) could not be found by it. Read only when no name matched."""
    exact: list[Path] = []
    prefixed: list[Path] = []
    for path in files:
        try:
            with open(path, "rb") as handle:
                header = header_object(handle.readline(_HEADER_LINE_LIMIT))
        except OSError:
            continue
        found = header.get("id")
        if not isinstance(found, str) or header.get("type") != "session":
            continue
        if found == session:
            exact.append(path)
        elif found.startswith(session):
            prefixed.append(path)
    return exact or prefixed


# --- cheap summaries for `list` -----------------------------------------------------------

#: An id, parentId or role holding a backslash (a JSON escape: ``"\u0061"`` is "a") does not
#: match: the raw bytes are not the value, so such a line takes the parsing path.
_PREFIX = re.compile(
    rb'\{"type":"([A-Za-z_]+)","id":"([^"\\]*)","parentId":(null|"[^"\\]*"),'
    rb'"timestamp":"([^"\\]*)"(?:,"message":\{"role":"([A-Za-z]+)")?'
)
_USAGE_KEY = b'"usage":'
_UNREADABLE = object()


@dataclass(slots=True)
class SessionSummary:
    path: Path
    id: str = ""
    cwd: str = ""
    name: str | None = None
    first_prompt: str | None = None
    title_prompt: str | None = None  # as Session.title_prompt: a prompt that says something
    started: datetime | None = None
    modified: datetime | None = None
    entries: int = 0
    messages: int = 0
    branches: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0  # the sum of each turn's four token counts
    cost: float = 0.0
    version: int = 1
    error: str | None = None
    _parent_of: dict[str, str | None] = field(default_factory=dict, repr=False)
    _needs_loader: bool = field(default=False, repr=False)  # see _count_with_loader
    _earliest: str | None = field(default=None, repr=False)  # of the entries' stamps in Pi's form
    _headerless: bool = field(default=False, repr=False)  # no session line: Pi entries, or none?
    _pi_types: bool = field(default=False, repr=False)  # a line of a type Pi writes

    @property
    def title(self) -> str:
        if self.error:
            return f"(unreadable: {self.error})"
        if self.name:
            return self.name
        prompt = self.title_prompt or self.first_prompt
        return prompt_line(prompt, TITLE_CHARS) if prompt else "(no messages)"  # as `stats`

    @property
    def tokens(self) -> int:
        """The total ``stats``, the page and the site's index say: the sum of each turn's four
        token counts."""
        return self.total_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "cwd": self.cwd,
            "name": self.name,
            "first_prompt": self.first_prompt,
            "started": self.started.isoformat() if self.started else None,
            "modified": self.modified.isoformat() if self.modified else None,
            "entries": self.entries,
            "messages": self.messages,
            "branches": self.branches,
            "tokens": {
                "input": self.input,
                "output": self.output,
                "cache_read": self.cache_read,
                "cache_write": self.cache_write,
                "total_tokens": self.total_tokens,
            },
            "cost": round(self.cost, 6),
            "error": self.error,
        }


def _js_text(raw: bytes) -> str:
    """The line without what JavaScript's trim() takes (Unicode spaces, BOMs)."""
    return raw.decode("utf-8", errors="replace").strip(JS_SPACE)


def _trailing_js_space(raw: bytes) -> bool:
    """``{…}`` then a space JSON does not allow (NBSP): on the last line Pi trims it away,
    so only the loader can say whether this line is an entry."""
    return raw.decode("utf-8", errors="replace").rstrip(JS_SPACE).endswith("}")


def _add_usage(summary: SessionSummary, raw: Any) -> None:
    usage = usage_from_raw(raw)
    summary.input += usage.input
    summary.output += usage.output
    summary.cache_read += usage.cache_read
    summary.cache_write += usage.cache_write
    summary.total_tokens += usage.total_tokens
    summary.cost += usage.cost


_NESTING = re.compile(r"[\[\]{]")


def _usage_from_tail(raw: bytes) -> Any:
    """The message's usage, which Pi writes after its content: the one ``"usage":`` on the
    line, when only the message's last scalar fields (stopReason, timestamp) follow it.
    Otherwise (two of them, or one inside a tool call's arguments, followed by the rest of
    the content) the line is parsed: a tool's own usage object once counted as the turn's."""
    at = raw.rfind(_USAGE_KEY)
    if at < 0:
        return None
    if raw.count(_USAGE_KEY) == 1:
        tail = raw[at + len(_USAGE_KEY) :].decode("utf-8", errors="replace")
        try:
            value, end = STRICT_JSON.raw_decode(tail)
        except (ValueError, RecursionError):
            return _UNREADABLE  # NaN in a number, or "usage": in a text: the loader decides
        if not _NESTING.search(tail, end):
            return value
    value = line_value(raw)
    if value is None:
        return _UNREADABLE
    return as_dict(value.get("message")).get("usage") if isinstance(value, dict) else None


def _has_parent_cycle(parent_of: dict[str, str | None]) -> bool:
    """Whether some entries hang in a parentId loop, out of reach of every root."""
    children: dict[str, list[str]] = {}
    stack: list[str] = []
    for entry_id, parent in parent_of.items():
        if parent is None or parent not in parent_of:
            stack.append(entry_id)
        else:
            children.setdefault(parent, []).append(entry_id)
    reached = 0
    while stack:
        reached += 1
        stack.extend(children.get(stack.pop(), ()))
    return reached < len(parent_of)


def _count_with_loader(summary: SessionSummary, path: Path, session: Session | None = None) -> None:
    """Count a damaged tree as ``stats`` does: the scan cannot repair repeated or missing
    ids, parentId loops or NaN numbers the way the loader does, and then its entries,
    branches and usage disagreed with ``stats`` (0 branches for a loop). Rare, so slow."""
    if session is None:
        try:
            session = load_session(path)
        except (OSError, SessionFormatError):
            return  # the scan's own counts are the best there is
    stats = compute_stats(session)
    summary.version = session.version  # a file without a header: what its entries say
    if summary._headerless and not session.header.synthesized:  # a header after an entry
        summary.id = session.header.id or summary.id
        summary.cwd = session.header.cwd
        summary.started = parse_time(session.header.timestamp) or summary.started
    summary.entries = len(session.entries)
    summary.messages = sum(stats.roles.values())
    summary.branches = len(stats.branches)
    total = stats.all
    summary.input, summary.output = total.input, total.output
    summary.cache_read, summary.cache_write = total.cache_read, total.cache_write
    summary.total_tokens, summary.cost = total.total_tokens, total.cost
    if summary.first_prompt is None:  # a prompt on a line only the loader reads
        summary.first_prompt = session.first_prompt()
    if summary.title_prompt is None:
        summary.title_prompt = session.title_prompt()


def _converted_summary(path: Path) -> SessionSummary | None:
    """A Claude Code or Codex transcript's summary, from the loader (its lines are not
    Pi's, so the scan cannot count them) or from the summary cache while a listing runs
    (:mod:`exporter.summary_cache`); None for any other JSONL, told from its first lines
    (another tool's big file is not loaded whole)."""
    cache = summary_cache.ACTIVE[-1] if summary_cache.ACTIVE else None
    stamp: list[Any] = []
    if cache is not None:
        with contextlib.suppress(OSError):
            info = path.stat()
            stamp = [info.st_size, info.st_mtime_ns, claude_code.sub_agent_stamps(path)]
            fields = cache.get(path, stamp)
            if fields is not None:
                return _summary_from(path, fields)
    summary = _load_converted_summary(path)
    if cache is not None and stamp and summary is not None:
        cache.put(path, stamp, summary)
    return summary


def _summary_from(path: Path, fields: dict[str, Any]) -> SessionSummary:
    summary = SessionSummary(path=path)
    for name in summary_cache.FIELDS:
        if name in fields:
            setattr(summary, name, fields[name])
    summary.started = parse_time(fields.get("started"))
    summary.modified = parse_time(fields.get("modified"))
    return summary


def _load_converted_summary(path: Path) -> SessionSummary | None:
    try:
        with open(path, "rb") as handle:
            head = [line_value(raw) for raw in itertools.islice(handle, claude_code.SNIFF_LINES)]
        if other_agent(list(enumerate(head, start=1))) is None:
            return None
        session = load_session(path)
    except (OSError, SessionFormatError):
        return None
    if not any(d.kind in CONVERTED_KINDS for d in session.diagnostics):
        return None
    return _summary_of_loaded(path, session, version=3)


def _loaded_summary(path: Path) -> SessionSummary:
    """A session saved as UTF-16 or UTF-32, or gzipped (the scan reads UTF-8 lines), from
    the loader, which reads it; its error, as the scan would say it, when it is not a
    session."""
    try:
        session = load_session(path)
    except SessionFormatError:
        return SessionSummary(path=path, error="not a Pi session file")
    except OSError as error:
        return SessionSummary(path=path, error=error.strerror or str(error))
    return _summary_of_loaded(path, session, version=session.header.version)


def _summary_of_loaded(path: Path, session: Session, *, version: int) -> SessionSummary:
    summary = SessionSummary(path=path, id=session.id, cwd=session.header.cwd, version=version)
    summary.name = session.name
    summary.started = parse_time(session.header.timestamp)
    _count_with_loader(summary, path, session)
    _note_activity(summary, last_message_time(session))
    summary.modified = summary.modified or summary.started
    return summary


def last_message_time(session: Session) -> datetime | None:
    """A loaded session's last user or assistant message's time (Pi's "modified"), which
    `list` orders sessions by and `search` its results; None when it has none."""
    times = (
        message_time(entry.moment, entry.raw)
        for entry in session.iter_messages()
        if entry.role in ("user", "assistant")
    )
    return max((moment for moment in times if moment is not None), default=None)


def _not_pi(value: Any) -> bool:
    """A first line of a type Pi never writes (Claude Code's ``user``, Codex's
    ``session_meta``): another agent's transcript, read by the loader at once rather than
    scanned as a Pi file first (the whole file, for nothing)."""
    kind = value.get("type") if isinstance(value, dict) else None
    return isinstance(kind, str) and kind != "session" and kind not in KNOWN_ENTRY_TYPES


def _legacy_codex_header(value: Any) -> bool:
    """A Codex rollout's first line before September 2025: ``id`` and ``timestamp``, no
    ``type`` (its items' "message" type is also Pi's, so the scan cannot tell them)."""
    return (
        isinstance(value, dict)
        and "type" not in value
        and isinstance(value.get("id"), str)
        and isinstance(value.get("timestamp"), str)
    )


def _note_start(summary: SessionSummary, moment: datetime | None) -> None:
    if moment and (summary.started is None or moment < summary.started):
        summary.started = moment


def _note_activity(summary: SessionSummary, moment: datetime | None) -> None:
    if moment and (summary.modified is None or moment > summary.modified):
        summary.modified = moment


#: What a listing says of a file whose lines do not fit in memory.
TOO_BIG = "too large for memory"


def files_active_since(files: list[Path], since: datetime) -> list[Path]:
    """Sessions whose last user or assistant message is at or after ``since`` (Pi's
    "modified", what `list` shows as last activity):
    what `--since` means to `export --all` and to `publish` alike. A copy made without its
    times kept is not "changed" by the copy, and a file's time is not trusted to rule a
    session out either (entries from a clock ahead of this one)."""
    return [path for path in files if active_since(scan_summary(path), since)]


def newest_first(summaries: Iterable[SessionSummary]) -> list[SessionSummary]:
    """Summaries by last activity, newest first (those without a time last), as `list`
    shows them."""
    return sorted(
        summaries, key=lambda s: s.modified.timestamp() if s.modified else 0, reverse=True
    )


def active_since(summary: SessionSummary, since: datetime) -> bool:
    """Its last user or assistant message (a naive ``since`` is local time) is at or after
    ``since``; a session with no time at all is not."""
    limit = since if since.tzinfo else since.astimezone()
    return summary.modified is not None and summary.modified >= limit


def scan_summary(path: Path) -> SessionSummary:
    """Summarise a session for listings without parsing message bodies (see module doc)."""
    summary = SessionSummary(path=path)
    try:
        with open(path, "rb") as handle:
            start = handle.read(4)
            if wide_encoding(start) is not None or start.startswith(GZIP_MAGIC):
                return _loaded_summary(path)  # the scan reads UTF-8 lines; the loader reads these
            handle.seek(0)
            looking_for_header = True
            blank = True
            converted_tried = False  # another agent's reader asked once, not twice
            for number, raw in enumerate(handle, start=1):
                if number == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                if not raw.strip() or (len(raw) < 64 and not _js_text(raw)):
                    continue  # blank, also to JavaScript (an NBSP-only line), as the loader says
                first, blank = blank, False
                if looking_for_header:
                    # Like the loader: the header is the first object with a string "type".
                    # BOMs and NBSPs before the file's first line go, as Pi's trim takes them
                    if first and not raw.lstrip(b" \t\r").startswith(b"{"):
                        raw = raw.decode("utf-8", errors="replace").lstrip(JS_SPACE).encode()
                        summary._needs_loader = True
                    header = line_value(raw)
                    # an old Codex rollout (its items look like Pi's), or a line Pi never writes
                    if first and (_legacy_codex_header(header) or _not_pi(header)):
                        converted_tried = True
                        if (converted := _converted_summary(path)) is not None:
                            return converted
                    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
                        continue
                    looking_for_header = False
                    if header.get("type") == "session":
                        summary.id = as_str(header.get("id")) or id_from_name(path)
                        summary.cwd = as_str(header.get("cwd")) or ""
                        summary.started = parse_time(header.get("timestamp"))
                        summary.version = header_version(header.get("version"))
                        continue
                    summary.id = id_from_name(path)
                    summary._headerless = True
                    # the loader works out a version from the entries (a v3 file that lost
                    # its first line still has a tree): rare, so asked rather than copied
                    summary._needs_loader = True
                _scan_line(summary, raw, number)
            if looking_for_header:  # as load_session says: no header and no entry at all
                summary.error = "empty file" if blank else "not a Pi session file"
            elif summary._headerless and not summary._pi_types:  # another tool's JSONL
                if not converted_tried and (converted := _converted_summary(path)) is not None:
                    return converted
                summary.error = "not a Pi session file"
    except OSError as error:
        summary.error = error.strerror or str(error)
    except MemoryError:  # a line of gigabytes (a file of NULs a crash left): this one only
        summary.error = TOO_BIG
    if summary.version < 2:
        summary.branches = 1 if summary.entries else 0
    else:
        parents = set(summary._parent_of.values())
        summary.branches = sum(entry_id not in parents for entry_id in summary._parent_of)
        summary._needs_loader |= _has_parent_cycle(summary._parent_of)
    if summary._needs_loader and summary.error is None:
        _count_with_loader(summary, path)
    summary._parent_of = {}
    _note_start(summary, parse_time(summary._earliest))
    if not summary.id:  # empty or unreadable: the id `list` shows, from the file name
        summary.id = id_from_name(path)
    if summary.modified is None:
        summary.modified = summary.started
    if summary.modified is None:
        with contextlib.suppress(OSError):
            summary.modified = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
    return summary


#: The control characters JSON forbids raw in a string (a crash's NUL bytes, a stray BEL or
#: CR) but the line feed that ends a line: deleted by ``bytes.translate``, five times the
#: speed of a regular expression's search
_RAW_CONTROLS = bytes(range(32)).replace(b"\n", b"")


#: Another entry's start inside a line: the next append glued to a line a crash cut (the
#: prefix ``_PREFIX`` reads; a content block's ``{"type":…,"id":…`` has no ``parentId``)
_GLUED_ENTRY = re.compile(rb'\{"type":"[A-Za-z_]+","id":"[^"\\]*","parentId":')


def _maybe_damaged(raw: bytes) -> bool:
    """Whether a line the prefix would take may be no JSON after all, so it is parsed as the
    loader parses every line: `list` counted what a crash leaves (NUL bytes in a string, a
    cut line with the next append glued to it) as an entry, and an assistant's usage,
    where `stats` and the page said one damaged line. Two C-speed scans (about a fifth
    more listing time). What only another writer makes (an escape JSON has not) is not
    looked for, nor a line cut inside a string whose next append began a line of its own."""
    crlf = raw.endswith(b"\r\n")  # a CRLF file's line end is no damage
    return (
        len(raw.translate(None, _RAW_CONTROLS)) != len(raw) - crlf
        or _GLUED_ENTRY.search(raw, 1) is not None
    )


def _scan_line(summary: SessionSummary, raw: bytes, number: int) -> None:
    if not raw.endswith(b"\n") and line_value(raw) is None:
        summary._needs_loader |= _trailing_js_space(raw)
        return  # a cut-off last line: the loader reports it, it is no entry
    if not raw.rstrip(b" \t\r\n").endswith(b"}"):
        summary._needs_loader |= _trailing_js_space(raw)
        return  # cut off mid-file (a crash, then more appended): damaged, as the loader says
    match = None if _maybe_damaged(raw) else _PREFIX.match(raw)
    if match and match.group(5) is None and match.group(1) == b"message":
        match = None  # a message whose role the prefix missed (escaped, or not first): parse
    if match:
        entry_type = match.group(1).decode()
        entry_id = match.group(2).decode("utf-8", errors="replace")
        parent = match.group(3)
        timestamp = match.group(4).decode("utf-8", errors="replace")  # any bytes may be there
        role = match.group(5).decode() if match.group(5) else None
        parent_id = None if parent == b"null" else parent[1:-1].decode("utf-8", errors="replace")
        value: Any = None
    else:
        value = line_value(raw)
        if not isinstance(value, dict):
            return
        if not isinstance(value.get("type"), str):
            # an entry whose type is missing or not a word: the loader keeps it (no-type)
            # when it has an id, or in a v1 chain; counted as `stats` counts it, by the loader
            summary._needs_loader |= summary.version < 2 or isinstance(value.get("id"), str)
            return
        entry_type = value["type"]
        entry_id = as_str(value.get("id")) or f"L{number}"
        summary._needs_loader |= summary.version >= 2 and entry_id == f"L{number}"  # no id
        parent_id = as_str(value.get("parentId"))
        timestamp = as_str(value.get("timestamp"))
        role = as_str(as_dict(value.get("message")).get("role"))
    if entry_type == "session":
        return
    summary._pi_types |= entry_type in KNOWN_ENTRY_TYPES
    summary.entries += 1
    if timestamp:  # `started` is the header's time or an earlier entry's, as `stats` says
        if len(timestamp) == 24 and timestamp[10] == "T" and timestamp[23] == "Z":
            # Pi's own form sorts as text; parsed only when it would be the earliest, so a
            # stamp of that shape that is no date ("2025-00-01...") cannot hide the others
            earlier = summary._earliest is None or timestamp < summary._earliest
            if earlier and parse_time(timestamp) is not None:
                summary._earliest = timestamp
        else:
            _note_start(summary, parse_time(timestamp))
    if entry_id in summary._parent_of and summary.version >= 2:
        summary._needs_loader = True  # a repeated id
    summary._parent_of[entry_id] = parent_id if parent_id != entry_id else None
    if entry_type == "session_info":
        value = value if value is not None else line_value(raw)
        name = as_str(as_dict(value).get("name"))
        summary.name = name.strip() or None if name else None
        return
    if entry_type != "message":
        return
    summary.messages += 1
    if role == "assistant":
        usage = as_dict(value.get("message")).get("usage") if value else _usage_from_tail(raw)
        if usage is _UNREADABLE:
            summary._needs_loader = True
        elif usage is not None:
            _add_usage(summary, usage)
        _note_activity(summary, message_time(parse_time(timestamp), value))
    elif role == "user":
        _note_activity(summary, message_time(parse_time(timestamp), value))
        if summary.title_prompt is None:  # read on until a prompt says something
            value = value if value is not None else line_value(raw)
            text = blocks_text(as_dict(as_dict(value).get("message")).get("content")).strip()
            if text:
                summary.first_prompt = summary.first_prompt or text
                summary.title_prompt = prompt_words(text)
