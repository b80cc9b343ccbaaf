"""What ``pi-session publish`` knows of the dataset at one commit: its files (with the git
ids the Hub reports) and the manifest and index rows this tool wrote there."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from exporter.publish.dataset_card import MANIFEST_SCHEMA

__all__ = ["RemoteFile", "RemoteState", "git_oid"]


def git_oid(data: bytes) -> str:
    """The git blob SHA-1 the Hub reports for a regular file: equal oid, identical bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class RemoteFile:
    size: int
    oid: str


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

    def load_manifest(self, data: bytes) -> None:
        """Accept only our schema; anything else means "re-check every session"."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            doc = None
        sessions = doc.get("sessions") if isinstance(doc, dict) else None
        if not isinstance(sessions, dict) or doc.get("schema_version") != MANIFEST_SCHEMA:
            self.problems.append("remote manifest.json is unreadable or from another version")
            return
        self.manifest = {p: e for p, e in sessions.items() if isinstance(e, dict)}
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
