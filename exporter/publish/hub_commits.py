"""Turning a diff into commits that each leave the repo consistent.

Consistency after an interruption: **every commit carries the manifest, index and card of
the repo as it stands after that commit** (not only the last one). A commit adds or removes
at most ~100 files; the manifest it carries lists exactly the sessions present once it lands:
the untouched ones, the ones this commit and the earlier ones added or updated (an update
not yet committed keeps its old entry, since the old file is still there) minus the removed
ones. So if the network dies after commit 2 of 5, the repo at commit 2 is a complete,
smaller publication; the re-run reads that manifest, skips what commits 1-2 uploaded (same
source hash and redaction key, file present), and commits the rest. Nothing is duplicated
(paths are deterministic) and no manifest ever names a missing file. The last commit carries
the final manifest, index and card. Metadata files whose bytes did not change are left out
(compared as ``RemoteFile.holds`` does), so a run with nothing to do makes no commit at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exporter.publish.hub_plan import Prepared, copy_mark, session_id_mark
from exporter.publish.hub_state import RemoteFile, RemoteState, file_holds

__all__ = [
    "MAX_BYTES_PER_COMMIT",
    "MAX_FILES_PER_COMMIT",
    "META_FILES",
    "Commit",
    "Op",
    "PruneScope",
    "html_ops",
    "plan_commits",
    "prune_ops",
    "session_ops",
]

MAX_FILES_PER_COMMIT = 100  # the Hub's advice (repositories-recommendations)
MAX_BYTES_PER_COMMIT = 100 * 1024 * 1024  # what huggingface_hub's own pipeline batches
META_FILES = ("manifest.json", "index.jsonl", "README.md")
HTML_DIR = "html/"
RenderMeta = Callable[[dict[str, dict[str, Any]], dict[str, dict[str, Any]]], dict[str, bytes]]


@dataclass
class Op:
    """One change: ``add``/``update`` upload ``local``; ``remove`` deletes; ``refresh`` only
    updates the manifest entry (same published bytes, e.g. a source edit that redaction hid)."""

    action: str
    path: str
    size: int = 0
    local: Path | None = None
    entry: dict[str, Any] | None = None
    row: dict[str, Any] | None = None
    secrets: int = 0

    @property
    def uploads(self) -> bool:
        return self.action in ("add", "update")

    @property
    def is_session(self) -> bool:
        return self.path.startswith("sessions/")


@dataclass
class Commit:
    ops: list[Op] = field(default_factory=list)
    metadata: dict[str, bytes] = field(default_factory=dict)

    @property
    def files(self) -> int:
        return sum(op.action != "refresh" for op in self.ops) + len(self.metadata)


def session_ops(
    prepared: Iterable[Prepared],
    remote: RemoteState,
    key: str,
    mark: Callable[[str], str],
    cuts: Iterable[str] = (),
    publisher: str | None = None,
) -> list[Op]:
    """add / update / refresh for each successfully prepared session (``mark``: the local
    publish key's HMAC, which the manifest records instead of the source's hash; ``cuts``:
    what the policy removed besides secrets, recorded in the clear for the next run)."""
    cuts = sorted(cuts)
    ops = []
    for item in prepared:
        if item.error is not None:
            continue
        path = item.source.repo_path
        entry = {
            "id": str(item.row.get("id", "")),
            "source_mark": mark(item.source_sha256),
            # which local copy (project folder and file name) it went up from, as a mark:
            # two copies of one session keep their own paths, however each changes
            "copy_mark": copy_mark(mark, item.source.path),
            "redaction_key": key,
            "sha256": item.sha256,
            "bytes": item.size,
            "redactions": dict(sorted(item.redactions.items())),
            # what else was done to it (home paths, entries dropped...): its page says so,
            # built from this upload or from the copy a later run downloads
            "actions": dict(sorted(item.actions.items())),
            "cuts": cuts,
        }
        session_id = item.source.session_id
        if session_id and item.row.get("id") != session_id:  # its id went out redacted
            entry["id_mark"] = session_id_mark(mark, session_id)  # how a re-run knows it
        if item.given:  # which given secrets it replaced, as marks: a later run needs them too
            entry["given"] = sorted(mark(digest) for digest in item.given)
        if publisher:  # which machine's key published it: whose --prune may remove it
            entry["publisher"] = publisher
        there = remote.files.get(path)
        same = there is not None and there.matches(item.oid, item.sha256)
        action = "refresh" if same else "update" if there else "add"
        secrets = sum(item.redactions.values())
        ops.append(Op(action, path, item.size, item.staged, entry, item.row, secrets))
    return ops


@dataclass(frozen=True)
class PruneScope:
    """What a ``--prune`` may remove besides the selection's own files: with ``--all``
    (``projects`` None) every other session; else only sessions of the selection's projects
    (the index's ``project``, a path under the home folder, which a teammate's checkout may
    share) that this machine published (``publisher``, a mark under its publish key)."""

    projects: frozenset[str] | None = None
    publisher: str | None = None


def prune_ops(
    remote: RemoteState, keep_paths: set[str], keep_names: set[str], scope: PruneScope
) -> list[Op]:
    """Remove remote session files that are not in this run's selection, within ``scope``."""
    return [
        Op("remove", path, info.size)
        for path, info in sorted(remote.files.items())
        if is_pruned(path, remote, keep_paths, keep_names, scope)
    ]


def is_pruned(
    path: str, remote: RemoteState, keep_paths: set[str], keep_names: set[str], scope: PruneScope
) -> bool:
    """Is the remote file ``path`` one a ``--prune`` run removes?"""
    if not (path.startswith("sessions/") and path.endswith(".jsonl")):
        return False
    if path in keep_paths or path.rsplit("/", 1)[-1] in keep_names:
        return False
    if scope.projects is None:
        return True
    mine = (remote.manifest.get(path) or {}).get("publisher") == scope.publisher
    return mine and (remote.rows.get(path) or {}).get("project") in scope.projects


