"""Full-text search of a static site: the words every session said, searchable from its
index page, on ``file://`` too (no server, nothing fetched).

When a page is rendered, its session (after the site's transform: a redacted site's is
redacted) becomes *records*, ``[anchor, kind, text]``: the DOM id of the entry on the page,
what the text is (a prompt, a reply, a tool call, a tool's output...) and the text, on one
line and cut (a tool's output to its start and end). They are kept in the site folder, one
file of JSON lines per session (``.pi-session-search/<source id>.json``: plain text, so a
look for a secret in the folder finds it there too), so a rebuild that renders nothing reads
no session file to make the index again.

The index page embeds the records of every listed session as gzip-compressed, base64 JSON
in an inert ``<script type="application/octet-stream">`` (a separate file fetched by the
page is refused on ``file://``); ``static/index.js`` unpacks it at the first search. The
records are cut per session and for the whole site, and the page says when they were.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from exporter.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    MessageEntry,
    as_dict,
    as_str,
)
from exporter.formatting import (
    cluster_cut,
    cluster_start_after,
    escape_surrogates,
    plain_text_shown,
)
from exporter.fsutil import atomic_write_bytes
from exporter.render.index import SearchIndex
from exporter.render.view import entry_anchors
from exporter.session import Session
from exporter.shown_rules import interrupted
from exporter.site_manifest import SEARCH_DIR, stays_inside, unlink_or_error

__all__ = [
    "SEARCH_DIR",
    "SearchIndex",
    "delete_shard",
    "has_shard",
    "move_shard",
    "pack_index",
    "session_records",
    "shard_bytes",
    "sweep_shards",
    "write_shard",
]

SHARD_FORMAT = 1

#: What a record's text is, as the index page labels it (its script has the same names).
KINDS = {
    "p": "Prompt",
    "r": "Reply",
    "e": "Error",
    "s": "Summary",
    "c": "Tool call",
    "o": "Tool output",
}
#: Which records a cut session keeps first: what people asked and were told, then what
#: the tools did.
_PRIORITY = {kind: rank for rank, kind in enumerate("pesrco")}

#: Characters kept of a prompt, a reply, an error or a summary (most prompts and replies
#: are shorter: a long one is kept to its first 2,000).
TEXT_CHARS = 2000
#: Of a tool call: its tool and what it ran or read (a command, a path, a pattern).
CALL_CHARS = 300
#: Of a tool's output: its start and its end (where errors are said), not the middle.
OUTPUT_HEAD, OUTPUT_TAIL = 400, 200
#: Of one session, all records' text together (a 25 MB session of 24,000 entries makes
#: 5.7 million uncut).
SESSION_CHARS = 1_000_000
#: Of the whole site: index.html stays a page a browser opens at once (about a quarter of
#: this, compressed, base64). Sessions that are too many share it evenly.
SITE_CHARS = 16_000_000
#: A session cut to fit keeps at least this much of each record it keeps.
MIN_RECORD_CHARS = 120

#: The keys of a tool call's arguments that say what it did, in this order.
_CALL_KEYS = (
    "command", "cmd", "path", "file_path", "filePath", "notebook_path", "pattern", "glob",
    "query", "url", "description", "prompt",
)  # fmt: skip
_SID = re.compile(r"[0-9a-f]{32}")
_SUFFIX = ".json"
_ANCHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:~-]{0,200}")


def _line(text: str) -> str:
    """One line as a reader should see it: colour codes dropped, hidden controls (bidi
    overrides that reorder what is shown) as signs, as the pages show them; composed (NFC),
    as the index page composes what is typed: a macOS path stored decomposed ("e" and a
    combining accent) was never found by "café" typed."""
    return unicodedata.normalize("NFC", " ".join(plain_text_shown(text).split()))


def _head(text: str, size: int) -> str:
    """At most ``size`` first characters of ``text``, ending at a grapheme cluster's
    start: no emoji sequence, flag or accented letter is broken before an ellipsis."""
    return text[: cluster_cut(text, size)]


def _tail(text: str, size: int) -> str:
    """At most ``size`` last characters of ``text`` (``size`` > 0), starting at a grapheme
    cluster's start: no lone skin tone, flag half or accent after an ellipsis."""
    return text[cluster_start_after(text, len(text) - size) :]


