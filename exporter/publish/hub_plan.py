"""The local half of ``pi-session publish``: where each session goes, what changed, and the
redacted files, prepared in parallel.

Skipping is decided before any parsing: a session whose source and redaction key
match the remote manifest (and whose file is still in the repo tree) is not even loaded. The
others are loaded, redacted with the publish policy (hidden entries dropped) and written to a
staging folder by worker processes; a session that fails is reported, never fatal.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import hashlib
import itertools
import os
import re
import tempfile
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from exporter.claude_code import session_digest
from exporter.fsutil import DISK_FULL, not_a_device_name
from exporter.jsonl_in import header_object
from exporter.jsonl_out import session_records, session_to_utf8_jsonl
from exporter.loader import (
    GZIP_MAGIC,
    header_id_from_path,
    parse_session_bytes,
    session_lines,
    wide_encoding,
)
from exporter.policy import RedactionPolicy, given_digest, given_secret_count, opt_in_cuts
from exporter.prepare import CUT_OPTIONS, prepare_session
from exporter.publish.dataset_card import COST_DROPPED, SUPERSEDED, index_row
from exporter.publish.deny import first_match
from exporter.publish.errors import PublishError
from exporter.publish.hub_state import RemoteFile, RemoteState, git_oid
from exporter.redact import GPS_IMAGES
from exporter.session import Diagnostic, parse_time
from exporter.workers import ProgressBar, run_tasks, server_context

__all__ = [
    "PUBLISH_CUTS",
    "HeldCopy",
    "Prepared",
    "Source",
    "claim_paths",
    "classify",
    "copy_mark",
    "dropped_cuts",
    "fewer_given_by_marks",
    "one_per_copy",
    "one_per_session",
    "policy_cuts",
    "prepare_all",
    "probe_sources",
    "published_stems",
    "publisher_mark",
    "repo_stem",
    "session_id_mark",
    "unknown_policy_replaced",
]

#: What a dataset path's file name kept before 0.2.42 (``Привет мир.jsonl`` was ``session.jsonl``).
_ASCII_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: A file name's most UTF-8 bytes in a dataset path (a git tree entry, a checkout on disk).
_STEM_BYTES = 150


@dataclass(frozen=True)
class Source:
    """A local session file and its place in the repo (``sessions/<YYYY-MM>/<name>.jsonl``)."""

    path: Path
    repo_path: str
    sha256: str
    size: int
    session_id: str | None = None  # the header's id: whose file a repo path holds


# --- choosing repo paths ----------------------------------------------------------------------


def _month(path: Path, header: dict[str, Any]) -> str:
    """``YYYY-MM`` (UTC) of the header timestamp, else of the first time among the first
    lines (a Claude Code file can open with a title line), else of the file's mtime."""
    moment = parse_time(header.get("timestamp")) or _first_time(path)
    if moment is None:
        moment = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return f"{moment.year:04d}-{moment.month:02d}"  # strftime's %Y wrote year 1 as "1"


def probe_sources(
    paths: Iterable[Path], public_name: Callable[[str], str] = lambda name: name
) -> tuple[list[Source], list[tuple[Path, str]]]:
    """Hash each file and give it a unique repo path, named by ``public_name`` of its file
    name (secrets redacted); unreadable files are returned as failed."""
    sources: list[Source] = []
    failed: list[tuple[Path, str]] = []
    used: set[str] = set()
    for path in sorted(dict.fromkeys(Path(os.path.abspath(p)) for p in paths)):
        digest, size, first, said_session = hashlib.sha256(), 0, b"", False
        try:
            with open(path, "rb") as handle:
                first = handle.readline()
                digest.update(first)
                size = len(first)
                for block in iter(lambda h=handle: h.read(1 << 20), b""):
                    digest.update(block)
                    size += len(block)
                    # a header further down (read below only then: not for every Claude
                    # Code or Codex transcript, which has none)
                    said_session = said_session or b'"session"' in block
            # a gzip copy (the page's .jsonl.gz download), or one saved again as UTF-16 or
            # UTF-32, by its session's header, as the loader reads it: the bytes as written
            # filed it by mtime, with no id to keep its path, so each run published it again
            recoded = first[:2] == GZIP_MAGIC or wide_encoding(first) is not None
            header = header_object(_first_line(path) if recoded else first)
            month = _month(path, header)
        except OSError as error:
            failed.append((path, error.strerror or str(error)))
            continue
        stem = repo_stem(path.name, public_name)
        repo_path, n = f"sessions/{month}/{stem}.jsonl", 1
        while repo_path.lower() in used:
            n += 1
            repo_path = f"sessions/{month}/{stem}-{n}.jsonl"
        used.add(repo_path.lower())
        typed = isinstance(header.get("type"), str)
        if not typed or (header["type"] != "session" and (said_session or recoded)):
            header = _first_typed_object(path)  # line 1 blank or damaged, or an entry
        session_id = _session_id(header, path)
        try:
            sha = session_digest(path, digest.hexdigest())  # with its sub-agents' files
        except OSError as error:
            failed.append((path, error.strerror or str(error)))
            continue
        sources.append(Source(path, repo_path, sha, size, session_id))
    return sources, failed


