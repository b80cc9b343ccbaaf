"""The files the agent read, wrote and edited along the active path: the page's "Files"
table, so a reviewer sees what a session changed without reading every tool call.

Counted from the calls of Pi's built-in ``read``, ``write`` and ``edit`` tools, and of
Codex's ``apply_patch`` (a file it adds is a write, one it updates or deletes an edit). An
edit's lines come from the diff its tool returned (``details.diff``, as the page's edit
badge) or from the patch. A read, write or edit whose result is an error read or changed
nothing and is counted as failed; one with no result never ran (its turn ended in an error
or was aborted, as the Tools table's "no result" says) and is counted apart.

One file is one row however the calls name it: ``src/a.py``, ``./src/a.py``, ``@src/a.py``,
``~/proj/src/a.py`` and ``/home/alice/proj/src/a.py`` (cwd ``/home/alice/proj``) are the
same file, as Pi resolves a path its tools are given (``resolveToCwd``: a leading ``@``
dropped, ``~`` the home, a relative path against the session's folder); the row shows the
first spelling, without Pi's ``@``.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from exporter.entries import MessageEntry, as_dict, as_str
from exporter.formatting import HOME_FOLDER
from exporter.render.tools import diff_line_counts, patch_diff
from exporter.session import Session

__all__ = ["FileTouches", "files_touched"]

_KINDS = ("read", "write", "edit", "apply_patch")
_WINDOWS_ROOT = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
#: The home a cwd is in, as the page's ``session_paths`` finds it (``~`` on the page).
#: The spaces Pi's ``expandPath`` reads as a plain space (a pasted path's no-break space).
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
#: Before a key for a ``~`` path whose home is not known: unlike any path resolved or not.
_UNKNOWN_HOME = "\0"


def file_key(path: str, cwd: str, *, as_pi: bool = True) -> str:
    """Which file ``path`` names, for grouping only: resolved against ``cwd`` and
    normalised (``./``, ``a/../``, doubled slashes), case-folded on Windows. A path
    that cannot be resolved (no absolute cwd) is only normalised. ``as_pi``: first as
    Pi's tools read a path (``@a.py`` is ``a.py``, ``~/a.py`` in the home of the cwd);
    a ``~`` path whose home is not known is keyed apart from every other."""
    if as_pi:
        path = _UNICODE_SPACES.sub(" ", path.removeprefix("@"))
        if path == "~" or path.startswith("~/"):
            home = HOME_FOLDER.match(cwd)
            if home is None:
                return _UNKNOWN_HOME + posixpath.normpath(path)
            path = home.group(0) + path[1:]
    if _WINDOWS_ROOT.match(cwd) or _WINDOWS_ROOT.match(path):
        return ntpath.normcase(ntpath.normpath(ntpath.join(cwd, path)))
    if cwd.startswith("/"):
        path = posixpath.join(cwd, path)
    return posixpath.normpath(path)


@dataclass
class FileTouches:
    """What the path did to one file, and where (the entries of its writes and edits)."""

    path: str
    reads: int = 0
    writes: int = 0
    edits: int = 0
    failed_reads: int = 0  # the tool said it failed (no such file, a folder, past its end)
    failed_writes: int = 0
    failed_edits: int = 0
    unrun_reads: int = 0  # no result: the turn ended before the tool ran
    unrun_writes: int = 0
    unrun_edits: int = 0
    edits_without_diff: int = 0
    added: int = 0
    removed: int = 0
    changes: list[str] = field(default_factory=list)  # entry ids of writes and edits
    moved_from: list[str] = field(default_factory=list)  # a patch's "Move to": its old names

    @property
    def changed(self) -> bool:
        return bool(self.writes or self.edits)


def files_touched(session: Session, show: Callable[[str], str]) -> list[FileTouches]:
    """Files along the active path, changed ones first (most edits and writes), then read."""
    files: dict[str, FileTouches] = {}
    cwd = session.header.cwd or ""
    on_path = set(session.active_path)
    for entry in session.active_entries():
        if not isinstance(entry, MessageEntry) or entry.role != "assistant":
            continue
        content = entry.message.get("content")
        for index, block in enumerate(content if isinstance(content, list) else ()):
            block = as_dict(block)
            name = as_str(block.get("name"))
            if block.get("type") != "toolCall" or name not in _KINDS:
                continue
            args = as_dict(block.get("arguments"))
            found = session.result_for_call(entry.id, index, on_path)
            result = found if isinstance(found, MessageEntry) else None
            if name == "apply_patch":
                _count_patch(files, as_str(args.get("input")) or "", result, show, cwd)
                continue
            path = as_str(args.get("path")) or as_str(args.get("file_path"))
            if not path:
                continue
            label = path.removeprefix("@") or path  # Pi's "@" mention is no part of the name
            touches = _row(files, label, show, file_key(path, cwd))
            if name == "read":
                _count_read(touches, result)
            elif name == "write":
                _count_write(touches, result)
            else:
                _count_edit(touches, result)
    return sorted(
        files.values(),
        key=lambda f: (not f.changed, -(f.edits + f.writes), -f.reads, f.path),
    )


def _row(
    files: dict[str, FileTouches], path: str, show: Callable[[str], str], key: str
) -> FileTouches:
    """The row of the file ``key`` names, made on its first mention (as ``path``)."""
    touches = files.get(key)
    if touches is None:
        touches = files[key] = FileTouches(show(path))
    return touches


def _not_made(touches: FileTouches, result: MessageEntry | None, write: bool) -> bool:
    """Count a write or edit that changed nothing, apart (True), or say it was made: with
    no result it never ran (its turn was cut off), with an error it was refused."""
    if result is None:
        if write:
            touches.unrun_writes += 1
        else:
            touches.unrun_edits += 1
    elif result.is_error:
        if write:
            touches.failed_writes += 1
        else:
            touches.failed_edits += 1
    else:
        return False
    return True


def _count_read(touches: FileTouches, result: MessageEntry | None) -> None:
    """A read counts when the tool read the file; one it refused (no such file, a folder,
    an offset past the end) or never ran is counted apart, as writes and edits are: "Reads
    1" for a file that was never there said the agent had seen it."""
    if result is None:
        touches.unrun_reads += 1
    elif result.is_error:
        touches.failed_reads += 1
    else:
        touches.reads += 1


