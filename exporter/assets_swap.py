"""A Markdown document and its images (``export --images files``) written together: both, or
neither. The images were written into ``<name>.assets/`` before the document, so a document
write that failed (a full disk, a name too long) left the old document linking images that
were overwritten by another session's or deleted, and a first export left an orphan folder.

The images are written into a staging folder first, inside the images' folder (the same file
system, so moving them in cannot run out of space), then the document is written atomically,
and only then are the images moved into place and the old ones it no longer links removed.
Any failure before that removes the staging folder (and the images' folder, when this export
made it) and leaves the old document and its images as they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from exporter.fsutil import create_temp_folder, write_target
from exporter.markdown_images import _OURS as OUR_IMAGE_NAMES
from exporter.markdown_images import assets_folder, write_assets

__all__ = ["ImagesNotWritten", "StagedImages", "images_folder", "stage_images"]


class ImagesNotWritten(Exception):
    """The images' folder cannot take the images: why, said of the folder."""


def images_folder(document: str | os.PathLike[str]) -> Path:
    """Where the images of ``document`` go: beside the file the write replaces (a symbolic
    link's target) and named after it, as the document links them relative to its own
    folder: ``-o link.md`` -> ``real/doc.md`` wrote the images beside the link, where the
    document's links did not lead."""
    return assets_folder(write_target(document))


@dataclass
class StagedImages:
    """Images written into ``staging``, to be moved into ``folder`` once the document that
    links them is written (:meth:`commit`), or removed with it (:meth:`discard`)."""

    folder: Path
    staging: Path | None
    names: frozenset[str]
    made_folder: bool  # this export made ``folder``: a failure removes it again

    def discard(self) -> None:
        """Leave everything as it was before the export: the staged images go, and the
        images' folder when this export made it."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
        if self.made_folder:
            with contextlib.suppress(OSError):
                self.folder.rmdir()  # only when empty: another writer's files stay

    def commit(self) -> None:
        """The staged images into the folder, then the images an earlier export wrote there
        that the new document does not link removed (nothing else in it)."""
        if self.staging is not None:
            for name in sorted(self.names):
                os.replace(self.staging / name, self.folder / name)
            shutil.rmtree(self.staging, ignore_errors=True)
        if not self.folder.is_dir():
            return
        for old in self.folder.iterdir():
            if OUR_IMAGE_NAMES.fullmatch(old.name) and old.name not in self.names:
                with contextlib.suppress(OSError):
                    if old.is_file():
                        old.unlink()


def stage_images(folder: Path, files: dict[str, bytes]) -> StagedImages:
    """``files`` written into a staging folder inside ``folder`` (made when needed), to be
    committed or discarded once the document is written. Nothing is staged without images
    (the commit still removes an earlier export's). An ``OSError`` names what failed; a
    folder that is a link leading nowhere or a file is an :class:`ImagesNotWritten`."""
    if not files:
        return StagedImages(folder, None, frozenset(), made_folder=False)
    _refuse_a_dead_end(folder)
    made = False
    if not folder.is_dir():
        folder.mkdir()
        made = True
    staged = StagedImages(folder, None, frozenset(files), made_folder=made)
    try:
        staged.staging = create_temp_folder(folder, "images")
        write_assets(staged.staging, files)
        _refuse_folders_in_the_way(folder, files)
    except BaseException:
        staged.discard()
        raise
    return staged


def _refuse_a_dead_end(folder: Path) -> None:
    """A dangling link or a loop of links at the folder's name said as that: "cannot write
    page.assets: File exists" told nothing; so is a file there."""
    if not os.path.lexists(folder) or folder.is_dir():
        return
    if folder.is_symlink():
        try:
            os.stat(folder)
        except OSError as error:
            why = "a loop of links"
            if isinstance(error, FileNotFoundError):
                why = f"{os.readlink(folder)} does not exist"
            raise ImagesNotWritten(
                f"it is a symbolic link that leads nowhere ({why}); remove it, or make it "
                "lead to a folder"
            ) from None
    raise ImagesNotWritten("it is a file, not a folder; remove it, or choose another -o")


def _refuse_folders_in_the_way(folder: Path, files: dict[str, bytes]) -> None:
    """An image's name taken by a folder: the move would fail after the document was
    written, which would then link what is not there."""
    for name in files:
        if (folder / name).is_dir() and not (folder / name).is_symlink():
            raise ImagesNotWritten(f"{name} in it is a folder, where an image goes")