def repo_stem(name: str, public_name: Callable[[str], str]) -> str:
    """A file's name as its dataset path's last part has it (without ``.jsonl``, or
    ``.jsonl.gz``: the copy published is uncompressed): secrets out (``public_name``), and
    nothing a path cannot hold. Letters, digits and their marks of every script stay
    (``नमस्ते``, ``Привет``), as do ``.``, ``_`` and ``-``; any run of others is one ``-``."""
    stem = _path_part(public_name(name))
    for _ in range(3):  # a cut may end a word it takes out (…-alicebob cut to …-alice):
        # the cut name is made public again (else the user's name went up, and every run
        # found the path "holding a secret" and committed again)
        again = _path_part(public_name(f"{stem}.jsonl"))
        if again == stem:
            break
        stem = again
    return not_a_device_name(stem or "session")  # (a dataset is checked out on Windows too)


def _path_part(name: str) -> str:
    """``name`` without its extension, as a path can hold it, cut to ``_STEM_BYTES``."""
    stem = unicodedata.normalize("NFC", _bare(name))
    kept = "".join(c if c.isalnum() or c in "._-" or _is_mark(c) else "\0" for c in stem)
    stem = re.sub("\0+", "-", kept).strip("-.")
    return stem.encode("utf-8")[:_STEM_BYTES].decode("utf-8", "ignore").rstrip("-.")


def published_stems(name: str, public_name: Callable[[str], str]) -> set[str]:
    """The names a file's copy may have in the dataset: this version's, and the ASCII one
    of versions before 0.2.42 (a copy keeps the path it went up under)."""
    old = _ASCII_UNSAFE.sub("-", _bare(public_name(name))).strip("-.") or "session"
    return {repo_stem(name, public_name), old}


def _bare(name: str) -> str:
    return name.removesuffix(".gz").removesuffix(".jsonl")


def _is_mark(char: str) -> bool:
    """A combining mark (a vowel sign, a virama, an accent): part of the letter before it."""
    return unicodedata.category(char)[0] == "M"


#: What reading damaged gzip data raises (a cut-short file: EOFError).
_GZIP_ERRORS = (OSError, EOFError, zlib.error)


def _first_line(path: Path) -> bytes:
    """The first line of a gzip or UTF-16/UTF-32 file's data, as UTF-8 (empty when it
    cannot be read: the loader says why when it prepares the session)."""
    try:
        with session_lines(path) as handle:
            return handle.readline(1 << 26)
    except _GZIP_ERRORS:
        return b""


def _first_time(path: Path, lines: int = 200) -> datetime | None:
    """The first ``timestamp`` among a file's first lines (None when there is none)."""
    try:
        with session_lines(path) as handle:
            for raw in itertools.islice(handle, lines):
                if b'"timestamp"' in raw and (
                    moment := parse_time(header_object(raw).get("timestamp"))
                ):
                    return moment
    except (EOFError, zlib.error):  # damaged gzip data: no time in it (an OSError is said)
        pass
    return None


def _first_typed_object(path: Path) -> dict[str, Any]:
    """What the loader takes for the header: the first "session" line, wherever it is (a
    header after an entry is the session's), else the first JSON object with a string
    "type" (a file without a header: entries, or none). A file whose first line is its
    header, as Pi writes them, is read no further."""
    first: dict[str, Any] = {}
    try:
        with session_lines(path) as handle:
            for raw in handle:
                if first and b'"session"' not in raw:  # (a Claude Code transcript's lines)
                    continue
                value = header_object(raw)
                if value.get("type") == "session":
                    return value
                if not first and isinstance(value.get("type"), str):
                    first = value
    except _GZIP_ERRORS:
        pass
    return first


def _session_id(header: dict[str, Any], path: Path) -> str | None:
    """The id the loader gives the session (what the manifest records): the header's, else
    (no id, or entries without a header) the id in the file name; None for a file with no
    typed object at all, which the loader refuses."""
    if not isinstance(header.get("type"), str):
        return None
    if header["type"] == "session" and isinstance(header.get("id"), str):
        return header["id"]
    return header_id_from_path(str(path))


