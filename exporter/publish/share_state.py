"""Which gist holds which session, so sharing again updates the same link."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from exporter.formatting import escape_surrogates
from exporter.fsutil import atomic_open, xdg_dir

try:
    import fcntl
except ImportError:  # Windows: shares there are not serialised
    fcntl = None  # type: ignore[assignment]


def _state_key(api_url: str) -> str:
    """Stable key for an API root, so two hosts never share gist ids. Without a
    ``user:password@`` part: it may hold the token, which the state file must not."""
    parts = urlsplit(api_url.rstrip("/"))
    return f"{parts.netloc.rpartition('@')[2].lower()}{parts.path}"


# --------------------------------------------------------------------------- state


#: What a record keeps of the given secrets its share replaced (salted digests), the ids
#: of the entries it left out (``--exclude``), its opt-in redaction (``--pii``...), whether
#: it was redacted at all and the cuts it made (``--no-thinking``...): a later share of the
#: session that would put any of it back is refused. Records written before ``redacted``
#: and ``cuts`` were kept lack them: unknown, never a reason to refuse.
GIVEN_FIELDS = ("given_salt", "given", "excluded", "removed", "redacted", "cuts")


#: What an earlier gist keeps besides its id and visibility: its share's policy
#: (``GIVEN_FIELDS``) and the digest of what it holds, so that a share back to it (from
#: ``--public``) finds it unchanged instead of sending the same files again.
EARLIER_FIELDS = (*GIVEN_FIELDS, "content_sha256")


#: A record's fields that hold lists of names (of ``GIVEN_FIELDS``), and those that hold one
#: string: what else a damaged file holds there (``"removed": [null]``) is left out.
_NAME_LISTS = ("given", "excluded", "removed", "cuts")
_TEXTS = ("given_salt", "content_sha256", "source", "updated_at")


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def usable_record(entry: Any, *, nested: bool = False) -> dict[str, Any] | None:
    """A record as read from the file with what no version writes left out, so that no
    reader meets it: a list's items that are not strings (``"removed": [null]`` ended in a
    traceback), a string field that is not one, ``public`` other than ``true`` (false), an
    earlier gist that is not one; None for no record at all (no gist id, a blank one). Other
    keys are kept as they are. ``nested``: an earlier gist, which has no earlier ones."""
    if not isinstance(entry, dict) or not _usable_id(entry.get("gist_id")):
        return None
    record = dict(entry)
    record["public"] = entry.get("public") is True
    for key in _NAME_LISTS:
        if key in record:
            values = record[key]
            if isinstance(values, list):
                record[key] = [v for v in values if isinstance(v, str)]
            else:
                del record[key]
    for key in _TEXTS:
        if key in record and not isinstance(record[key], str):
            del record[key]
    if "redacted" in record and not isinstance(record["redacted"], bool):
        del record["redacted"]
    earlier = record.pop("earlier", None)
    if not nested and isinstance(earlier, list):
        kept = [g for g in (usable_record(g, nested=True) for g in earlier) if g is not None]
        if kept:
            record["earlier"] = kept
    return record


def earlier_gists(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A record's earlier gists of its session (``--new``, the other visibility), oldest
    first, as ``{"gist_id", "public"}``, what each share replaced and what each holds
    (``EARLIER_FIELDS``); what is not one (no id, an empty one) is skipped, and only
    ``true`` is public."""
    found = record.get("earlier")
    return [
        {
            "gist_id": g["gist_id"],
            "public": g.get("public") is True,
            **earlier_of(g),
        }
        for g in (found if isinstance(found, list) else [])
        if isinstance(g, dict) and isinstance(g.get("gist_id"), str) and g["gist_id"].strip()
    ]


def earlier_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """What travels with a record's gist when it becomes an earlier one: its
    ``EARLIER_FIELDS`` (salted SHA-256s of the given secrets its share replaced, never the
    values, what else its policy left out, and the digest of what it holds)."""
    return {k: record[k] for k in EARLIER_FIELDS if k in record}


