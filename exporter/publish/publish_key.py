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
from collections.abc import Mapping
from pathlib import Path

from exporter.fsutil import xdg_dir

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
    existed = path.exists()
    if not existed and not create:  # a throw-away key re-checks everything, as a new one would
        note = f"no publish key in {path} yet: a dry run creates none (the first real run will)"
        return PublishKey(secrets.token_bytes(32), note)
    try:
        key = PublishKey(_read_or_create(path))
        if not existed:  # a new machine (or a CI runner): say why everything is re-checked
            key.note = (
                f"created a publish key in {path} (what redacted sites and datasets record "
                "of their sources is keyed by it): what was made with another key is "
                f"re-checked once (on CI, set {KEY_ENV} from a secret)"
            )
        elif os.name == "posix" and path.stat().st_mode & 0o077:
            key.note = f"{path} can be read by other users: `chmod 600 {path}`"
        return key
    except OSError as error:
        reason = error.strerror or type(error).__name__
        note = (
            f"could not keep a publish key in {path} ({reason}): this run uses a throw-away "
            "key, so the next run re-checks every session (set "
            f"{KEY_ENV} to keep one)"
        )
        return PublishKey(secrets.token_bytes(32), note)


def _read_or_create(path: Path) -> bytes:
    with contextlib.suppress(FileNotFoundError):
        key = path.read_bytes().strip()
        if len(key) >= 32:
            return key
        raise PermissionError(0, "the key file is damaged (shorter than 32 bytes)")
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32).encode("ascii")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run created it just now: use theirs
        key = path.read_bytes().strip()
        if len(key) < 32:
            raise PermissionError(0, "another run is writing the key file") from None
        return key
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")
    return key