def _cut(text: str, limit: int) -> str:
    text = _line(text)
    return text if len(text) <= limit else _head(text, limit - 1) + "…"


def _head_tail(text: str) -> str:
    """A tool's output: its first and last characters (one line), the middle left out."""
    text = _line(text)
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL + 3:
        return text
    return f"{_head(text, OUTPUT_HEAD)} … {_tail(text, OUTPUT_TAIL)}"


def _call_text(block: dict[str, Any]) -> str:
    """A tool call as one line: its name and the arguments that say what it did (a
    command, a path), else its other short strings."""
    name = as_str(block.get("name")) or "tool"
    args = as_dict(block.get("arguments"))
    said = [v for k in _CALL_KEYS if isinstance(v := args.get(k), str) and v.strip()]
    if not said:
        said = [v for v in args.values() if isinstance(v, str) and v.strip()]
    return _cut(" ".join([name, *said]), CALL_CHARS)


def _entry_records(
    session: Session, entry: Any, anchors: dict[str, str]
) -> Iterable[tuple[str, str, str]]:
    """The records of one entry: ``(anchor, kind, text)``; a tool call is linked to its
    result's anchor (the page shows the call and its output in one box with that id)."""
    anchor = anchors[entry.id]
    if isinstance(entry, MessageEntry):
        role = entry.role
        if role == "user":
            yield anchor, "p", _cut(entry.text, TEXT_CHARS)
        elif role == "assistant":
            yield anchor, "r", _cut(entry.text, TEXT_CHARS)
            # as the page says it: Pi's own interrupt message is shown as "Aborted" only
            if entry.error_message and not interrupted(entry):
                yield anchor, "e", _cut(entry.error_message, TEXT_CHARS)
            for index, block in enumerate(entry.content):
                if block.get("type") == "toolCall":
                    result = session.result_for_call(entry.id, index)
                    target = anchors.get(result.id, anchor) if result is not None else anchor
                    yield target, "c", _call_text(block)
        elif role == "toolResult":
            yield anchor, "o", _head_tail(entry.text)
        elif role == "bashExecution":
            yield anchor, "c", _cut(f"bash {entry.command}", CALL_CHARS)
            yield anchor, "o", _head_tail(entry.output)
    elif isinstance(entry, CompactionEntry | BranchSummaryEntry):
        yield anchor, "s", _cut(entry.summary, TEXT_CHARS)


def session_records(session: Session) -> tuple[list[list[str]], bool]:
    """Every entry's searchable text (every branch, file order) as ``[anchor, kind, text]``,
    and whether the session had more than :data:`SESSION_CHARS` (then it is cut: prompts
    and replies are kept before tools' output)."""
    anchors = entry_anchors(session)
    records = [
        [anchor, kind, text]
        for entry in session.entries
        for anchor, kind, text in _entry_records(session, entry, anchors)
        if text
    ]
    return _within(records, SESSION_CHARS)


def _size(records: list[list[str]]) -> int:
    return sum(len(r[2]) for r in records)


def _shorten(record: list[str], limit: int) -> list[str]:
    """A record cut to ``limit`` characters: a tool's output to its start and end."""
    anchor, kind, text = record
    if len(text) <= limit:
        return record
    if kind == "o":
        tail = limit // 3
        return [anchor, kind, f"{_head(text, limit - tail - 3)} … {_tail(text, tail)}"]
    return [anchor, kind, _head(text, limit - 1) + "…"]


