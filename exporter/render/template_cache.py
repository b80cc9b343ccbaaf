"""A per-user cache of compiled templates: compiling them is ~50 ms of every export; and
of the minified CSS and scripts every page inlines (~60 ms more: :func:`cached_text`).

Jinja keys each entry by template name and checks the source's checksum and the Python
version, so an edited template or another interpreter simply recompiles. The cache is an
optimisation only: any error reading or writing it is ignored.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from exporter.fsutil import private_cache_dir


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
    folder = private_cache_dir("templates")
    return QuietBytecodeCache(str(folder)) if folder is not None else None


#: The minified CSS and scripts' folder, beside the compiled templates'.
_TEXT_FOLDER = "minified"
_DIGEST_CHARS = 64  # a SHA-256 in hex: the first line of a cached text
_KEPT_PER_LABEL = 4  # texts of one file kept (of as many versions of it), newest first


def cached_text(label: str, key: str, make: Callable[[], str]) -> str:
    """``make()``'s text, kept on disk across processes under ``label`` and ``key``: a hash
    of everything the text is made from (the minifier's own code too), so a changed input
    is a miss, never a stale text. Each file holds the text's SHA-256 before it: one that
    was cut short or changed is read as a miss. An optimisation only: with
    ``PI_SESSION_NO_TEMPLATE_CACHE``, or when the cache cannot be read or written, the
    text is made as if there were none."""
    folder = _text_folder()
    if folder is None:
        return make()
    path = folder / f"{label}.{key}.txt"
    text = _read_text(path)
    if text is None:
        text = make()
        _write_text(folder, path, label, text)
    return text


def _text_folder() -> Path | None:
    if os.environ.get("PI_SESSION_NO_TEMPLATE_CACHE"):
        return None
    return private_cache_dir(_TEXT_FOLDER)


def _read_text(path: Path) -> str | None:
    """The text of one cache file, or None: missing, unreadable, or not what was written."""
    try:
        data = path.read_bytes()
        digest, text = data[:_DIGEST_CHARS], data[_DIGEST_CHARS + 1 :]
        if data[_DIGEST_CHARS : _DIGEST_CHARS + 1] != b"\n":
            return None
        if hashlib.sha256(text).hexdigest().encode("ascii") != digest:
            return None
        return text.decode("utf-8")
    except Exception:  # any error: made again
        return None


def _write_text(folder: Path, path: Path, label: str, text: str) -> None:
    """Write one cache file whole (a temporary file renamed over it: a reader sees the old
    file or the new one), then remove the label's oldest past ``_KEPT_PER_LABEL`` (earlier
    versions'). Not only the newest: two installs (a checkout and a release) or a test
    suite's own stylesheet took turns removing each other's, and both minified every time."""
    temporary = None
    try:
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest().encode("ascii")
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".new-", delete=False) as out:
            temporary = out.name
            out.write(digest + b"\n" + data)
        os.replace(temporary, path)
        temporary = None
        kept = sorted(
            folder.glob(f"{glob.escape(label)}.*.txt"),
            key=lambda each: each.stat().st_mtime_ns,
            reverse=True,
        )
        for old in kept[_KEPT_PER_LABEL:]:
            if old.name != path.name:
                old.unlink(missing_ok=True)
    except Exception:  # an unwritable or full cache: the text is made next time too
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def text_key(*parts: str) -> str:
    """A cache key for :func:`cached_text`: the SHA-256 of ``parts`` (each length-prefixed,
    so two lists of parts never give the same key by where one ends)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(data) + data)
    return digest.hexdigest()
