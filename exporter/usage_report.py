"""Usage and cost over many sessions (`stats --all`): what was spent per model, project and
day, and in all.

Every branch counts: an abandoned branch's turns were paid for too (one session's
`stats` shows both scopes; over many sessions the question is the bill). A turn belongs to
the day of its own time stamp, in local time; with ``since``, only turns from then on count
(a turn without a readable time stamp cannot be placed, and is counted as "unknown" only
when no ``since`` is given).

A turn is counted once however many files hold it: a copy of a session (a backup, a folder
copied to another project), a copy taken before it grew or a fork (``pi --fork``, which copies
its parent's entries) repeats turns it already paid for. A turn is known by its entry id, its
time stamp as written and its usage. An entry without an id of its own (a v1 session's; the
loader names it ``L<line>``) is known instead by its time stamps, usage and a digest of what
it said and called: Pi gives such entries random ids when it migrates the file in place, so
the migrated file's turns are matched that way too (against id-less ones only: two sessions'
turns with ids of their own are never one by their words). A turn is counted in the file it
came from: the parent a fork's header names (``parentSession``) when that file is counted
too, else the file made first (its header's time; then the one whose last answer is
earliest, the copy the others grew from; then by path), never by modification times, which
a touch changes. A Codex fork copies its parent's lines into its own file under new time
stamps and, one header line later, new entry ids: a Codex turn is known by its session's id,
its place among the file's answers, its usage and its digest, and a fork's by its parent's
id too, so a fork matches its parent and two unrelated sessions that answer alike do not.

The report keeps each turn's keys as short digests (:class:`CountedTurn`) from its file's
reading until it is counted, and the counted ones' after: every file is read before any is
counted, as the order depends on them all, and the keys themselves (ids, time stamps, tuples)
took ~350 MB over 4,000 sessions.

A report of one project (`stats --cwd`) also reads the sessions its forks came from in other
projects (the parent each header names, and theirs, as far as the sessions folder holds
them), only to know which of the forks' turns are theirs: those are counted in the parent's
project, as `stats --all` counts them, not here.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from exporter.codex import KIND as CODEX
from exporter.discover import files_active_since, id_from_name
from exporter.entries import MessageEntry, as_str
from exporter.jsonl_in import header_object
from exporter.loader import LOAD_FAILURES, load_session, why_not_loaded
from exporter.session import Session, parse_time
from exporter.times import message_time
from exporter.usage import Usage, turn_usage
from exporter.workers import results_of

UNKNOWN = "unknown"
_FIELDS = (
    "turns",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "cost",
    "turns_without_usage",
)


@dataclass(slots=True)
class UsageTotals:
    """One row of a table: the usage and the sessions it came from."""

    usage: Usage = field(default_factory=Usage)
    sessions: set[str] = field(default_factory=set)


@dataclass(slots=True)
class UsageReport:
    read: int = 0  # sessions loaded
    failed: list[tuple[Path, str]] = field(default_factory=list)
    total: UsageTotals = field(default_factory=UsageTotals)
    by_model: dict[str, UsageTotals] = field(default_factory=dict)
    by_project: dict[str, UsageTotals] = field(default_factory=dict)
    by_day: dict[str, UsageTotals] = field(default_factory=dict)
    seen: set[bytes] = field(default_factory=set)  # the turns counted, by key digest
    repeated_turns: int = 0  # turns of a file already counted from another
    # the turns of sessions outside the report that its forks came from (another project's,
    # under --cwd), by key, and the forks' turns that are theirs: counted in that project
    held: set[bytes] = field(default_factory=set)
    counted_elsewhere: int = 0
    copies: int = 0  # files whose every turn was counted from another
    # models of turns whose cost was worked out from list prices (Claude Code, Codex record
    # tokens), and those of them no price is known for (counted as $0): said under the tables
    list_priced: set[str] = field(default_factory=set)
    unpriced: set[str] = field(default_factory=set)

    def add(self, path: Path, found: dict[str, Any]) -> None:
        """Merge one session's turns (as :func:`session_usage` found them: each a
        :class:`CountedTurn`)."""
        if "error" in found:  # the loader's message may start with the path: said once
            self.failed.append((path, str(found["error"]).removeprefix(f"{path}: ")))
            return
        self.read += 1
        key = str(path)
        fresh = 0
        for turn in found["rows"]:
            matched, owned = key_digests(turn.matched), key_digests(turn.owned)
            repeated = any(turn_key in self.seen for turn_key in matched)
            if not repeated and any(turn_key in self.held for turn_key in matched):
                self.held.update(owned)  # (a fork of this fork holds it too)
                self.counted_elsewhere += 1
                continue
            self.seen.update(owned)  # (a repeated turn's too: a fork of a fork matches it)
            if repeated:
                self.repeated_turns += 1
                continue
            fresh += 1
            model, day = turn.model, turn.day
            usage = Usage(**dict(zip(_FIELDS, unpacked_values(turn.values), strict=True)))
            if found.get("list_priced"):
                self.list_priced.add(model)
                if usage.total_tokens and not usage.cost:
                    self.unpriced.add(model)
            for table, name in (
                (self.by_model, model),
                (self.by_project, found["project"] or UNKNOWN),
                (self.by_day, day),
            ):
                row = table.setdefault(name, UsageTotals())
                row.usage.add(usage)
                row.sessions.add(key)
            self.total.usage.add(usage)
            self.total.sessions.add(key)
        self.copies += bool(found["rows"]) and not fresh

    def hold(self, found: dict[str, Any]) -> None:
        """Note the turns of a session outside the report that a fork in it came from (as
        :func:`session_usage` found them): the fork's copies of them are not counted here,
        as `stats --all` counts them in the parent's project. Nothing of it is counted."""
        for turn in found.get("rows", ()):
            self.held.update(key_digests(turn.owned))

    def ranked(self, table: dict[str, UsageTotals]) -> list[tuple[str, UsageTotals]]:
        """Costliest first (then most turns, then by name): where the money went."""
        return sorted(table.items(), key=lambda kv: (-kv[1].usage.cost, -kv[1].usage.turns, kv[0]))

    def days(self) -> list[tuple[str, UsageTotals]]:
        """In date order; turns without a time last."""
        return sorted(self.by_day.items(), key=lambda kv: (kv[0] == UNKNOWN, kv[0]))