def html_ops(site: Path, remote: RemoteState, skip: Callable[[str], bool]) -> list[Op]:
    """Mirror the built site under ``html/``: upload what differs, delete what is gone."""
    ops, local = [], set()
    for folder, dirs, names in os.walk(site):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            file = Path(folder) / name
            rel = file.relative_to(site).as_posix()
            if name.startswith(".") or skip(rel):
                continue
            path = HTML_DIR + rel
            local.add(path)
            data = file.read_bytes()
            there = remote.files.get(path)
            if there is None or not there.holds(data):
                ops.append(Op("update" if there else "add", path, len(data), file))
    gone = [p for p in remote.files if p.startswith(HTML_DIR) and p not in local]
    return ops + [Op("remove", p, remote.files[p].size) for p in sorted(gone)]


def _chunks(ops: list[Op]) -> list[list[Op]]:
    """At most MAX_FILES_PER_COMMIT files (metadata included) and ~MAX_BYTES per commit. The
    site's listings (the index and the project pages, which link one another) go in one
    commit when they fit in one: a commit of its own when the one before is too full."""
    limit = MAX_FILES_PER_COMMIT - len(META_FILES)
    listings = [op for op in ops if _is_listing(op)]
    listings_size = sum(op.size for op in listings)
    chunks: list[list[Op]] = []
    current: list[Op] = []
    size = 0
    for op in ops:
        cost = op.size if op.uploads else 0
        full = len(current) >= limit or size + cost > MAX_BYTES_PER_COMMIT
        if listings and op is listings[0]:
            full = full or len(current) + len(listings) > limit
            full = full or size + listings_size > MAX_BYTES_PER_COMMIT
        if current and full:
            chunks.append(current)
            current, size = [], 0
        current.append(op)
        size += cost
    return [*chunks, current] if current else chunks


def plan_commits(
    ops: list[Op], remote: RemoteState, render_meta: RenderMeta
) -> tuple[list[Commit], dict[str, dict[str, Any]]]:
    """Session removals, then sessions, then html (:func:`_commit_order`), chunked; the
    metadata (manifest, index, card) as of a commit goes with it when the files sent since
    it was last written weigh as much as it does, when it removes sessions (a manifest
    naming removed files would outlive a run stopped after it), and always with the last
    commit.

    Written with every commit, the manifest and index of 3,000 sessions were sent 31 times:
    77 MB for 2 MB of sessions, growing with the square of their number. A run stopped
    between two writes leaves files the manifest does not name yet; the next run finds them
    unchanged and names them (its ``refresh`` ops).

    Returns the commits and the manifest entries of the final state.
    """
    keep = set(remote.manifest) & set(remote.files) & set(remote.rows)
    entries = {p: remote.manifest[p] for p in keep}
    rows = {p: remote.rows[p] for p in keep}
    current = {name: remote.files[name] for name in META_FILES if name in remote.files}
    refresh = [op for op in ops if op.action == "refresh"]
    payload = sorted((op for op in ops if op.action != "refresh"), key=_commit_order)
    commits = []
    chunks = _chunks(payload) or [[]]
    written = sum(remote.files[name].size for name in META_FILES if name in remote.files)
    sent = 0  # bytes of files sent since the metadata was last written
    for number, chunk in enumerate(chunks):
        chunk = refresh + chunk if number == 0 else chunk
        for op in chunk:
            if not op.is_session:
                continue
            if op.action == "remove":
                entries.pop(op.path, None)
                rows.pop(op.path, None)
            else:
                entries[op.path] = op.entry or {}
                rows[op.path] = op.row or {}
        sent += sum(op.size for op in chunk if op.uploads)
        meta: dict[str, bytes] = {}
        if number == len(chunks) - 1 or sent >= written or _removes_sessions(chunk):
            rendered = render_meta(entries, rows)
            written, sent = sum(len(data) for data in rendered.values()), 0
            meta = {
                name: data for name, data in rendered.items() if not file_holds(current, name, data)
            }
        if not meta and not any(op.action != "refresh" for op in chunk):
            continue
        current.update((name, RemoteFile.of(data)) for name, data in meta.items())
        commits.append(Commit(chunk, meta))
    return commits, entries


#: The site's listings: the index and the project pages, which link the session pages.
HTML_INDEX = HTML_DIR + "index.html"
HTML_PROJECTS = HTML_DIR + "projects/"


def _commit_order(op: Op) -> tuple[int, str]:
    """Where ``op`` goes among a run's commits: session removals, then the sessions added or
    updated; then the site as the local build writes it: its pages, then the project pages,
    then the index (each listing after the pages it links), and only then the pages that
    left (a page is never removed before the listing that linked it is replaced). Sorted by
    path before, the index went first and the removals before it: a run stopped between two
    commits (Ctrl-C, the network) left ``html/index.html`` linking pages never uploaded."""
    if op.is_session:
        return (0 if op.action == "remove" else 1), op.path
    if op.action == "remove":
        return 5, op.path
    if op.path == HTML_INDEX:
        return 4, op.path
    return (3 if op.path.startswith(HTML_PROJECTS) else 2), op.path


def _is_listing(op: Op) -> bool:
    """An upload of the site's index or of a project page."""
    return _commit_order(op)[0] in (3, 4)


def _removes_sessions(chunk: list[Op]) -> bool:
    return any(op.action == "remove" and op.is_session for op in chunk)
