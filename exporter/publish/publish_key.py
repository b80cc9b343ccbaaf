"""The key that keeps the dataset's change-detection marks from confirming guesses.

``publish`` records per session what it published from (the source file's hash) and under
which redaction settings (the policy key, which covers ``--secret`` values, environment
secrets and the user's name and home). Published as they are, both let anyone who can read
the dataset test a guess offline: rebuild the original from the redacted copy with a guessed
password, hash it, compare. So the dataset only ever holds HMACs of them under a random key
that never leaves this machine: ``$XDG_CONFIG_HOME/pi-session-export/publish.key`` (mode 0600),
or ``PI_SESSION_PUBLISH_KEY`` where the machine is new every time (CI). Another machine, with
another key, re-checks every session once; if its copies come out the same, nothing is
uploaded but the manifest.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from exporter.fsutil import file_in_the_way, xdg_dir

__all__ = ["KEY_ENV", "PublishKey", "key_file", "load_publish_key"]

KEY_ENV = "PI_SESSION_PUBLISH_KEY"
_MIN_ENV_KEY = 16  # characters: a shorter value would be guessable itself


class PublishKey:
    """HMAC-SHA256 marks under one local key; ``note`` says where the key came from when
    that needs saying (a key that will not survive this run)."""

    def __init__(self, key: bytes, note: str | None = None) -> None:
        self._key, self.note = key, note

    def mark(self, value: str) -> str:
        # (a lone surrogate, read from a damaged session's id, is marked as written)
        data = value.encode("utf-8", "surrogatepass")
        return hmac.new(self._key, data, hashlib.sha256).hexdigest()


def key_file(environ: Mapping[str, str] = os.environ) -> Path:
    return xdg_dir("XDG_CONFIG_HOME", ".config", "publish.key", env=environ)


def load_publish_key(environ: Mapping[str, str] = os.environ, *, create: bool = True) -> PublishKey:
    """The key from the environment, else the key file (created on first use; with
    ``create=False``, as a dry run asks, a missing one is a throw-away key for this run)."""
    from_env = (environ.get(KEY_ENV) or "").strip()
    if from_env:
        if len(from_env) < _MIN_ENV_KEY:
            raise ValueError(f"{KEY_ENV} is too short: use {_MIN_ENV_KEY}+ random characters")
        return PublishKey(from_env.encode("utf-8"))
    path = key_file(environ)
    moved = None
    if (blocker := file_in_the_way(path.parent)) is not None:  # a file where a folder goes
        # the file as judged, moved only while it is that one (another run may have moved
        # it and made the folder meanwhile: its key is then read, not moved aside)
        judged = _plain_file(blocker) if blocker == path.parent else None
        if judged is None or not create:
            note = _file_in_the_way_note(path, blocker, ours=judged is not None)
            return PublishKey(secrets.token_bytes(32), note)
        try:
            moved = _move_aside(blocker, judged)
        except OSError as error:
            return PublishKey(secrets.token_bytes(32), _throw_away_note(path, error))
    key = _key_from_file(path, create)
    if moved is not None:  # said once: the next run reads the new key
        said = f"{path.parent} was a file, not the folder of the publish key: moved aside as "
        said += moved.name
        made = f"a new key made in {path}; what earlier runs made is re-checked once"
        key.note = f"{said}, and {made}" if path.is_file() else f"{said}; {key.note}"
    return key


def _plain_file(path: Path) -> os.stat_result | None:
    """Its stat when ``path`` is a regular file itself (not a link to one, nor a device):
    ours to move aside."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found if stat.S_ISREG(found.st_mode) else None


def _file_in_the_way_note(path: Path, blocker: Path, *, ours: bool) -> str:
    """Why this run's key is a throw-away one when a file stands where a folder of the key's
    path goes: the folder of our own name (``ours``: a plain file there) is moved aside by
    the next run that is not a dry run; a file elsewhere (``~/.config`` itself) is the
    user's to move."""
    if ours:
        return (
            f"{blocker} is a file, not the folder of the publish key {path}: the next run "
            f"that is not a dry run moves it aside and makes a new key; this run uses a "
            "throw-away key"
        )
    return (
        f"could not keep a publish key in {path}: {blocker} is a file, not a folder; move "
        f"it away (or set XDG_CONFIG_HOME, or {KEY_ENV}); this run uses a throw-away key, "
        "so the next run re-checks every session"
    )


def _throw_away_note(path: Path, error: OSError) -> str:
    reason = error.strerror or type(error).__name__
    return (
        f"could not keep a publish key in {path} ({reason}): this run uses a throw-away "
        f"key, so the next run re-checks every session (set {KEY_ENV} to keep one)"
    )


def _key_from_file(path: Path, create: bool) -> PublishKey:
    """The key in the key file (made when missing, unless ``create`` is False), or a
    throw-away one whose note says why."""
    existed = path.exists()
    if not existed and not create:  # a throw-away key re-checks everything, as a new one would
        note = f"no publish key in {path} yet: a dry run creates none (the first real run will)"
        return PublishKey(secrets.token_bytes(32), note)
    try:
        data, replaced = _read_or_create(path, create)
        key = PublishKey(data)
        if replaced is not None:  # said once: the next run reads the new key
            aside, why = replaced
            key.note = (
                f"the publish key in {path} was damaged ({why}): moved aside as {aside.name} "
                "and replaced by a new key; what was made with the old one is re-checked once"
            )
        elif not existed:  # a new machine (or a CI runner): say why everything is re-checked
            key.note = (
                f"created a publish key in {path} (what redacted sites and datasets record "
                "of their sources is keyed by it): what was made with another key is "
                f"re-checked once (on CI, set {KEY_ENV} from a secret)"
            )
        elif os.name == "posix" and path.stat().st_mode & 0o077:
            key.note = f"{path} can be read by other users: `chmod 600 {path}`"
        return key
    except _DamagedKey as damaged:  # being written (or a dry run): not replaced by this run
        what, then = ("a folder, not a file", "moves it aside and makes a new key")
        if not damaged.folder:
            what, then = "shorter than 32 bytes", "replaces it"
        note = (
            f"the publish key in {path} is damaged ({what}): the next run that is not a "
            f"dry run {then} (unless another run is writing it just then); this run uses a "
            "throw-away key"
        )
        return PublishKey(secrets.token_bytes(32), note)
    except OSError as error:
        return PublishKey(secrets.token_bytes(32), _throw_away_note(path, error))


