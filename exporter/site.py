"""Many sessions -> a static site: ``index.html``, one page per session, and one per project
when the sessions span several.

Incremental: a manifest in the site folder remembers, per source file (keyed by a digest of
its path: the folder gets published), its size, mtime and SHA-256, the tool version and the
options, plus the index row, so a rebuild re-renders only what changed and rebuilds the index
from the manifest. Rendering runs in a process pool; a worker writes its page itself and hands
back only a small row, and a session that fails (or even kills its worker) is reported
without stopping the batch.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import hashlib
import json
import math
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

from exporter import __version__
from exporter.claude_code import sub_agent_stamps
from exporter.discover import PROJECT_FOLDER_NAMES, codex_day_folders
from exporter.entries import MessageEntry
from exporter.formatting import clipped, plural, terminal_text
from exporter.fsutil import DISK_FULL, atomic_write_text, not_a_device_name, write_target
from exporter.jsonl_out import download_bytes
from exporter.loader import SessionFormatError, parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.render.index import (
    answer_usage,
    listing_key,
    project_slug,
    render_listing,
    session_row,
)
from exporter.secret_warning import likely_secrets
from exporter.session import Session
from exporter.site_manifest import (
    MANIFEST_NAME,
    SEARCH_DIR,
    Mark,
    SiteBusy,
    SiteError,
    SiteIncomplete,
    SiteInTheWay,
    SiteLinkInTheWay,
    check_folder,
    clear_in_the_way,
    delete_page,
    is_temp_name,
    is_unchanged,
    load_manifest,
    marked_digest,
    not_curable_by_running_again,
    refuse_links_out,
    save_manifest,
    source_digest,
    source_id,
    stays_inside,
    sweep,
    write_if_changed,
)
from exporter.site_search import (
    delete_shard,
    has_shard,
    move_shard,
    pack_index,
    session_records,
    shard_bytes,
    sweep_shards,
    write_shard,
)
from exporter.times import read_iso
from exporter.usage import compute_stats
from exporter.usage_report import Lineage, counting_order, usage_of
from exporter.workers import ProgressBar, fork_context, run_tasks

__all__ = [
    "MANIFEST_NAME",
    "SiteBusy",
    "SiteError",
    "SiteIncomplete",
    "SitePagesUnwritten",
    "SiteReport",
    "build_site",
    "default_jobs",
    "make_options_key",
    "parse_since",
    "sessions_were_deleted",
    "source_id",
]

LOCK_NAME = ".pi-session-site.lock"
SAVE_EVERY = 10.0  # seconds between manifest checkpoints during long builds
_STEM_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

Transform = Callable[[Session], Session]


@dataclass(slots=True)
class SiteReport:
    """What a build did; ``failed`` lists (source file, error) for this run."""

    rendered: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[tuple[Path, str]] = field(default_factory=list)
    seconds: float = 0.0
    index_path: Path = Path("index.html")
    sessions: int = 0
    # pages of a site made without redaction that hold credentials of a known format in
    # clear (as `export` says of one page), and how many of each kind (kept in the manifest,
    # so a rebuild that renders nothing says it again)
    credential_pages: int = 0
    credentials: dict[str, int] = field(default_factory=dict)
    # why a page rendered in this build has no text-search shard (its session is not found
    # by the index's search and is rendered again next build), by source file
    unindexed: list[tuple[Path, str]] = field(default_factory=list)
    # pages the site folder could not take (a full disk, a file too large, a read-only
    # folder), by source file, with the OS error: each is in ``failed`` too; its session
    # keeps the page, row and search text of before (a new one is a failed row) and is
    # rendered again next build
    unwritten: list[tuple[Path, OSError]] = field(default_factory=list)
    # pages the site no longer lists (of sessions that left: deleted, maybe for a secret
    # they held) that could not be deleted (a folder of another user's, a read-only file
    # system), by path in the site, with the OS error: still there, and still served; a
    # session's is not counted removed, and its manifest entry is kept so the next build
    # tries again
    undeleted: list[tuple[str, OSError]] = field(default_factory=list)
    # the same of search text (``.pi-session-search/<source id>.json``: the session's
    # prompts, fetched by the index's search, so served as its page is)
    undeleted_search: list[tuple[str, OSError]] = field(default_factory=list)
    # temp files of an interrupted build that could not be deleted, by path in the site:
    # no page links them, so only a warning
    temps_left: list[tuple[str, OSError]] = field(default_factory=list)

    def summary(self) -> str:
        many = "s" if self.sessions != 1 else ""
        left = [plural(len(self.undeleted), "page")] if self.undeleted else []
        if texts := len(self.undeleted_search):
            left.append(plural(texts, "session's search text", "sessions' search text"))
        kept = f" ({' and '.join(left)} could not be deleted)" if left else ""
        return (
            f"{self.sessions} session{many}: {self.rendered} rendered, {self.unchanged} "
            f"unchanged, {self.removed} removed{kept}, {len(self.failed)} failed in "
            f"{self.seconds:.1f} s"
        )


#: Something in a page's place (a folder where it goes, a file where its folder goes): the
#: user's to move; another run alone cannot cure it.
_IN_PLACE = frozenset({errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.ELOOP})


class SitePagesUnwritten(OSError):
    """The site was finished (its index written) without pages the folder could not take
    (``SiteReport.unwritten``): a session whose page of before was made with the same
    options keeps it as it was, any other is a failed row; or with pages it no longer
    lists that could not be deleted (``SiteReport.undeleted``: a session deleted for a
    secret it held is still served). Raised, not only reported, so that no caller takes
    the folder for the sessions' site (``publish --html`` would delete the missing pages
    from the dataset, or upload the one left); ``report`` is the build's, as a finished
    build's; ``reason`` the first page's OS error, ``advice`` what to do."""

    def __init__(self, report: SiteReport, out_dir: Path) -> None:
        said: list[str] = []
        advice: list[str] = []
        errors: list[OSError] = []
        if report.unwritten:
            first = report.unwritten[0][1]
            errors.append(first)
            said.append(
                f"{first.strerror or first}: {plural(len(report.unwritten), 'page')} could "
                f"not be written in the site in {out_dir} (a session whose page of before was "
                "made with these options keeps it; any other is listed as failed)"
            )
            where = first.filename  # (in the site folder: _where)
            path = out_dir / where if isinstance(where, str) else None
            advice.append(_advice(first, out_dir, path))
        if report.undeleted:
            page, error = report.undeleted[0]
            errors.append(error)
            count = len(report.undeleted)
            more = f" and {count - 1} more" if count > 1 else ""
            said.append(
                f"{error.strerror or error}: {plural(count, 'page')} the site no longer lists "
                f"could not be deleted from the site in {out_dir} ({page}{more}): still there, "
                "and served by whatever serves the folder; the next build tries again"
            )
            advice.append(_advice(error, out_dir, out_dir / page))
        if report.undeleted_search:
            shard, error = report.undeleted_search[0]
            errors.append(error)
            count = len(report.undeleted_search)
            more = f" and {count - 1} more" if count > 1 else ""
            texts = plural(count, "session's search text", "sessions' search text")
            said.append(
                f"{error.strerror or error}: {texts} the site no longer lists could not be "
                f"deleted from the site in {out_dir} ({shard}{more}): still there, and served "
                "by whatever serves the folder; the next build tries again"
            )
            advice.append(_advice(error, out_dir, out_dir / shard))
        self.reason = errors[0].strerror or str(errors[0])
        self.advice = "; ".join(dict.fromkeys(advice))
        super().__init__(errors[0].errno, f"{'; '.join(said)}; {self.advice}")
        self.report = report


def _advice(error: OSError, out_dir: Path, path: Path | None) -> str:
    """What to do about a page (at ``path``, when known) the site folder ``out_dir`` could
    not take, or a file it could not delete, by why."""
    if error.errno in DISK_FULL:
        return "make room and run again"
    if error.errno == errno.EFBIG:  # ulimit -f, or a file system's largest file
        return "make room (or raise the file size limit: ulimit -f) and run again"
    if error.errno in _IN_PLACE:
        return f"move away what is in the place of {error.filename} and run again"
    if path is not None and (said := not_curable_by_running_again(error, path, out_dir)):
        return said
    return "run again"


def make_options_key(options: RenderOptions, *extra: str) -> str:
    """A short digest of everything that changes a page (render options + e.g. the policy)."""
    data = dataclasses.asdict(options)
    data.pop("source_name", None)
    data.pop("jobs", None)  # how many processes render a page never changes it
    data.pop("agent_context", None)  # one page's (export SESSION): never a site's
    text = json.dumps([data, *extra], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """``YYYY-MM-DD`` (local midnight), an ISO date-time, or ``7d`` / ``12h`` / ``2w`` ago."""
    now = now or datetime.now().astimezone()
    match = re.fullmatch(r"\s*(\d+)\s*([hdw])\s*", text)
    try:
        if match:
            amount, unit = int(match.group(1)), match.group(2)
            return now - timedelta(hours=amount * {"h": 1, "d": 24, "w": 168}[unit])
        moment = read_iso(text.strip().replace("Z", "+00:00"))
        if moment is None:
            raise ValueError(text)
        return moment if moment.tzinfo else moment.astimezone()
    except (ValueError, OverflowError):  # "1000000d" reaches before year 1
        message = f"--since {text!r}: use YYYY-MM-DD, an ISO date-time, or 7d/12h/2w"
        raise ValueError(message) from None


# --- worker -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Task:
    sid: str
    source: str
    stem: str
    out_dir: str
    options: RenderOptions
    transform: Transform | None
    source_mark: Mark | None = None
    name: str = ""  # the file's name as the site shows it (secrets redacted)
    # count the credentials the page holds in clear (a site made without redaction)
    count_credentials: bool = False


def _render_task(task: _Task) -> dict[str, Any]:
    """Load, transform, render and write one page; return its manifest entry (never raises)."""
    entry: dict[str, Any] = {"file": task.name, "stem": task.stem, "page": None, "error": None}
    try:
        with open(task.source, "rb") as handle:
            info = os.fstat(handle.fileno())
            data = handle.read()
        entry.update(size=info.st_size, mtime_ns=info.st_mtime_ns, ctime_ns=info.st_ctime_ns)
        entry["sha256"] = source_digest(hashlib.sha256(data).hexdigest(), task.source_mark)
        if stamps := sub_agent_stamps(Path(task.source)):  # a Claude Code session's sub-agents
            entry["sub_agents"] = stamps
        session = parse_session_bytes(data, path=task.source)  # keeps data for the download
        found = _usage_rows(session)  # the turns as `stats --all` reads them from the file
        if task.transform is not None:
            session = task.transform(session)
        # (of the session as its page shows it: a cut that left answers out matches no more)
        entry["turns"] = _turns(found, session, task.source_mark)
        if task.count_credentials:  # what the page holds in clear: the file as it is, or
            # the session written out (a cut copy; a Claude Code one with its sub-agents)
            found, _more = likely_secrets(download_bytes(session))
            if found:
                entry["credentials"] = dict(found)
        row = session_row(session)
        page = f"sessions/{project_slug(row['cwd'])}/{task.stem}.html"
        options = task.options
        options = dataclasses.replace(options, index_href="../../index.html")
        html = render_session(session, options)
        try:
            entry["error"] = _write_page(Path(task.out_dir), page, html)
        except OSError as error:  # the site folder's failure (a full disk), not the session's
            entry["error"] = f"cannot write {page}: {error.strerror or error}"
            where = _where(error, task) or page
            entry["unwritten"] = [error.errno, error.strerror or str(error), where]
        del html  # (a big page: not kept while the search records are made)
        if entry["error"] is None:
            # its size, to tell a page cut short since (is_unchanged): rendered again
            entry.update(page=page, row=row, page_bytes=os.stat(Path(task.out_dir) / page).st_size)
            _write_search_shard(task, session, entry)
    except (SessionFormatError, OSError) as error:
        text = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        entry["error"] = _one_line(text, task.source, task.name)
    except MemoryError:
        entry["error"] = "too large for memory"
    except Exception as error:  # a bug or a policy failure must not stop the batch
        entry["error"] = _one_line(f"{type(error).__name__}: {error}", task.source, task.name)
    return entry


#: Characters of the digest that names a turn in the manifest (72 bits: two of a site's
#: million turns share one about once in 10^10 sites).
TURN_KEY_CHARS = 12
#: The length of a message's key (:func:`_message_key`), stored with the keys: keys made
#: otherwise (a manifest of before) are made again.
MESSAGE_KEY_CHARS = 8
#: A message stored without keys (no time of its own): counted in every file.
UNKEYED = "."


def _usage_rows(session: Session) -> dict[str, Any]:
    """``usage_report``'s rows of the session as read (before a policy's cut), or why not."""
    try:
        return usage_of(session)
    except Exception as error:  # counting once is best effort: the page is made all the same
        return {"error": str(error)}


def _turns(
    found: dict[str, Any], session: Session, mark: Mark | None = None
) -> dict[str, Any] | None:
    """The session's answers as ``stats --all`` tells turns apart (exporter.usage_report's
    rule: a turn two files hold is one, known by its id, time stamp and usage, or without an
    id of its own by its words), each with what the index counts of it: ``{"days": [UTC
    day...], "each": [[key, day number, tokens, cost]...]}`` (day number -1: undated), its
    other keys as ``[answer number, key]`` pairs, ``"matched"`` (also found in the files
    counted before) and ``"owned"`` (also its own, for those counted after), and the
    session's lineage (:func:`_stored_lineage`), which decides which file counts a turn
    several hold, as ``stats --all`` decides it, and its messages' keys
    (:func:`_message_keys`), by which the index counts a message once too. None when the
    page's answers cannot be matched up with the file's (a policy cut some): the session
    is then counted in full."""
    try:
        stats = compute_stats(session)
        answers = answer_usage(session, stats)
    except Exception:  # counting once is best effort: the page is made all the same
        return None
    if "error" in found:
        return None
    if len(answers) != len(found["rows"]):
        return None
    days: dict[str, int] = {}
    each: list[list[Any]] = []
    matched: list[list[Any]] = []
    owned: list[list[Any]] = []
    for ((matches, owns), *_), (day, tokens, cost) in zip(found["rows"], answers, strict=True):
        number = -1 if day is None else days.setdefault(day, len(days))
        at = len(each)
        each.append([_turn_key(matches[0]), number, tokens, _turn_cost(cost)])  # = owns[0]
        matched += [[at, _turn_key(key)] for key in matches[1:]]
        owned += [[at, _turn_key(key)] for key in owns[1:]]
    lineage: Lineage = found["lineage"]
    return {
        "days": list(days),
        "each": each,
        "matched": matched,
        "owned": owned,
        "created": lineage.created,
        "last_answer": lineage.last_answer,
        # (digests, as the manifest keeps of paths: the folder gets published)
        "names": [_lineage_key(name, mark) for name in lineage.names],
        "parent": [_lineage_key(name, mark) for name in lineage.parent],
        "messages": _message_keys(session, [b.branch.entry_ids for b in stats.branches]),
        "message_key_chars": MESSAGE_KEY_CHARS,
    }


def _message_keys(session: Session, branches: list[list[str]]) -> list[str]:
    """Each branch's messages (the row's ``branches`` and ``messages``: every entry is on
    one branch) as one string, a message's keys' digests (:func:`_message_key`) joined and
    the messages apart by a space: a message another file holds too (a fork or a copy of a
    session; Pi copies a fork's entries as they are) is counted once, in the file counted
    first, as its turn's tokens and cost are, and a branch whose every message that file
    holds is that file's.

    A message is known by its words (role, time stamps and a digest of the message) and by
    its entry's id, time stamp and role too: a redacted copy's words differ, and a Codex
    fork's copy or a v1 file's migrated by Pi has other ids. Only a message with a time of
    its own is known so (:func:`_unowned_times`); one without (``UNKEYED``) is always
    counted, as a turn is when answers cannot be matched: an undated message's id is the
    loader's (its position), and a legacy Codex rollout dates every line by its header, so
    two sessions' "continue" would be one. Made from the session as its page shows it (a
    redacted site's: redacted), as the row's counts are."""
    unowned = _unowned_times(session)
    joined: list[str] = []
    for line in branches:
        said: list[str] = []
        for entry_id in line:
            entry = session.by_id.get(entry_id)
            if isinstance(entry, MessageEntry):
                keys = _one_message_keys(entry, unowned)
                said.append("".join(_message_key(key) for key in keys) or UNKEYED)
        joined.append(" ".join(said))
    return joined


def _unowned_times(session: Session) -> set[str]:
    """Entry times that are not a message's own: the session header's when several messages
    carry it (a legacy Codex rollout gives each line its header's time)."""
    header_time = session.header.timestamp
    if header_time is None:
        return set()
    carrying = sum(
        1
        for entry in session.entries
        if isinstance(entry, MessageEntry) and str(entry.raw.get("timestamp")) == header_time
    )
    return {header_time} if carrying > 1 else set()


def _one_message_keys(entry: MessageEntry, unowned: set[str]) -> list[tuple[str, ...]]:
    """The keys a message is known by in any file (:func:`_message_keys`): none without a
    time of its own (undated, or dated by a time ``unowned`` names)."""
    written, own = entry.raw.get("timestamp"), entry.message.get("timestamp")
    if written is None and own is None:
        return []
    if written is not None and str(written) in unowned:
        return []
    text = json.dumps(entry.message, sort_keys=True, default=str, separators=(",", ":"))
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()
    keys = [("words", entry.role, str(written), str(own), digest)]
    if written is not None:
        keys.append(("id", entry.id, str(written), entry.role))
    return keys


def _message_key(key: tuple[str, ...]) -> str:
    """A short digest of one of a message's keys (shorter than a turn's: a site stores two
    for each message; 48 bits keep a false match unlikely among millions)."""
    return _short_digest(key, MESSAGE_KEY_CHARS)


def _lineage_key(name: str, mark: Mark | None) -> str:
    """A lineage name (a path, a session id) as the manifest keeps it: a digest, keyed on a
    redacted site (as :func:`source_id` is), so a reader cannot confirm a guessed path."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return (digest if mark is None else mark(digest))[:32]


def _turn_key(turn: Any) -> str:
    """A short digest of a turn's identity as usage_report makes it (a tuple of strings and
    numbers): the manifest stores this, not the ids and times themselves."""
    return _short_digest(turn, TURN_KEY_CHARS)


def _short_digest(value: Any, chars: int) -> str:
    """``value`` (JSON-able; any other part as its text) as a URL-safe digest of ``chars``
    characters (a multiple of 4: six bits each, no padding), for a manifest to store."""
    text = json.dumps(value, default=str, separators=(",", ":"))
    size = chars * 3 // 4
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")


def _turn_cost(cost: float) -> float:
    """A turn's cost to ten significant digits (the manifest stays small), finite."""
    return float(f"{cost:.10g}") if math.isfinite(cost) else 0.0


def _write_search_shard(task: _Task, session: Session, entry: dict[str, Any]) -> None:
    """The session's searchable text beside its page (made from the session as the page
    shows it: a redacted site's is redacted); why it could not be written goes into
    ``entry`` (``search_error``; and ``search_oserror``, the OS error and its path, from
    which :func:`_record_result` says what to do when running again alone cannot cure it).
    Best effort: without it the session is not found by the index's text search, the build
    says why, and the next build renders it again."""
    try:
        records, cut = session_records(session)
        write_shard(Path(task.out_dir), task.sid, shard_bytes(records, cut))
    except OSError as error:  # e.g. .pi-session-search is a file, or read-only
        entry["search_error"] = _search_problem(Path(task.out_dir), error)
        where = error.filename2 or error.filename
        if isinstance(where, str) and error.errno:
            entry["search_oserror"] = [error.errno, error.strerror, where]
    except Exception as error:  # a bug: the page is made all the same
        entry["search_error"] = f"{type(error).__name__}: {error}"


def _search_problem(out_dir: Path, error: OSError) -> str:
    """Why a shard could not be written, naming the path inside the site folder (the
    manifest keeps it, and the folder may be published: no absolute path of this machine)."""
    # (a rename's target, not its temp file; else the folder or file it failed on)
    where = error.filename2 or error.filename
    if not where or not error.strerror:
        return f"cannot write {SEARCH_DIR} in the site folder: {error.strerror or error}"
    path = Path(os.fsdecode(where))
    with contextlib.suppress(ValueError):
        path = path.relative_to(out_dir)
    why = error.strerror
    if isinstance(error, (FileExistsError, NotADirectoryError)) and not os.path.isdir(where):
        why = "a file is in the place of this folder"
    elif isinstance(error, IsADirectoryError):
        why = "a folder is in the place of this file"
    return f"cannot write {path.as_posix()} in the site folder: {why}"


def _where(error: OSError, task: _Task) -> str | None:
    """The path a page's write failed on, inside the site folder (its project folder, when
    a file stands there), as the site's messages name paths."""
    where = error.filename
    if not isinstance(where, str):
        return None
    return os.path.relpath(where, task.out_dir)  # (a relative one is of the current folder)


def _write_page(out_dir: Path, page: str, html: str) -> str | None:
    """Write one page; why it was refused (a link out of the site), or None. An OSError
    (the folder could not take it) is raised: that session's page of before is kept."""
    target = out_dir / page
    target.parent.mkdir(parents=True, exist_ok=True)
    if not stays_inside(out_dir, target):  # the page, or its folder, a link out
        return f"{page} not written: it is a symbolic link out of the site folder"
    atomic_write_text(target, html)
    return None


def _one_line(text: str, source: str, name: str, limit: int = 300) -> str:
    """One line, without the source's absolute path (the index may be published): the file
    is ``name``. Cut at a grapheme cluster's start, so no emoji or accented letter of the
    message is broken before the ellipsis."""
    text = text.replace(source, name).replace(Path(source).name, name)
    text = " ".join(text.split()).removeprefix(f"{name}: ")
    return clipped(text, limit)


_DIED = "the worker process died while rendering this session (crash or out of memory)"


def _died(task: _Task) -> dict[str, Any]:
    return {"file": task.name, "stem": task.stem, "error": _DIED, "page": None}


# --- build ----------------------------------------------------------------------------------


def _stem_base(name: str, public_name: Callable[[str], str] | None = None) -> str:
    """The page name a file's (public) name makes, before a number keeps it apart. A cut
    may end a word ``public_name`` takes out (``…-alicebob`` cut to ``…-alice``): the cut
    name is made public again, until it stays."""
    base = _cut_stem(name)
    for _ in range(3):
        again = _cut_stem(public_name(f"{base}.jsonl")) if public_name else base
        if again == base:
            break
        base = again
    return not_a_device_name(base or "session")


def _cut_stem(name: str) -> str:
    return _STEM_UNSAFE.sub("-", Path(name).stem).strip("-.")[:120]


def _safe_stem(name: str, used: set[str], public_name: Callable[[str], str] | None = None) -> str:
    base = _stem_base(name, public_name)
    stem, n = base, 1
    while stem.lower() in used:
        n += 1
        stem = f"{base}-{n}"
    used.add(stem.lower())
    return stem


def _same_name(name: str) -> str:
    return name


def _failed_row(source: str, name: str, error: str) -> dict[str, Any]:
    mtime = None
    with contextlib.suppress(OSError):
        mtime = datetime.fromtimestamp(os.stat(source).st_mtime, timezone.utc).isoformat(
            timespec="milliseconds"
        )
    return {"file": name, "error": error, "last_activity": mtime}


def build_site(
    files: list[Path],
    out_dir: Path,
    *,
    jobs: int | None = None,
    force: bool = False,
    render_options: RenderOptions | None = None,
    options_key: str = "",
    transform: Transform | None = None,
    progress: bool | None = None,
    source_mark: Mark | None = None,
    public_name: Callable[[str], str] | None = None,
    count_credentials: bool | None = None,
) -> SiteReport:
    """Render ``files`` into ``out_dir`` incrementally; the index lists exactly ``files``.

    ``transform`` (e.g. a redaction policy) runs on each session before rendering; with more
    than one job it must be picklable (a top-level function or a ``functools.partial``).
    ``source_mark`` (a redacted site's: an HMAC under a local key) is what the manifest
    records of each source's SHA-256 instead of the hash itself, which would let a reader of
    the published folder confirm a guessed secret against the redacted page.
    ``public_name`` (a redacted site's: secrets out of names) makes a file's name into the
    one its page is named after and the index shows.
    ``count_credentials``: count the credentials of a known format each page holds in clear
    (``SiteReport.credentials``); None counts them when there is no ``transform``.
    ``progress``: None shows a bar when stderr is a terminal, True always, False never.
    """
    options = render_options or RenderOptions()
    out_dir = Path(out_dir)
    # through a link to its target: a dangling one's is made, a loop is said (both read
    # "File exists" from mkdir)
    write_target(out_dir).mkdir(parents=True, exist_ok=True)
    check_folder(out_dir, out_dir / MANIFEST_NAME)  # refuse a foreign folder before touching it
    refuse_links_out(out_dir)
    with _build_lock(out_dir):
        return _build(
            files,
            out_dir,
            jobs,
            force,
            options,
            options_key,
            transform,
            progress,
            source_mark,
            public_name or _same_name,
            transform is None if count_credentials is None else count_credentials,
        )


@contextlib.contextmanager
def _build_lock(out_dir: Path) -> Iterator[None]:
    """One build per site folder: two at once would sweep each other's pages away."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here, builds are not guarded
        yield
        return
    lock = out_dir / LOCK_NAME
    try:
        handle = _open_lock(lock)
    except PermissionError as error:
        if lock.is_file() and os.access(out_dir, os.W_OK):  # another user's lock: a lock
            handle = open(lock, "rb")  # noqa: SIM115 (flock takes a read-only one too)
        else:  # the lock's name is ours, not the reader's: say the folder
            raise PermissionError(
                error.errno, "cannot write in this folder", str(out_dir)
            ) from None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # (before anything of the folder was changed)
            raise SiteBusy(
                f"another pi-session build is writing {out_dir}; nothing was changed; run "
                "again when it ends"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _open_lock(lock: Path) -> IO[bytes]:
    """The lock file, opened to be locked. A folder in its place failed every build ("Is a
    directory"): an empty one is removed (nothing is lost) and the lock made there; any
    other (one that holds anything, a link) is refused, naming it: it is the user's."""
    try:
        return _open_lock_file(lock)
    except IsADirectoryError:
        try:
            lock.rmdir()  # only when empty
        except (FileNotFoundError, NotADirectoryError):  # another build made it a lock
            pass  # file just now (or removed the folder): that lock is opened
        except OSError:
            raise _lock_in_the_way(lock) from None
    return _open_lock_file(lock)


def _open_lock_file(lock: Path) -> IO[bytes]:
    """``open(lock, "a+b")`` that never follows a symbolic link: one out of the site (a
    clone or an archive can hold one) made the lock file wherever it pointed."""
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(lock, flags, 0o666)
    except OSError as error:
        if error.errno != errno.ELOOP:
            raise
        raise SiteLinkInTheWay(
            lock,
            f"{LOCK_NAME} in {lock.parent} is a symbolic link: the site's lock goes there, "
            "and a build would make it wherever the link points; remove the link",
        ) from None
    return os.fdopen(descriptor, "a+b")


def _lock_in_the_way(lock: Path) -> SiteInTheWay:
    return SiteInTheWay(
        lock,
        f"{lock} is a folder, not a file: the site's lock (which keeps two builds apart) "
        "goes there; move the folder away (or remove it) and build again (nothing was "
        "changed)",
    )


def _build(
    files: list[Path],
    out_dir: Path,
    jobs: int | None,
    force: bool,
    options: RenderOptions,
    options_key: str,
    transform: Transform | None,
    progress: bool | None,
    source_mark: Mark | None,
    public_name: Callable[[str], str],
    count_credentials: bool,
) -> SiteReport:
    """The build itself, under the lock: forget what left, render what changed, list all."""
    started = time.monotonic()
    clear_in_the_way(out_dir)  # before a page is rendered, which would be for nothing
    state = _BuildState.load(out_dir, f"{make_options_key(options)}:{options_key}")
    sources = {source_id(path, source_mark): path for path in map(os.path.abspath, files)}
    if source_mark is not None:
        _rekey_plain_ids(state, sources, source_mark)
    _forget_removed(state, sources, public_name)
    if source_mark is not None:
        _delete_leaving(state)
    if not state.had_manifest:
        state.write_manifest()  # claim the folder before writing
    tasks = _plan_tasks(
        state, sources, force, options, transform, source_mark, public_name, count_credentials
    )
    jobs = _worker_count(jobs, tasks, transform)
    order = sorted(sources, key=sources.__getitem__)
    try:
        _render_pages(state, tasks, jobs, progress)
        _place_failed_rows(state, sources)
        _finish_site(state, options.theme, order)
    except OSError as error:  # a full disk: the pages' own failures are said too
        raise SiteIncomplete(error, state.report, out_dir) from None
    except KeyboardInterrupt:
        _finish_interrupted(state, sources, options.theme, order)
        raise
    state.report.sessions = sum(not e.get("left") for e in state.sessions.values())
    _count_credentials(state)
    state.report.seconds = time.monotonic() - started
    _warn_of_temps_left(state.report.temps_left, out_dir)
    report = state.report
    if report.unwritten or report.undeleted or report.undeleted_search:  # a finished site,
        raise SitePagesUnwritten(report, out_dir)  # but not the sessions' site
    return state.report


def _warn_of_temps_left(temps: list[tuple[str, OSError]], out_dir: Path) -> None:
    """Temp files of an interrupted build that could not be deleted, said on stderr (once,
    with the first and why): no page links them, so the site is made all the same."""
    if not temps:
        return
    rel, error = temps[0]
    path = out_dir / rel
    more = f" (and {len(temps) - 1} more)" if len(temps) > 1 else ""
    advice = not_curable_by_running_again(error, path, out_dir)
    said = (
        f"pi-session: warning: a temp file of an interrupted build could not be deleted: "
        f"{path}{more}: {error.strerror or error}; no page links it"
        f"{f'; {advice}' if advice else ''}"
    )
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing to tell
        print(terminal_text(said), file=sys.stderr, flush=True)


def _finish_interrupted(
    state: _BuildState, sources: dict[str, str], theme: str, order: list[str]
) -> None:
    """Ctrl-C while rendering: the index and project pages are made again from what the
    folder holds now (the index of before linked pages this build replaced, and after
    ``--redact`` was switched on it still held the unredacted prompts and search text),
    then the pages no session owns are deleted, and stderr says the site is unfinished. A
    second Ctrl-C (or a full disk) meanwhile leaves the index of before, with its pages."""
    finished = False
    try:
        _place_failed_rows(state, sources)
        _finish_site(state, theme, order)
        finished = True
    except (OSError, KeyboardInterrupt):
        pass  # (the Ctrl-C that stopped the build is raised all the same)
    index = (
        "its index lists the pages made so far and those kept from before: a session not "
        "reached yet is missing or as it was"
        if finished
        else "its index is still the one from before"
    )
    removed = state.report.removed
    gone = f", {plural(removed, 'session')} removed" if removed else ""
    said = (
        f"pi-session: the build was interrupted: {plural(state.report.rendered, 'page')} "
        f"written{gone}, but the site in {state.out_dir} is not finished ({index}); run the "
        "same command again to finish it"
    )
    with contextlib.suppress(OSError, ValueError):  # stderr closed: nothing to tell
        print(terminal_text(said), file=sys.stderr, flush=True)


def _count_credentials(state: _BuildState) -> None:
    """Sum what the pages the site lists hold in clear (from the manifest: a page kept from
    an earlier build counts too; an entry that is not a name -> count map is left out)."""
    totals: dict[str, int] = defaultdict(int)
    for entry in state.sessions.values():
        found = entry.get("credentials")
        if not entry.get("page") or not isinstance(found, dict):
            continue
        counts = {k: v for k, v in found.items() if isinstance(k, str) and type(v) is int and v > 0}
        if counts:
            state.report.credential_pages += 1
            for kind, count in counts.items():
                totals[kind] += count
    state.report.credentials = dict(totals)


@dataclass(slots=True)
class _BuildState:
    """What a build's steps share: the site folder, the key of the options its pages are
    rendered with, the manifest as the build changes it, and the report."""

    out_dir: Path
    key: str
    had_manifest: bool  # False: the folder held no manifest of ours (a new site)
    sessions: dict[str, dict[str, Any]]  # by source id
    projects: dict[str, str]  # project page by cwd
    report: SiteReport
    # entries of sessions no longer among the sources, by source id: their pages and search
    # text go once the new index is written (_finish_site's sweep), not before
    leaving: dict[str, dict[str, Any]] = field(default_factory=dict)
    # those of them that are a selected session's under another key (not removed)
    rekeyed: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, out_dir: Path, key: str) -> _BuildState:
        """The state the folder's manifest describes (an empty site without one)."""
        manifest = load_manifest(out_dir / MANIFEST_NAME)
        return cls(
            out_dir=out_dir,
            key=key,
            had_manifest=bool(manifest),
            sessions=manifest.get("sessions", {}),
            projects=manifest.get("project_pages") or {},
            report=SiteReport(index_path=out_dir / "index.html"),
        )

    def write_manifest(self) -> None:
        save_manifest(self.out_dir / MANIFEST_NAME, self.sessions, self.projects)


def _rekey_plain_ids(state: _BuildState, sources: dict[str, str], mark: Mark) -> None:
    """A redacted site built before its sources' ids were keyed (0.2.43 and earlier): each
    entry under its source's plain id moves to the keyed one, its shard too, so its page
    keeps its name and is not deleted and made again as a session that left and came. Only
    an entry a redacted build made (its source's mark under this key): an unredacted page
    and shard are deleted before anything is rendered (:func:`_delete_leaving`)."""
    for sid, source in sources.items():
        plain = source_id(source)
        entry = state.sessions.get(plain)
        if sid in state.sessions or entry is None:
            continue
        try:
            redacted = entry.get("sha256") == marked_digest(source, mark)
        except OSError:
            continue
        if redacted:
            state.sessions[sid] = state.sessions.pop(plain)
            move_shard(state.out_dir, plain, sid)


def _forget_removed(
    state: _BuildState, sources: dict[str, str], public_name: Callable[[str], str]
) -> None:
    """Take the entries of sessions no longer among the sources out of the manifest; their
    pages and search text stay until the new index is written (:func:`_finish_site`'s
    sweep), so a build stopped before then never leaves an index linking deleted pages.

    Only sessions no longer selected count as removed: an entry that is a selected
    session's under another key (``--redact`` switched on or off, another publish key, the
    sessions folder reached by another path) is that session's, made again."""
    # (and the entry of a page a build could not delete: its session, back, is made anew)
    gone = [sid for sid, e in state.sessions.items() if sid not in sources or e.get("left")]
    state.leaving = {sid: state.sessions.pop(sid) for sid in gone}
    new = [source for sid, source in sources.items() if sid not in state.sessions]
    state.rekeyed = _rekeyed(state.leaving, new, public_name)
    state.report.removed = len(state.leaving) - len(state.rekeyed)


def _delete_leaving(state: _BuildState) -> None:
    """A redacted build deletes the pages and search text of the entries it forgot before
    rendering, not at the end's sweep: one a plain build made holds the secrets, and a full
    disk or a kill before the sweep left it in a folder made to be published (a Ctrl-C
    lists the site again without them). A page or search text that cannot be deleted
    keeps its entry (:func:`_left_entry`), which the manifest saved meanwhile keeps too;
    the sweep tries again, and the build says it."""
    for sid, entry in state.leaving.items():
        page_left = delete_page(state.out_dir, entry.get("page")) is not None
        if delete_shard(state.out_dir, sid) is not None or page_left:
            state.sessions[sid] = _left_entry(entry, page_left)


def _rekeyed(
    leaving: dict[str, dict[str, Any]], new: list[str], public_name: Callable[[str], str]
) -> set[str]:
    """Which of the ``leaving`` entries are one of the ``new`` sources under another
    key: its plain id (a plain site built with ``--redact``), else the same file name (as
    shown) or the same size and mtime (the keyed ids of a redacted site cannot be made
    again without its key). Each entry is matched once."""
    by_name: dict[str, list[str]] = defaultdict(list)
    by_stat: dict[tuple[int, int], list[str]] = defaultdict(list)
    for sid, entry in leaving.items():  # (read as the manifest's other fields: not trusted)
        name, size, mtime = entry.get("file"), entry.get("size"), entry.get("mtime_ns")
        if isinstance(name, str):
            by_name[name].append(sid)
        if type(size) is int and type(mtime) is int:
            by_stat[(size, mtime)].append(sid)
    matched: set[str] = set()
    for source in new:
        name = Path(source).name
        candidates = [source_id(source), *by_name.get(name, ())]
        candidates += by_name.get(public_name(name), ())
        with contextlib.suppress(OSError):
            info = os.stat(source)
            candidates += by_stat.get((info.st_size, info.st_mtime_ns), ())
        found = next((sid for sid in candidates if sid in leaving and sid not in matched), None)
        if found is not None:
            matched.add(found)
    return matched


def _plan_tasks(
    state: _BuildState,
    sources: dict[str, str],
    force: bool,
    options: RenderOptions,
    transform: Transform | None,
    source_mark: Mark | None,
    public_name: Callable[[str], str],
    count_credentials: bool,
) -> list[_Task]:
    """A task per source that changed since its page was rendered (every one with
    ``force``), biggest first; the rest are counted unchanged."""
    used = {str(e.get("stem", "")).lower() for e in state.sessions.values()}
    tasks: list[_Task] = []
    for sid, source in sorted(sources.items(), key=lambda item: item[1]):
        entry = state.sessions.get(sid)
        if (
            entry is not None
            and not force
            and is_unchanged(entry, source, state.out_dir, state.key, source_mark)
            and has_shard(state.out_dir, sid)  # (a site made before the text search had none)
            # nor one whose text could not be written last time (an old shard may be left)
            and not entry.get("search_error")
            # nor one made before the index counted a copy's turns once (nor the words of
            # long prompts), nor before it counted them in the file they came from
            and "turns" in entry
            # (nor before it counted a copy's messages once)
            and (
                entry["turns"] is None
                or (
                    {"names", "messages"} <= entry["turns"].keys()
                    and entry["turns"].get("message_key_chars") == MESSAGE_KEY_CHARS
                )
            )
        ):
            state.report.unchanged += 1
            continue
        name = public_name(Path(source).name)
        stem = _page_stem(entry, name, used, public_name)
        out_dir = str(state.out_dir)
        task = _Task(
            sid, source, stem, out_dir, options, transform, source_mark, name, count_credentials
        )
        tasks.append(task)
    tasks.sort(key=lambda t: -_size(t.source))  # big first: better balance across workers
    return tasks


def _page_stem(
    entry: dict[str, Any] | None,
    name: str,
    used: set[str],
    public_name: Callable[[str], str] | None = None,
) -> str:
    """The page's file name without ``.html``: the one it had while the file's public name
    still makes it (a secret or address redacted since moves the page: its old name was made
    from the text now redacted), else a new unused one."""
    old = entry.get("stem") if entry else None
    base = _stem_base(name, public_name)
    if isinstance(old, str) and re.fullmatch(rf"{re.escape(base)}(-[0-9]+)?", old):
        return old  # (never a path: the base is made of safe characters)
    return _safe_stem(name, used, public_name)


def _worker_count(jobs: int | None, tasks: list[_Task], transform: Transform | None) -> int:
    """The processes to render with (one per CPU by default); a transform that workers would
    need but cannot be sent to them is refused before any starts."""
    jobs = max(1, jobs or default_jobs())
    if jobs > 1 and len(tasks) > 1 and transform is not None:
        _check_picklable(transform)
    return jobs


def _render_pages(state: _BuildState, tasks: list[_Task], jobs: int, progress: bool | None) -> None:
    """Run the tasks, recording each result as it comes; the manifest is saved every
    ``SAVE_EVERY`` seconds and once they are done (even by an error), so pages on disk and
    manifest agree when the build is interrupted."""
    report = state.report
    bar = ProgressBar(len(tasks), progress, label="rendering")
    last_save = time.monotonic()

    def handle(task: _Task, result: dict[str, Any]) -> None:
        nonlocal last_save
        _record_result(state, task, result)
        bar.update(report.rendered + len(report.failed), len(report.failed))
        if time.monotonic() - last_save > SAVE_EVERY:
            state.write_manifest()
            last_save = time.monotonic()

    try:
        run_tasks(
            tasks,
            _render_task,
            handle,
            jobs=jobs,
            died=_died,
            context=lambda: fork_context("exporter.site"),
        )
    finally:
        bar.close()
        if tasks:  # a checkpoint: pages on disk and manifest agree even if listings fail
            state.write_manifest()


def _record_result(state: _BuildState, task: _Task, result: dict[str, Any]) -> None:
    """One task's result into the manifest and the report (a page that moved leaves its old
    file to :func:`_finish_site`'s sweep, after the index no longer links it)."""
    result.update(tool_version=__version__, options_key=state.key)
    if unwritten := result.pop("unwritten", None):
        error_number, why, page = unwritten
        error = OSError(error_number, why, page)
        state.report.unwritten.append((Path(task.source), error))
        if _keeps_page(state, task.sid):  # its entry, page and search text as they were
            state.report.failed.append((Path(task.source), result["error"]))
            return
    if result["error"]:
        result.pop("turns", None)
        delete_shard(state.out_dir, task.sid)  # its old text is no longer what it holds
        result["row"] = _failed_row(task.source, task.name, result["error"])
        state.report.failed.append((Path(task.source), result["error"]))
    else:
        state.report.rendered += 1
        result["row"].update(file=task.name, page=result["page"])
        failed = result.pop("search_oserror", None)  # (not kept: it names this machine's paths)
        if problem := result.get("search_error"):
            if failed and (advice := _search_advice(failed, state.out_dir)):
                problem = f"{problem}; {advice}"  # (said, not kept)
            state.report.unindexed.append((Path(task.source), problem))
    state.sessions[task.sid] = result


def _search_advice(failed: list[Any], out_dir: Path) -> str | None:
    """What to do about search text the folder could not take (``search_oserror``: errno,
    why, path) when the next build, which renders the session again for it, would fail
    alike (a folder of another user's, a read-only file system)."""
    error_number, why, where = failed
    return not_curable_by_running_again(OSError(error_number, why, where), Path(where), out_dir)


def _keeps_page(state: _BuildState, sid: str) -> bool:
    """May a session whose new page could not be written keep its page of before? Only a
    page made with the same options (another redaction policy's may hold what this one
    takes out) that is still there."""
    entry = state.sessions.get(sid)
    if entry is None or entry.get("error") or entry.get("options_key") != state.key:
        return False
    page = entry.get("page")
    return isinstance(page, str) and (state.out_dir / page).is_file()


def _place_failed_rows(state: _BuildState, sources: dict[str, str]) -> None:
    """A file that could not be read names no project; the sessions beside it in its
    folder (Pi keeps a folder per project) do: its row says theirs, not an empty cell."""
    by_folder: dict[str, set[str]] = defaultdict(set)
    for sid, entry in state.sessions.items():
        row = entry.get("row")
        if sid in sources and isinstance(row, dict) and not row.get("error") and row.get("cwd"):
            by_folder[os.path.dirname(sources[sid])].add(str(row["cwd"]))
    for sid, entry in state.sessions.items():
        row = entry.get("row")
        if sid in sources and isinstance(row, dict) and row.get("error"):
            known = by_folder.get(os.path.dirname(sources[sid]), set())
            if len(known) == 1:
                row["cwd"] = next(iter(known))


def _finish_site(state: _BuildState, theme: str, order: list[str]) -> None:
    """The index and project pages from the manifest (``order``: the source ids in their
    paths' order), the manifest saved, then the pages, search text and temp files no
    manifest entry owns (of sessions that left, pages that moved, an interrupted build)
    swept away: never before the index that linked them is replaced."""
    state.projects = _write_listings(state.out_dir, state.sessions, state.projects, theme, order)
    state.write_manifest()
    pages = {e.get("page") for e in state.sessions.values() if not e.get("left")}
    left = sweep(state.out_dir, pages | set(state.projects.values()))
    left += sweep_shards(state.out_dir, set(_searchable(state.sessions)))
    _keep_undeleted(state, left)


def _keep_undeleted(state: _BuildState, left: list[tuple[str, OSError]]) -> None:
    """What the sweeps could not delete, into the report: a temp file is only said; a page
    or search text is still served, so its session (if one that left) is not counted
    removed and keeps an entry that lists nothing (``left``: for the next build to try
    again). The old search text of a session still listed (its new one could not be
    written) is said by ``unindexed`` already."""
    state.report.temps_left = [(rel, e) for rel, e in left if is_temp_name(Path(rel).name)]
    served = [(rel, e) for rel, e in left if not is_temp_name(Path(rel).name)]
    state.report.undeleted = [(rel, e) for rel, e in served if not _is_shard(rel)]
    state.report.undeleted_search = [
        (rel, e) for rel, e in served if _is_shard(rel) and not _listed(state, Path(rel).stem)
    ]
    undeleted = {rel for rel, _ in state.report.undeleted}
    texts = {Path(rel).stem for rel, _ in state.report.undeleted_search}
    changed = False
    for sid, entry in state.leaving.items():
        now = state.sessions.get(sid)
        if now is not None and not now.get("left"):
            continue  # (its session came back, and was made again)
        if (page_left := entry.get("page") in undeleted) or sid in texts:
            state.sessions[sid] = _left_entry(entry, page_left)
            if sid not in state.rekeyed:  # (a session's under another key: not counted)
                state.report.removed -= 1
            changed = True
        elif now is not None:  # (kept by _delete_leaving, deleted since)
            del state.sessions[sid]
            changed = True
    if changed:
        state.write_manifest()


def _left_entry(entry: dict[str, Any], page_left: bool) -> dict[str, Any]:
    """The manifest entry of a session that left whose page or search text could not be
    deleted: no row (the index lists it no more), its page when that is left, to be
    deleted by the next build (its search text goes by its key), and its file's name
    (``sessions_were_deleted`` reads it). A page deleted is not kept: the same session
    under another key may have it now, and two entries of one page are both dropped."""
    keys = ("file", "stem", "page") if page_left else ("file",)
    kept = {key: entry[key] for key in keys if key in entry}
    return {**kept, "left": True}


def _is_shard(rel: str) -> bool:
    return rel.startswith(f"{SEARCH_DIR}/")


def _listed(state: _BuildState, sid: str) -> bool:
    """Does the site list the session of source ``sid`` (an entry of a session that left
    lists nothing)?"""
    entry = state.sessions.get(sid)
    return entry is not None and not entry.get("left")


def _write_listings(
    out_dir: Path,
    sessions: dict[str, dict[str, Any]],
    old: dict[str, str],
    theme: str,
    order: list[str],
) -> dict[str, str]:
    """index.html, plus projects/<slug>.html when there are several projects; stale ones go."""
    rows = _counted_rows(sessions, order)
    searchable = _searchable(sessions)
    listed = sorted(searchable.items(), key=lambda item: listing_key(item[1]))  # its order
    search = pack_index(out_dir, [(sid, r["page"], r.get("title") or "") for sid, r in listed])
    cwds = sorted({r.get("cwd") or "" for r in rows if not r.get("error")})
    pages = {cwd: f"projects/{project_slug(cwd)}.html" for cwd in cwds} if len(cwds) > 1 else {}
    if pages:
        (out_dir / "projects").mkdir(exist_ok=True)
    for cwd, page in pages.items():
        members = [r for r in rows if (r.get("cwd") or "") == cwd]  # its failed files too
        listing = render_listing(members, project=cwd, theme=theme, all_projects=set(cwds))
        write_if_changed(out_dir / page, listing)
    index = render_listing(rows, project_pages=pages, theme=theme, search=search)
    write_if_changed(out_dir / "index.html", index)
    for page in set(old.values()) - set(pages.values()):  # (once the index links them no more)
        delete_page(out_dir, page)
    return pages


def _counted_rows(sessions: dict[str, dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
    """The listing's rows (in ``order``: the source ids by path), a turn counted once however
    many files hold it, as ``stats --all`` counts it: in the file it came from (a fork's
    parent, else the file made first; :func:`exporter.usage_report.counting_order`, paths
    breaking ties). A row with turns counted in another is a copy with ``counted`` (its
    answers, how many of them are repeated, and its tokens, cost and cost per day without
    them) and ``copy_of`` (the title and page of the session that holds the first of them);
    the manifest's rows are left as they are."""
    rank = {sid: n for n, sid in enumerate(order)}
    listed = [(sid, e) for sid, e in sessions.items() if isinstance(e.get("row"), dict)]
    listed.sort(key=lambda item: rank.get(item[0], len(rank)))
    ages = [
        (f"{n:012d}", _stored_lineage(entry.get("turns"))) for n, (_, entry) in enumerate(listed)
    ]
    holders: dict[str, str] = {}  # each turn's key -> the source id of the file counting it
    message_holders: set[str] = set()  # the keys of the messages counted so far
    rows: dict[str, dict[str, Any]] = {}
    for index in counting_order(ages):
        sid, entry = listed[index]
        rows[sid] = _counted_row(sid, entry, sessions, holders, message_holders)
    return [rows[sid] for sid, _ in listed]


def _counted_row(
    sid: str,
    entry: dict[str, Any],
    sessions: dict[str, dict[str, Any]],
    holders: dict[str, str],
    message_holders: set[str],
) -> dict[str, Any]:
    """One listing row, its turns that ``holders`` (the files counted before it) hold marked
    as counted there, and its messages that ``message_holders`` hold left out of its
    ``messages``; its own turns and messages become theirs to hold."""
    row, turns = entry["row"], entry.get("turns")
    if row.get("error") or not isinstance(turns, dict):
        return row
    messages_repeated, branches_repeated = _repeated_messages(turns, message_holders)
    days, each = turns["days"], turns["each"]
    matched, owned = _more_keys(turns, "matched"), _more_keys(turns, "owned")
    repeated, tokens, cost, source = 0, 0, 0.0, None
    by_day: dict[str, float] = defaultdict(float)
    for number, (key, day, turn_tokens, turn_cost) in enumerate(each):
        keys = [key, *matched.get(number, ())]
        holder = next((holders[k] for k in keys if k in holders), None)
        for known in [key, *owned.get(number, ())]:
            holders.setdefault(known, sid)
        if holder is None:
            continue
        repeated += 1
        tokens += turn_tokens
        cost += turn_cost
        if 0 <= day < len(days):
            by_day[days[day]] += turn_cost
        if source is None and holder != sid:
            source = holder
    if not repeated and not messages_repeated:
        return row
    whole = repeated == len(each) and repeated > 0
    left = {d: c - by_day.get(d, 0.0) for d, c in (row.get("cost_by_day") or {}).items()}
    left = {d: round(c, 6) for d, c in left.items() if abs(c) >= 5e-7 and not whole}
    counted = {
        "answers": len(each),
        "repeated": repeated,
        "tokens": 0 if whole else max(0, row.get("tokens", 0) - tokens),
        "cost": 0.0 if whole else round(row.get("cost", 0.0) - cost, 6),
        "cost_by_day": left,
        "messages": max(0, row.get("messages", 0) - messages_repeated),
        "branches": max(0, row.get("branches", 0) - branches_repeated),
    }
    if source is None:  # repeated within its own file only: counted once, nothing to name
        return {**row, "counted": counted}
    first = sessions[source]["row"]
    copy_of = {"title": first.get("title") or first.get("file"), "page": first.get("page")}
    return {**row, "counted": counted, "copy_of": copy_of}


def _repeated_messages(turns: dict[str, Any], holders: set[str]) -> tuple[int, int]:
    """How many of a session's messages (:func:`_message_keys`, as stored: a manifest from
    before them, or one edited by hand, holds none) files counted before hold (one of its
    keys is in ``holders``), and how many of its branches hold only such messages; then its
    keys join ``holders``. A message repeated in its own file is counted each time (a
    prompt typed twice), and one without keys always."""
    stored, size = turns.get("messages"), MESSAGE_KEY_CHARS
    if not isinstance(stored, list) or turns.get("message_key_chars") != size:
        return 0, 0  # (keys made otherwise: a manifest of before, or one edited by hand)
    messages = branches = 0
    own: set[str] = set()
    for line in stored:
        if not isinstance(line, str) or not line:
            continue  # (a branch without messages: counted as its own)
        repeats = 0
        said = line.split(" ")
        for joined in said:
            keys = [joined[at : at + size] for at in range(0, len(joined), size)]
            keys = [key for key in keys if len(key) == size]  # (not UNKEYED)
            repeats += any(key in holders for key in keys)
            own.update(keys)
        messages += repeats
        branches += repeats == len(said)
    holders.update(own)
    return messages, branches


def _more_keys(turns: dict[str, Any], kind: str) -> dict[int, list[str]]:
    """A turn's other keys :func:`_turns` stored under ``kind``, by answer number (a manifest
    from before them, or pairs not of their kind: none)."""
    found: dict[int, list[str]] = defaultdict(list)
    pairs = turns.get(kind)
    for pair in pairs if isinstance(pairs, list) else ():
        if isinstance(pair, list) and len(pair) == 2:
            number, key = pair
            if type(number) is int and isinstance(key, str):
                found[number].append(key)
    return found


def _stored_lineage(turns: Any) -> Lineage:
    """The lineage :func:`_turns` stored (a manifest from before it, or one edited by hand:
    what is missing or not of its kind is unknown, the file counted as made last)."""
    turns = turns if isinstance(turns, dict) else {}

    def moment(key: str) -> float | None:
        value = turns.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None
        try:
            value = float(value)
        except OverflowError:  # an integer past the float range
            return None
        return value if math.isfinite(value) else None

    def names(key: str) -> tuple[str, ...]:
        value = turns.get(key)
        return tuple(n for n in value if isinstance(n, str)) if isinstance(value, list) else ()

    return Lineage(moment("created"), moment("last_answer"), names("names"), names("parent"))


def _searchable(sessions: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rows (by source id) of the sessions whose page the index links to and whose
    text its search covers: not one whose shard could not be written (a shard left from
    before holds its old text; the sweep deletes it when it can)."""
    return {
        sid: e["row"]
        for sid, e in sessions.items()
        if isinstance(e.get("row"), dict)
        and not e["row"].get("error")
        and isinstance(e["row"].get("page"), str)
        and not e.get("search_error")
    }


#: At most this many (file name, folder) pairs are tried by :func:`sessions_were_deleted`.
_DELETED_TRIES = 50_000


def sessions_were_deleted(out_dir: Path, sessions_dir: str | os.PathLike[str]) -> bool:
    """True when the site in ``out_dir`` lists a session whose file was in ``sessions_dir``
    (or a project folder in it) and is not there now. ``export --all`` refuses to build a
    site of no sessions, so that a wrong ``--sessions-dir`` does not empty a site; when this
    is True the sessions the site lists were deleted from where it was built from, and a
    build of no files (which removes their pages, as for any session that left) is right.

    The manifest holds no path, only a digest of each (its key): each listed file's name is
    tried in the session's project folder and in every folder of ``sessions_dir``, and the
    digest of that path compared. The project folder is tried as Pi and as Claude Code name
    it, and a Codex rollout in the day folder its name dates (or any left there): the last
    Codex or Claude Code session deleted left its page listed, with exit 2. Never True for
    a redacted site (its digests are keyed and its names may be redacted), nor for a folder
    that is not a site of ours."""
    entries = load_manifest(Path(out_dir) / MANIFEST_NAME).get("sessions") or {}
    root = Path(sessions_dir)
    try:
        folders = [root, *(p for p in root.iterdir() if p.is_dir()), *codex_day_folders(root)]
    except OSError:
        return False
    tries = 0
    for sid, entry in entries.items():
        name, row = entry.get("file"), entry.get("row")
        if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
            continue
        cwd = row.get("cwd") if isinstance(row, dict) else None
        named = isinstance(cwd, str) and cwd
        own = [root / encode(cwd) for encode in PROJECT_FOLDER_NAMES] if named else []
        own += _rollout_day_folder(root, name)
        for folder in dict.fromkeys([*own, *folders]):
            path = folder / name
            if source_id(path) == sid and not os.path.lexists(path):
                return True
            tries += 1
            if tries >= _DELETED_TRIES:
                return False
    return False


#: Codex names a rollout by the moment it began, under that day's folder:
#: ``YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl``
_ROLLOUT_DAY = re.compile(r"rollout-(\d{4})-(\d{2})-(\d{2})T")


def _rollout_day_folder(root: Path, name: str) -> list[Path]:
    """The day folder a Codex rollout's name puts it in (gone too when the whole day was
    deleted), or [] for a name that is no rollout's."""
    match = _ROLLOUT_DAY.match(name)
    return [root.joinpath(*match.groups())] if match else []


def default_jobs() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _size(path: str) -> int:
    with contextlib.suppress(OSError):
        return os.stat(path).st_size
    return 0


def _check_picklable(transform: Transform) -> None:
    try:
        pickle.dumps(transform)
    except Exception as error:
        message = "transform must be picklable (a top-level function or functools.partial)"
        raise TypeError(f"{message}: {error}") from None
