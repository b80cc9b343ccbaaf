"""A per-user cache of compiled templates: compiling them is ~50 ms of every export.

Jinja keys each entry by template name and checks the source's checksum and the Python
version, so an edited template or another interpreter simply recompiles. The cache is an
optimisation only: any error reading or writing it is ignored.
"""

from __future__ import annotations

import contextlib
import os

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