_SHORT = "shorter than a key: an earlier version stopped while writing it"


class _DamagedKey(OSError):
    """A key file shorter than a key, or a folder where the key file goes (made by hand or
    by a tool that took the name for a folder: every run then used a throw-away key);
    ``old``: not written within YOUNG_KEY seconds of now (no run is writing it), so it may
    be moved aside; ``stat``: the file (or folder) as read; ``why``: what is wrong, said."""

    def __init__(self, old: bool, stat: os.stat_result, folder: bool = False) -> None:
        self.why = "a folder, not a file" if folder else _SHORT
        super().__init__(0, f"the key file is damaged ({self.why})")
        self.old, self.stat, self.folder = old, stat, folder


#: A key file shorter than a key is waited for this many times, KEY_POLL seconds apart,
#: while it is younger than YOUNG_KEY seconds: another run may be writing it (a version that
#: wrote it in place, or a file system without hard links). An older one is damaged.
KEY_POLLS = 40
KEY_POLL = 0.05
YOUNG_KEY = 2.0


def _read_or_create(path: Path, create: bool = True) -> tuple[bytes, tuple[Path, str] | None]:
    """The key the file holds; made (whole, at once) when there is none. First runs started
    together on a new machine all read the one key that the first of them made. A damaged
    file (shorter than a key, not being written: left by a version up to 0.2.50 stopped
    between creating and writing it) is moved aside and replaced, else every run used a
    throw-away key and re-checked everything; so is a folder in its place. The second value
    is where it went and what was wrong with it."""
    replaced = None
    try:
        key = _read_key(path)
    except _DamagedKey as damaged:
        if not (create and damaged.old):
            raise
        aside = _move_aside(path, damaged.stat)
        replaced = None if aside is None else (aside, damaged.why)
        key = None if aside is not None else _read_key(path)  # None: replaced meanwhile
    if key is not None:
        return key, None
    path.parent.parent.mkdir(parents=True, exist_ok=True)
    path.parent.mkdir(mode=0o700, exist_ok=True)  # ours, as the caches: 0775 under umask 002
    key = secrets.token_hex(32).encode("ascii")
    if _made_whole(path, key + b"\n"):
        return key, replaced
    theirs = _read_key(path)  # another run made it just now: theirs
    if theirs is None:  # (and it is gone again)
        raise PermissionError(0, "another run is writing the key file")
    return theirs, None


def _move_aside(path: Path, read: os.stat_result) -> Path | None:
    """Rename the damaged key file (or the folder in its place) to an unused
    ``publish.key.damaged-<time>`` beside it (kept: it is the user's); None when it is no
    longer the one ``read`` (another run replaced it just now: theirs is kept)."""
    try:
        now = path.stat()
    except FileNotFoundError:
        return None
    if (now.st_ino, now.st_dev) != (read.st_ino, read.st_dev):
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 100):
        aside = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not aside.exists():
            os.replace(path, aside)
            return aside
    raise FileExistsError(0, f"too many {path.name}.damaged-* files")


def _read_key(path: Path) -> bytes | None:
    """The key in ``path`` (None: no file). A short file that was just written is read again
    a few times before it counts as damaged: a reader of another run's file being written
    (the first runs on a new machine) took a throw-away key, unlike the others'. Damaged:
    :class:`_DamagedKey`, ``old`` when its mtime is more than YOUNG_KEY from now (one set
    in the future is not being written either). A folder (no run writes one) is damaged
    at once, ``old``: reading it failed with "Is a directory" (on Windows "Permission
    denied") and every run used a throw-away key."""
    for _ in range(KEY_POLLS):
        try:
            if path.is_dir():
                raise _DamagedKey(True, path.stat(), folder=True)
            key = path.read_bytes().strip()
            info = path.stat()
        except FileNotFoundError:
            return None
        old = abs(time.time() - info.st_mtime) > YOUNG_KEY
        if len(key) >= 32:
            return key
        if old:
            break
        time.sleep(KEY_POLL)
    raise _DamagedKey(old, info)


def _made_whole(path: Path, data: bytes) -> bool:
    """``data`` as the new file ``path``, never half there: written to a temp file, then
    hard-linked to its name, which fails when it exists (another run's key is never
    replaced). False: another run made it first. Where no hard link can be made, the file
    is made in place (exclusively), and a reader waits for it (:func:`_read_key`)."""
    fd, temp = tempfile.mkstemp(prefix=".publish.key.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:  # (mkstemp: mode 0600)
            out.write(data)
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links on this file system (FAT, some network ones)
            return _made_in_place(path, data)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def _made_in_place(path: Path, data: bytes) -> bool:
    """``data`` written into a new file ``path``; False when it exists already."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return True
