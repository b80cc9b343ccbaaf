"""Listings of other agents' transcripts, remembered between runs.

A Claude Code or Codex file is read whole by the loader to be listed (its lines are not
Pi's, so the fast scan cannot count them): ~80 ms per MB. `list` and `--pick` keep each
summary in the user's private cache folder, keyed by the file's size and time (and its
sub-agents'), and by this version of the tool, whose converters make the summaries. The
cache is an optimisation only: a missing, unreadable or damaged one is made again, and a
failure to write it is ignored. It holds what `list` shows (titles and first prompts), so
it is written readable by the user only, and a file deleted since loses its row at the next
listing.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from exporter import __version__
from exporter.fsutil import atomic_open, private_cache_dir

__all__ = ["SummaryCache", "remembered"]

FILE_NAME = "converted.json"
#: Rows kept at most: the oldest written go first.
MAX_ROWS = 20_000
#: SessionSummary fields kept (the rest are the scan's own working state).
FIELDS = (
    "id", "cwd", "name", "first_prompt", "title_prompt", "entries", "messages", "branches",
    "input", "output", "cache_read", "cache_write", "total_tokens", "cost", "version",
)  # fmt: skip
_TIMES = ("started", "modified")

Stamp = list[Any]  # size, modification time (ns), the sub-agents' stamps


class SummaryCache:
    """Summaries by file (its real path) and stamp; loaded at the first lookup."""

    def __init__(self, folder: Path | None) -> None:
        self.file = folder / FILE_NAME if folder is not None else None
        self.rows: dict[str, dict[str, Any]] | None = None
        self.changed = False

    def get(self, path: Path, stamp: Stamp) -> dict[str, Any] | None:
        """The file's fields if it has not changed since, each of the type it had."""
        row = self._rows().get(_key(path))
        if not isinstance(row, dict) or row.get("stamp") != stamp:
            return None
        fields = row.get("fields")
        return fields if isinstance(fields, dict) and _well_typed(fields) else None

    def put(self, path: Path, stamp: Stamp, summary: Any) -> None:
        fields: dict[str, Any] = {name: getattr(summary, name) for name in FIELDS}
        for name in _TIMES:
            moment = getattr(summary, name)
            fields[name] = moment.isoformat() if isinstance(moment, datetime) else None
        rows, key = self._rows(), _key(path)
        rows.pop(key, None)  # last written last: the first to go when full
        rows[key] = {"stamp": stamp, "fields": fields}
        while len(rows) > MAX_ROWS:
            rows.pop(next(iter(rows)))
        self.changed = True

    def forget_missing(self) -> None:
        """Drop the rows of files deleted since: a removed transcript's prompts must not
        live on in the cache (it is read only when one is there)."""
        if self.rows is None and (self.file is None or not self.file.exists()):
            return
        rows = self._rows()
        gone = [key for key in rows if not os.path.exists(key)]
        for key in gone:
            del rows[key]
        self.changed = self.changed or bool(gone)

    def save(self) -> None:
        if not self.changed or self.file is None or self.rows is None:
            return
        document = {"tool": __version__, "rows": self.rows}
        try:  # a cost that overflowed to infinity has no JSON: such a row is not kept
            data = json.dumps(document, ensure_ascii=True, allow_nan=False).encode("ascii")
        except ValueError:
            return
        with contextlib.suppress(OSError), atomic_open(self.file, "wb", permissions=0o600) as out:
            out.write(data)
        self.changed = False

    def _rows(self) -> dict[str, dict[str, Any]]:
        if self.rows is None:
            self.rows = _read(self.file)
        return self.rows


def _read(file: Path | None) -> dict[str, dict[str, Any]]:
    """The cache's rows, or none: another version's, a damaged or a missing file."""
    if file is None:
        return {}
    try:
        document = json.loads(file.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("tool") != __version__:
        return {}
    rows = document.get("rows")
    return rows if isinstance(rows, dict) else {}


_TEXTS = ("id", "cwd")
_COUNTS = ("entries", "messages", "branches", "input", "output", "cache_read", "cache_write",
           "total_tokens")  # fmt: skip


def _well_typed(fields: dict[str, Any]) -> bool:
    """A damaged row must not reach the listing's formatting as a string where a count was."""
    return (
        all(isinstance(fields.get(name), str) for name in _TEXTS)
        and all(
            isinstance(fields.get(name), (str, type(None)))
            for name in ("name", "first_prompt", "title_prompt", *_TIMES)
        )
        and all(
            type(fields.get(name)) is int and fields[name] >= 0 for name in (*_COUNTS, "version")
        )
        and type(fields.get("cost")) in (int, float)
    )


def _key(path: Path) -> str:
    return os.path.realpath(path)


#: The cache in use while a listing runs (see :func:`remembered`).
ACTIVE: list[SummaryCache] = []


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Within: other agents' summaries come from the cache, and new ones go into it,
    written once at the end."""
    if os.environ.get("PI_SESSION_NO_LIST_CACHE"):
        yield
        return
    cache = SummaryCache(private_cache_dir("summaries"))
    ACTIVE.append(cache)
    try:
        yield
    finally:
        ACTIVE.remove(cache)
        cache.forget_missing()
        cache.save()
