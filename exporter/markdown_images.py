"""Images in the Markdown export (``export --format md --images``): by default a note says
what an image was; ``inline`` writes it into the document as a ``data:`` URI (VS Code,
Obsidian and Typora show it; GitHub does not), ``files`` writes it beside the document,
in ``<name>.assets/``, and links it there (shown everywhere the folder goes along).

Only the formats a page shows are written (PNG, JPEG, GIF, WebP whose bytes say so): an SVG
could carry script, and a block that is not what it says stays a note.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from exporter.fsutil import atomic_write_bytes
from exporter.render.markup import safe_image_src

__all__ = ["IMAGE_MODES", "ImageSink", "assets_folder", "write_assets"]

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

    def said(self, block: dict[str, Any], alt: str) -> str | None:
        """The Markdown image for ``block`` (``alt`` its escaped description), or None when
        it is not an image a page would show (then the note stays)."""
        src = safe_image_src(block.get("data"))
        if src is None:
            return None
        mime, data = src[5:].split(";base64,", 1)
        data = "".join(data.split())  # a line break would end the link's destination
        if self.mode == "inline":
            return f"![{alt}](data:{mime};base64,{data})"
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return None
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
    if folder.is_dir():
        for old in folder.iterdir():
            if _OURS.fullmatch(old.name) and old.name not in files and old.is_file():
                old.unlink()
