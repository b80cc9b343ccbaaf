"""Which gist holds which session, so sharing again updates the same link."""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
import tempfile
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


# --------------------------------------------------------------------------- damaged files


class _Cut(dict):
    """An object the damage cut short: the members before it, in the file's order."""


class _CutList(list):
    """An array the damage cut short: the items before it."""


class _Damaged(Exception):
    """Where a damaged file stops making sense."""


_SPACE = re.compile(r"[ \t\n\r]*")
_SCALARS = json.JSONDecoder()
#: Deeper than any state file goes: a file nested further is no state file.
_MAX_DEPTH = 32


def _lenient_json(text: str) -> tuple[Any, bool, int]:
    """A state file read as far as it makes sense, whether all of it did, and where the
    reading stopped: a hand edit's trailing comma is skipped (the file is then read whole);
    at the damage (a file cut short by a full disk or a crash) each container is closed
    where it stands, as a ``_Cut``, without the member whose value was cut (a number or
    word just before the end counts as cut too). Whole state records before the damage are
    kept: every share of their sessions made a second gist when the whole file was set
    aside. (Those after it: :func:`_records_after`.)"""
    try:
        value, end, whole = _lenient_value(text, 0, 0)
    except (_Damaged, RecursionError):
        return None, False, 0
    return value, whole and _SPACE.match(text, end).end() == len(text), end


def _lenient_value(text: str, pos: int, depth: int) -> tuple[Any, int, bool]:
    pos = _SPACE.match(text, pos).end()
    if pos >= len(text) or depth > _MAX_DEPTH:
        raise _Damaged
    if text[pos] == "{":
        return _lenient_members(text, pos + 1, depth)
    if text[pos] == "[":
        return _lenient_items(text, pos + 1, depth)
    try:
        value, end = _SCALARS.raw_decode(text, pos)
    except ValueError:
        raise _Damaged from None
    # a scalar the file ends right after may be cut short (1 of 12, a string's end is its
    # quote): only what a delimiter follows is whole
    return value, end, _SPACE.match(text, end).end() < len(text)


def _lenient_members(text: str, pos: int, depth: int) -> tuple[dict[str, Any], int, bool]:
    found: dict[str, Any] = {}
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos < len(text) and text[pos] == "}":
            return found, pos + 1, True
        if pos < len(text) and text[pos] == ",":  # a trailing (or doubled) comma
            pos += 1
            continue
        if pos >= len(text) or text[pos] != '"':
            return _Cut(found), pos, False
        try:
            key, pos = json.decoder.scanstring(text, pos + 1)
        except ValueError:
            return _Cut(found), pos, False
        pos = _SPACE.match(text, pos).end()
        if pos >= len(text) or text[pos] != ":":
            return _Cut(found), pos, False
        try:
            value, pos, whole = _lenient_value(text, pos + 1, depth + 1)
        except _Damaged:
            return _Cut(found), pos, False
        if whole:
            found[key] = value
            continue
        if isinstance(value, (dict, list)):  # what it holds up to the damage
            found[key] = value
        return _Cut(found), pos, False


def _lenient_items(text: str, pos: int, depth: int) -> tuple[list[Any], int, bool]:
    found: list[Any] = []
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos < len(text) and text[pos] == "]":
            return found, pos + 1, True
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        try:
            value, pos, whole = _lenient_value(text, pos, depth + 1)
        except _Damaged:
            return _CutList(found), pos, False
        if whole:
            found.append(value)
            continue
        if isinstance(value, (dict, list)):
            found.append(value)
        return _CutList(found), pos, False


#: The last of ``GIVEN_FIELDS`` in the sorted order every version writes a record's keys in.
_LAST_POLICY_KEY = max(GIVEN_FIELDS)


def _whole_enough(entry: Any) -> bool:
    """A record read whole, or cut short after every field that says what its share left
    out: keys are written sorted, so once the last of them that a record can hold has gone
    by (in order), none is missing. A record cut before that may lack its ``given`` or
    ``cuts``, and a later share would not be refused what would undo them: left out."""
    if not isinstance(entry, _Cut):
        return True
    keys = list(entry)
    return keys == sorted(keys) and bool(keys) and keys[-1] >= _LAST_POLICY_KEY