@dataclass(frozen=True, slots=True)
class Lineage:
    """What decides which of the files holding a turn counts it (:func:`counting_order`)."""

    created: float | None  # the header's time (seconds since the epoch); None: none readable
    last_answer: float | None  # the latest answer's time, whatever ``since`` counts
    names: tuple[str, ...]  # what a header's parentSession may call this file
    parent: tuple[str, ...]  # what this file's header calls its parent, in the same terms


def counting_order(files: Sequence[tuple[str, Lineage]]) -> list[int]:
    """The order to count ``files`` (path, lineage) in, as indexes, so that a turn several
    hold is counted in the one it came from: a fork's parent before the fork when both are
    counted, else the file made first (header time), then the one whose last answer is
    earliest (a backup taken before the session grew: the same header), then by path.
    Never the files' modification times: a touch must not move the bill between projects."""

    def made(index: int) -> tuple[Any, ...]:
        path, lineage = files[index]
        created, last = lineage.created, lineage.last_answer
        return (created is None, created or 0.0, last is None, last or 0.0, path)

    by_age = sorted(range(len(files)), key=made)
    named: dict[str, int] = {}
    for index in by_age:
        for name in files[index][1].names:
            named.setdefault(name, index)
    order: list[int] = []
    placed: set[int] = set()
    for index in by_age:
        chain: list[int] = []  # this file, its parent, the parent's parent ... not yet placed
        at: int | None = index
        while at is not None and at not in placed and at not in chain:
            chain.append(at)
            parents = (named.get(name) for name in files[at][1].parent)
            at = next((p for p in parents if p is not None and p != at), None)
        for member in reversed(chain):
            placed.add(member)
            order.append(member)
    return order


def lineage_of(session: Session, last_answer: float | None) -> Lineage:
    """The session's :class:`Lineage`: its names are its id and real path; its parent's
    (``parentSession``: a Codex or Claude Code session id, or a path as Pi's fork was given
    it, which may be relative to where Pi ran, the fork's project) the same kinds of name."""
    header = session.header
    names = [f"id:{header.id}"] if header.id else []
    if session.path:
        names += _path_names(session.path)
    parent = header.parent_session
    parents: list[str] = []
    if parent:
        parents += [f"id:{parent}", *_path_names(parent)]
        if not os.path.isabs(parent) and header.cwd:
            parents += _path_names(os.path.join(header.cwd, parent))
        if parent.endswith((".jsonl", ".jsonl.gz")):  # and the id its file name carries: a
            parents.append(f"id:{id_from_name(Path(parent))}")  # folder restored or synced
    created = _epoch(parse_time(header.timestamp))
    return Lineage(created, last_answer, tuple(names), tuple(parents))