def _within(records: list[list[str]], budget: int) -> tuple[list[list[str]], bool]:
    """The records cut to fit ``budget`` characters in all, and whether they were cut.

    Every record is kept, the longest cut to the same length, while that length is at
    least :data:`MIN_RECORD_CHARS`; past that (a session of tens of thousands of entries)
    they are cut to it and the least telling kinds are left out first (tools' output,
    then calls, replies...), the rest kept in their order."""
    if _size(records) <= budget:
        return records, False
    share = _fair_share([len(r[2]) for r in records], budget)
    if share >= MIN_RECORD_CHARS:
        return [_shorten(r, share) for r in records], True
    short = [_shorten(r, MIN_RECORD_CHARS) for r in records]
    order = sorted(range(len(short)), key=lambda i: _PRIORITY.get(short[i][1], 9))
    kept: list[int] = []
    for i in order:
        size = len(short[i][2])
        if size <= budget:
            kept.append(i)
            budget -= size
    return [short[i] for i in sorted(kept)], True


def _dumps(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return escape_surrogates(text).encode("utf-8")


def shard_bytes(records: list[list[str]], cut: bool) -> bytes:
    """A session's records as its shard file holds them: JSON lines, a head that says how
    much text follows (the index shares its room out by it, reading no more), then one
    record a line."""
    head = {"format": SHARD_FORMAT, "cut": cut, "records": len(records), "chars": _size(records)}
    return b"".join(_dumps(item) + b"\n" for item in [head, *records])


def _shard_path(out_dir: Path, sid: str) -> Path | None:
    """Where the shard of source ``sid`` is: only for an id of the shape this tool makes
    (manifest keys are read from a folder that may come from anywhere)."""
    return out_dir / SEARCH_DIR / f"{sid}{_SUFFIX}" if _SID.fullmatch(sid) else None


def _inside(out_dir: Path, path: Path) -> bool:
    return stays_inside(out_dir, path)


def write_shard(out_dir: Path, sid: str, data: bytes) -> None:
    """Write a session's shard (never through a link out of the site folder)."""
    path = _shard_path(out_dir, sid)
    if path is None:
        return
    path.parent.mkdir(exist_ok=True)
    if not _inside(out_dir, path.parent) or (path.is_symlink() and not _inside(out_dir, path)):
        raise OSError(f"{SEARCH_DIR} in {out_dir} is a symbolic link out of the site folder")
    atomic_write_bytes(path, data)


def has_shard(out_dir: Path, sid: str) -> bool:
    path = _shard_path(out_dir, sid)
    return path is not None and path.is_file()


def delete_shard(out_dir: Path, sid: str) -> OSError | None:
    """Delete the shard of source ``sid``; why one that is there could not be deleted (a
    folder of another user's, a read-only file system), or None: the text of a session
    deleted for a secret it held is still served (the index's search fetches it)."""
    path = _shard_path(out_dir, sid)
    if path is None or not _inside(out_dir, path.parent):
        return None
    return unlink_or_error(path)


def move_shard(out_dir: Path, old: str, new: str) -> None:
    """Give the shard of source ``old`` the id ``new`` (a missing one stays missing: the
    session's page is made again, and its shard with it)."""
    before, after = _shard_path(out_dir, old), _shard_path(out_dir, new)
    if before is None or after is None or not _inside(out_dir, before.parent):
        return
    with contextlib.suppress(OSError):
        if not before.is_symlink():
            os.replace(before, after)


def sweep_shards(out_dir: Path, keep: set[str]) -> list[tuple[str, OSError]]:
    """Delete the shards (and temp files) of sessions the site no longer lists; those that
    could not be deleted (path in the site, why), as :func:`site_manifest.sweep` says
    them: a shard left is still served, and the caller says so."""
    folder = out_dir / SEARCH_DIR
    left: list[tuple[str, OSError]] = []
    if not folder.is_dir() or not _inside(out_dir, folder):
        return left
    for path in folder.iterdir():
        name = path.name
        sid = name.removesuffix(_SUFFIX)
        ours = name.endswith(_SUFFIX) and _SID.fullmatch(sid)
        temp = name.startswith(".") and name.endswith(".tmp")
        if path.is_dir() and not path.is_symlink():
            continue  # (no shard of ours)
        if ((ours and sid not in keep) or temp) and (error := unlink_or_error(path)):
            left.append((f"{SEARCH_DIR}/{name}", error))
    return left


_HEAD_BYTES = 4096


def _read_head(path: Path) -> tuple[int, int, bool] | None:
    """A shard's head: its records, their characters, and whether the session was cut;
    None when it is no shard of ours (the folder may come from anywhere)."""
    try:
        with open(path, "rb") as handle:
            head = json.loads(handle.readline(_HEAD_BYTES))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(head, dict) or head.get("format") != SHARD_FORMAT:
        return None
    count, chars = head.get("records"), head.get("chars")
    if not all(type(n) is int and n >= 0 for n in (count, chars)):
        return None
    return count, chars, head.get("cut") is True


def _read_records(path: Path, count: int) -> list[list[str]] | None:
    """A shard's records, each checked; None unless all ``count`` of them are sound."""
    records: list[list[str]] = []
    try:
        with open(path, "rb") as handle:
            handle.readline(_HEAD_BYTES)
            for line in handle:
                record = json.loads(line)
                if not _valid_record(record) or len(records) == count:
                    return None
                record[2] = unicodedata.normalize("NFC", record[2])  # a shard written before
                records.append(record)
    except (OSError, ValueError, RecursionError):
        return None
    return records if len(records) == count else None


def _valid_record(record: Any) -> bool:
    return (
        isinstance(record, list)
        and len(record) == 3
        and all(isinstance(part, str) for part in record)
        and record[1] in KINDS
        and _ANCHOR.fullmatch(record[0]) is not None
    )


def pack_index(out_dir: Path, listed: list[tuple[str, str, str]]) -> SearchIndex:
    """The embedded index of ``listed`` sessions (source id, page, title) in that order
    (the listing's): each one's records from its shard, all cut to :data:`SITE_CHARS`
    (each session to the same share when they are too many: a huge one does not crowd the
    others out). One session's records are in memory at a time. A shard that cannot be
    read is deleted, so the next build renders that session again, and is counted
    ``missing`` meanwhile."""
    heads: list[tuple[str, str, str, Path, int, int, bool]] = []
    missing = 0
    for sid, page, title in listed:
        path = _shard_path(out_dir, sid)
        head = _read_head(path) if path is not None and _inside(out_dir, path) else None
        if path is None or head is None:
            missing += 1
            delete_shard(out_dir, sid)
            continue
        heads.append((sid, page, title, path, *head))
    share = _fair_share([chars for *_, chars, _ in heads], SITE_CHARS)
    buffer = io.BytesIO()
    sessions = cut = count = chars = 0
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as out:
        out.write(b'{"v":%d,"kinds":%s,"sessions":[' % (SHARD_FORMAT, _dumps(KINDS)))
        for sid, page, title, path, number, _, was_cut in heads:
            records = _read_records(path, number)
            if records is None:
                missing += 1
                delete_shard(out_dir, sid)
                continue
            # (the heads may say less than their records hold: the whole is kept in room)
            records, cut_now = _within(records, min(share, SITE_CHARS - chars))
            # the title as the listing shows it: a bidi override reorders no heading
            shown = [page, _line(title), records]
            out.write((b"," if sessions else b"") + _dumps(shown))
            sessions += 1
            cut += was_cut or cut_now
            count += len(records)
            chars += _size(records)
        out.write(b"]}")
    packed = base64.b64encode(buffer.getvalue()).decode("ascii")
    return SearchIndex(
        packed, sessions, count, chars, cut, missing, TEXT_CHARS, OUTPUT_HEAD, OUTPUT_TAIL
    )


def _fair_share(sizes: list[int], budget: int) -> int:
    """The most characters each session may keep so all keep at most ``budget`` in all:
    small sessions keep everything, the biggest are cut to the same size."""
    if sum(sizes) <= budget:
        return max(sizes, default=0)
    left, remaining = budget, len(sizes)
    for size in sorted(sizes):
        if size * remaining > left:
            return left // remaining
        left -= size
        remaining -= 1
    return max(sizes, default=0)