def _records(data: Any) -> dict[str, dict[str, dict[str, Any]]]:
    """The usable records of a state file's JSON (``usable_record``), by API and session;
    a record cut short is kept only when ``_whole_enough``."""
    gists = data.get("gists") if isinstance(data, dict) else None
    clean: dict[str, dict[str, dict[str, Any]]] = {}
    if not isinstance(gists, dict):
        return clean
    for host, sessions in gists.items():
        if not isinstance(sessions, dict):
            continue
        for session_id, entry in sessions.items():
            record = usable_record(entry) if _whole_enough(entry) else None
            if record is not None:
                clean.setdefault(str(host), {})[str(session_id)] = record
    return clean


def _parsed(text: str) -> tuple[Any, bool]:
    """A state file's JSON and whether it was read whole (``_lenient_json`` up to damage,
    with the whole records after it, ``_records_after``)."""
    try:
        return json.loads(text), True
    except (ValueError, RecursionError):
        pass
    data, whole, stop = _lenient_json(text)
    if whole:
        return data, True
    found = _records_after(text, stop)
    if not found:
        return data, False
    if not isinstance(data, dict):
        data = {}
    gists = data.get("gists")
    if gists is None:
        gists = data["gists"] = {}
    if isinstance(gists, dict):
        for host, session_id, record in found:  # (what was read before the damage first)
            sessions = gists.setdefault(host, {})
            if isinstance(sessions, dict):
                sessions.setdefault(session_id, record)
    return data, False


#: A record's first line and an API's, as every version writes the file (``json.dumps``,
#: ``indent=2``, keys sorted): the session id (or API) as a JSON string at its depth
#: (``gists`` -> API -> session), ``{`` closing the line. A line never starts inside a
#: string (a newline in one is written ``\n``).
_RECORD_HEAD = re.compile(r'^ {6}("(?:[^"\\\n]|\\.)*"): \{$', re.M)
_API_HEAD = re.compile(r'^ {4}("(?:[^"\\\n]|\\.)*"): \{$', re.M)
_RECORD_TAIL = "\n      }"


def _records_after(text: str, stop: int) -> list[tuple[str, str, dict[str, Any]]]:
    """The whole records of a damaged state file that start after ``stop`` (where reading
    it stopped, at or after the damage), as (API, session id, record): a file damaged in
    the middle (a sync tool's merge, a block lost) kept the records before the damage, and
    every session of those after it got a second gist. Each record is taken only as a
    version wrote it: its first line whole, then one JSON object read to its end, which
    closes at the record's depth, keys sorted; its API is the last one named before it
    (the only one there is, for most: a wrong one would name a gist GitHub does not have
    there, which a share finds gone). A record the damage went through is not taken: it
    starts before ``stop``."""
    heads = [(m.start(), m.group(1)) for m in _API_HEAD.finditer(text)]
    starts = [at for at, _ in heads]  # in order: the API before a record found by bisection
    found: list[tuple[str, str, dict[str, Any]]] = []
    for head in _RECORD_HEAD.finditer(text, stop):
        named = bisect.bisect_left(starts, head.start())
        try:
            if not named:
                continue
            api, session_id = json.loads(heads[named - 1][1]), json.loads(head.group(1))
            entry, end = _SCALARS.raw_decode(text, head.end() - 1)
        except (ValueError, RecursionError):
            continue
        as_written = text.startswith(_RECORD_TAIL, end - len(_RECORD_TAIL))
        record = usable_record(entry) if as_written and list(entry) == sorted(entry) else None
        if record is not None and isinstance(api, str) and isinstance(session_id, str):
            found.append((api, session_id, record))
    return found


def _without_gists(entry: dict[str, Any], gone: set[str]) -> dict[str, Any] | None:
    """A record from a copy set aside without the gists forgotten since it was written: a
    forgotten gist of its own gives way to its latest earlier one, as ``forget_gist``
    does; None when none is left."""
    earlier = [g for g in earlier_gists(entry) if g["gist_id"] not in gone]
    if entry["gist_id"] in gone:
        if not earlier:
            return None
        entry = dict(earlier.pop())
    entry = {k: v for k, v in entry.items() if k != "earlier"}
    if earlier:
        entry["earlier"] = earlier
    return entry