def _path_names(path: str) -> list[str]:
    """A path as a lineage name (its real path: a link or ``..`` names the same file); none
    for a path no file name can be (a NUL in it)."""
    try:
        return [f"path:{os.path.realpath(path)}"]
    except (OSError, ValueError):
        return []


def _epoch(moment: datetime | None) -> float | None:
    if moment is None:
        return None
    try:
        return moment.timestamp()
    except (OverflowError, ValueError, OSError):  # year 1 or 9999 past the clock's range
        return None


def session_usage(path: Path, since: datetime | None = None) -> dict[str, Any]:
    """One session's assistant turns as the report keeps them until counted (each a
    :class:`CountedTurn`, :func:`counted_turns`); a file that cannot be read is
    ``{"error": …}``, which the report lists instead of stopping."""
    try:
        session = load_session(path)
    except LOAD_FAILURES as error:
        return {"error": why_not_loaded(error)}
    return counted_turns(usage_of(session, since))


class CountedTurn(NamedTuple):
    """A turn as the report holds it from its file's reading to its counting: the keys of
    :func:`usage_of`'s row as digests (:func:`key_digest`), joined, and its values packed
    (:func:`packed_values`). Every file is read before any is counted, and the keys as
    tuples of ids and time stamps were ~1 KB a turn (350 MB over 4,000 sessions); this is
    ~0.3 KB and counts the same turns (keys equal exactly when their digests are)."""

    matched: bytes  # the digests of the keys it repeats a counted turn by
    owned: bytes  # and of those it adds to the counted ones'
    model: str
    day: str
    values: bytes | tuple[Any, ...]  # Usage's fields (_FIELDS)


def counted_turns(found: dict[str, Any]) -> dict[str, Any]:
    """:func:`usage_of`'s result with its rows as :class:`CountedTurn` (its model and day
    names shared: one string each however many turns, as pickled from a worker too)."""
    rows = []
    for (matched, owned), model, day, values in found["rows"]:
        digests = {key: key_digest(key) for key in {*matched, *owned}}  # (most are in both)
        rows.append(
            CountedTurn(
                b"".join(digests[key] for key in matched),
                b"".join(digests[key] for key in owned),
                sys.intern(model),
                sys.intern(day),
                packed_values(values),
            )
        )
    found["rows"] = rows
    return found


#: A turn key's digest size: 128 bits, so two different keys share one about once in 10^26
#: reports of a million turns.
KEY_DIGEST_BYTES = 16


def key_digest(key: Key) -> bytes:
    """A short digest of a turn key, equal for equal keys: numbers that are equal in a
    tuple's ``==`` (``1`` and ``1.0``, ``0.0`` and ``-0.0``) are written alike first. Written
    by marshal's version 2, which writes values only (no references to objects seen
    before), 4x faster than ``repr``; ``repr`` for what marshal cannot write."""
    plain = _canonical(key)
    try:
        data = marshal.dumps(plain, 2)
    except ValueError:
        data = repr(plain).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=KEY_DIGEST_BYTES).digest()


def _canonical(key: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        _canonical(part)
        if type(part) is tuple
        else int(part)
        if type(part) is bool or (type(part) is float and part.is_integer())
        else part
        for part in key
    )


def key_digests(joined: bytes) -> list[bytes]:
    """The digests :func:`counted_turns` joined into one."""
    return [joined[at : at + KEY_DIGEST_BYTES] for at in range(0, len(joined), KEY_DIGEST_BYTES)]


#: A turn's values (_FIELDS: six token counts, the cost, turns without usage) in 64 bytes.
_VALUES = struct.Struct("<6qdq")
_INT64 = range(-(2**63), 2**63)


def packed_values(values: tuple[Any, ...]) -> bytes | tuple[Any, ...]:
    """A turn's values in 64 bytes when they are ints and a float cost, as usage gives
    them (eight numbers as objects were ~280 bytes); else as they are."""
    *counts, cost, without = values
    numbers = (*counts, without)
    if type(cost) is float and all(type(n) is int and n in _INT64 for n in numbers):
        return _VALUES.pack(*values)
    return values


def unpacked_values(values: bytes | tuple[Any, ...]) -> tuple[Any, ...]:
    """What :func:`packed_values` was given."""
    return _VALUES.unpack(values) if isinstance(values, bytes) else values


