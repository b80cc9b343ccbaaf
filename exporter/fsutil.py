"""Atomic file writes (a reader never sees half a page, a failed write leaves no debris), and
the user's own cache and config folders."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

#: The temporary files of the atomic writes under way in this process.
WRITING: set[str] = set()

#: Which file stands at a path and as written when (device, inode, size, modification time
#: in ns), as :func:`file_state` tells; None: no file.
FileState = tuple[int, int, int, int]
#: ``atomic_open``'s default: the rename replaces whatever stands at the path.
_ANY_FILE: Any = object()


class WrittenMeanwhile(FileExistsError):
    """An atomic write told to replace only the file it was shown (``only_over``) found
    another there (another run's, another program's): that one was kept, nothing written."""


def file_state(path: str | os.PathLike[str]) -> FileState | None:
    """Which file stands at ``path`` itself (a link as a link), and as written when: another
    run's rename gives another inode, a writer in place another size or time."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str],
    mode: str = "wb",
    *,
    permissions: int | None = None,
    durable: bool = False,
    hold_from_replace: HeldSignals | None = None,
    only_over: FileState | None = _ANY_FILE,
    **kwargs: Any,
) -> Iterator[IO[Any]]:
    """Write a temp file in the same folder, then rename it over ``path`` (only on success).

    A symlink is written through (the link stays, its file is replaced); a device, FIFO or
    socket (``-o /dev/null``, ``-o >(gzip > x)``) is written as it is, not atomically, and
    so is one of the process's own streams (``-o /dev/stdout >> build.log``): through the
    descriptor the shell opened, as ``-o -`` writes.

    ``permissions`` are set before the rename (0o600 for files holding secrets, so they are
    never readable by others); by default a file keeps the mode it had, and a new one gets
    what the user's umask gives (a session page may hold secrets: a umask of 077 must keep
    it private); a file replaced keeps its group too, and its owner when root writes it
    (:func:`keep_owner_and_mode`). ``durable`` fsyncs the data first. ``hold_from_replace``
    starts holding signals just before the rename, for a caller whose next step must go
    with the file (the caller releases it, whatever happens). ``only_over``: the file
    (``file_state`` of ``write_target(path)``, taken when the caller judged it) the write
    may replace, None for none: a file written there since is kept and
    :class:`WrittenMeanwhile` raised (a new file is made by a hard link, which fails when
    one appeared, where a rename would replace it; a file still there is compared just
    before the rename).
    """
    stream = own_stream(path)
    if stream is not None:  # reopened, `>> build.log` was truncated, and renamed over, lost
        with _through_descriptor(stream, path, mode, **kwargs) as out:
            yield out
        return
    if is_special_file(path):  # renaming a file over it would replace the device or pipe
        try:
            with open(path, mode, **kwargs) as stream:
                yield stream
        except OSError as error:  # `-o /dev/full`: say where, as for a file
            raise _saying_where(error, path) from None
        return
    target = write_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    # a Ctrl-C between the temp file's creation and the try below left it behind: held
    # until the try, where its cleanup is, acts on it
    held = HeldSignals().hold()
    try:
        handle, temp_name = create_temp_file(folder, target.name)
    except OSError as error:  # name the file asked for, not our temp file's random name
        held.release()
        raise OSError(error.errno, _why_no_temp(error, folder, target), str(target)) from None
    except BaseException:
        held.release()
        raise
    WRITING.add(temp_name)
    try:
        with os.fdopen(handle, mode, **kwargs) as stream:
            held.release()
            yield stream
            stream.flush()
            # (by the open file, never by its name: the folder may be another user's, who
            # could put a link to /etc/shadow there under that name for root to chown)
            keep_owner_and_mode(stream.fileno(), stat_or_none(target), permissions)
            if durable:
                os.fsync(stream.fileno())
        if hold_from_replace is not None:  # the caller's next step goes with the file
            hold_from_replace.hold()
        if only_over is _ANY_FILE:
            os.replace(temp_name, target)
        else:
            _put_only_over(temp_name, target, only_over)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        held.release()  # (fdopen failed: still held; a signal held meanwhile acts now)
        if isinstance(error, OSError):
            raise _saying_where(error, target, temp_name) from None
        raise
    finally:
        WRITING.discard(temp_name)


