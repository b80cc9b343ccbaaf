"""The dataset's html/ site for ``pi-session publish``: every session of the dataset rendered
with the publish policy, from this run's redacted files plus the published copies of sessions
this run has no file for (downloaded once per version and kept between runs).

A page is made from a redacted copy, so redacting it again finds next to nothing: its
Redaction line says what was done to the session the copy was made from (the counts this
run's redaction or the manifest recorded), so the page of one copy is the same bytes whether
this run uploaded the copy or a later one downloaded it."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from exporter.fsutil import atomic_write_bytes, atomic_write_text, private_user_cache_dir
from exporter.policy import RedactionPolicy
from exporter.prepare import prepare_session
from exporter.publish.errors import PublishError
from exporter.publish.hub_state import RemoteFile, RemoteState, git_oid
from exporter.redact import RedactionReport
from exporter.session import Session

__all__ = [
    "Counts",
    "build_html",
    "copies_cache_dir",
    "copies_in_use",
    "html_cache_dir",
    "keep_copies",
    "page_transform",
    "remote_copies",
    "write_page_notes",
]

#: What was done to a session's original: ``{"redactions": {kind: n}, "actions": {kind: n}}``.
Counts = dict[str, dict[str, int]]


def _repo_cache_dir(kind: str, endpoint: str, repo_id: str) -> Path:
    digest = hashlib.sha256(f"{endpoint}|{repo_id}".encode()).hexdigest()[:16]
    return private_user_cache_dir(kind, digest)


def html_cache_dir(endpoint: str, repo_id: str) -> Path:
    """Where the redacted site is kept between runs, so only changed pages are re-rendered."""
    return _repo_cache_dir("publish-html", endpoint, repo_id)


def copies_cache_dir(endpoint: str, repo_id: str) -> Path:
    """Where published copies of sessions without a local file are kept between runs."""
    return _repo_cache_dir("publish-copies", endpoint, repo_id)


def remote_copies(
    paths: list[str], remote: RemoteState, folder: Path, download: Callable[[str], bytes]
) -> tuple[list[Path], list[str]]:
    """The published copy of each session in ``paths`` (sessions with no file in this run),
    downloaded once per version into ``folder``: the site then shows every session of the
    dataset, not only those this run has files for. Returns the copies and the paths that
    could not be downloaded (each copy is recorded as it arrives: a re-run resumes).

    A kept copy is used only while its bytes are the ones downloaded (a copy edited by hand
    would have gone into the site); copies of sessions no longer in the dataset are deleted
    by :func:`copies_in_use`, so the cache does not grow forever."""
    index_file = folder / "copies.json"
    known = _kept_index(index_file)
    copies, missing = [], []
    for path in paths:
        if not _stays_inside(path):  # "sessions/../../x.jsonl" from a hostile endpoint
            missing.append(path)
            continue
        target = folder / path
        if not _kept_copy_is(known.get(path), remote.files[path], target):
            try:
                data = download(path)
            except PublishError:
                missing.append(path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
            record = {"oid": git_oid(data), "sha256": hashlib.sha256(data).hexdigest()}
            with _index_lock(folder):  # added to the index as it is now, not as first read
                known = _kept_index(index_file)
                known[path] = record
                atomic_write_text(index_file, json.dumps(known, sort_keys=True))
        copies.append(target)
    return copies, missing


def keep_copies(uploads: dict[str, tuple[Path, str]], folder: Path) -> dict[str, Path]:
    """Keep what a run uploads (repo path -> (its file, its git blob id)) as the dataset's
    copies: the next run's site needs no download for them. Returns where each kept copy
    is (the site is built from there, so a page keeps its source from run to run). Best
    effort: a copy that cannot be kept is downloaded when it is needed.

    Safe before the commit lands: a copy is used only while the dataset's file has the
    ids recorded with it (its git id, or its SHA-256 for a file stored with LFS), and those
    are of these very bytes."""
    index_file = folder / "copies.json"
    records: dict[str, dict[str, str] | None] = {}  # None: not kept (a stale record goes)
    kept: dict[str, Path] = {}
    for path, (source, oid) in sorted(uploads.items()):
        if not _stays_inside(path):
            continue
        target = folder / path
        try:
            data = Path(source).read_bytes()
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
        except OSError:
            records[path] = None
            continue
        records[path] = {"oid": oid, "sha256": hashlib.sha256(data).hexdigest()}
        kept[path] = target
    try:
        with _index_lock(folder):  # added to the index as it is now: another run's stay
            known = _kept_index(index_file)
            for path, record in records.items():
                if record is None:
                    known.pop(path, None)
                else:
                    known[path] = record
            atomic_write_text(index_file, json.dumps(known, sort_keys=True))
    except OSError:
        return {}  # not recorded: not kept (a later run downloads them)
    return kept


#: Held (shared) by each publish to the dataset while it uses the kept copies.
IN_USE_LOCK = ".copies-in-use.lock"
#: Held for moments by whoever reads, changes and writes ``copies.json``.
INDEX_LOCK = ".copies.lock"


@contextlib.contextmanager
def copies_in_use(folder: Path, remote: RemoteState) -> Iterator[None]:
    """Held while a publish keeps copies in ``folder`` and builds its pages from them.
    Publishes to one dataset go on side by side (the lock is shared); copies of sessions
    ``remote`` (the dataset as this run read it) does not hold are deleted only by a run
    that is alone: another run's uploads, kept before its commit, are missing from this
    run's view, and deleted under it, its site lost their pages. A later run alone deletes
    what is gone for good. (No lock where the OS has none, Windows, as the site's.)"""
    with _lock_file(folder / IN_USE_LOCK) as handle:
        if handle is None:
            _forget_gone(folder, remote)
            yield
            return
        import fcntl

        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # another publish is using them: what is gone is deleted another time
        else:
            _forget_gone(folder, remote)
        fcntl.flock(handle, fcntl.LOCK_SH)  # (from exclusive: others may start now)
        yield


def _forget_gone(folder: Path, remote: RemoteState) -> None:
    """The kept copies of sessions no longer in the dataset deleted, with their records."""
    index_file = folder / "copies.json"
    with _index_lock(folder):
        known = _kept_index(index_file)
        gone = [path for path in known if path not in remote.files]
        for path in gone:
            if _stays_inside(path):
                with contextlib.suppress(OSError, ValueError):
                    (folder / path).unlink(missing_ok=True)  # only a file we recorded writing
            del known[path]
        if gone:
            atomic_write_text(index_file, json.dumps(known, sort_keys=True))


@contextlib.contextmanager
def _index_lock(folder: Path) -> Iterator[None]:
    """``copies.json`` read, changed and written by one publish at a time: two publishes to
    one dataset each wrote the index as they had read it, and the other's copies were
    recorded nowhere. Held for moments."""
    with _lock_file(folder / INDEX_LOCK) as handle:
        if handle is None:
            yield
            return
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def _lock_file(path: Path) -> Iterator[int | None]:
    """An open lock file's descriptor (flock's locks go with it when it closes); None where
    there are no such locks (Windows) or the folder takes no file (the copies then fail as
    they did)."""
    try:
        import fcntl  # noqa: F401 (only whether there is one)
    except ImportError:
        yield None
        return
    try:  # (the folder is made, private, by copies_cache_dir)
        handle = open(path, "a+b")  # noqa: SIM115 (closed below)
    except OSError:
        yield None
        return
    with handle:
        yield handle.fileno()


def _kept_index(index_file: Path) -> dict[str, Any]:
    """``copies.json``: repo path -> the oid and SHA-256 of the copy kept for it."""
    try:
        known = json.loads(index_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def _stays_inside(path: str) -> bool:
    """A repo path that, joined to a local folder, stays inside it."""
    parts = path.split("/")
    if not path or (os.name == "nt" and ("\\" in path or ":" in path)):  # separators, drives
        return False
    return not path.startswith("/") and ".." not in parts and "" not in parts


def _kept_copy_is(record: Any, there: RemoteFile, target: Path) -> bool:
    """The kept copy is the dataset's version (``there``: by the git id and SHA-256 of the
    copy's bytes, which it records) and still the bytes that were recorded."""
    if not isinstance(record, dict) or not there.matches(record.get("oid"), record.get("sha256")):
        return False
    try:
        return hashlib.sha256(target.read_bytes()).hexdigest() == record.get("sha256")
    except OSError:
        return False


def write_page_notes(counts: dict[Path, Counts], folder: Path) -> Path:
    """The recorded counts of each source file the site is built from, in one file the
    page transform reads (once per process): passed to the workers with each page's task,
    a dict of every session would be copied once per page."""
    folder.mkdir(parents=True, exist_ok=True)
    notes = folder / f"page-notes-{uuid.uuid4().hex}.json"  # never a name read before
    table = {os.path.abspath(path): value for path, value in counts.items()}
    atomic_write_text(notes, json.dumps(table, sort_keys=True))
    return notes


@functools.lru_cache(maxsize=4)
def _page_notes(notes_file: str) -> dict[str, Any]:
    with open(notes_file, encoding="utf-8") as handle:
        table = json.load(handle)
    return table if isinstance(table, dict) else {}


def _added(recorded: Any, found: dict[str, int]) -> dict[str, int]:
    """Recorded counts plus what redacting the copy found (a value given only now)."""
    total = dict(recorded) if isinstance(recorded, dict) else {}
    for name, n in found.items():
        total[name] = total.get(name, 0) + n
    return total


def page_transform(policy: RedactionPolicy, notes_file: str | None, session: Session) -> Session:
    """The publish policy as the site's transform (top level: ``partial`` of it pickles).

    The page's Redaction line adds what the copy's original went through (``notes_file``:
    :func:`write_page_notes`) to what redacting the copy found. The copy's place on disk is
    no part of the page: under the home folder (the kept copies), its path counted as a
    home path replaced, so the page of the same copy changed with where it was read from."""
    recorded = _page_notes(notes_file).get(session.path or "") if notes_file else None
    if session.path:  # the page names only the file (its footer)
        session.path = os.path.basename(session.path)
    page, report = prepare_session(session, policy)
    if report is not None and isinstance(recorded, dict):
        done = RedactionReport(
            counts=_added(recorded.get("redactions"), report.counts),
            actions=_added(recorded.get("actions"), report.actions),
            redacted=report.redacted,
        )
        page.redaction_note, page.redaction_heading = done.page_note(), done.page_heading()
    return page


def build_html(
    files: list[Path],
    out: Path,
    policy: RedactionPolicy,
    key: str,
    *,
    jobs: int,
    progress: bool | None = None,
    public_name: Callable[[str], str] | None = None,
    notes: Path | None = None,
) -> None:
    """The static site of ``files``, redacted with the publish policy (``exporter.site``
    re-renders a page only when its source, the options or the policy key changed);
    ``public_name`` takes secrets out of the pages' names; ``notes`` (see
    :func:`write_page_notes`) says what was done to each file's original. The index's text
    search is made in the same workers, from each session after the policy ran on it (as
    its page is); its records stay in the site's dot-folder, which is not uploaded."""
    from exporter.render import RenderOptions
    from exporter.site import build_site

    transform = functools.partial(page_transform, policy, str(notes) if notes else None)
    build_site(
        files,
        out,
        jobs=jobs,
        render_options=RenderOptions(),
        options_key=key,
        transform=transform,
        progress=progress,
        public_name=public_name,
    )