def usage_of(session: Session, since: datetime | None = None) -> dict[str, Any]:
    """:func:`session_usage` of a session already loaded (the site's pages count a copy's
    turns once by these keys, from the session each page is made of: no second read). Each
    row's turn is ``(matched, owned)``: it repeats a turn counted before when any of the
    keys ``matched`` is among the counted ones', and adds ``owned`` to them; both start
    with its own key."""
    rows = []
    codex = any(d.kind == CODEX for d in session.diagnostics)
    legacy = session.header.version < 2  # v1: every id is the loader's, as Pi's migration's
    sessions = (session.header.id or f"file:{session.path}",)
    if codex and session.header.parent_session:
        sessions += (session.header.parent_session,)
    last: float | None = None  # the latest answer's time, whatever ``since`` counts
    answers = (e for e in session.entries if isinstance(e, MessageEntry) and e.role == "assistant")
    for ordinal, entry in enumerate(answers):
        moment = message_time(entry.moment, entry.raw)
        when = _epoch(moment)
        if when is not None and (last is None or when > last):
            last = when
        if since is not None and (moment is None or moment < since):
            continue
        usage = turn_usage(entry)
        values = tuple(getattr(usage, name) for name in _FIELDS)
        said = _content_digest(entry)
        if codex:
            keys = tuple((CODEX, owner, ordinal, values, said) for owner in sessions)
            turn = (keys, keys)
        else:
            turn = _turn_keys(entry, values, said, legacy)
        rows.append((turn, entry.model_key or UNKNOWN, _local_day(moment), values))
    return {
        "project": session.header.cwd,
        "rows": rows,
        "lineage": lineage_of(session, last),
        "list_priced": session.agent != "Pi",  # its dollars are ours, from list prices
    }


Key = tuple[Any, ...]


def _turn_keys(
    entry: MessageEntry, values: tuple[Any, ...], said: str, legacy: bool
) -> tuple[tuple[Key, ...], tuple[Key, ...]]:
    """A Pi (or Claude Code) turn's ``(matched, owned)`` keys. With an id of its own, its
    id, time stamp and usage; and its words' key (time stamps, usage, digest) is matched
    against id-less turns' only: a v1 file's turn in the file Pi migrated in place (which
    gave it a random id) and in its backup is one. An undated id-less turn keeps its made-up
    id in its key: two undated answers alike are not one."""
    written, own = entry.raw.get("timestamp"), entry.message.get("timestamp")
    words = (str(written), str(own), values, said)
    line = (
        entry.id,
        str(written),
        str(own),
        values,
    )  # a v1 turn and its copy's (`redact` writes v3
    # with the loader's L<line> ids; a copy's words differ): matched one way only, so two
    # v1 files alike on a line are not one
    if not legacy and as_str(entry.raw.get("id")):
        key = (entry.id, str(written), values)
        if _LINE_ID.fullmatch(entry.id):
            return (key, ("id-less", *words), ("v1 line", *line)), (
                key,
                ("with id", *words),
                ("copy line", *line),
            )
        return (key, ("id-less", *words)), (key, ("with id", *words))
    if written is None and own is None:
        words = (entry.id, *words)
    key = ("id-less", *words)
    if legacy:
        return (key, ("with id", *words), ("copy line", *line)), (key, ("v1 line", *line))
    return (key, ("with id", *words)), (key,)


#: The id the loader gives a v1 file's line (``L12``; ``L12~2`` for a repeated one)
_LINE_ID = re.compile(r"L[0-9]+(?:~[0-9]+)?")


def _content_digest(entry: MessageEntry) -> str:
    """What an answer said and called (call ids are unique), as a short digest: with its
    time stamps or its place among the answers, how a turn is known in another file."""
    content = json.dumps(entry.message.get("content"), sort_keys=True, default=str)
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def _local_day(moment: datetime | None) -> str:
    if moment is None:
        return UNKNOWN
    try:
        return (moment.astimezone() if moment.tzinfo else moment).date().isoformat()
    except (OverflowError, ValueError, OSError):  # year 1 or 9999 moved across a day line
        return moment.date().isoformat()


def build_report(
    files: list[Path],
    since: datetime | None = None,
    jobs: int | None = None,
    others: Callable[[], Iterable[Path]] | None = None,
) -> UsageReport:
    """Load every file (in ``jobs`` processes, a progress bar on a terminal) and sum their
    turns. ``others`` lists the sessions not in ``files`` (the other projects' under
    --cwd): the parents the forks among ``files`` name are looked for there, only when one
    is named, and their turns held (:meth:`UsageReport.hold`), not counted."""
    report = UsageReport()
    read: list[tuple[Path, dict[str, Any]]] = []
    for path, result in zip(files, _usage_of_files(files, since, jobs, "reading"), strict=True):
        if "error" in result:  # said in the files' order
            report.add(path, result)
        else:
            read.append((path, result))
    parents = _fork_parents(files, read, others, since, jobs) if others is not None else []
    counted = len(read)  # (the rest are parents, held)
    waiting = dict(enumerate([*read, *parents]))
    del read, parents  # each file's turns are let go once merged (``waiting`` holds them)
    order = counting_order([(str(path), result["lineage"]) for path, result in waiting.values()])
    for index in order:
        path, result = waiting.pop(index)
        if index < counted:
            report.add(path, result)
        else:
            report.hold(result)
    return report