@contextlib.contextmanager
def _through_descriptor(
    descriptor: int, path: str | os.PathLike[str], mode: str, **kwargs: Any
) -> Iterator[IO[Any]]:
    """A stream on a copy of ``descriptor``: its offset and flags are the shell's (append
    mode appends), and closing it leaves the process's own open."""
    for python_stream in (sys.stdout, sys.stderr):  # what was printed before goes first
        with contextlib.suppress(Exception):
            python_stream.flush()
    try:
        with os.fdopen(os.dup(descriptor), mode, **kwargs) as stream:
            yield stream
    except OSError as error:
        raise _saying_where(error, path) from None


def stat_or_none(path: str | os.PathLike[str]) -> os.stat_result | None:
    """The file at ``path`` (through links) as it is now; None when there is none."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def keep_owner_and_mode(
    descriptor: int, old: os.stat_result | None, permissions: int | None = None
) -> None:
    """The open file ``descriptor``, about to be renamed over the file ``old`` was, given
    that one's group (a page shared with www-data by its group became unreadable to it)
    and, when root writes it, its owner (`sudo pi-session export` left a user's page
    root's); then ``permissions``, else the old file's mode, else what a plain open() gives
    under the umask. By descriptor, never by name: a name in another user's folder may be
    swapped for a link to any file between our write and our chown. Owner and group are
    best effort: a user may give a file only a group they are in, and some file systems
    keep no owners."""
    if old is not None and hasattr(os, "fchown"):
        owner = old.st_uid if hasattr(os, "geteuid") and os.geteuid() == 0 else -1
        with contextlib.suppress(OSError):  # (before the chmod: a chown clears setgid)
            os.fchown(descriptor, owner, old.st_gid)
    if permissions is None:
        permissions = stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_umask()
    os.fchmod(descriptor, permissions)


def _put_only_over(temp_name: str, target: Path, only_over: FileState | None) -> None:
    """The finished temp file as ``target`` where ``only_over`` stands there, or nothing
    does; else :class:`WrittenMeanwhile`, ``target`` untouched and the temp file left for
    the caller's cleanup."""
    now = file_state(target)
    if now is not None and now != only_over:
        raise WrittenMeanwhile(errno.EEXIST, "written by another program meanwhile", str(target))
    if now is not None:
        os.replace(temp_name, target)  # (compared a moment ago: as near as a rename allows)
        return
    try:
        os.link(temp_name, target)
    except FileExistsError:
        raise WrittenMeanwhile(
            errno.EEXIST, "written by another program meanwhile", str(target)
        ) from None
    except OSError:  # no hard links on this file system (FAT, some network ones)
        _copy_into_a_new_file(temp_name, target)
    os.unlink(temp_name)


def _copy_into_a_new_file(temp_name: str, target: Path) -> None:
    """The temp file's bytes into ``target``, made here exclusively (a reader may see it
    half written; another file is still never replaced)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    mode = stat.S_IMODE(os.stat(temp_name).st_mode)
    try:
        handle = os.open(target, flags, mode)
    except FileExistsError:
        raise WrittenMeanwhile(
            errno.EEXIST, "written by another program meanwhile", str(target)
        ) from None
    try:
        if hasattr(os, "fchmod"):  # os.open's mode passes through the umask
            with contextlib.suppress(OSError):
                os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as out, open(temp_name, "rb") as source:
            shutil.copyfileobj(source, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(target)  # ours, half written
        raise


#: The signals that stop a command: held back across a step that must not be cut in two.
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class HeldSignals:
    """Ctrl-C, SIGTERM and SIGHUP held back from :meth:`hold` to :meth:`release`, then acted
    on as they would have been (once each): a step cut in two by one (a document written and
    its images not yet moved in, a temp file made and not yet known to its cleanup) left
    things that no later run fixed. Only the main thread can set handlers: elsewhere, and
    for a signal whose handler was not set from Python, nothing is held."""

    def __init__(self, signums: tuple[int, ...] = STOP_SIGNALS) -> None:
        self._signums = signums
        self._previous: dict[int, Any] = {}
        self._came: list[int] = []

    def hold(self) -> HeldSignals:
        """Start holding (again a no-op while held)."""
        if self._previous or threading.current_thread() is not threading.main_thread():
            return self
        for signum in self._signums:
            handler = signal.getsignal(signum)
            if handler is None or handler == signal.SIG_IGN:  # (ignored: nothing to hold)
                continue
            try:
                self._previous[signum] = signal.signal(signum, self._note)
            except (OSError, ValueError):  # (a signal this system does not let us catch)
                continue
        return self

    def _note(self, signum: int, _frame: object) -> None:
        if signum not in self._came:
            self._came.append(signum)

    def release(self) -> None:
        """The handlers as they were, then each signal that came meanwhile delivered again:
        its handler runs here (a KeyboardInterrupt is raised from this call), or the
        system's default ends the process."""
        previous, self._previous = self._previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        came, self._came = self._came, []
        for signum in came:
            if signum in previous and previous[signum] != signal.SIG_IGN:
                signal.raise_signal(signum)

    def __enter__(self) -> HeldSignals:
        return self.hold()

    def __exit__(self, *_exc: object) -> None:
        self.release()


#: What ends the name of every temporary file or folder made here: the sweeps of a site's
#: folder and the publish cache's copy (``.*.tmp``) know them by it and the leading dot.
TEMP_SUFFIX = ".tmp"
#: Random bytes in a temporary name, as hex (8 characters, as many as ``tempfile`` gives).
_RANDOM_HEX_BYTES = 4
#: The longest file name when the file system does not say (ext4, XFS, Btrfs, tmpfs).
DEFAULT_NAME_MAX = 255


def name_max(folder: str | os.PathLike[str]) -> int:
    """The longest name (in bytes) a file in ``folder`` may have: 255 on the usual file
    systems, 143 on an encrypted home (eCryptfs)."""
    try:
        value = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such folder; Windows has no pathconf
        return DEFAULT_NAME_MAX
    return value if value > 0 else DEFAULT_NAME_MAX


def temp_prefix(folder: str | os.PathLike[str], name: str) -> str:
    """``.<name>.`` for a temporary file beside ``name``, the name cut short so that the
    whole temporary name (random characters and ``.tmp`` after it) stays within the
    folder's longest name: a legal name of 242 to 255 bytes was refused as "File name too
    long" because of the 14 bytes our temporary name adds to it."""
    budget = max(0, name_max(folder) - 2 - 2 * _RANDOM_HEX_BYTES - len(TEMP_SUFFIX))
    kept = name[:budget]  # (a character is one byte or more)
    while len(os.fsencode(kept)) > budget:  # whole characters: no UTF-8 cut in two
        kept = kept[:-1]
    return f".{kept}."


def _temp_names(folder: str | os.PathLike[str], name: str) -> Iterator[str]:
    """Paths for a temporary file or folder beside ``name`` in ``folder``, each with other
    random characters. Relative when ``folder`` is: ``tempfile`` made them absolute, too
    long to open in a working folder deeper than PATH_MAX."""
    prefix = temp_prefix(folder, name)
    for _ in range(100):
        yield os.path.join(folder, f"{prefix}{secrets.token_hex(_RANDOM_HEX_BYTES)}{TEMP_SUFFIX}")


def create_temp_file(folder: str | os.PathLike[str], name: str) -> tuple[int, str]:
    """A new file, readable by the user only, for a write that will replace ``name`` in
    ``folder``: its open descriptor and path."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for temp_name in _temp_names(folder, name):
        try:
            return os.open(temp_name, flags, 0o600), temp_name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.fspath(folder))


def temp_names_of(folder: str | os.PathLike[str], name: str) -> re.Pattern[str]:
    """What the names of the temporary files and folders made for ``name`` in ``folder``
    match (exactly: a sweep of what a stopped process left removes only those)."""
    random = f"[0-9a-f]{{{2 * _RANDOM_HEX_BYTES}}}"
    return re.compile(re.escape(temp_prefix(folder, name)) + random + re.escape(TEMP_SUFFIX))


def create_temp_folder(folder: str | os.PathLike[str], name: str) -> Path:
    """A new empty folder, the user's only, for what will become ``name`` in ``folder``."""
    for temp_name in _temp_names(folder, name):
        try:
            os.mkdir(temp_name, 0o700)
        except FileExistsError:
            continue
        return Path(temp_name)
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.fspath(folder))