def one_per_copy(sources: list[Source]) -> tuple[list[Source], list[tuple[Source, Source]]]:
    """One source per session: a byte-identical copy (a project folder renamed or copied,
    its sessions with it; sub-agents' files included in the digest) is the same session,
    as every other command counts it, and went up a second time as ``NAME-2.jsonl``.
    The first of each (by path) is kept; the rest come back as ``(copy, kept)`` pairs.

    A file the loader refuses (no typed object: ``session_id`` None) is no session: each
    copy of it stays, to be tried and named as skipped, not said "published once"."""
    kept: dict[tuple[str, int], Source] = {}
    unreadable: list[Source] = []
    copies: list[tuple[Source, Source]] = []
    for source in sources:
        if source.session_id is None:
            unreadable.append(source)
            continue
        first = kept.setdefault((source.sha256, source.size), source)
        if first is not source:
            copies.append((source, first))
    wanted = {id(source) for source in [*kept.values(), *unreadable]}
    return [source for source in sources if id(source) in wanted], copies


class HeldCopy(NamedTuple):
    """A file left out of a publish because ``kept`` holds every entry it does: the same
    entries saved in other bytes (``same``: CRLF, a byte order mark, UTF-16, gzip), or an
    earlier state of a session the other went on with."""

    copy: Source
    kept: Source
    same: bool


def one_per_session(
    sources: list[Source],
) -> tuple[list[Source], list[HeldCopy], list[list[Source]]]:
    """One source per session id where one file holds all another does: a copy of a project
    folder, continued in one place, left an earlier state of the session in the other, and
    both went up (two rows with one id, the shared turns counted twice). The one with more
    entry lines is kept; between files of the same entries (one saved again with CRLF, a
    byte order mark, as UTF-16 or gzip), the file as Pi writes it (plain UTF-8), else the
    first by path: the biggest was kept, a re-encoded copy's name in the dataset. The copies
    left out come back as :class:`HeldCopy`. Copies that went on apart (each holds entries
    the other does not) all stay: each has something of its own; they come back as groups
    too, to be said."""
    by_id: dict[str, list[Source]] = {}
    for source in sources:
        if source.session_id is not None:
            by_id.setdefault(source.session_id, []).append(source)
    dropped: list[HeldCopy] = []
    apart: list[list[Source]] = []
    for group in by_id.values():
        if len(group) < 2:
            continue
        read = [(source, _entry_digests(source.path)) for source in group]
        kept: list[tuple[Source, Counter[bytes]]] = []
        for _rank, source, entries in sorted(_preference(n, s, e) for n, (s, e) in enumerate(read)):
            holder = next(
                ((k, held) for k, held in kept if entries is not None and entries <= held), None
            )
            if holder is not None:
                dropped.append(HeldCopy(source, holder[0], entries == holder[1]))
            else:
                kept.append((source, entries or Counter()))
        if len(kept) > 1:
            apart.append([source for source in group if any(source is k for k, _ in kept)])
    gone = {id(held.copy) for held in dropped}
    return [s for s in sources if id(s) not in gone], dropped, apart


def _preference(
    place: int, source: Source, entries: Counter[bytes] | None
) -> tuple[tuple[int, bool, int], Source, Counter[bytes] | None]:
    """The order a session's files are kept in: more entry lines first (a later state),
    then the file as Pi writes it, then the first by path (``place``)."""
    more_first = -entries.total() if entries is not None else 0
    return (more_first, not _as_pi_writes(source.path), place), source, entries


def _entry_digests(path: Path) -> Counter[bytes] | None:
    """A digest of each of the file's lines but its header (a copy's header names its own
    folder), counted (a line written twice is a later state); None when it cannot be
    read."""
    digests: Counter[bytes] = Counter()
    try:
        with session_lines(path) as handle:
            for number, raw in enumerate(handle):
                line = raw.rstrip(b"\r\n")
                if number == 0 and header_object(line).get("type") == "session":
                    continue
                if line.strip():
                    digests[hashlib.blake2b(line, digest_size=16).digest()] += 1
    except _GZIP_ERRORS:
        return None
    return digests