def _usage_of_files(
    files: Sequence[Path], since: datetime | None, jobs: int | None, label: str
) -> list[dict[str, Any]]:
    """:func:`session_usage` of each file, in ``jobs`` processes."""
    work = partial(session_usage, since=since)
    return results_of(files, work, jobs=jobs, preload="exporter.usage_report", label=label)


def _fork_parents(
    files: list[Path],
    read: list[tuple[Path, dict[str, Any]]],
    others: Callable[[], Iterable[Path]],
    since: datetime | None,
    jobs: int | None,
) -> list[tuple[Path, dict[str, Any]]]:
    """The sessions among ``others`` (less ``files``) that the forks in ``read`` (the
    files loaded) came from, and theirs, as far as ``others`` holds them, those that
    `stats --all --since` would count: each read, only when a header names a parent
    ``read`` lacks, to know which turns are its.
    A file is looked for by what a header calls it: its real path, or an id its name or
    header carries; a file that cannot be read, or whose header turns out to be another
    session's, holds nothing."""
    known: set[str] = set()
    parents: list[tuple[str, ...]] = []

    def learn(result: dict[str, Any]) -> None:
        known.update(result["lineage"].names)
        if result["lineage"].parent:
            parents.append(result["lineage"].parent)

    for _path, result in read:
        learn(result)
    found: list[tuple[Path, dict[str, Any]]] = []
    candidates: list[_Candidate] | None = None
    looked_for: set[str] = set()
    while True:
        wanted = {
            name for names in parents if known.isdisjoint(names) for name in names
        } - looked_for
        if not wanted:
            break
        looked_for |= wanted
        if candidates is None:  # listed once, and only when a fork's parent is missing
            inside = {str(path) for path in files}
            try:
                listed = list(others())
            except OSError:  # a sessions folder that cannot be listed whole: no parent found
                listed = []
            candidates = [_Candidate(path) for path in listed if str(path) not in inside]
        batch = [c for c in candidates if not c.taken and c.called(wanted)]
        if not batch:
            continue
        for candidate in batch:
            candidate.taken = True
        paths = [candidate.path for candidate in batch]
        loaded = _usage_of_files(paths, since, jobs, "forks' parents")
        for path, result in zip(paths, loaded, strict=True):
            if "error" not in result and not wanted.isdisjoint(result["lineage"].names):
                found.append((path, result))
                learn(result)
    if since is None or not found:
        return found
    active = set(files_active_since([path for path, _ in found], since))
    return [(path, result) for path, result in found if path in active]


@dataclass(slots=True)
class _Candidate:
    """A session file that may be a fork's parent, and what a header may call it: its real
    path and the id in its name at once; the id in its own header only when those did not
    find the parent (a renamed file), as that reads its first line."""

    path: Path
    taken: bool = False
    _names: set[str] = field(default_factory=set)
    _header_read: bool = False

    def __post_init__(self) -> None:
        self._names = {*_path_names(str(self.path)), f"id:{id_from_name(self.path)}"}

    def called(self, wanted: set[str]) -> bool:
        if not wanted.isdisjoint(self._names):
            return True
        if self._header_read or not any(_SESSION_ID.fullmatch(name) for name in wanted):
            return False  # (a path a header names is found by its real path alone)
        self._header_read = True
        header_id = _header_id(self.path)
        if header_id:
            self._names.add(f"id:{header_id}")
        return not wanted.isdisjoint(self._names)


#: A session id as a lineage name (a path is one too, with "id:" before it, in case an id)
_SESSION_ID = re.compile(r"id:[^/\\]+")

#: A Codex rollout's first line carries its instructions (~20 KB): a longer one is not read.
_HEADER_LIMIT = 256 * 1024


def _header_id(path: Path) -> str | None:
    """The session id a file's first line names: a Pi header's, or a Codex rollout's
    ``session_meta``; None when it cannot be read or names none."""
    try:
        with open(path, "rb") as handle:
            header = header_object(handle.readline(_HEADER_LIMIT))
    except OSError:
        return None
    if header.get("type") == "session_meta":
        payload = header.get("payload")
        header = payload if isinstance(payload, dict) else {}
    elif header.get("type") != "session":
        return None
    return as_str(header.get("id"))