def _why_no_temp(error: OSError, folder: Path, target: Path) -> str:
    """Why the file could not be written when its temporary file could not be made, said
    of the file asked for: in ``/proc`` a file that is there "does not exist" (no file may
    be made beside it), and "File name too long" of a short name meant its folder's path."""
    reason = error.strerror or str(error)
    if error.errno == errno.ENOENT and not folder.is_absolute() and _current_folder_gone():
        return "the current folder no longer exists (deleted?); name a file in one that does"
    if error.errno == errno.ENOENT and folder.is_dir():
        return f"the folder {folder} does not allow creating files"
    if error.errno == errno.ENAMETOOLONG and len(os.fsencode(target.name)) <= name_max(folder):
        return f"the path of its folder is too long ({reason}); use a shorter path"
    return reason


def _current_folder_gone() -> bool:
    """Whether the current folder was deleted under the shell (its "." still reads as a
    folder, but nothing can be made in it)."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def remove_unfinished() -> None:
    """Remove the temporary files of the atomic writes under way: for a process about to
    end at once (a batch worker told to stop), which runs no ``finally``."""
    for temp_name in tuple(WRITING):
        with contextlib.suppress(OSError):
            os.unlink(temp_name)


#: What a full disk says (a quota's too): "make room" cures it.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def _saying_where(
    error: OSError, path: str | os.PathLike[str], temp_name: str | None = None
) -> OSError:
    """``error`` naming ``path`` when it names no file (a full disk says "File too large"
    or "No space left on device" without saying where) or names our temporary file
    ``temp_name`` (its chmod, or its rename over ``path``: "Device or resource busy" of a
    bind-mounted file was said of ``.p.html.d371646e.tmp``, a name the user never gave)."""
    if not error.errno:
        return error
    if error.filename and (temp_name is None or os.fspath(error.filename) != temp_name):
        return error
    return OSError(error.errno, error.strerror, os.fspath(path))


def is_special_file(path: str | os.PathLike[str]) -> bool:
    """``path`` (through symlinks) is there and neither a regular file nor a folder, or is
    one of the process's own streams (:func:`own_stream`): written as it is, not replaced."""
    if own_stream(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def own_stream(path: str | os.PathLike[str]) -> int | None:
    """The open descriptor ``path`` names when it is one of this process's own streams
    (``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``, ``/proc/self/fd/N``, or a link to
    one), else None. What the shell opened there is written through that descriptor, as
    ``-o -`` is: opened again by its name, ``>> build.log`` was truncated, and a file put in
    its place by a rename (the previous log lost)."""
    try:
        here = os.path.abspath(os.fspath(path))
        ours = {os.path.realpath("/proc/self/fd"), os.path.realpath("/proc/thread-self/fd")}
    except (TypeError, ValueError):
        return None
    for _ in range(40):  # (the kernel's limit on a chain of links)
        folder, name = os.path.split(here)
        try:
            if re.fullmatch("[0-9]+", name) and os.path.realpath(folder) in ours:
                descriptor = int(name)
                os.fstat(descriptor)  # (a closed one: a path like any other)
                if _read_only(descriptor):  # (`1</dev/null`: opened by name, as before)
                    return None
                return descriptor
            if not os.path.islink(here):
                return None
            here = os.path.normpath(os.path.join(folder, os.fsdecode(os.readlink(here))))
        except (OSError, ValueError):
            return None
    return None


def _read_only(descriptor: int) -> bool:
    """``descriptor`` is open for reading only (where the system can tell)."""
    try:
        import fcntl
    except ImportError:
        return False
    return fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY


def file_in_the_way(folder: str | os.PathLike[str]) -> Path | None:
    """The file (not a folder) standing where ``folder`` or one of its parents should be:
    ``-o notes/x.html`` with a file ``notes`` is said as that, not as a folder that "does
    not exist". None when there is none (the folder is missing, or is one)."""
    place = Path(folder)
    for step in (place, *place.parents):
        try:
            if step.exists():
                return None if step.is_dir() else step
        except OSError:
            return None
    return None


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: a symlink's target, so the link stays a link
    (a dangling link's target is created). A loop of links is an error (ELOOP), as for a
    shell's ``>``: resolving it by hand gave back the link, which the rename replaced."""
    if not os.path.islink(path):
        return Path(path)
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(path))
    except OSError as error:
        raise OSError(error.errno, error.strerror, os.fspath(path)) from None


def linked_file(path: str | os.PathLike[str]) -> Path | None:
    """The file a write to ``path`` replaces when ``path`` is a symbolic link (its name may
    say another kind of file than the link's: ``page.html`` -> ``notes.txt``); None for
    anything else, a loop of links, and a process's own streams (``/dev/stdout``,
    ``/dev/fd/1``: what the shell opened, written as it is)."""
    if not os.path.islink(path):
        return None
    if _through_a_stream(path):
        return None
    try:
        return write_target(path)
    except OSError:  # a loop: the write says so, naming the link
        return None


def _through_a_stream(path: str | os.PathLike[str]) -> bool:
    """A chain of links that passes a process's own streams (``/proc/…/fd/N``,
    ``/dev/stdout``, ``/dev/fd/N``): the file at its end is wherever the shell sent them
    (``page.html`` -> ``/dev/stdout`` -> ``out.txt``), written as it is."""
    here = os.path.abspath(path)
    for _ in range(40):  # (the kernel's limit on a chain)
        try:
            if not os.path.islink(here):
                return False
            through = os.fsdecode(os.readlink(here))
        except (OSError, ValueError):
            return False
        here = os.path.normpath(os.path.join(os.path.dirname(here), through))
        if here.startswith(("/proc/", "/dev/")):
            return True
    return False


def _umask() -> int:
    """The process umask, read where the system shows it (Linux); elsewhere reading it
    means setting it for a moment, when a file another thread makes would get 022."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    hold_from_replace: HeldSignals | None = None,
    only_over: FileState | None = _ANY_FILE,
) -> Path:
    with atomic_open(path, "wb", hold_from_replace=hold_from_replace, only_over=only_over) as out:
        out.write(data)
    return Path(path)


def atomic_write_text(
    path: str | os.PathLike[str],
    text: str,
    *,
    hold_from_replace: HeldSignals | None = None,
    only_over: FileState | None = _ANY_FILE,
) -> Path:
    data = text.encode("utf-8", errors="surrogateescape")
    return atomic_write_bytes(path, data, hold_from_replace=hold_from_replace, only_over=only_over)


def user_cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/pi-session-export/...`` (else ``~/.cache/...``)."""
    return xdg_dir("XDG_CACHE_HOME", ".cache", *parts)


def private_cache_dir(name: str) -> Path | None:
    """``user_cache_dir(name)``, made if needed, both it and its parent 0700 and the user's;
    None when it cannot be made or is not private (its contents are read back: a folder
    others may write in could feed them anything)."""
    if not _home_exists():  # HOME=/nonexistent: no tree of folders made under it
        return None
    folder = user_cache_dir(name)
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
    return folder


def private_user_cache_dir(*parts: str) -> Path:
    """``user_cache_dir(*parts)``, made if needed, it and our folders above it readable by
    the user only (0700): the publish caches hold a private dataset's sessions and pages,
    which other users of the machine must not read. Folders an older version made 0755
    are taken back; one that is not the user's is left as it is (best effort: a folder
    that cannot be made is said by its first write)."""
    folder = user_cache_dir(*parts)
    ours = [folder, *list(folder.parents)[: len(parts)]]  # up to pi-session-export/
    with contextlib.suppress(OSError):
        for each in reversed(ours):
            each.mkdir(mode=0o700, exist_ok=True, parents=each == ours[-1])
            info = os.lstat(each)
            mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
            if stat.S_ISDIR(info.st_mode) and mine and stat.S_IMODE(info.st_mode) & 0o077:
                os.chmod(each, 0o700)
    return folder


def _home_exists() -> bool:
    """The cache goes under ``$XDG_CACHE_HOME`` when that is set, else under the home."""
    if os.path.isabs((os.environ.get("XDG_CACHE_HOME") or "").strip()):
        return True
    try:
        return home().is_dir()
    except OSError:  # no HOME and no password entry
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
    """A folder that is not ours, or that others may write in, is not used (as Jinja's own
    temporary cache checks): the template cache is unpickled, so its writer could run code
    in every export."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def home() -> Path:
    """The user's home folder; an OSError that says why when there is none to tell (no
    ``HOME`` and no password entry: ``Path.home()`` raised a RuntimeError, a traceback).
    An empty ``HOME`` (``HOME= pi-session …``) counts as unset: Python took it for "/", and
    the cache was made in /.cache/pi-session-export."""
    if os.environ.get("HOME") == "":
        try:
            import pwd

            return Path(pwd.getpwuid(os.getuid()).pw_dir)
        except (ImportError, KeyError):  # no pwd module (Windows), no password entry
            raise OSError(
                errno.ENOENT,
                "cannot tell the home folder (HOME is empty and this user has no password "
                "entry); set HOME",
            ) from None
    try:
        return Path.home()
    except RuntimeError:
        raise OSError(
            errno.ENOENT,
            "cannot tell the home folder (HOME is not set and this user has no password "
            "entry); set HOME",
        ) from None


def expand_user(path: str | os.PathLike[str]) -> Path:
    """``~/x`` and ``~alice/x`` expanded; left as written when they cannot be (``~typo/x``,
    no home), so the path is then simply not found. ``~`` is :func:`home` (an empty
    ``HOME`` counts as unset: ``os.path.expanduser`` made ``~/x`` ``/x``)."""
    path = os.fspath(path)
    if path == "~" or path.startswith(("~/", "~" + os.sep)):
        try:
            return home() / path[2:] if len(path) > 1 else home()
        except OSError:
            return Path(path)
    return Path(os.path.expanduser(path))


def xdg_dir(variable: str, default: str, *parts: str, env: Mapping[str, str] = os.environ) -> Path:
    """``$variable/pi-session-export/...``, else ``~/<default>/...``; relative values of the
    variable are ignored, as the XDG spec says."""
    value = (env.get(variable) or "").strip()
    base = Path(value) if value and os.path.isabs(value) else home() / default
    return base.joinpath("pi-session-export", *parts)


#: The names Windows keeps for devices, whatever follows a dot (``CON.html``, ``nul.jsonl``).
_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul"]
    + [f"{port}{n}" for port in ("com", "lpt") for n in [*"123456789", "¹", "²", "³"]]
)


def not_a_device_name(stem: str) -> str:
    """``stem`` with ``_`` after its first part when Windows would take the file for a
    device (``lpt9.x`` -> ``lpt9_.x``): a site or a dataset made here is copied and checked out
    there."""
    head, dot, rest = stem.partition(".")
    return f"{head}_{dot}{rest}" if head.lower() in _DEVICE_NAMES else stem


def hashed_prefix(handle: IO[bytes], size: int, sha256: bytes) -> bytes | None:
    """The next ``size`` bytes of ``handle`` when they are all there and hash to ``sha256``,
    else None: a file Pi only appended to since it was read still starts with the bytes
    read (its lines after them are left out); one rewritten does not."""
    data = handle.read(size)
    return data if len(data) == size and hashlib.sha256(data).digest() == sha256 else None