def default_state_path(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_STATE_HOME/pi-session-export/gists.json`` (XDG ignores relative values)."""
    return xdg_dir("XDG_STATE_HOME", ".local/state", "gists.json", env=env)


class ShareState:
    """Remembers which gist holds which session, so re-sharing updates the same link.

    Keyed by API root and session id. The file is rewritten atomically; an
    unreadable or corrupt file counts as empty (and is replaced on the next write).
    """

    VERSION = 1

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_state_path()
        self.corrupt = False
        self._depth = 0  # how deep this instance is in ``locked``

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def locked(self, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold the state's lock (``gists.json.lock`` beside it) from the read that decides
        create-or-update to the write of the record: two shares at once each rewrote the
        file from what they had read, and one session's record was lost (its gist left up,
        its link kept nowhere); two shares of one session made two gists. ``on_wait`` is
        called when another share holds it. Re-entrant; where no lock can be had (a
        read-only folder, no ``fcntl``) the share goes on without one."""
        handle = None
        if not self._depth and fcntl is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                handle = os.fdopen(os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600), "rb")
            except OSError:
                handle = None
            if handle is not None:
                try:
                    try:
                        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        if on_wait is not None:
                            on_wait()
                        fcntl.flock(handle, fcntl.LOCK_EX)
                except OSError:  # a file system without locks
                    handle.close()
                    handle = None
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if handle is not None:
                handle.close()  # releases the lock

    def __repr__(self) -> str:
        return f"ShareState(path={str(self.path)!r})"

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        self.corrupt = False
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError):
            self.corrupt = True
            return {}
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            self.corrupt = True
            return {}
        gists = data.get("gists") if isinstance(data, dict) else None
        if not isinstance(gists, dict):
            self.corrupt = True
            return {}
        clean: dict[str, dict[str, dict[str, Any]]] = {}
        for host, sessions in gists.items():
            if not isinstance(sessions, dict):
                continue
            for session_id, entry in sessions.items():
                record = usable_record(entry)
                if record is not None:
                    clean.setdefault(str(host), {})[str(session_id)] = record
        return clean

    @property
    def backup_path(self) -> Path:
        """Where an unreadable state file is kept instead of being overwritten: it may
        still hold the ids of other sessions' gists, which only it knows."""
        return self.path.with_name(self.path.name + ".corrupt")

    def _save(self, gists: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.corrupt and self.path.exists():
            backup = self.backup_path
            if backup.exists():  # an earlier one is kept too: each may hold ids only it knows
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
                backup = backup.with_name(f"{backup.name}-{stamp}")
            os.replace(self.path, backup)
        text = json.dumps(
            {"version": self.VERSION, "gists": gists}, ensure_ascii=False, indent=2, sort_keys=True
        )
        text = escape_surrogates(text)  # a session id from Pi's JSON may hold a lone surrogate
        # 0600: secret gist ids are effectively access keys.
        with atomic_open(
            self.path, "w", encoding="utf-8", permissions=0o600, durable=True
        ) as handle:
            handle.write(text + "\n")

    def entry(self, api_url: str, session_id: str) -> dict[str, Any] | None:
        """The stored record (``gist_id``, ``public``, ``updated_at``) or None."""
        return self._load().get(_state_key(api_url), {}).get(session_id)

    def get(self, api_url: str, session_id: str) -> str | None:
        """The gist id last used for this session on this API, if any."""
        found = self.entry(api_url, session_id)
        return found["gist_id"] if found else None

    def remember(
        self,
        api_url: str,
        session_id: str,
        gist_id: str,
        *,
        public: bool = False,
        content: str | None = None,
        source: str | None = None,
        given: Mapping[str, Any] | None = None,
    ) -> None:
        """Record (or replace) the gist for a session, with a digest of what it holds, the
        file it was shared from (a copy of a session file keeps its id) and what it kept of
        the given secrets (``--secret``, environment) it replaced (``GIVEN_FIELDS``): a later
        share must replace them too."""
        with self.locked():
            self._remember(api_url, session_id, gist_id, public, content, source, given)

    def _remember(
        self,
        api_url: str,
        session_id: str,
        gist_id: str,
        public: bool,
        content: str | None,
        source: str | None,
        given: Mapping[str, Any] | None = None,
    ) -> None:
        gists = self._load()
        before = gists.get(_state_key(api_url), {}).get(session_id) or {}
        record: dict[str, Any] = {
            "gist_id": gist_id,
            "public": bool(public),
            "updated_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        earlier = [g for g in earlier_gists(before) if g["gist_id"] != gist_id]
        if before.get("gist_id") not in (None, gist_id):  # --new, or the other visibility
            earlier.append(
                {"gist_id": before["gist_id"], "public": bool(before.get("public")),
                 **earlier_of(before)}
            )  # fmt: skip
        if earlier:  # still up: listed when sharing, for --delete; one may be reused
            record["earlier"] = earlier
        if content:
            record["content_sha256"] = content
        if source:
            record["source"] = source
        record.update(given or {})
        gists.setdefault(_state_key(api_url), {})[session_id] = record
        self._save(gists)

    def forget(self, api_url: str, session_id: str) -> bool:
        """Drop the record; True if there was one."""
        return self._drop(api_url, lambda sid, _entry: sid == session_id) > 0

    def forget_gist(self, api_url: str, gist_id: str) -> int:
        """Drop every record that names ``gist_id`` (a deleted gist), under the lock: a share
        of one of its sessions that made a new gist meanwhile keeps its new record. A
        session's earlier gists outlive it (the latest becomes its record), and the gist is
        dropped from every list of earlier ones. Returns how many records named it."""
        return self._forget(api_url, gist_id)[0]

    def forget_gone_gist(self, api_url: str, gist_id: str) -> bool:
        """``forget_gist`` for a gist found gone on GitHub; True if the state named it at
        all (as a session's gist or an earlier one)."""
        return self._forget(api_url, gist_id)[1]

    def _forget(self, api_url: str, gist_id: str) -> tuple[int, bool]:
        """``forget_gist``: how many records named it as theirs, and whether any changed."""
        with self.locked():
            gists = self._load()
            sessions = gists.get(_state_key(api_url), {})
            named, changed = 0, False
            for sid, entry in list(sessions.items()):
                earlier = [g for g in earlier_gists(entry) if g["gist_id"] != gist_id]
                if entry.get("gist_id") != gist_id and len(earlier) == len(earlier_gists(entry)):
                    continue  # neither its gist nor an earlier one
                if entry.get("gist_id") == gist_id:
                    named += 1
                    if not earlier:
                        del sessions[sid]
                        changed = True
                        continue
                    latest = earlier.pop()  # with what its share replaced
                    entry = {k: v for k, v in latest.items() if k != "earlier"}
                entry.pop("earlier", None)
                if earlier:
                    entry["earlier"] = earlier
                sessions[sid] = entry
                changed = True
            if not changed:
                return 0, False
            if not sessions:
                gists.pop(_state_key(api_url), None)
            self._save(gists)
            return named, True

    def _drop(self, api_url: str, which: Callable[[str, dict[str, Any]], bool]) -> int:
        """Drop this API's records ``which`` picks (by session id and record), under the
        lock; how many."""
        with self.locked():
            gists = self._load()
            sessions = gists.get(_state_key(api_url), {})
            gone = [sid for sid, entry in sessions.items() if which(sid, entry)]
            if not gone:
                return 0
            for sid in gone:
                del sessions[sid]
            if not sessions:
                del gists[_state_key(api_url)]
            self._save(gists)
            return len(gone)