def _same_record(record: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    """The two records say the same but for when they were written."""
    mine = {k: v for k, v in record.items() if k != "updated_at"}
    return bool(before) and mine == {k: v for k, v in before.items() if k != "updated_at"}


def _read_state_text(path: Path) -> str:
    """The file's text; a UTF-8 byte order mark (a Windows editor's save) is no damage."""
    return path.read_text(encoding="utf-8-sig")


def default_state_path(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_STATE_HOME/pi-session-export/gists.json`` (XDG ignores relative values)."""
    return xdg_dir("XDG_STATE_HOME", ".local/state", "gists.json", env=env)


class ShareState:
    """Remembers which gist holds which session, so re-sharing updates the same link.

    Keyed by API root and session id. The file is rewritten atomically. A damaged file
    (``corrupt``) gives the whole records it still holds and is set aside on the next
    write (``backup_path``); a session's record is looked for in the copies set aside too.
    """

    VERSION = 1

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_state_path()
        #: The file was damaged (or could not be read): read as far as it went.
        self.corrupt = False
        #: Where the last ``entry`` found the session's record (this file or a copy set
        #: aside), None for nowhere.
        self.found_in: Path | None = None
        #: When ``entry`` found nothing: the damaged files set aside that could not be read
        #: whole, so a record of the session may have been lost with them.
        self.lossy: list[Path] = []
        #: Why the last write failed (the file as it was is still there), None if it did not.
        self.save_error: OSError | ValueError | None = None
        self._forgotten: set[str] = set()  # gists forgotten that copies set aside still name
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

    def why_unwritable(self, *, create: bool = True) -> OSError | None:
        """Why the state could not be written now (the folder cannot be made, or no file
        made in it: read-only, another user's), None when it can: a share that went on
        made its gist, did not record it, and every share again made another (and was not
        held to what this one left out). A file made and removed at once is the test,
        as writing the state (a temp file renamed over it) and its lock need one. Without
        ``create`` (a dry run) a missing folder is not made: its nearest folder is tried."""
        folder = Path(os.path.realpath(self.path)).parent  # (a symlink is written through)
        try:
            if create:
                folder.mkdir(parents=True, exist_ok=True)
            else:
                while not folder.exists() and folder.parent != folder:
                    folder = folder.parent
            handle, probe = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=folder)
        except OSError as error:
            return error
        os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(probe)
        return None

    def __repr__(self) -> str:
        return f"ShareState(path={str(self.path)!r})"

    def _load(self) -> dict[str, dict[str, dict[str, Any]]]:
        self.corrupt = False
        self._forgotten = set()
        try:
            text = _read_state_text(self.path)
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError):
            self.corrupt = True
            return {}
        data, whole = _parsed(text)
        if not isinstance(data, dict) or not isinstance(data.get("gists"), dict):
            self.corrupt = True
            return {}
        self.corrupt = not whole
        forgotten = data.get("forgotten")
        if isinstance(forgotten, list):
            self._forgotten = {g for g in forgotten if isinstance(g, str)}
        return _records(data)

    def _kept_aside(self) -> Iterator[tuple[Path, dict[str, dict[str, dict[str, Any]]], bool]]:
        """The damaged copies set aside (``backup_path``), newest first: each with the
        records it still holds and whether it was read whole."""
        name = self.backup_path.name
        try:
            found = [
                p for p in self.path.parent.iterdir()
                if (p.name == name or p.name.startswith(name + "-")) and p.is_file()
            ]  # fmt: skip
        except OSError:
            return
        # (the time stamps sort as they were made; the first one set aside has none)
        for path in sorted(found, key=lambda p: (p.name != name, p.name), reverse=True):
            try:
                data, whole = _parsed(_read_state_text(path))
            except (OSError, UnicodeDecodeError):
                yield path, {}, False
                continue
            whole = whole and isinstance(data, dict) and isinstance(data.get("gists"), dict)
            yield path, _records(data), whole

    def _lookup(
        self, gists: dict[str, dict[str, dict[str, Any]]], api_url: str, session_id: str
    ) -> dict[str, Any] | None:
        """The session's record in ``gists`` (this file), else in the newest copy set aside
        that has one (without the gists forgotten since); sets ``found_in`` and ``lossy``."""
        self.lossy = []
        found = gists.get(_state_key(api_url), {}).get(session_id)
        self.found_in = self.path if found else None
        if found:
            return found
        for path, records, whole in self._kept_aside():
            if not whole:
                self.lossy.append(path)
            aside = records.get(_state_key(api_url), {}).get(session_id)
            if found is None and aside is not None:
                found = _without_gists(aside, self._forgotten)
                self.found_in = path if found else None
        return found

    def _named_aside(self, api_url: str, which: Callable[[str, dict[str, Any]], bool]) -> set[str]:
        """The gists of the records ``which`` picks in the copies set aside, earlier ones too."""
        named: set[str] = set()
        for _path, records, _whole in self._kept_aside():
            for sid, entry in records.get(_state_key(api_url), {}).items():
                if which(sid, entry):
                    named.update(g["gist_id"] for g in [entry, *earlier_gists(entry)])
        return named

    @property
    def backup_path(self) -> Path:
        """Where an unreadable state file is kept instead of being overwritten: it may
        still hold the ids of other sessions' gists, which only it knows."""
        return self.path.with_name(self.path.name + ".corrupt")

    def _save(self, gists: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Write ``gists`` over the file (a damaged one is set aside first); a failure is
        kept in ``save_error`` as well as raised."""
        self.save_error = None
        try:
            self._write(gists)
        except (OSError, ValueError) as error:
            self.save_error = error
            raise

    def _write(self, gists: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.corrupt and self.path.exists():
            backup = self.backup_path
            if backup.exists():  # an earlier one is kept too: each may hold ids only it knows
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
                backup = backup.with_name(f"{backup.name}-{stamp}")
            os.replace(self.path, backup)
        state: dict[str, Any] = {"version": self.VERSION, "gists": gists}
        if self._forgotten and next(self._kept_aside(), None) is not None:
            # a deleted gist a copy set aside still names is not taken from it again
            state["forgotten"] = sorted(self._forgotten)
        text = json.dumps(state, ensure_ascii=False, indent=2, sort_keys=True)
        text = escape_surrogates(text)  # a session id from Pi's JSON may hold a lone surrogate
        # 0600: secret gist ids are effectively access keys.
        with atomic_open(
            self.path, "w", encoding="utf-8", permissions=0o600, durable=True
        ) as handle:
            handle.write(text + "\n")

    def entry(self, api_url: str, session_id: str) -> dict[str, Any] | None:
        """The stored record (``gist_id``, ``public``, ``updated_at``) or None; from a
        damaged copy set aside when this file has none (``found_in`` says where)."""
        return self._lookup(self._load(), api_url, session_id)

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
        judged: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Record (or replace) the gist for a session, with a digest of what it holds, the
        file it was shared from (a copy of a session file keeps its id) and what it kept of
        the given secrets (``--secret``, environment) it replaced (``GIVEN_FIELDS``): a later
        share must replace them too. ``judged``: by gist id, what the record of an earlier
        gist lacks (it was shared before 0.2.25) as this share judged it from the gist, kept
        with it so that later shares need not download it again."""
        with self.locked():
            self._remember(
                api_url, session_id, gist_id, public, content, source, given, judged or {}
            )

    def _remember(
        self,
        api_url: str,
        session_id: str,
        gist_id: str,
        public: bool,
        content: str | None,
        source: str | None,
        given: Mapping[str, Any] | None = None,
        judged: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.save_error = None
        gists = self._load()
        before = self._lookup(gists, api_url, session_id) or {}
        kept_here = self.found_in == self.path and not self.corrupt
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
        judged = judged or {}
        earlier = [{**g, **judged.get(g["gist_id"], {})} for g in earlier]
        if earlier:  # still up: listed when sharing, for --delete; one may be reused
            record["earlier"] = earlier
        if content:
            record["content_sha256"] = content
        if source:
            record["source"] = source
        record.update(given or {})
        if kept_here and _same_record(record, before):
            return  # a share that changed nothing: the file is not rewritten for its time
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
            if gist_id not in self._forgotten and gist_id in self._named_aside(
                api_url, lambda _sid, _entry: True
            ):  # a copy set aside names it: not taken from there again
                self._forgotten.add(gist_id)
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
            aside = self._named_aside(api_url, which) - self._forgotten
            self._forgotten |= aside  # not taken from a copy set aside again
            if not gone:
                if aside:
                    self._save(gists)
                return 1 if aside else 0  # a session only a copy set aside had
            for sid in gone:
                del sessions[sid]
            if not sessions:
                del gists[_state_key(api_url)]
            self._save(gists)
            return len(gone)
