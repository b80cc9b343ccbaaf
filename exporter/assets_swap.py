"""A Markdown document and its images (``export --images files``) written together: both, or
neither. The images were written into ``<name>.assets/`` before the document, so a document
write that failed (a full disk, a name too long) left the old document linking images that
were overwritten by another session's or deleted, and a first export left an orphan folder.

The images are written into a staging folder first, inside the images' folder (the same file
system, so moving them in cannot run out of space), then the document is written atomically,
and only then are the images moved into place and the old ones it no longer links removed.
Any failure before that removes the staging folder (and the images' folder, when this export
made it) and leaves the old document and its images as they were.

A signal (Ctrl-C, SIGTERM) is held back from the document's rename until the images are moved
in (the caller's :class:`~exporter.fsutil.HeldSignals`), and while a staging folder is removed:
Ctrl-C there left a new document linking the old export's images, and a removal cut short
said "Bad file descriptor" instead of "interrupted". A staging folder that a killed export
left (SIGKILL, a second Ctrl-C) is removed by the next export to the same folder; one that
another export still holds (a lock on it) is left alone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from exporter.fsutil import (
    HeldSignals,
    create_temp_folder,
    keep_owner_and_mode,
    temp_names_of,
    write_target,
)
from exporter.markdown_images import assets_folder, remove_earlier_images, write_assets

__all__ = ["ImagesNotWritten", "StagedImages", "images_folder", "stage_images"]

#: What the staging folder is named after (``.images.<random>.tmp`` in the images' folder).
STAGING_NAME = "images"


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
    lock: int | None = None  # an open descriptor of ``staging``, locked: it is in use

    def discard(self) -> None:
        """Leave everything as it was before the export: the staged images go, and the
        images' folder when this export made it."""
        with HeldSignals():  # (a removal cut short raised "Bad file descriptor")
            if self.staging is not None:
                shutil.rmtree(self.staging, ignore_errors=True)
            self._unlock()
            if self.made_folder:
                with contextlib.suppress(OSError):
                    self.folder.rmdir()  # only when empty: another writer's files stay

    def commit(self) -> None:
        """The staged images into the folder, each keeping the mode and group of the image it
        replaces (as the document does: a shared image became the user's only, under umask
        077), then the images an earlier export wrote there that the new document does not
        link removed (nothing else in it)."""
        with HeldSignals():
            try:
                if self.staging is not None:
                    for name in sorted(self.names):
                        _like_the_old(self.staging / name, self.folder / name)
                        os.replace(self.staging / name, self.folder / name)
                    shutil.rmtree(self.staging, ignore_errors=True)
            finally:
                self._unlock()
            remove_earlier_images(self.folder, self.names)

    def _unlock(self) -> None:
        lock, self.lock = self.lock, None
        if lock is not None:
            with contextlib.suppress(OSError):
                os.close(lock)


def _like_the_old(staged: Path, old: Path) -> None:
    """``staged`` given the mode and group (owner too, as root) of the image it replaces at
    ``old``; a new image keeps what the umask gave it. Only the file this process staged
    (opened without following a link, ours, one name): the staging folder sits in the
    user's folder, where a link to any file could take its place before root's chown.
    Best effort: the image counts more than its mode."""
    try:
        info = os.lstat(old)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode):  # (a link there is replaced as a link is)
        return
    with contextlib.suppress(OSError):
        descriptor = os.open(staged, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            mine = os.fstat(descriptor)
            ours = not hasattr(os, "geteuid") or mine.st_uid == os.geteuid()
            if stat.S_ISREG(mine.st_mode) and mine.st_nlink == 1 and ours:
                keep_owner_and_mode(descriptor, info)
        finally:
            os.close(descriptor)


def stage_images(folder: Path, files: dict[str, bytes]) -> StagedImages:
    """``files`` written into a staging folder inside ``folder`` (made when needed), to be
    committed or discarded once the document is written. Nothing is staged without images
    (the commit still removes an earlier export's). An ``OSError`` names what failed; a
    folder that is a link leading nowhere or a file is an :class:`ImagesNotWritten`."""
    sweep_stale_staging(folder)
    if not files:
        return StagedImages(folder, None, frozenset(), made_folder=False)
    _refuse_a_dead_end(folder)
    made = False
    if not folder.is_dir():
        folder.mkdir()
        made = True
    staged = StagedImages(folder, None, frozenset(files), made_folder=made)
    try:
        with HeldSignals():  # made and locked, or not made: never a folder no lock guards
            staged.staging = create_temp_folder(folder, STAGING_NAME)
            staged.lock = _locked(staged.staging)
        write_assets(staged.staging, files)
        _refuse_folders_in_the_way(folder, files)
    except BaseException:
        staged.discard()
        raise
    return staged


def sweep_stale_staging(folder: Path) -> None:
    """Remove the staging folders (``.images.<random>.tmp``, exactly) that an export stopped
    at once (SIGKILL, a second Ctrl-C) left in ``folder``: no later run removed them, and
    they held a whole export's images. One another export still works in is locked, and
    stays. Nothing else in the folder is touched; a folder that cannot be read is left."""
    try:
        names = os.listdir(folder)
    except OSError:  # not there yet, not a folder, not readable: nothing of ours to sweep
        return
    ours = temp_names_of(folder, STAGING_NAME)
    for name in names:
        if not ours.fullmatch(name):
            continue
        path = folder / name
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):  # a link or a file of that name
                continue
        except OSError:
            continue
        lock = _locked(path)
        if lock is None:  # in use by another export (or no lock to tell): left alone
            continue
        try:
            with HeldSignals():
                shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(lock)


def _locked(staging: Path) -> int | None:
    """An open descriptor of the folder ``staging`` holding an exclusive lock on it (the
    system drops it when the process ends, however it ends), or None when another process
    holds it, or locks are not to be had (then nothing is swept)."""
    try:
        import fcntl
    except ImportError:  # (Windows)
        return None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        handle = os.open(staging, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return None
    return handle


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