def _as_pi_writes(path: Path) -> bool:
    """Whether a file is plain UTF-8 with LF line ends, as Pi writes it: no gzip, no byte
    order mark, no UTF-16/32, no CRLF on its first line. Of two files with the same
    entries, that is the one a reader of the dataset expects under its name."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 20)
    except OSError:
        return False
    if first[:2] == GZIP_MAGIC or wide_encoding(first) is not None:
        return False
    return not first.startswith(b"\xef\xbb\xbf") and not first.endswith(b"\r\n")


def session_id_mark(mark: Callable[[str], str], session_id: str) -> str:
    """The manifest's ``id_mark``: whose file a path holds when the id went out redacted
    (the manifest's ``id`` is the published, redacted one; the local file has the other)."""
    return mark(f"pi-session id: {session_id}")


def copy_mark(mark: Callable[[str], str], path: Path) -> str:
    """The manifest's ``copy_mark``: which local copy of a session a path went up from (its
    project folder and file name), as a mark, never in clear. Unlike ``source_mark`` it
    survives the file growing or being rewritten (Pi migrating it), so two copies of one
    session in two project folders each find their own path, whichever a run selects."""
    return mark(f"pi-session copy: {path.parent.name}/{path.name}")


def publisher_mark(mark: Callable[[str], str]) -> str:
    """The manifest's ``publisher``: which machine's key made an entry's marks (only marks
    made under this run's key can be compared with its own)."""
    return mark("pi-session-export publisher")


def claim_paths(
    sources: list[Source],
    remote: RemoteState,
    public_name: Callable[[str], str] = lambda name: name,
    moved: list[str] | None = None,
    id_mark: Callable[[str], str] | None = None,
    mark: Callable[[str], str] | None = None,
) -> list[Source]:
    """Each session keeps the repo path it was published at (a renamed file was published
    twice), and no file takes a path that holds another session (two projects can have files
    of the same name: the second replaced the first, reported as "1 updated"); such a file
    goes to the next ``-N`` path that is free. A session is known by its id, or (``id_mark``)
    by the mark of an id that was published redacted: matched by its id alone, it was taken
    for another session and added again at each run.

    Copies of one session that went on apart in two project folders hold one id at two
    paths: each copy takes the path whose manifest ``copy_mark`` (:func:`copy_mark`: its
    project folder and file name) is its own, else the one whose ``source_mark`` its bytes,
    or an earlier state of them, made (``mark``: the publish key's HMAC; by default the one
    ``id_mark`` is bound to). A path another local copy went up from is never taken by
    default: the copy goes to a new ``-N`` path. Known by its id alone, the copy a
    one-project run selected (``--cwd``, ``--since``, a SESSION argument) took the first
    path, writing over the other copy's, and the next run of the other project put it back.
    An entry without a ``copy_mark`` this key made (an earlier version's, another
    machine's) is matched as before.

    A path left because its name holds a secret found since (a new ``--secret``) has its
    manifest entry and index row marked :data:`SUPERSEDED`: the index, card and manifest this
    run writes leave it out (they named the secret in clear, and counted the session twice);
    the file stays until ``--prune``."""
    source_mark = mark or _key_mark(id_mark)
    publisher = publisher_mark(source_mark) if source_mark is not None else None

    def recorded_copy(path: str) -> str | None:
        """The copy ``path`` went up from, when this key marked it (None: not known)."""
        entry = remote.manifest.get(path) or {}
        found = entry.get("copy_mark")
        mine = publisher is not None and entry.get("publisher") == publisher
        return found if mine and isinstance(found, str) else None

    def owners(entry: dict[str, Any] | None) -> set[str]:
        entry = entry or {}
        keys = {f"id {entry['id']}"} if isinstance(entry.get("id"), str) and entry["id"] else set()
        if isinstance(entry.get("id_mark"), str):
            keys.add(f"mark {entry['id_mark']}")
        return keys

    def known_as(source: Source) -> set[str]:
        if not source.session_id:
            return set()
        keys = {f"id {source.session_id}"}
        if id_mark is not None:
            keys.add(f"mark {id_mark(source.session_id)}")
        return keys

    published: dict[str, list[str]] = {}  # (two, when two files of one session went up)
    for path, entry in sorted(remote.manifest.items()):
        if path in remote.files:
            for key in sorted(owners(entry)):
                published.setdefault(key, []).append(path)

    def free_for(path: str, mine: set[str]) -> bool:
        """A path no session holds, or one this session holds."""
        held = owners(remote.manifest.get(path))
        return not held or bool(held & mine)

    keys = [known_as(source) for source in sources]  # (an id's mark is an HMAC: once each)
    helds = [
        list(dict.fromkeys(p for k in sorted(mine) for p in published.get(k, ()))) for mine in keys
    ]
    selected = Counter(key for mine in keys for key in mine)
    own_copies = [
        copy_mark(source_mark, source.path) if source_mark is not None else None
        for source in sources
    ]
    # the held paths another local copy of the session went up from (by its copy_mark)
    others = [
        {path.lower() for path in held if recorded_copy(path) not in (None, own_copies[index])}
        for index, held in enumerate(helds)
    ]
    claimed: list[str | None] = [None] * len(sources)
    taken: set[str] = set()
    # first, each local copy takes the path it went up from, however it changed since
    for index, held in enumerate(helds):
        own_copy = own_copies[index]
        if own_copy is None:
            continue
        there = next(
            (p for p in held if p.lower() not in taken and recorded_copy(p) == own_copy), None
        )
        if there is not None:
            claimed[index] = there
            taken.add(there.lower())
    # then each copy of a session held at several paths (or selected twice, or held at
    # another copy's path) takes the path its own bytes went up at; the others then keep
    # out of those paths. A session moved or renamed (one local file, a new folder or name)
    # is known so: its bytes, or an earlier state of them, are what went up. The limit: a
    # run sees only the files it selected, so a lone copy both moved and rewritten (no
    # state of it went up) cannot be told from another copy, and goes to a new path.
    for index, held in enumerate(helds):
        copies = len(held) > 1 or any(selected[key] > 1 for key in keys[index]) or others[index]
        if source_mark is None or not held or not copies or claimed[index] is not None:
            continue
        there = _published_from(sources[index], held, remote, source_mark)
        if there is not None and there.lower() not in taken:
            claimed[index] = there
            taken.add(there.lower())
    paths: list[str | None] = [None] * len(sources)
    used: set[str] = set()
    for index, held in enumerate(helds):  # the sessions already on the Hub
        there = claimed[index]
        if there is None:
            # its own path first: of two copies published (before 0.2.41), the one kept stays
            # (never another local copy's: a copy rewritten since went over it)
            free = [p for p in held if p.lower() not in taken and p.lower() not in others[index]]
            own = sources[index].repo_path
            there = own if own in free else next(iter(free), None)
        folder, _, name = (there or "").rpartition("/")
        if there and public_name(name) != name:  # published before its secret was known
            if moved is not None:  # (the folder is a month, not the file's name)
                moved.append(f"{folder}/{public_name(name)}")
            _supersede(remote, there)
            continue  # a new path; --prune deletes the old one (it names this session)
        if there and there.lower() not in used:
            paths[index] = there
            used.add(there.lower())
    for index, source in enumerate(sources):
        if paths[index] is not None:
            continue
        candidate, n = source.repo_path, 1
        stem = candidate.removesuffix(".jsonl")
        while (
            candidate.lower() in used
            or candidate.lower() in others[index]
            or not free_for(candidate, keys[index])
        ):
            n += 1
            candidate = f"{stem}-{n}.jsonl"
        paths[index] = candidate
        used.add(candidate.lower())
    return [
        source if path == source.repo_path else dataclasses.replace(source, repo_path=path)
        for source, path in zip(sources, paths, strict=True)
        if path is not None
    ]


def _key_mark(id_mark: Callable[[str], str] | None) -> Callable[[str], str] | None:
    """The publish key's mark an ``id_mark`` applies (:func:`session_id_mark` bound to it,
    as ``publish`` passes it); None for any other callable."""
    if isinstance(id_mark, functools.partial) and id_mark.func is session_id_mark:
        bound = id_mark.args[0] if id_mark.args else None
        return bound if callable(bound) else None
    return None


def _published_from(
    source: Source, held: list[str], remote: RemoteState, mark: Callable[[str], str]
) -> str | None:
    """Which of ``held`` (paths of this session's id) went up from this file: the one whose
    manifest ``source_mark`` is the mark of its digest, else of the digest of an earlier
    state of it (Pi appends a session's entries: the file as it stood at one of its line
    ends), the latest such; None when none did (another machine's key, a file rewritten)."""
    wanted: dict[str, str] = {}
    for path in held:
        recorded = (remote.manifest.get(path) or {}).get("source_mark")
        if isinstance(recorded, str):
            wanted.setdefault(recorded, path)
    if not wanted:
        return None
    if (now := wanted.get(mark(source.sha256))) is not None:
        return now
    found = None
    digest = hashlib.sha256()
    try:
        with open(source.path, "rb") as handle:
            for line in handle:
                digest.update(line)
                found = wanted.get(mark(digest.hexdigest()), found)
    except OSError:  # (preparing it says why)
        return None
    return found


def _supersede(remote: RemoteState, path: str) -> None:
    """Leave ``path``'s manifest entry and index row out of what this run writes (the
    :data:`SUPERSEDED` key): this run's ``--prune`` still finds the file by them."""
    for record in (remote.manifest.get(path), remote.rows.get(path)):
        if record is not None:
            record[SUPERSEDED] = True


def classify(
    sources: list[Source],
    remote: RemoteState,
    key: str,
    mark: Callable[[str], str],
    deny: Iterable[str] = (),
) -> tuple[list[Source], list[Source]]:
    """(unchanged, to prepare): unchanged = same source and redaction key, file present,
    and checked against every ``--deny`` pattern of this run (``deny``: their marks).

    The manifest holds ``mark(source SHA-256)`` (an HMAC under the local publish key), never
    the hash itself: that would let a reader of the dataset confirm a guessed secret. Its
    ``deny`` lists the marks of the patterns its copy was checked against: a pattern added
    since sends the session to be redacted and checked again (it may be denied now), while
    a run with fewer patterns, or none, has nothing new to check."""
    wanted = set(deny)
    unchanged, todo = [], []
    for source in sources:
        entry = remote.manifest.get(source.repo_path) or {}
        there = remote.files.get(source.repo_path)
        checked = entry.get("deny")
        same = (
            entry.get("source_mark") == mark(source.sha256)
            and entry.get("redaction_key") == key
            and there is not None
            and there.size == entry.get("bytes")
            and source.repo_path in remote.rows
            and (not wanted or (isinstance(checked, list) and wanted <= set(checked)))
        )
        (unchanged if same else todo).append(source)
    return unchanged, todo


# --- what the policy removes besides secrets ---------------------------------------------------

#: The policy switches a published session records (``cuts`` in the manifest): each removes
#: content. Publishing always drops hidden entries and hides paths, so those are not choices.
PUBLISH_CUTS = tuple(name for name in CUT_OPTIONS if name != "drop_hidden")


def policy_cuts(policy: RedactionPolicy) -> list[str]:
    """What the policy removes besides secrets, as the manifest records it per session: the
    cut options, ``pii`` and each ``pattern:<name>``."""
    return [name for name in PUBLISH_CUTS if getattr(policy, name)] + opt_in_cuts(policy)


def _recorded_cut(name: str) -> bool:
    return name in PUBLISH_CUTS or name == "pii" or name.startswith("pattern:")


def dropped_cuts(
    remote: RemoteState, sources: Iterable[Source], cuts: Iterable[str]
) -> dict[str, int]:
    """Per cut this run leaves out: how many of the selected sessions the dataset holds
    with it. Re-published, they would gain what was removed (tool output, thinking...)."""
    wanted, dropped = set(cuts), {}
    for source in sources:
        held = (remote.manifest.get(source.repo_path) or {}).get("cuts")
        if not isinstance(held, list):  # published before cuts were recorded: unknown
            continue
        for name in held:
            if isinstance(name, str) and _recorded_cut(name) and name not in wanted:
                dropped[name] = dropped.get(name, 0) + 1
    return dropped


def fewer_given_secrets(
    remote: RemoteState, prepared: Iterable[Prepared], given: set[str], publisher: str
) -> dict[str, int]:
    """Per session this run would re-publish without replacing a secret its published copy
    had replaced because a run was given it: how many such values (a session only grows,
    so they are still in it, and would go up in clear).

    ``given``: the marks (``mark(given_digest(value))``) of the values this run is given. The
    manifest records those of the values each copy replaced, so a value moved from the
    environment to ``--secret``, or cut away with its tool output, is no loss. Marks made
    under another key (``publisher``: a new machine, a CI runner) cannot be compared, and a
    copy published before marks were recorded has none: those are judged by their counts.
    """
    fewer = {}
    for item in prepared:
        entry = remote.manifest.get(item.source.repo_path) or {}
        if item.error is not None:
            continue
        lost = lost_given_marks(entry, given, publisher)
        if lost is not None:
            if lost:
                fewer[item.source.repo_path] = lost
        elif isinstance(entry.get("redactions"), dict):
            before = given_secret_count(entry["redactions"])
            now = given_secret_count(item.redactions)
            if now < before:
                fewer[item.source.repo_path] = before - now
    return fewer


def lost_given_marks(entry: dict[str, Any], given: set[str], publisher: str) -> int | None:
    """How many of the values a published copy replaced (by their marks) this run is not
    given; None when its marks cannot tell (another key's, or none recorded). Needs no
    redacting, so a run refused for another reason can say this loss in the same words."""
    marks = entry.get("given")
    if not isinstance(marks, list) or entry.get("publisher") != publisher:
        return None
    return len({m for m in marks if isinstance(m, str)} - given)


def unknown_policy_replaced(remote: RemoteState, prepared: Iterable[Prepared]) -> list[str]:
    """The dataset's copies this run would replace whose redaction nothing tells: no
    manifest entry (manifest.json missing, unreadable, from another version; a file it does
    not list), or an entry recording neither the given secrets' marks nor the replacement
    counts (every version since 0.2.0 records the counts). Such a copy may hold a --secret
    value, or content a cut removed, that this run would put back in clear.

    A copy this run's would only extend (its bytes the start of the new copy's: the session
    grew, redacted as before) or leave as it is loses nothing and is not listed: compared
    by the ids the Hub lists, with no download."""
    replaced = []
    for item in prepared:
        path = item.source.repo_path
        there = remote.files.get(path)
        if item.error is not None or item.staged is None or there is None:
            continue
        entry = remote.manifest.get(path)
        told = entry is not None and (
            isinstance(entry.get("given"), list) or isinstance(entry.get("redactions"), dict)
        )
        if not told and not _starts_with(item.staged, there):
            replaced.append(path)
    return sorted(replaced)


def _starts_with(staged: Path, there: RemoteFile) -> bool:
    """Do the staged copy's first ``there.size`` bytes make the dataset's file? Hashed as
    the Hub knows it (LFS: SHA-256, else the git blob id), read in blocks."""
    by_sha256 = there.sha256 is not None
    digest = hashlib.sha256() if by_sha256 else hashlib.sha1(b"blob %d\0" % there.size)
    left = there.size
    try:
        with open(staged, "rb") as handle:
            while left > 0 and (block := handle.read(min(left, 1 << 20))):
                digest.update(block)
                left -= len(block)
    except OSError:
        return False
    if left:  # the new copy is shorter
        return False
    found = digest.hexdigest()
    return there.matches(None, found) if by_sha256 else there.matches(found, None)


def fewer_given_by_marks(
    remote: RemoteState, sources: Iterable[Source], given: set[str], publisher: str
) -> dict[str, int]:
    """:func:`fewer_given_secrets` for the copies whose marks tell, judged before any
    session is redacted."""
    fewer = {}
    for source in sources:
        entry = remote.manifest.get(source.repo_path) or {}
        if lost := lost_given_marks(entry, given, publisher):
            fewer[source.repo_path] = lost
    return fewer


# --- preparing (worker processes) ------------------------------------------------------------


@dataclass
class Prepared:
    """One redacted session ready to upload (``error`` set when it could not be prepared)."""

    source: Source
    error: str | None = None
    source_sha256: str = ""
    sha256: str = ""
    size: int = 0
    oid: str = ""
    staged: Path | None = None
    row: dict[str, Any] = field(default_factory=dict)
    redactions: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # lines left out: not JSON Pi can read
    gps_images: int = 0  # pictures sent with a GPS location (warned of, not recorded)
    bad_usage: str = ""  # the loader's warning of token counts the index row counts as 0
    lone_surrogates: int = 0  # halves of a character written as U+FFFD
    given: list[str] = field(default_factory=list)  # given_digest of each given secret replaced
    #: (index of the --deny pattern, where it first matched): not to be published
    denied: tuple[int, str] | None = None


#: The key of a worker's answer when the staged copy could not be written: the run stops.
_NO_ROOM = "staging_failed"


@dataclass(frozen=True)
class _Task:
    source: str
    repo_path: str
    staged: str
    policy: RedactionPolicy
    want_records: bool
    deny: tuple[str, ...] = ()


def _prepare_one(task: _Task) -> dict[str, Any]:
    """Load, redact, write the staged copy and describe it; never raises."""
    try:
        with open(task.source, "rb") as handle:
            data = handle.read()
        source_sha = session_digest(Path(task.source), hashlib.sha256(data).hexdigest())
        redacted, report = prepare_session(parse_session_bytes(data, path=task.source), task.policy)
        del data
        # matched as it would be published (redacted), before anything is written: its file
        # name too, which goes out as its path, the index's row and a commit's title
        denied = None
        if task.deny:
            stem = task.repo_path.rpartition("/")[2].removesuffix(".jsonl")  # not the folder
            named = first_match([{"": stem}], task.deny)
            denied = (named[0], "its file name") if named else None
            denied = denied or first_match(session_records(redacted), task.deny)
        if denied is not None:
            return {"source_sha256": source_sha, "denied": denied}
        # a lone half of a character is valid JSON that `datasets` refuses (the whole file)
        text, halves = session_to_utf8_jsonl(redacted)
        out = text.encode("utf-8")
        del text
        try:
            Path(task.staged).parent.mkdir(parents=True, exist_ok=True)
            Path(task.staged).write_bytes(out)
        except OSError as error:  # the machine's problem (a full TMPDIR), not the session's
            return {_NO_ROOM: (error.errno, error.strerror or str(error))}
        sha = hashlib.sha256(out).hexdigest()
        row = index_row(redacted, path=task.repo_path, sha256=sha, size=len(out))
        return {
            "source_sha256": source_sha,
            "sha256": sha,
            "size": len(out),
            "oid": git_oid(out),
            "row": row,
            "redactions": dict(report.counts) if report else {},
            # (what was done to the copy: not its located pictures, which a public manifest
            # would point readers to; they are counted for the warning only)
            "actions": {k: n for k, n in report.actions.items() if k != GPS_IMAGES}
            if report
            else {},
            "gps_images": report.actions.get(GPS_IMAGES, 0) if report else 0,
            "records": list(report.records()) if report and task.want_records else [],
            "damaged": [f"line {d.line}: {d.message}" for d in redacted.damaged],
            "bad_usage": _bad_usage(redacted.diagnostics, bool(row.pop(COST_DROPPED, False))),
            "lone_surrogates": halves,
            "given": sorted(given_digest(v) for v in report.given_values) if report else [],
        }
    except Exception as error:  # a broken session (or a bug) must not stop the batch
        name = Path(task.source).name
        text = " ".join(str(error).replace(task.source, name).split()).removeprefix(f"{name}: ")
        return {"error": text[:300] or type(error).__name__}


#: What the run says (in its warning of unusable usage) of a session whose costs add up to
#: more than a float holds: as a single cost that is no finite number, it is counted as 0.
COST_OVERFLOW = (
    "the costs its turns record add up past the largest number (about 1.8e308): the "
    "session's cost is counted as 0"
)


def _bad_usage(diagnostics: Iterable[Diagnostic], cost_dropped: bool) -> str:
    """The loader's warning of token counts counted as 0, and that of a cost counted as 0
    when the turns' costs added up to infinity (index.jsonl cannot hold it: not JSON)."""
    said = [str(d) for d in diagnostics if d.kind == "bad-usage"][:1]
    return "; ".join([*said, COST_OVERFLOW] if cost_dropped else said)


def _staging_failed(number: int | None, reason: str) -> PublishError:
    """A redacted copy that could not be written to the temporary folder (full, read-only)
    stops the run (exit 2): said as the session's failure, a full disk read as "none of the
    sessions could be read", or published some sessions and left the rest out, exit 0."""
    folder = tempfile.gettempdir()
    if number in DISK_FULL or number == errno.EFBIG:  # a full disk, a quota, ulimit -f
        cure = f"make room in {folder} (or set TMPDIR to a folder with room)"
    else:
        cure = "set TMPDIR to a folder that can be written"
    return PublishError(
        f"could not write a redacted copy to the temporary folder {folder}: {reason}; "
        f"nothing was sent: {cure} and run again",
        exit_code=2,
    )


def prepare_all(
    sources: list[Source],
    policy: RedactionPolicy,
    staging: Path,
    *,
    jobs: int,
    progress: bool | None = None,
    want_records: bool = False,
    deny: tuple[str, ...] = (),
) -> list[Prepared]:
    """Redact every source into ``staging`` with ``jobs`` processes, biggest first; one a
    ``deny`` pattern matches (redacted) comes back with ``denied`` set and nothing staged."""
    by_path = {str(s.path): s for s in sources}
    tasks = [
        _Task(str(s.path), s.repo_path, str(staging / f"{i}.jsonl"), policy, want_records, deny)
        for i, s in enumerate(sorted(sources, key=lambda s: -s.size))
    ]
    results: list[Prepared] = []
    bar = ProgressBar(len(tasks), progress, label="redacting")

    def done(task: _Task, out: dict[str, Any]) -> None:
        if _NO_ROOM in out:  # every session would fail alike: stopped before anything is sent
            raise _staging_failed(*out[_NO_ROOM])
        item = Prepared(by_path[task.source], **out)
        if item.error is None and item.denied is None:
            item.staged = Path(task.staged)
        results.append(item)
        bar.update(len(results))

    try:
        run_tasks(
            tasks,
            _prepare_one,
            done,
            jobs=jobs,
            died=lambda task: {"error": "the worker process died (crash or out of memory)"},
            context=lambda: server_context("exporter.publish.hub_plan"),
        )
    finally:
        bar.close()
    return sorted(results, key=lambda p: p.source.repo_path)