def _count_write(touches: FileTouches, result: MessageEntry | None) -> None:
    if _not_made(touches, result, write=True) or result is None:  # (None: counted)
        return
    touches.writes += 1
    touches.changes.append(result.id)


def _count_edit(touches: FileTouches, result: MessageEntry | None) -> None:
    if _not_made(touches, result, write=False) or result is None:  # (None: counted)
        return
    touches.edits += 1
    touches.changes.append(result.id)
    diff = as_str(result.details.get("diff"))
    if not diff:  # older Pi versions returned no diff: the lines are not known
        touches.edits_without_diff += 1
        return
    added, removed = diff_line_counts(diff)
    touches.added += added
    touches.removed += removed


def _count_patch(
    files: dict[str, FileTouches],
    patch: str,
    result: MessageEntry | None,
    show: Callable[[str], str],
    cwd: str,
) -> None:
    parsed = patch_diff(patch)
    for patched in parsed.files if parsed is not None else ():
        if result is None or result.is_error:  # counted where a made one would be
            touches = _row(files, patched.path, show, _patch_key(patched.path, cwd))
            _not_made(touches, result, write=patched.op == "A")
            continue
        # a moved file is counted where it now is, which later edits name; its row says
        # where it came from
        where = patched.moved_to or patched.path
        touches = _row(files, where, show, _patch_key(where, cwd))
        if patched.moved_to and show(patched.path) not in touches.moved_from:
            touches.moved_from.append(show(patched.path))
        if patched.op == "A":
            touches.writes += 1
        else:
            touches.edits += 1
        touches.added += patched.added
        touches.removed += patched.removed
        touches.changes.append(result.id)


def _patch_key(path: str, cwd: str) -> str:
    """A Codex patch's path: relative to the cwd as written (no ``@`` or ``~`` of Pi's)."""
    return file_key(path, cwd, as_pi=False)
