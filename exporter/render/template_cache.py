"""A per-user cache of compiled templates: compiling them is ~50 ms of every export.

Jinja keys each entry by template name and checks the source's checksum and the Python
version, so an edited template or another interpreter simply recompiles. The cache is an
optimisation only: any error reading or writing it is ignored.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from exporter.fsutil import user_cache_dir


class QuietBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache, except that an unwritable or broken cache never fails a render."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a corrupt or unreadable entry: compile as if there were none
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache() -> jinja2.BytecodeCache | None:
    """The cache under the user's cache folder, or None when it cannot be created."""
    if os.environ.get("PI_SESSION_NO_TEMPLATE_CACHE"):
        return None
    folder = user_cache_dir("templates")
    if not _home_exists():  # HOME=/nonexistent: no tree of folders made under it
        return None
    try:
        # both ours made 0700: `parents=True` makes the parent 0777 & ~umask, group-writable
        # under the usual umask 002, which turned the cache off for good, silently
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    _tighten(folder.parent)  # made so by an older version, or by the publish caches
    if not (_only_mine(folder) and _only_mine(folder.parent)):
        return None
    return QuietBytecodeCache(str(folder))


def _home_exists() -> bool:
    """The cache goes under ``$XDG_CACHE_HOME`` when that is set, else under the home."""
    if os.path.isabs((os.environ.get("XDG_CACHE_HOME") or "").strip()):
        return True
    try:
        return Path.home().is_dir()
    except (RuntimeError, OSError):  # no HOME and no password entry
        return False


def _tighten(folder: Path) -> None:
    """A folder of ours that the umask made group-writable (002, the usual one with a
    private group per user): take that away. One anyone may write in stays as it is, and
    unused."""
    with contextlib.suppress(OSError):
        info = os.lstat(folder)
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISDIR(info.st_mode) and mine and mode & 0o020 and not mode & 0o002:
            os.chmod(folder, mode & ~0o020)


def _only_mine(folder: Path) -> bool:
    """The cache is unpickled, so anyone who can write in its folder could run code in every
    export: a folder that is not ours, or that others may write in, is not used (as Jinja's
    own temporary cache checks)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()
