"""Images in the Markdown export (``export --format md --images``): by default a note says
what an image was; ``inline`` writes it into the document as a ``data:`` URI (VS Code,
Obsidian and Typora show it; GitHub does not), ``files`` writes it beside the document,
in ``<name>.assets/``, and links it there (shown everywhere the folder goes along).

Only the formats a page shows are written (PNG, JPEG, GIF, WebP whose bytes say so, whole):
an SVG could carry script, and a block that is not what it says, or is cut, stays a note.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from exporter.fsutil import atomic_write_bytes
from exporter.render.markup import image_bytes, whole_image_type

__all__ = [
    "IMAGE_MODES",
    "ImageSink",
    "assets_folder",
    "read_image",
    "remove_earlier_images",
    "write_assets",
]

IMAGE_MODES = ("note", "inline", "files")
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
#: The names this module gives the files it writes (so a later export removes only its own).
_OURS = re.compile(r"image-\d{3,}\.(?:png|jpg|gif|webp)")


@dataclass
class ImageSink:
    """Where the document's images go (``mode``: inline or files); ``files`` collects
    name -> bytes for :func:`write_assets`, each distinct image once."""

    mode: str
    folder: str = ""  # files: the folder's name, beside the document
    files: dict[str, bytes] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)  # sha256 -> name

    def said(self, data: str, mime: str, raw: bytes, alt: str) -> str:
        """The Markdown image for base64 ``data`` that :func:`read_image` found a whole
        ``mime`` picture (``raw`` its bytes), ``alt`` its escaped description."""
        if self.mode == "inline":
            digits = "".join(data.split())  # a line break would end the link's destination
            return f"![{alt}](data:{mime};base64,{digits})"
        digest = hashlib.sha256(raw).hexdigest()
        name = self._names.get(digest)
        if name is None:
            extension = _EXTENSIONS[mime]  # the type its bytes say (a PNG labelled JPEG: .png)
            name = f"image-{len(self._names) + 1:03d}.{extension}"
            self._names[digest] = name
            self.files[name] = raw
        # the folder's name as the file system holds it: a name of bytes that are no UTF-8
        # (``-o $'img\xff.md'``) is in ``str`` as surrogates, which quote() cannot encode
        return f"![{alt}]({quote(os.fsencode(self.folder))}/{name})"


def read_image(data: Any) -> tuple[str, bytes] | None:
    """The type and bytes of an image block's base64 ``data`` when it is a picture a page
    shows (a whole PNG, JPEG, GIF or WebP: ``safe_image_src``'s test, read once), else
    None: the note says so, in every ``--images`` mode alike."""
    raw = image_bytes(data)
    mime = whole_image_type(raw) if raw is not None else None
    return (mime, raw) if mime is not None and raw is not None else None


def assets_folder(document: Path) -> Path:
    """The folder beside ``document`` that its images go to: ``notes.md`` -> ``notes.assets``."""
    return document.with_name(f"{document.stem}.assets")


def write_assets(folder: Path, files: dict[str, bytes]) -> None:
    """The images into ``folder`` (made when needed); the images an earlier export wrote
    there that this one does not are removed, nothing else in it."""
    if files:
        folder.mkdir(parents=True, exist_ok=True)
    for name, raw in files.items():
        atomic_write_bytes(folder / name, raw)
    remove_earlier_images(folder, files)


def remove_earlier_images(folder: Path, keep: Collection[str]) -> None:
    """The images an earlier export wrote into ``folder`` (the names :class:`ImageSink`
    gives) that ``keep`` does not name, removed; nothing else in it is touched, so a
    folder the user shares with other files keeps them. One that cannot be removed stays
    (the new document does not link it: a stale file, not a broken export)."""
    if not folder.is_dir():
        return
    for old in folder.iterdir():
        if _OURS.fullmatch(old.name) and old.name not in keep:
            with contextlib.suppress(OSError):
                if old.is_file():
                    old.unlink()
