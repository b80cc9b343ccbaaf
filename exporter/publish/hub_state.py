"""What ``pi-session publish`` knows of the dataset at one commit: its files (with the ids
the Hub reports) and the manifest and index rows this tool wrote there."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from exporter.formatting import plural
from exporter.publish.dataset_card import INDEX_FIELDS, MANIFEST_SCHEMA

__all__ = ["RemoteFile", "RemoteState", "file_holds", "git_oid"]


def git_oid(data: bytes) -> str:
    """The git blob SHA-1 the Hub reports for a regular file: equal oid, identical bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class RemoteFile:
    """A file as the Hub lists it. ``oid`` is its git blob id: for a file stored with LFS
    (over 10 MiB, or binary) that is the id of its small pointer file, never of its bytes,
    so such a file is known by ``sha256`` (the listing's ``lfs.oid``) instead."""

    size: int
    oid: str
    sha256: str | None = None  # set for a file stored with LFS

    @classmethod
    def of(cls, data: bytes) -> RemoteFile:
        """The file ``data`` makes, by both ids (whichever way the Hub stores it)."""
        return cls(len(data), git_oid(data), hashlib.sha256(data).hexdigest())

    def matches(self, git_id: str | None, sha256: str | None) -> bool:
        """Are these the bytes whose git blob id and SHA-256 are given? The one rule for
        every comparison with the dataset: LFS files by SHA-256, the others by git id."""
        if self.sha256 is not None:
            return sha256 == self.sha256
        return git_id == self.oid

    def holds(self, data: bytes) -> bool:
        """Does the dataset's file hold exactly ``data``? (Only the id it is known by is
        computed: a session's SHA-256 is not worth a second pass for a regular file.)"""
        if self.sha256 is not None:
            return self.matches(None, hashlib.sha256(data).hexdigest())
        return self.matches(git_oid(data), None)


def file_holds(files: Mapping[str, RemoteFile], path: str, data: bytes) -> bool:
    """Is ``path`` among ``files``, holding exactly ``data``?"""
    there = files.get(path)
    return there is not None and there.holds(data)


@dataclass
class RemoteState:
    """The repo at one commit: its tree, and the manifest and index rows found there."""

    exists: bool = False
    head: str | None = None
    private: bool = True
    files: dict[str, RemoteFile] = field(default_factory=dict)
    manifest: dict[str, dict[str, Any]] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: git oid of the dataset card this tool last wrote (README.md differs: a person edited it)
    card_oid: str | None = None
    #: README.md as the dataset holds it (None: there is none), to refresh its marked block
    card: bytes | None = None
    #: why manifest.json, present, was not read ("unreadable", "from another version"):
    #: its copies' redaction is unknown, as with no manifest (:meth:`manifest_gap`)
    manifest_problem: str | None = None

    def manifest_gap(self) -> str | None:
        """Why the dataset's manifest cannot tell how any of its copies was redacted (None:
        it can, or there is no dataset): missing, unreadable or from another version."""
        if self.manifest_problem is not None:
            return self.manifest_problem
        if self.exists and "manifest.json" not in self.files:
            return "missing"
        return None

    def load_manifest(self, data: bytes) -> None:
        """Accept only our schema; anything else means "re-check every session"."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            doc = None
        sessions = doc.get("sessions") if isinstance(doc, dict) else None
        if not isinstance(sessions, dict) or doc.get("schema_version") != MANIFEST_SCHEMA:
            known = isinstance(sessions, dict) and isinstance(doc.get("schema_version"), int)
            self.manifest_problem = "from another version" if known else "unreadable"
            self.problems.append(
                f"remote manifest.json is {self.manifest_problem}: every session is checked "
                "again, and one whose copy in the dataset this run would change is refused "
                "(how that copy was redacted cannot be told)"
            )
            return
        self.manifest = {p: e for p, e in sessions.items() if isinstance(e, dict)}
        odd = [path for path, entry in self.manifest.items() if _clean_counts(entry)]
        self._say_odd(
            odd,
            f"remote manifest.json: {plural(len(odd), 'entry', 'entries')} with replacement "
            "counts that are not whole numbers; those counts are left out of the card and the "
            "html/ pages",
        )
        card = doc.get("card_oid")
        self.card_oid = card if isinstance(card, str) else None

    def load_index(self, data: bytes) -> None:
        for line in data.decode("utf-8", errors="replace").split("\n"):  # not splitlines: \u2028
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(row, dict) and isinstance(row.get("path"), str):
                self.rows[row["path"]] = row
        odd = [path for path, row in self.rows.items() if _clean_row(row)]
        self._say_odd(
            odd,
            f"remote index.jsonl: {plural(len(odd), 'row')} with fields of the wrong type; "
            'those fields are written back empty (0, "" or null) unless this run publishes '
            "the session again",
        )

    def _say_odd(self, paths: list[str], what: str) -> None:
        if paths:
            self.problems.append(f"{what} (first: {min(paths)})")


def _fits(value: Any, kind: type | tuple[type, ...]) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool):  # JSON's true is not a count
        return False
    if float in kinds and isinstance(value, int):  # JSON writes 0.0 as 0
        return True
    if isinstance(value, float) and not math.isfinite(value):  # Infinity, NaN: no JSON
        return False  # (an index an earlier version wrote from costs that added up past 1e308)
    if list in kinds and isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return isinstance(value, kinds)


def _clean_row(row: dict[str, Any]) -> bool:
    """Give an index row's wrongly typed fields (a hand edit, another tool) their empty
    value, so the card's sums and dates never meet a string for a count; True if any."""
    changed = False
    for name, kind in INDEX_FIELDS.items():
        if name in row and not _fits(row[name], kind):
            row[name] = None if isinstance(kind, tuple) else kind()  # 0, 0.0, "" or a new []
            changed = True
    return changed


def _clean_counts(entry: dict[str, Any]) -> bool:
    """Keep only a manifest entry's counts (replacements, and what else was removed) that
    are whole numbers; True if any were dropped (the card and the pages sum them)."""
    dropped = False
    for name in ("redactions", "actions"):
        counts = entry.get(name)
        if counts is None:
            continue
        if not isinstance(counts, dict):
            entry[name], dropped = {}, True
            continue
        kept = {k: n for k, n in counts.items() if type(n) is int and n >= 0}
        entry[name] = kept
        dropped = dropped or len(kept) < len(counts)
    return dropped
