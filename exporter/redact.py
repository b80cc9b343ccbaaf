"""What leaves the machine: secret scrubbing plus the share policy, on a copy of a Session.

`apply_policy` never mutates its input. It picks the entries to keep and trims what the
policy excludes (``share_cuts.py``: active branch, hidden entries, re-parenting, thinking,
tool output, images, signatures), then walks
every string of every record once: detectors and literal secrets become stable
placeholders (``[REDACTED:github-token:1]``), the home directory becomes ``~`` and the user
name ``<user>``. The report says what was replaced and where, never the secret itself.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import math
import os
import re
import struct
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from exporter.base64_text import decoded_size
from exporter.detector_base import Detector
from exporter.detectors import (
    CONTEXT_DETECTORS,
    DETECTOR_VERSION,
    DETECTORS,
    Finding,
    Scanner,
    UrlCredentialsDetector,
)
from exporter.entries import KNOWN_ENTRY_TYPES, DamagedLine, Entry, MessageEntry, as_dict
from exporter.formatting import fmt_int, plural
from exporter.fsutil import atomic_write_text
from exporter.jsonl_out import session_records
from exporter.loader import gc_paused, session_from_records
from exporter.pii_detectors import PII_DETECTORS, PatternDetector
from exporter.policy import GIVEN_SECRETS, RedactionPolicy
from exporter.secret_commands import SECRET_OUTPUT, reads_a_secret
from exporter.secret_heuristics import (
    DIGIT,
    WORDLIKE,
    is_dummy,
    is_placeholder,
    is_secret_assignment,
    is_type_name,
    looks_random,
    name_strength,
)
from exporter.session import Session
from exporter.share_cuts import cut_content, excluded_ids, moved_first_kept, select_entries

__all__ = [
    "ACTION_LABELS",
    "GPS_IMAGES",
    "Hit",
    "RedactionPolicy",
    "RedactionReport",
    "action_counts",
    "apply_policy",
    "env_secret_values",
    "gps_warning",
    "images_with_gps",
    "name_scrubber",
    "sensitive_env_values",
    "session_images",
    "text_redactor",
]

_GENERIC_USERS = frozenset((
    "root", "user", "admin", "administrator", "dev", "developer", "ubuntu", "debian", "runner",
    "pi", "node", "app", "www", "web", "build", "ci", "docker", "vagrant", "ec2-user", "git",
    "nobody", "default", "guest", "test", "home", "users", "me", "local", "worker", "service",
))  # fmt: skip
# User names that are everyday or code words, or the accounts of dev containers, Codespaces
# and services (.vscode/, postgres://): replaced only where they name someone (a path,
# user@host, "user: max"), or "Math.max(1, 2)" became "Math.<user>(1, 2)" for user "max".
_WORD_USER_NAMES = """
    max min will mark bill pat sue rose grace hope may june dean frank gene jack joy lane
    rich ray rob sky art chip dawn don eve faith glen guy jean jay kit lily nick page penny rex
    rod sandy summer autumn amber crystal forest hunter mason cash chase miles drew cliff carter
    parker main data server master python java ruby rust swift alpha beta delta echo code work
    next react docker agent bot cloud linux mac box host client van val wade ward norm sly
    brook river stone dom jan mar jun jul aug sep oct nov dec
    vscode codespace codespaces gitpod coder postgres mysql redis jenkins lib"""
_WORD_USERS = frozenset(_WORD_USER_NAMES.split())
#: Folders right under /home, /Users or C:\Users that are no one's home: macOS's and
#: Windows' shared ones, and the project folders containers and guides put there
#: (``/home/projects/app``, ``/home/src``, ``/home/workspace``). A session run in one has no
#: user's name in its cwd: taken for one, "the Shared folder" became "the <user> folder"
#: and ``src/x.py`` ``<user>/x.py``. (The accounts of CI runners and dev containers are
#: users: ``/home/runner``, ``/home/vscode``, ``/home/node``, ``/home/dev`` are homes.)
_NO_ONES_FOLDERS = frozenset((
    "shared", "public", "all users", "default", "default user", "deleted users", "projects",
    "project", "src", "source", "sources", "workspace", "workspaces", "work", "code", "repo",
    "repos", "repositories", "app", "apps", "build", "builds", "data", "share", "common",
    "tmp", "temp", "docs", "lost+found",
))  # fmt: skip
#: Home folders that name no person: service and CI accounts, macOS's and Windows' shared
#: ones, and the names docs put in a path for "yours" (`/home/username/`)
_SHARED_HOMES = _GENERIC_USERS | frozenset((
    "linuxbrew", "shared", "public", "all", "runneradmin", "circleci",
    "travis", "jenkins", "gitlab-runner", "codespace", "vscode", "coder", "gitpod", "postgres",
    "mysql", "redis", "centos", "fedora", "azureuser", "opc", "sandbox", "agent", "username",
    "yourname", "your-name", "your_name", "yourusername", "your-username", "your_username",
    "you", "name", "example", "someone", "somebody", "other", "foo", "bar", "me",
)) | _NO_ONES_FOLDERS  # fmt: skip
#: Another user's home folder (``/home/carol``, ``/Users/carol``, ``C:\Users\carol``, also
#: Fedora Atomic's, WSL's and JSON-escaped backslashes): the name is someone's. Not a URL's
#: path (``https://x/home/abc``) nor a longer folder name (``/homework/``).
_OTHER_HOME = re.compile(
    r"(?:(?<![\w.\-~/:@%\\])|(?<=file://))"
    r"(?P<pre>(?:/var|/export|/mnt/[a-z])?/home/|(?:/mnt/[a-z])?/Users/"
    r"|(?<![A-Za-z])[A-Za-z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/))"
    # (one of those is no one's: C-level, the count that of `subn`)
    rf"(?!(?i:{'|'.join(map(re.escape, sorted(_SHARED_HOMES, key=len, reverse=True)))})"
    r"(?![\w\-]|\.[\w\-]))"
    r"(?P<name>[A-Za-z_][\w\-]{0,63}(?:\.[\w\-]{1,63}){0,3})(?![\w\-]|\.[\w\-])"
)
ACTION_LABELS = {  # report.actions key -> how the summary line names it
    "home_paths": "home paths -> ~",
    "user_names": "user names -> <user>",
    "entries_dropped": "entries dropped",
    "entries_excluded": "entries excluded (--exclude)",
    "thinking_blocks_dropped": "thinking blocks dropped",
    "signatures_dropped": "signatures dropped",
    "tool_outputs_omitted": "tool outputs omitted",
    "tool_calls_omitted": "tool calls omitted",
    "images_omitted": "images omitted",
    "attachments_omitted": "binary attachments omitted (not scannable)",
}
#: report.actions key: images that go out as they are with a GPS location in their EXIF.
#: Not an action (no label: the summary and the page's note leave it out); the commands
#: that send a copy warn of it (`gps_warning`).
GPS_IMAGES = "images_with_gps"
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
#: The names Pi's format gives its fields (entries, messages, content blocks, usage): never
#: a secret, and a copy whose ``parentId`` became ``p[REDACTED…]Id`` (a short --secret, a
#: user name) lost its tree without a word. Other keys (tool arguments, details) are scanned.
_FORMAT_KEYS = frozenset(
    {"api", "arguments", "branchedFrom", "cacheRead", "cacheWrite", "cancelled", "command",
     "content", "cost", "customType", "cwd", "data", "details", "display", "errorMessage",
     "excludeFromContext", "exitCode", "firstKeptEntryId", "firstKeptEntryIndex", "fromHook",
     "fromId", "fullOutputPath", "id", "input", "isError", "label", "leafId", "message",
     "mimeType", "model", "modelId", "name", "output", "parentId", "parentSession",
     "partialJson", "provider", "redacted", "responseModel", "role", "stopReason", "summary",
     "targetId", "text", "textSignature", "thinking", "thinkingLevel", "thinkingSignature",
     "timestamp", "tokensBefore", "toolCallId", "toolName", "total", "totalTokens",
     "truncated", "type", "usage", "version"}
)  # fmt: skip
#: Values of the format's own vocabulary, kept as they are for the same reason (a --secret
#: "user" turned every user message into a message of role "[REDACTED…]").
_FORMAT_VALUES = {
    "role": frozenset(
        {"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary",
         "compactionSummary", "system"}
    ),
    "type": KNOWN_ENTRY_TYPES
    | {"session", "text", "thinking", "toolCall", "image", "redacted_thinking", "tool_use",
       "tool_result"},
    "stopReason": frozenset({"stop", "length", "toolUse", "error", "aborted"}),
    "thinkingLevel": frozenset({"off", "minimal", "low", "medium", "high", "xhigh"}),
}  # fmt: skip
#: Fields whose values are the format's own where Pi puts them (an entry and the header, a
#: model_change, an assistant message): a --secret "2026" made every entry's time
#: "[REDACTED…]-11-30T…" (the loader warned, Pi's order of children broke), and user
#: "claude" every model "<user>-sonnet-4-5". A tool call's argument "model" is scanned.
_ENTRY_OWN = frozenset({"timestamp"})
_MODEL_CHANGE_OWN = frozenset({"timestamp", "provider", "modelId"})
_ASSISTANT_OWN = frozenset({"timestamp", "api", "provider", "model", "responseModel"})
#: An ISO 8601 time as Pi writes an entry's (``2026-11-30T10:00:00.000Z``): digits only, no
#: room for a secret; any other text in a ``timestamp`` is scanned as text is
_ISO_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OWNER_HOME = re.compile(  # also Fedora Atomic's /var/home and WSL's /mnt/c/Users
    r"((?:/var)?/home/[^/]+|/Users/[^/]+|/root|/mnt/[a-z]/Users/[^/]+"
    r"|[A-Za-z]:[\\/]Users[\\/][^\\/]+)(?=[\\/]|$)"
)


def _homes_and_users(
    policy: RedactionPolicy, environ: Mapping[str, str], cwd: str
) -> tuple[list[str], list[str]]:
    """The home folders and user names to hide: this machine's, and the home the session's
    cwd is in and its owner, unless that folder is no one's (``/Users/Shared/webapp``,
    ``C:\\Users\\Public\\x``, ``/home/projects/app``: see ``_NO_ONES_FOLDERS``)."""
    homes, users = policy.identity(environ)
    owner = _OWNER_HOME.match(cwd)
    if owner:
        home = owner.group(1)
        name = re.split(r"[\\/]", home)[-1]
        if name.lower() not in _NO_ONES_FOLDERS:
            homes.append(home)
            users.append(name)
    return homes, users


def _format_fields(record: dict[str, Any], node: _Node) -> frozenset[str]:
    """The keys of ``record`` (at ``node``) whose values are the format's own, not text."""
    if node is None:  # an entry, or the header (a v1 header keeps its first model)
        model_change = record.get("type") in ("model_change", "session")
        return _MODEL_CHANGE_OWN if model_change else _ENTRY_OWN
    if node == (None, "message"):
        return _ASSISTANT_OWN if record.get("role") == "assistant" else _ENTRY_OWN
    return frozenset()


def _nearest_key(node: _Node) -> str | None:
    """The name a list's item goes under: the key of the innermost object around it
    (``{"password": [[9182736455]]}``: "password")."""
    while node is not None:
        node, key = node
        if isinstance(key, str):
            return key
    return None


def _cycle_cut(session: Session, entry: Entry) -> bool:
    """The loader made this entry a root to break a parentId cycle (its own id included):
    its parent is in the file, so it is no orphan."""
    parent = entry.raw.get("parentId")
    return (
        isinstance(parent, str) and parent in session.by_id and session.parent_of(entry.id) is None
    )


def action_counts(actions: Mapping[str, int]) -> list[str]:
    """``label: count`` for each share-policy action that happened, in a fixed order."""
    return [f"{label}: {actions[k]}" for k, label in ACTION_LABELS.items() if actions.get(k)]


def gps_warning(count: int, fate: tuple[str, str] = ("goes out", "go out")) -> str:
    """The warning for ``count`` images that carry a GPS location (:data:`GPS_IMAGES`) and
    meet their ``fate`` (said of one, of several) as they are (README: images go out with
    their metadata unless --no-images); empty for none."""
    if not count:
        return ""
    if count == 1:
        said = f"1 image carries a GPS location (EXIF or XMP) and {fate[0]} as it is"
        return f"{said}; --no-images leaves it out"
    said = f"{fmt_int(count)} images carry a GPS location (EXIF or XMP) and {fate[1]} as they are"
    return f"{said}; --no-images leaves them out"


def sensitive_env_values(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Values of ``NAME=value`` pairs whose name looks sensitive and whose value looks real;
    and of an HTTP auth header's value (``Basic dXNl…``), its credential alone too, which a
    session may hold without the scheme (decoded, or passed to ``curl -u``); and the
    password of a URL with credentials, whatever the name (``DATABASE_URL=postgres://app:
    Pg_S3cret_77@db/app``): the agent shows it bare too (``PGPASSWORD=…``, a config file)."""
    found = []
    for name, value in pairs:
        found += _url_passwords(value)
        credential = _header_credential(value)
        if is_secret_assignment(name, value, quoted=False, env_style=True):
            found.append(value)
        elif credential is None or not _says_auth(name, value):
            continue
        if credential is not None:
            found += [value.strip(), credential]  # (the longest is replaced first)
    return list(dict.fromkeys(found))


_URL_CREDENTIALS = UrlCredentialsDetector()


def _url_passwords(value: str) -> list[str]:
    """The passwords of the URLs with credentials in ``value`` (``redis://:pw@cache:6379``),
    as written and percent-decoded, when they look real (as a ``PASSWORD=`` value would): a
    default that repeats the user's name or the scheme (``postgres://postgres:postgres@…``,
    ``amqp://guest:guest@…``) or a placeholder (``${DB_PASSWORD}``) would only shred the
    text it is a word of, as would a short or plain word (``docker``, ``local``): each is
    removed wherever it stands in the session."""
    if "://" not in value:
        return []
    found = []
    for start, end in _URL_CREDENTIALS.find(value, value.lower()):
        scheme_end = value.rfind("://", 0, start)
        scheme = re.split(r"[^A-Za-z0-9+.\-]", value[:scheme_end])[-1].lower()
        user = value[scheme_end + 3 : start - 1].lower()
        password = value[start:end]
        for form in dict.fromkeys((password, urllib.parse.unquote(password))):
            if (
                form.lower() not in (user, scheme)
                and is_secret_assignment("password", form, quoted=False, env_style=True)
                and _worth_repeating(form)  # removed wherever it stands: no plain word
            ):
                found.append(form)
    return found


#: An HTTP auth header's value, perhaps with its name: ``Bearer eyJ…``,
#: ``Authorization: Basic dXNl…`` (``Authorization=Bearer …`` in OTEL_EXPORTER_OTLP_HEADERS);
#: the credential is long enough not to be a word's chance.
_AUTH_HEADER_VALUE = re.compile(
    r"(?:(?:proxy-)?authorization[ \t]*[:=][ \t]*)?"
    r"(?:basic|bearer|token|digest|negotiate)[ \t]+(?P<credential>\S{8,1024})",
    re.IGNORECASE,
)
#: The words of a variable's name: ``AUTH_HEADER`` -> auth, header; ``bearerValue`` ->
#: bearer, value.
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: Words that make a name an auth header's, given a value shaped as one: ``AUTH_HEADER``,
#: ``BEARER``, ``HTTP_AUTHORIZATION_HEADER`` (not ``AUTHOR``, ``OAUTH_CLIENT_ID``: words
#: of their own, and their values are never ``Basic …``).
_AUTH_NAME_WORDS = frozenset({"auth", "authorization", "bearer"})


def _header_credential(value: str) -> str | None:
    """The credential of an auth header's value (``Basic X``: X), unless a placeholder or
    a word (``Bearer ${TOKEN}``, ``Basic credentials``); None when it is none."""
    match = _AUTH_HEADER_VALUE.fullmatch(value.strip())
    if match is None:
        return None
    credential = match["credential"]
    if is_placeholder(credential) or WORDLIKE.fullmatch(credential):
        return None
    # judged as a token's value is (a date, an address, a path, ``${{ secrets.X }}`` is
    # none: each was replaced wherever the session said it)
    return (
        credential
        if is_secret_assignment("token", credential, quoted=False, env_style=True)
        else None
    )


def _says_auth(name: str, value: str) -> bool:
    """Whether a variable holding a header-shaped value is an auth header's: its name says
    auth or bearer (``AUTH_HEADER``, ``BEARER``, which the secret names' rule leaves out: its
    last word counts, and ``HEADER`` is no secret's), or its value names the header."""
    named = not _AUTH_NAME_WORDS.isdisjoint(w.lower() for w in _NAME_WORD.findall(name))
    return named or value.lstrip().lower().startswith(("authorization", "proxy-authorization"))


def env_secret_values(environ: Mapping[str, str]) -> list[str]:
    """The process environment's secrets, e.g. a real ``OPENAI_API_KEY`` leaked into output."""
    return sensitive_env_values(environ.items())


@dataclass(frozen=True, slots=True)
class Hit:
    """One replaced secret: where (entry id, JSON path) and by which detector. No secret.
    ``place`` names where a hit outside the entries is (see ``_PLACES``); the summary
    line says it (the header is no entry), the JSONL report keeps its four fields."""

    entry_id: str | None
    json_path: str
    detector: str
    placeholder: str
    place: str = field(default="", compare=False)


#: A hit's fields in the JSONL report (its place is the summary's).
_REPORTED = ("entry_id", "json_path", "detector", "placeholder")
#: Where a hit outside the entries is (``Hit.place``), as the summary line says it, in its
#: order: a damaged line's place is ``damaged line <n>``, counted by lines.
_HEADER, _FILE_NAME, _WARNINGS, _DAMAGED = "header", "file name", "warnings", "damaged line"
_PLACES = {_HEADER: "the header", _DAMAGED: "damaged line", _WARNINGS: "the warnings",
           _FILE_NAME: "the file name"}  # fmt: skip


@dataclass
class RedactionReport:
    """Counts per detector, the hits, and what the share policy removed."""

    counts: dict[str, int] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    actions: dict[str, int] = field(default_factory=dict)
    redacted: bool = True
    policy_key: str = ""
    detector_version: str = DETECTOR_VERSION
    #: The given secrets (``GIVEN_SECRETS``) this copy replaced, in memory only: a later run
    #: must be given them again (publish and share keep hashes of them, never the values).
    given_values: set[str] = field(default_factory=set, repr=False, compare=False)
    #: Secret -> its placeholder, in memory only: text redacted beside the session later
    #: (the agent's system prompt, :func:`text_redactor`) names the same secret the same way.
    placeholders: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    #: Detector -> the last placeholder number it gave, so later text numbers on from it.
    numbers: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    #: The line of the session's file each record of the copy was read from, the header's
    #: first (in memory only): a record the copy keeps as it was is written as that line
    #: (``jsonl_out.copy_to_jsonl``), not as Python writes its numbers.
    source_lines: list[int] = field(default_factory=list, repr=False, compare=False)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def count(self, action: str, n: int = 1) -> None:
        if n:
            self.actions[action] = self.actions.get(action, 0) + n

    def per_entry(self) -> dict[str | None, dict[str, int]]:
        """entry id (None: header or damaged line) -> detector -> hits."""
        table: dict[str | None, dict[str, int]] = {}
        for hit in self.hits:
            row = table.setdefault(hit.entry_id, {})
            row[hit.detector] = row.get(hit.detector, 0) + 1
        return table

    def summary_line(self, not_redacted: str = "no secret scan") -> str:
        """One line for stderr, e.g. ``redact: 3 secrets in 2 entries (jwt 2, …); …``; a
        copy that only left things out says why it was not scanned (``not_redacted``)."""
        parts = []
        left_out = action_counts(self.actions)  # (not GPS_IMAGES: nothing done to them)
        if not self.redacted and left_out:  # only a choice of what to show, asked for
            return f"left out: {'; '.join(left_out)} ({not_redacted})"
        if not self.redacted:
            parts.append("secret scan off")
        elif self.total:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.counts.items(), key=_by_count))
            parts.append(f"{plural(self.total, 'secret')} in {self._where()} ({kinds})")
        else:
            parts.append("no secrets found")
        return "redact: " + "; ".join(parts + action_counts(self.actions))

    def _where(self) -> str:
        """Where the hits are: "2 entries", "the file name", "14 entries and the header"
        (the header and a file's name were each counted as one more entry)."""
        entries = {hit.entry_id for hit in self.hits if not hit.place}
        places = {hit.place for hit in self.hits if hit.place}
        said = [plural(len(entries), "entry", "entries")] if entries else []
        for place, words in _PLACES.items():
            if place == _DAMAGED:
                lines = sum(1 for p in places if p.startswith(_DAMAGED))
                said += [plural(lines, words)] if lines else []
            elif place in places:
                said.append(words)
        if len(said) < 2:
            return said[0] if said else plural(0, "entry", "entries")
        return f"{', '.join(said[:-1])} and {said[-1]}"

    def page_heading(self) -> str:
        """The page's name for :meth:`page_note`: a copy that only leaves things out was not
        redacted, and a reader should not think it was."""
        return "Left out" if not self.redacted and action_counts(self.actions) else "Redaction"

    def page_note(self) -> str:
        """What the reader of a page made from the copy is told about it."""
        if not self.redacted:  # what was left out: that is what the copy is about
            left_out = "; ".join(action_counts(self.actions))
            parts = [
                f"{left_out} (not scanned for secrets)" if left_out else "not scanned for secrets"
            ]
        elif self.total:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.counts.items(), key=_by_count))
            parts = [f"{plural(self.total, 'secret')} replaced by [REDACTED:…] ({kinds})"]
            parts += action_counts(self.actions)
        else:
            parts = ["scanned for secrets, none found", *action_counts(self.actions)]
        return "; ".join(parts).replace(" -> ", " → ")

    def records(self) -> Iterator[dict[str, Any]]:
        """The JSONL report: a summary line, then one line per hit."""
        yield {
            "type": "summary",
            "detector_version": self.detector_version,
            "policy_key": self.policy_key,
            "redacted": self.redacted,
            "total": self.total,
            "counts": dict(sorted(self.counts.items())),
            "actions": dict(sorted(self.actions.items())),
        }
        for hit in self.hits:
            yield {"type": "hit", **{name: getattr(hit, name) for name in _REPORTED}}

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write the full report atomically (temp file + rename)."""
        atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in self.records()))


def _by_count(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _alternation(words: list[str], before: str, after: str) -> re.Pattern[str] | None:
    return re.compile(f"{before}(?:{'|'.join(map(re.escape, words))}){after}") if words else None


#: Where the home folder starts a path: not inside a longer name or path (`./root`,
#: `/mnt/root`, `~/root`), not a URL's user name (`mysql://root:pw@db`, `ws://root@host`,
#: whose `//` precedes it), nor after a drive (`C:/root`: a capital and a colon, alone;
#: after one letter of a path or a host, `/data/a:/root`, `h:/root`, it is the home); a
#: `file://` URL's path is one (`file:///root/x` becomes `file:///~/x`, still a `file:` URL).
_HOME_BEFORE = r"(?:(?<![\w.\-/~\]])(?<![\s\"'=(\[`][A-Z]:)(?<!^[A-Z]:)|(?P<file>)(?<=file://))"
#: Where it ends: `/`, the end, a blank, a quote or punctuation, not more of a name
#: (`/root.txt`, `/home/alice.bak`, `/root-ca.pem` are other files)
_HOME_AFTER = r"(?![\w\-]|\.[\w\-])"


def _home_placeholder(match: re.Match[str]) -> str:
    return "~" if match.group("file") is None else "/~"


#: Model families whose name a user may bear (an account named after the assistant): in a
#: model's or provider's name it is the family, not the user
_MODEL_FAMILIES = frozenset(
    {
        "claude",
        "gemini",
        "gemma",
        "llama",
        "mistral",
        "mixtral",
        "grok",
        "qwen",
        "deepseek",
        "codex",
        "gpt",
        "opus",
        "sonnet",
        "haiku",
        "glm",
        "minimax",
    }
)  # fmt: skip  (not nova, kimi, titan, phi: people's names as often as models')


class _PathPrivacy:
    """Home directories -> ``~`` and user names -> ``<user>`` (whole words, not generic, in
    any case: "Thanks Hugo" and "HUGO" went out in clear for user "hugo"; a name that is
    also an everyday or code word only where it names someone, see
    :func:`_named_user_patterns`)."""

    def __init__(self, homes: Iterable[str], users: Iterable[str], report: RedactionReport):
        stripped = {h.rstrip("/\\") for h in homes}
        self.homes = sorted((h for h in stripped if len(h) > 1), key=len, reverse=True)
        names = {u for u in users if len(u) >= 3 and u.lower() not in _GENERIC_USERS}
        longest_first = sorted(names, key=len, reverse=True)
        plain = [u for u in longest_first if u.lower() not in _WORD_USERS]
        words = dict.fromkeys(u.lower() for u in longest_first if u.lower() in _WORD_USERS)
        self._plain = list(dict.fromkeys(u.lower() for u in plain))  # what `apply` looks for
        # (a name whose lower case is longer, "İsmail", is not found in the text's lower case)
        self._look_always = any(len(u.lower()) != len(u) for u in plain)
        self._words = list(words)
        self._home = _alternation(self.homes, _HOME_BEFORE, _HOME_AFTER)
        self._user = _name_alternation(plain)
        in_models = [u for u in plain if u.lower() not in _MODEL_FAMILIES]
        self._user_in_models = _name_alternation(in_models)
        self._named = _named_user_patterns(self._words) if words else ()
        encoded = {u for u in users if len(u) >= 2 and u.lower() not in _GENERIC_USERS}
        self._encoded = _encoded_home_pattern(sorted(encoded, key=len, reverse=True))
        self.report = report

    def apply(self, text: str, model_name: bool = False) -> str:
        """``text`` with homes and user names replaced; in a model's or provider's name
        (``model_name``) a user name that is a model family's stays (``claude-sonnet-4-5``
        for user "claude"), other names do not (``alice-corp``)."""
        if self._home and any(home in text for home in self.homes):
            text, n = self._home.subn(_home_placeholder, text)
            self.report.count("home_paths", n)
        user = self._user_in_models if model_name else self._user
        low = text.lower() if user or self._named else ""  # once, not once per name
        if user and (self._look_always or any(name in low for name in self._plain)):
            text, n = user.subn("<user>", text)
            self.report.count("user_names", n)
            low = text.lower() if self._named and n else low
        if self._named and any(word in low for word in self._words):
            for pattern in self._named:
                text, n = pattern.subn(lambda m: m.group("pre") + "<user>", text)
                self.report.count("user_names", n)
        if self._encoded and ("home-" in text or "Users-" in text):
            text, n = self._encoded.subn(lambda m: f"{m['pi'] or m['cc']}<user>", text)
            self.report.count("user_names", n)
        if "home/" in text or "Users" in text:  # someone else's home: /home/<user>/x
            text, n = _OTHER_HOME.subn(r"\g<pre><user>", text)
            self.report.count("user_names", n)
        return text


def _encoded_home_pattern(names: list[str]) -> re.Pattern[str] | None:
    """The home as Pi and Claude Code name a session folder after it (``--home-max-webapp--``,
    ``-home-max-webapp``, ``-Users-max-webapp``, ``C--Users-max-webapp``): a path, whose user
    name is one whatever word it is (user "max" kept its name there, a word found only
    where it names someone), two letters too, and with its ``.`` and ``_`` as the ``-``
    Claude Code makes of them. Pi's form is known by its closing ``--`` (``--home-page-url``
    is an option); none is taken inside a word or after a dash (CSS's ``card--home-max``)."""
    if not names:
        return None
    spellings = "|".join(
        dict.fromkeys(
            "(?i:" + "".join("[-._]" if ch in "._" else re.escape(ch) for ch in name) + ")"
            for name in names
        )
    )
    return re.compile(
        r"(?<![\w.\-])(?:"
        rf"(?P<pi>--(?:home|Users)-)(?:{spellings})(?=--|-[^\s/\\\"'<>]*--)"
        rf"|(?P<cc>-(?:home|Users)-|[A-Za-z]--Users-)(?:{spellings})(?=-|[^\w.]|$))"
    )


def _name_alternation(names: list[str]) -> re.Pattern[str] | None:
    """A user's name as a whole word in any case (``Hugo``, ``HUGO``, ``hugo's``), but a
    model family's only as the account spells it: for user "claude", "Claude Code" and
    "CLAUDE.md" name the assistant, not the user. A name of three letters or fewer in
    lower case or capitalised only: in capitals it is as likely an acronym (user "sam":
    AWS SAM; "ann": an ANN index; "nat": a NAT gateway; review)."""
    spellings = dict.fromkeys(_spellings(name) for name in names)
    if not spellings:
        return None
    return re.compile(rf"(?<![A-Za-z0-9_])(?:{'|'.join(spellings)})(?![A-Za-z0-9_])")


def _spellings(name: str) -> str:
    """How :func:`_name_alternation` finds one name (case-insensitively from its own
    spelling: "İsmail".lower() gains a combining dot, and the name was found nowhere)."""
    if name.lower() in _MODEL_FAMILIES:
        return re.escape(name)
    if len(name) <= 3:
        return "|".join(dict.fromkeys(map(re.escape, (name, name.lower(), name.capitalize()))))
    return f"(?i:{re.escape(name)})"


#: Words that open a greeting or thanks: the capitalised word right after one names someone
#: ("Thanks Max", "Hi, Mark", "Dear Will"); the group ``comma`` holds the comma if one
#: separates them (see ``_VERB_USER_NAMES``)
_GREETING = (
    r"(?<![\w-])(?i:hi|hey|hello|dear|thanks|thank[ \t]+you|thx|cheers|bye|goodbye"
    r"|good[ \t]+(?:morning|afternoon|evening|night))(?:[ \t]*(?P<comma>,))?[ \t]+"
)
#: The same before a name in lower case ("thanks max"), each of fixed width (see
#: :func:`_after`); a bare "hi" only without a comma: "lo, hi, max" is code
_LOWER_GREETINGS = (
    *(
        rf"(?<![\w-])(?i:{word}){between}"
        for word in ("hey", "hello", "dear", "thanks", r"thank[ \t]you", "thx", "cheers", "bye",
                     "goodbye", r"good[ \t]morning", r"good[ \t]afternoon", r"good[ \t]evening",
                     r"good[ \t]night")
        for between in (r"[ \t]", r",[ \t]")
    ),
    r"(?<![\w-])(?i:hi)[ \t]",
)  # fmt: skip
#: A smiley or an emoji ends a phrase as a full stop does ("thanks max :)", "hi max 🙏");
#: not when more of a word follows ("hey max:3000", "max:Debug")
_EMOTICON = r"[ \t]*(?:[:;]-?[()DPp3]|<3|[\u2600-\u27bf\U0001f300-\U0001faff])(?!\w)"
#: After a greeting, a lower-case name ends the phrase ("thanks max", "thanks max, merged",
#: "thanks max for it", "thanks max :)"): in "thanks, max is 5" it is the word
_LOWER_NAME_END = rf"(?=[ \t]*(?:[.!?](?!\w)|[,;][ \t]|$)|[ \t]+for(?![\w-])|{_EMOTICON})"
#: Markdown emphasis around a name ("**Max** said", "thanks *Max*"): its opening marks stay
#: before ``<user>`` and its closing ones after
_EMPHASIS = r"\*{1,2}|_{1,2}"
#: Names that are also a verb or a modal ("will", "may", "mark", "hope"): right after a
#: greeting and a comma, one followed by what that verb takes is the verb ("Thanks, Will do",
#: "Thanks, Mark it done", "Thanks, Hope this helps"), not the name; without the comma it is
#: the name ("Hi Will I need help", "Thanks Mark I'll merge it", "Hi Sue we shipped it")
_VERB_USER_NAMES = """
    will may mark bill sue hope chase cash page rob chip jack echo code work react host box
    cloud rust master stone wade mar nick kit don dawn"""
_VERB_USERS = frozenset(_VERB_USER_NAMES.split())
#: What follows a verb that is a name: its object ("Mark it done", "Mark all as read"); a
#: pronoun that starts a clause is no object ("Thanks, Sue we shipped it" names Sue)
_USED_AS_VERB = r"[ \t]+(?i:it|this|that|these|those|them|all|as)(?![\w-])"
#: What follows a modal ("Will do", "Will be done", "May I ask", "Will you check?") or
#: "hope", which takes a clause ("Hope this helps", "Hope you're well")
_USED_AS_MODAL = (
    r"[ \t]+(?i:do|be|have|get|go|try|fix|check|look|see|send|add|make|take|keep|let|need"
    r"|work|update|run|help|not|it|this|that|you|we|i|they|to)(?![\w-])"
)
_MODAL_USERS = frozenset({"will", "may", "hope"})
#: Word names that are things (software, machines, pages) rather than people: "Python says",
#: "Docker wants", "tell Python to" are about the thing, so only the narrower rules apply
_THING_USER_NAMES = """
    main data server master python java ruby rust swift alpha beta delta echo code work next
    react docker agent bot cloud linux mac box host client page vscode codespace codespaces
    gitpod coder postgres mysql redis jenkins lib"""
_THING_USERS = frozenset(_THING_USER_NAMES.split())
#: Word names whose capitalised possessive names a person far more often than the word
#: ("Max's laptop", "Mark's branch"); not months, seasons, things nor phrases ("June's
#: release", "Python's", "Dean's list", "Christmas Eve's", "Chase's API")
_POSSESSIVE_USER_NAMES = """
    max min will mark bill pat sue rose frank jack rich ray rob don glen jean jay lily nick
    penny rex rod sandy drew cliff carter parker mason miles wade ward norm dom val"""
_POSSESSIVE_USERS = frozenset(_POSSESSIVE_USER_NAMES.split())
#: What a person does, right after the name: "Max said", "Max wants"
_PERSON_VERB = r"(?:said|says|wrote|writes|thinks|thought|wants|told|tells|replied|replies|asks)"
#: Past forms that are also adjectives ("max approved amount", "Mark approved items as
#: done"): a person's only when an object follows ("Max approved the change")
_PERSON_DID = (
    r"(?:asked|approved|mentioned|suggested|agreed|confirmed|reviewed|requested|wanted"
    r"|merged)[ \t]+(?:the|this|that|these|those|it|a|an|my|your|our|his|her|their|me|us"
    r"|him|them|you|about|if|whether)"
)
#: After one of these, what a person did takes no object ("Max asked for a refactor", "Max
#: wanted to keep it", "Max suggested we split it"); not "approved", "reviewed" or
#: "merged", adjectives before one ("Mark approved for release")
_PERSON_DID_INTRANSITIVE = (
    r"(?:asked|mentioned|suggested|agreed|confirmed|requested|wanted)[ \t]+(?:for|to|we)"
)
#: What a reviewer does, after a capitalised name or one in capitals only ("Max requested
#: changes", "Max left a comment", "Max commented"): "max requested changes" in lower case
#: may be a setting's name
_PERSON_REVIEWED = (
    r"(?:requested[ \t]+(?:changes|review)|left[ \t]+(?:a[ \t]+)?(?:comment|review)"
    r"|commented)"
)
#: What makes the capitalised word before a verb or a possessive no one's: more of a name or
#: path (``Math.Max``, ``$Max``) or a determiner ("the Max said", "the Bill's provisions");
#: not "this", "that" nor "her", as often a pronoun or a conjunction ("I think that Max said
#: so", "Is this Max's?", "give her Max's keys")
_NOT_A_PERSON_BEFORE = (
    r"[\w.\-/$@#]",
    *(
        rf"\b{form} "
        for word in ("the", "a", "an", "my", "your", "our", "their", "his", "its", "every",
                     "each", "no", "any", "some", "other", "one")
        for form in (word, word.capitalize())
    ),
)  # fmt: skip
#: Markdown emphasis that may open right before a name ("**Max** said", "reviewed by
#: _Max_"), each of fixed width (see :func:`_after`)
_OPENING_MARKS = (r"\*", r"\*\*", "_", "__")
#: The same before a capitalised name in Markdown emphasis ("**Max** said", "_Max_ said",
#: "__Max__ said"): a ``_`` or ``__`` opens emphasis, one after more of a name (``SET_Max``,
#: ``SET__Max``) joins it to the name; a determiner before the marks makes the word no one's
#: as it does without them ("the **Max** said value")
_NOT_A_PERSON_BEFORE_EMPHASIS = (
    r"[^\W_]",
    r"[.\-/$@#]",
    r"[^\W_]_",
    r"[.\-/$@#]_",
    r"[\w.\-/$@#]__",
    *_NOT_A_PERSON_BEFORE[1:],
    *(f"{context}{mark}" for context in _NOT_A_PERSON_BEFORE[1:] for mark in _OPENING_MARKS),
)
#: The same before a name in lower case, and a subject or a modal, after which it is a verb
#: ("we will sue said company", "I hope said function works")
_NOT_A_PERSON_BEFORE_LOWER = (
    *_NOT_A_PERSON_BEFORE,
    *(
        rf"\b{word} "
        for word in ("i", "I", "we", "you", "they", "to", "this", "This", "that", "these",
                     "those", "whose", "will", "would", "can", "could", "shall", "should",
                     "must", "might", "may", "did", "do", "does")
    ),
)  # fmt: skip
#: Verbs that take a person right after them: "ask Max", "tell Will", "cc Max"
_ASKING = tuple(
    rf"(?<![\w.\-])(?i:{verb})[ \t]"
    for verb in ("ask", "asks", "asked", "asking", "tell", "tells", "told", "telling", "ping",
                 "pings", "pinged", "pinging", "thank", "cc", "cc:")
)  # fmt: skip
#: After one of those, a capitalised name is no one's if more of a name or path follows
#: ("ask Max-bot", "ping max.local")
_ASKED_END = r"(?![A-Za-z0-9_]|[.\-]\w)"
#: Names that are also a month or a season: after one of those, one a number follows is a
#: date ("pinged June 3", "asked Mar 3", "cc Jan 2026 report"), not the person ("ask June")
_DATE_USER_NAMES = """
    jan january feb february mar march apr april may jun june jul july aug august sep sept
    september oct october nov november dec december spring summer autumn fall winter"""
_DATE_USERS = frozenset(_DATE_USER_NAMES.split())
_DATE_AFTER = r"(?![ \t]+[0-9])"
#: After one of those, a lower-case name ends the phrase or a preposition follows ("ask max",
#: "tell max to merge"): "ask max tokens", "ask max and min" are the word
_LOWER_ASKED_END = (
    r"(?=[ \t]*(?:[.!?](?!\w)|[,;][ \t]|$)"
    rf"|[ \t]+(?:about|to|for|if|whether|what|how|why|when|on)(?![\w-])|{_EMOTICON})"
)
#: A commit's trailers, which name a person in any case ("Reviewed-by: Max", "Co-authored-by:
#: max <…>", "Signed-off-by: MAX"): git's and the Linux kernel's documented kinds and the
#: ones their histories use often ("Co-developed-by", "Mentored-by", "Thanks-to")
_TRAILER_KINDS = (
    "signed-off-by", "co-authored-by", "reviewed-by", "acked-by", "tested-by", "reported-by",
    "suggested-by", "helped-by", "co-developed-by", "mentored-by", "approved-by",
    "requested-by", "noticed-by", "original-patch-by", "based-on-patch-by", "originally-by",
    "improved-by", "diagnosed-by", "debugged-by", "bisected-by", "analyzed-by", "analysed-by",
    "found-by", "inspired-by", "authored-by", "assisted-by", "reported-and-tested-by",
    "thanks-to",
)  # fmt: skip
#: Each kind at its start, for :func:`_after_done`, which looks behind at one of
#: ``_TRAILER_TAILS`` (the colon and a blank) first and at the kinds only after one: 84 look-
#: behinds tried at each name (3 kinds of blank after 28 kinds) made a text full of the word
#: several times slower
_TRAILERS = tuple(rf"(?<![\w-]){kind}" for kind in _TRAILER_KINDS)
_TRAILER_TAILS = (":", ": ", ":\t")
#: After a trailer's name: not more of a name joined by a dash ("Co-authored-by: Max-bot" is
#: another account, a bot's, kept whole as "ask Max-bot" is; "<user>-bot" said it was the
#: user's); a dotted login goes as before ("max.mustermann")
_TRAILER_END = r"(?![A-Za-z0-9_]|-\w)"
#: Any other trailer of who did it (``Fixes-reported-by:``, ``Reviewed-and-acked-by:``,
#: ``Originally-by:``: a participle, an adverb, "off" or "patch" before "-by"; not
#: ``Sort-By:``, ``Group-By:`` nor a header's ``X-Powered-By:``), at a line's start (``git
#: log`` indents it), with the capitalised name alone to the line's end or before an address
#: ("Reviewed-and-acked-by: Max <max@x>"). The name in capitals only where one of the kind's
#: words is a person's (``_PERSON_TRAILER``): "Sorted-by: MAX", "Powered-By: MAX" and
#: "Controlled-by: MAX" are data or settings. Linear: anchored at a line's start, its letters
#: and dashes are disjoint, each segment tried once; the group ``kin`` is set when the kind
#: names a person
_PERSON_TRAILER = (
    "reviewed|acked|tested|reported|suggested|helped|developed|mentored|approved|requested"
    "|noticed|improved|diagnosed|debugged|bisected|analyzed|analysed|inspired|authored"
    "|assisted|signed|written|committed|merged"
)
_ANY_TRAILER = (
    rf"^[ \t]*(?:(?P<kin>(?=(?:[A-Za-z]+-)*?(?i:{_PERSON_TRAILER})-))|)"
    r"[A-Z][a-z][A-Za-z]*(?:-[A-Za-z]+)*(?i:ed|ly|-off|-patch)-(?i:by):[ \t]*"
)
#: (the address may hold the name already replaced: ``<<user>@x>``)
_ANY_TRAILER_END = r"(?=(?:[ \t]+<[^\n]*>)?[ \t]*\r?$)"
#: The "by" after one of those, also as a label ("Reviewed by: Max", "**Reviewed by:**
#: Max", "**Reviewed by**: Max")
_BY = tuple(rf"[ \t](?i:by){label}[ \t]" for label in ("", ":", r":\*\*", r"\*\*:"))
#: Participles whose "by" names who did it: "reviewed by Max", "approved by max", "Created
#: by Max", "Reviewed by: Max" (not "sorted by Max", "set by max()", "reviewed by max-width
#: rules); each goes before one of ``_BY`` (see :func:`_after_done`)
_DONE = tuple(
    rf"(?<![\w-])(?i:{done})"
    for done in ("reviewed", "approved", "written", "authored", "co-authored", "created",
                 "maintained", "owned", "reported", "filed", "raised", "opened", "suggested",
                 "proposed", "recommended", "requested", "merged", "committed", "pushed",
                 "fixed", "tested", "edited", "posted", "sent", "shared", "signed",
                 r"signed[ \t]off", "mentioned", "assigned")
)  # fmt: skip
#: Verbs after a lower-case name that only a person does: "max writes", "mark tells" and
#: "max replies" are code's nouns and verbs ("limit max writes to 5", "this mark tells pytest")
_LOWER_PERSON_VERB = r"(?:said|says|wrote|thinks|thought|wants|told|replied)"
#: The same in lower case, only where the doer is a person: "raised by max when" is code
_DONE_LOWER = tuple(
    rf"(?<![\w-])(?i:{done})"
    for done in ("reviewed", "approved", "authored", "co-authored", "signed",
                 r"signed[ \t]off", "assigned")
)  # fmt: skip
#: The same in capitals, only where the doer is a person: "raised by MAX when", "rows created
#: by MAX / 2" are code's; "merged by MAX" and "Created by __MAX__" are not
_DONE_UPPER = (*_DONE_LOWER, *(rf"(?<![\w-])(?i:{done})" for done in ("merged", "committed")))
#: A role in brackets right after a name shows a person: "Max (reviewer)", "max (me)"
_ROLES = (
    "reviewer", "author", "co-author", "maintainer", "owner", "assignee", "approver",
    "committer", "contributor", "reporter", "requester", "lead", r"tech[ \t]lead", "manager",
    "pm", "qa", "me", "he/him", "she/her", "they/them",
)  # fmt: skip
_ROLE = rf"[ \t]?\((?i:{'|'.join(_ROLES)})\)"
#: In capitals a name before a bracket is as often a function ("SELECT MAX(owner)",
#: "=MAX (Owner)"): there the role shows a person only after a blank and where a person's
#: name stands, each of fixed width (see :func:`_after`): at a line's start, indented or
#: after a list's bullet ("MAX (owner)", "  - MAX (owner)"), after "by", "ask" or "cc"
#: ("cc MAX (owner)"; not "BY", SQL's "ORDER BY") or after another's role and a comma
#: ("MAX (reviewer), MAX (me)"); never after SELECT, a bracket, "=" or another comma
_ROLE_UPPER = rf"[ \t]\((?i:{'|'.join(_ROLES)})\)"
_ROLE_UPPER_PLACES = (
    *(rf"^[ \t]{{{n}}}{bullet}" for n in range(9) for bullet in ("", "[-*+•][ \t]")),
    *_ASKING,
    *(rf"(?<![\w-])[Bb]y{label}[ \t]" for label in ("", ":")),
    *(rf"(?i:{role})\)[,;][ \t]" for role in _ROLES),
)
#: Where a capitalised name signs a message, alone to the end of its line: after a dash
#: that starts the line, indented or not, or follows a sentence ("— Max", "  — Max", "LGTM.
#: — Max", "Done! -- Max"; not "Min — Max", "- Max", a list's item, nor "-- Max", an SQL
#: comment) or after a sign-off and a line break ("Cheers,\nMax")
_SIGNING = (
    *(
        rf"{before}{dash}{space}"
        for before in ("^", r"[.!?)][ \t]")
        for dash in ("—", "–")
        for space in ("", r"[ \t]")
    ),
    r"[.!?)][ \t]--[ \t]",
    *(
        rf"(?<![\w-])(?i:{word}){mark}{nl}"
        for word in ("thanks", "thank[ \t]you", "thx", "cheers", "best", "regards",
                     r"best[ \t]regards", r"kind[ \t]regards", "sincerely", "yours",
                     r"best[ \t]wishes")
        for mark in (",", "!")
        for nl in ("\n", "\r\n", "\n\n", "\r\n\r\n")
    ),
)  # fmt: skip
_SIGNED_END = r"(?=[ \t]*(?:[.!][ \t]*)?\r?$)"
#: The same dash indented ("  — Max"): its indent and its dash. A list's item there is no
#: signature ("Fields:\n  — Min\n  — Max"; a list repeats its indent and dash): not when the
#: next line starts with the same, nor the line before (up to ``_ITEM_LENGTH`` characters
#: after its dash: a look-behind is of fixed width, so one per length, tried only where an
#: indented dash and the line's end hold). "\t— Max\n    – Max" signs twice
_INDENTED_SIGNING = tuple(
    (rf"[ \t]{{{n}}}{dash}", space)
    for n in range(1, 9)
    for dash in ("—", "–")
    for space in ("", r"[ \t]")
)
_ITEM_LENGTH = 32


def _after(contexts: Iterable[str], form: str, ahead: str = "") -> str:
    """``form`` (a name as written) right after one of ``contexts``: the name first and
    what precedes it looked behind at (each context of fixed width), so a search skips
    ahead to the name instead of trying every context at every character (several times
    faster on a long output full of the word). ``ahead``, what must follow the name, is
    tried before the contexts: it rules out most of the word's uses at once ("max(")."""
    return f"{form}{ahead}(?:{'|'.join(f'(?<={context}{form})' for context in contexts)})"


def _not_after(contexts: Iterable[str], form: str, ahead: str = "") -> str:
    """``form`` not right after any of ``contexts`` (see :func:`_after`)."""
    return form + ahead + "".join(f"(?<!{context}{form})" for context in contexts)


def _named_user_patterns(words: list[str]) -> tuple[re.Pattern[str], ...]:
    """Where a user name that is also a word names someone: a home (/home/max, ~max),
    user@host and git@host:max/repo, ``id`` output (uid=1000(max)), ``sudo -u max``, ``chown
    max:max``, ``user:``/``author:``/``LOGNAME=`` fields, a commit's ``Reviewed-by:`` and
    the owner columns of ``ls -l`` (the name in any case there); "Max" or "MAX" right after a
    greeting ("Thanks Max", "thanks **Max**", "Hi Will I need help", not "Thanks, Will do"),
    "max" ending one ("thanks max", "thanks max :)", not "the thanks page"); before a few
    things a person does ("Max said", "**Max** said", "max said", "MAX said", "Max approved
    the change", "Max requested changes"), after "ask"/"tell"/"ping"/"cc" ("ask Max", also
    "ask max about"; not "pinged June 3") and "reviewed by"/"approved by" ("reviewed by
    Max"; not "reviewed by max-width rules", "merged by June"), before a role ("Max
    (reviewer)"), signing ("— Max", "Cheers,\\nMax"; not "Min — Max") and a person's
    possessive ("Max's laptop", not "the Bill's provisions"): see
    :func:`_person_pattern`. Narrow on purpose: ``print(data)``, ``python -u main.py`` or
    ``HEAD:main/x.py`` are code, and elsewhere "Max", "MAX" or "Mark" is as likely the word as
    the name ("Max tokens", "MAX_RETRIES", "Mark this done", "Will you", "Python says"), so
    prose keeps it."""
    name = rf"(?P<name>(?i:{'|'.join(map(re.escape, words))}))(?![A-Za-z0-9_])"
    end = "(?![A-Za-z0-9_])"

    def not_a_verb(word: str) -> str:
        """After a greeting's comma only (the group ``comma``), the verb or modal itself."""
        if word not in _VERB_USERS:
            return ""
        used = _USED_AS_MODAL if word in _MODAL_USERS else _USED_AS_VERB
        return f"(?(comma)(?!(?:{_EMPHASIS})?{used}))"

    # (in emphasis, "_" may close it: "Thanks _Max_")
    spoken_end = r"(?(em)(?![A-Za-z0-9]|_+[A-Za-z0-9])|(?![A-Za-z0-9_]))"
    spoken = "|".join(
        re.escape(form) + spoken_end + not_a_verb(word)
        for word in words
        for form in (word.title(), word.upper())
    )
    people = [word for word in words if word not in _THING_USERS]
    trailed = (_after_done(_TRAILERS, _TRAILER_TAILS, re.escape(w), _TRAILER_END) for w in words)
    # "thanks max", not "the thanks page", "a hello server"
    greeted = "|".join(_after(_LOWER_GREETINGS, re.escape(word)) + end for word in people)
    field = r"(?:user(?:name)?|login|logname|author|owner|committer)[\"']?[ \t]*[=:][ \t]*[\"']?"
    ls_owner = r"^[-bcdlps][-rwxsStT]{9}[.+@]?[ \t]+[0-9]+[ \t]+"
    chown = r"(?<![\w-])(?:chown|chgrp)[ \t]+(?:-[A-Za-z]+[ \t]+)*"
    sources = [
        (rf"(?P<pre>/home/|/Users/|\\Users\\|[@~]){name}", re.IGNORECASE),
        (rf"(?P<pre>@[\w.\-]+:){name}(?=/)", re.IGNORECASE),  # git@github.com:max/repo
        (rf"(?P<pre>(?<![\w-])(?:[ug]id=|groups=|,)[0-9]+\(){name}(?=\))", 0),  # id output
        (rf"(?P<pre>{field}){name}", re.IGNORECASE),
        (rf"(?P<pre>(?<![\w-])(?:sudo|su|runuser|crontab|pkill|pgrep|killall)[ \t]+"
         rf"(?:-[A-Za-z]+[ \t]+)*-u[ \t]*){name}", 0),
        (rf"(?P<pre>(?<![\w-])--user[= ]){name}", 0),
        (rf"(?P<pre>{chown}){name}", 0),
        (rf"(?P<pre>{chown}<user>:){name}", 0),  # chown max:max
        (rf"(?P<pre>{ls_owner}){name}", re.MULTILINE),
        (rf"(?P<pre>{ls_owner}<user>[ \t]+){name}", re.MULTILINE),  # the group column
        # (an empty ``pre`` goes last: first, it kept the engine from skipping ahead to the
        # name's first letter, and a pass over a long output took three times as long)
        (rf"(?<![A-Za-z0-9_.]){name}(?=@)(?P<pre>)", re.IGNORECASE),
        # a commit's trailers: Reviewed-by: Max, Co-authored-by: max <…>
        (rf"(?:{'|'.join(trailed)})(?P<pre>)", re.IGNORECASE),
        # Thanks Max, HI MAX, thanks **Max**
        (rf"(?P<pre>{_GREETING}(?P<em>{_EMPHASIS})?)(?:{spoken})", 0),
    ]  # fmt: skip
    if people:
        sources += [
            (rf"(?:{greeted}){_LOWER_NAME_END}(?P<pre>)", re.MULTILINE),  # thanks max
            (_person_pattern(people), re.MULTILINE),
        ]
    # any other trailer, alone on its line: Reported-and-acked-by: Max; not for a month's name
    # ("Completed-by: June" is a date, as "merged by June" is)
    if signers := [word for word in people if word not in _DATE_USERS]:
        titles = "|".join(re.escape(word.title()) for word in signers)
        capitals = "|".join(re.escape(word.upper()) for word in signers)
        sources.append(
            (rf"(?P<pre>{_ANY_TRAILER})(?:{titles}|(?(kin){capitals}|(?!))){_ANY_TRAILER_END}",
             re.MULTILINE)
        )  # fmt: skip
    if owners := [word for word in words if word in _POSSESSIVE_USERS]:  # Max's laptop
        owned = "|".join(_not_after(_NOT_A_PERSON_BEFORE, re.escape(w.title())) for w in owners)
        sources.append((rf"(?:{owned})(?=['’]s(?![\w-]))(?P<pre>)", 0))
    return tuple(re.compile(source, flags) for source, flags in sources)


def _person_pattern(people: list[str]) -> str:
    """The phrasings that show a person, for names that are no thing's (see
    :func:`_named_user_patterns`), as one pattern (one pass over the text): what the person
    does ("Max said", "**Max** said", "max said", "MAX said", "Max requested changes"), who
    asks them or is asked ("ask Max", "tell max to merge"), what they did ("reviewed by
    Max"), their role ("Max (reviewer)") and their signature ("— Max", "Cheers,\\nMax").
    Months are no one's after "by" ("merged by June" is a date). Each name is followed by
    what must come after it first: most of the word's uses fail there."""
    did = rf"{_PERSON_VERB}|{_PERSON_DID}|{_PERSON_DID_INTRANSITIVE}"
    forms = []
    for word in people:
        title, lower, upper = map(re.escape, (word.title(), word, word.upper()))
        closing = rf"(?:(?<=\*{title})\*{{1,2}}|(?<=_{title})_{{1,2}})?"  # **Max** said
        shut = rf"(?:(?<=\*{upper})\*{{1,2}}|(?<=_{upper})_{{1,2}})?"  # __MAX__ said
        lower_did = (
            _LOWER_PERSON_VERB
            if word in _VERB_USERS
            else rf"{_LOWER_PERSON_VERB}|{_PERSON_DID}|{_PERSON_DID_INTRANSITIVE}"
        )
        forms += [
            # Max said, Max approved the change, Max asked for a refactor, MAX said, max said
            _not_after(
                _NOT_A_PERSON_BEFORE_EMPHASIS,
                title,
                rf"(?={closing}[ \t]+(?:{did}|{_PERSON_REVIEWED})(?![\w-]))",
            ),
            _not_after(_NOT_A_PERSON_BEFORE_LOWER, lower, rf"(?=[ \t]+(?:{lower_did})(?![\w-]))"),
            # what a lower-case name does ("MAX WRITES PER SECOND" is no one's), also in
            # emphasis ("__MAX__ said")
            _not_after(
                _NOT_A_PERSON_BEFORE_EMPHASIS,
                upper,
                rf"(?={shut}[ \t]+(?i:{lower_did}|{_PERSON_REVIEWED})(?![\w-]))",
            ),
            # ask Max, cc: Max; ask max, tell max to merge
            _after(_ASKING, title, _ASKED_END + (_DATE_AFTER if word in _DATE_USERS else "")),
            _after(_ASKING, lower, _LOWER_ASKED_END),
            # Max (reviewer), max (me); MAX (owner) on its own line
            *(_not_after(_NOT_A_PERSON_BEFORE, form, f"(?={_ROLE})") for form in (title, lower)),
            _after(_ROLE_UPPER_PLACES, upper, f"(?={_ROLE_UPPER})"),
            _after(_SIGNING, title, _SIGNED_END),  # — Max, Cheers,\nMax
            _indented_signature(title),  # LGTM\n  — Max
        ]
        if word not in _DATE_USERS:  # reviewed by Max, reviewed by **Max**, approved by max.
            forms += [
                *_done_by(title, _DONE),
                *_done_by(upper, _DONE_UPPER),
                _after_done(_DONE_LOWER, _BY, lower, _LOWER_ASKED_END),
            ]
    return rf"(?:{'|'.join(forms)})(?P<pre>)"


def _done_by(form: str, bare: tuple[str, ...]) -> list[str]:
    """``form`` after "reviewed by" and its kin (``_DONE``) in Markdown emphasis ("reviewed
    by **Max**", "approved by _MAX_"), or bare after one of ``bare`` ("reviewed by MAX", not
    "raised by MAX when": in capitals the word is as likely a function's): an opening ``_``
    may close after the name, where a bare name ends at a letter, a digit or ``_``
    ("reviewed by max_width")."""
    end = rf"{_ASKED_END}(?!\()"
    stars = [by + mark for by in _BY for mark in _OPENING_MARKS if "_" not in mark]
    underscores = [by + mark for by in _BY for mark in _OPENING_MARKS if "_" in mark]
    return [
        _after_done(bare, _BY, form, end),
        _after_done(_DONE, stars, form, end),
        _after_done(_DONE, underscores, form, f"(?=_{{1,2}}{_ASKED_END})"),
    ]


def _indented_signature(form: str) -> str:
    """``form`` after an indented dash, alone to its line's end, in no list (see
    ``_INDENTED_SIGNING``): the name and the line's end first, then each indent and dash
    and, only where one holds, the next line and the line before."""
    groups = (
        rf"(?<=^{start}{space}{form})(?![^\n]*\n{start})"
        + "".join(
            rf"(?<!^{start}[^\n]{{{length}}}\n{start}{space}{form})"
            for length in range(1, _ITEM_LENGTH + 1)
        )
        for start, space in _INDENTED_SIGNING
    )
    return f"{form}{_SIGNED_END}(?:{'|'.join(groups)})"


def _after_done(verbs: Iterable[str], tails: Iterable[str], form: str, ahead: str) -> str:
    """``form`` after one of ``verbs`` and one of ``tails`` (see :func:`_after`): each tail
    looked behind at first, then the verbs before it, so a name after no "by" costs a few
    look-behinds, not one per verb and tail (a text full of "Max " took four times as
    long)."""
    verbs = list(verbs)
    groups = (
        f"(?<={tail}{form})(?:{'|'.join(f'(?<={verb}{tail}{form})' for verb in verbs)})"
        for tail in tails
    )
    return f"{form}{ahead}(?:{'|'.join(groups)})"


_Node = tuple[Any, str | int] | None  # (parent node, key): a JSON path built only on a hit

#: Numbers of the format's own, by where they are (see :func:`_format_number`): an entry's
#: (a compaction's ``tokensBefore``, a v1 one's ``firstKeptEntryIndex``) and a message's
#: (its time in ms, a ``!cmd``'s ``exitCode``)
_ENTRY_NUMBERS = frozenset({"timestamp", "tokensBefore", "firstKeptEntryIndex", "version"})
_MESSAGE_NUMBERS = frozenset({"timestamp", "exitCode"})
_MESSAGE: _Node = (None, "message")
#: Objects whose numbers are all the format's: an answer's usage and cost, the truncation
#: a built-in tool's result reports (line and byte counts), a v1 attachment's size
_NUMBER_OBJECTS = (
    (_MESSAGE, "usage"),
    ((_MESSAGE, "usage"), "cost"),
    ((_MESSAGE, "details"), "truncation"),
)


def _format_number(node: _Node, key: str) -> bool:
    """Whether a number under ``key`` (in the object at ``node``) is one of the format's own:
    a count or a time, never a secret. A ``--secret 1000`` made an answer's
    ``"cacheRead": 1000`` a string, and Pi's page then said "RNaNM" for its tokens."""
    if node is None:  # an entry or the header
        return key in _ENTRY_NUMBERS
    if node == _MESSAGE:
        return key in _MESSAGE_NUMBERS
    if node in _NUMBER_OBJECTS:
        return True
    parent, index = node  # ("attachments", n): {"size": 2048, …}
    return key == "size" and isinstance(index, int) and parent == (_MESSAGE, "attachments")


def _json_path(node: _Node) -> str:
    parts: list[str] = []
    while node is not None:
        node, key = node
        if isinstance(key, int):
            parts.append(f"[{key}]")
        elif _IDENTIFIER.fullmatch(key):
            parts.append(f".{key}")
        else:
            parts.append(f"[{json.dumps(key, ensure_ascii=True)}]")
    return "$" + "".join(reversed(parts))


def _is_image(obj: dict[str, Any]) -> bool:
    mime = obj.get("mimeType")
    if mime is None:
        return obj.get("type") == "image"
    return isinstance(mime, str) and mime.lower().startswith("image/")


#: How the image formats a session holds begin (PNG, JPEG, GIF, WebP and the other RIFFs,
#: BMP, ICO, TIFF both ways, the ISO formats AVIF/HEIC, JPEG XL both ways)
_IMAGE_MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"BM", b"\x00\x00\x01\x00",
                b"II*\x00", b"MM\x00*", b"\xff\x0a", b"\x00\x00\x00\x0cJXL ")  # fmt: skip


def _image_bytes(value: str) -> bool:
    """Base64 that begins as an image file does: the bytes of a picture, not text that an
    object shaped like an image carries (a tool's argument, an SVG, a key in ``data``)."""
    head = "".join(value[:64].split())[:24]
    try:
        start = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
    except ValueError:
        return False
    return start.startswith(_IMAGE_MAGIC) or start[4:8] == b"ftyp"


class _Base64Window:
    """Bytes read here and there from base64 without decoding the whole (a 20 MB photo's
    metadata is in its first kilobytes; a PNG's chunk headers are 12 bytes each)."""

    def __init__(self, value: str) -> None:
        blank = not value.isascii() or any(map(value.__contains__, _ASCII_BLANKS))
        self.digits = "".join(value.split()) if blank else value
        self.size = len(self.digits.rstrip("=")) * 3 // 4

    def read(self, start: int, length: int) -> bytes:
        """``length`` bytes from ``start`` (fewer at the end; none where it is no base64)."""
        if start < 0 or length <= 0 or start >= self.size:
            return b""
        first, last = start // 3 * 4, -(-(start + length) // 3) * 4
        try:
            chunk = base64.b64decode(self.digits[first:last])
        except ValueError:
            return b""
        return chunk[start % 3 : start % 3 + length]


#: What ``str.split()`` takes for a blank in ASCII (``_BASE64``'s ``\s``)
_ASCII_BLANKS = " \t\n\r\f\v\x1c\x1d\x1e\x1f"
#: GPS IFD tags of a position: GPSLatitude, GPSLongitude
_GPS_POSITION = frozenset({2, 4})
#: How many segments, chunks or IFD entries are read before giving up (a hostile file)
_MAX_PARTS = 100_000


def _tiff_located(tiff: bytes) -> bool:
    """EXIF (TIFF) whose first IFD points to a GPS IFD (tag 0x8825) holding a latitude or a
    longitude (a camera with its location off may write one without); a pointer that cannot
    be followed counts (a place may be there)."""
    tiff = tiff.removeprefix(b"Exif\0\0")  # (a PNG's or WebP's EXIF may keep JPEG's prefix)
    order = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return False
    (ifd,) = struct.unpack_from(f"{order}I", tiff, 4)
    gps = None
    for tag, value in _ifd_entries(tiff, ifd, order):
        if tag == 0x8825:
            gps = value
            break
    if gps is None:
        return False
    if gps + 2 > len(tiff):  # beyond the EXIF: it may hold a place all the same
        return True
    return any(tag in _GPS_POSITION for tag, _ in _ifd_entries(tiff, gps, order))


def _ifd_entries(tiff: bytes, at: int, order: str) -> Iterator[tuple[int, int]]:
    """(tag, value or offset) of each whole entry of the IFD at ``at``."""
    if at + 2 > len(tiff):
        return
    (count,) = struct.unpack_from(f"{order}H", tiff, at)
    for index in range(min(count, _MAX_PARTS)):
        entry = at + 2 + 12 * index
        if entry + 12 > len(tiff):
            return
        tag, _, _, value = struct.unpack_from(f"{order}HHII", tiff, entry)
        yield tag, value


#: A GPS position in an XMP packet (``exif:GPSLatitude="48,51.29N"``, or as an element):
#: a phone's or an editor's copy of the EXIF one, sometimes the only one left
_XMP_POSITION = re.compile(
    rb"(?i:GPS(?:Latitude|Longitude))\s*=\s*[\"'][^\"'\s]"
    rb"|<[\w.\-]+:(?i:GPS(?:Latitude|Longitude))(?:\s[^<>]{0,200})?>\s*[^<\s]"
)  # (a drone's "drone-dji:GpsLatitude" too, and an element with attributes)
#: How JPEG's APP1 XMP segments begin (the packet, and the rest of a long one)
_XMP_APP1 = (b"http://ns.adobe.com/xap/1.0/\0", b"http://ns.adobe.com/xmp/extension/\0")
#: The most a PNG's text chunks are inflated to, all together (their metadata is a few
#: kilobytes; a zlib bomb of a few kilobytes would be gigabytes, and one in each chunk took
#: 15 s for a 0.4 MB image)
_MAX_INFLATED = 1 << 20
#: The most metadata text chunks of one PNG read whole (a camera writes one or two)
_MAX_METADATA_CHUNKS = 16


def _metadata_located(data: bytes) -> bool:
    """EXIF (TIFF) or an XMP packet that holds a GPS position."""
    if data.removeprefix(b"Exif\0\0")[:2] in (b"II", b"MM"):
        return _tiff_located(data)
    return _XMP_POSITION.search(data) is not None


def _jpeg_located(image: _Base64Window) -> bool:
    """An APP1 Exif or XMP segment before the first scan that holds a GPS position."""
    at = 2
    for _ in range(_MAX_PARTS):
        head = image.read(at, 4)
        if len(head) < 4 or head[0] != 0xFF:
            return False
        if head[1] == 0xFF:  # a fill byte
            at += 1
            continue
        if head[1] in (0x01, *range(0xD0, 0xD9)):  # no length (TEM, RSTn, SOI)
            at += 2
            continue
        if head[1] in (0xD9, 0xDA):  # the end, or the first scan: metadata comes before it
            return False
        length = int.from_bytes(head[2:], "big")
        if head[1] == 0xE1 and length > 8:
            segment = image.read(at + 4, length - 2)
            if segment.startswith(b"Exif\0\0") and _tiff_located(segment[6:]):
                return True
            if segment.startswith(_XMP_APP1) and _XMP_POSITION.search(segment):
                return True
        at += 2 + max(length, 2)
    return False


def _png_located(image: _Base64Window) -> bool:
    """An eXIf chunk (anywhere up to IEND) whose EXIF holds a GPS position, or a text chunk
    that does: XMP (``XML:com.adobe.xmp``) or ImageMagick's hex-encoded profiles (``Raw
    profile type exif``, ``… APP1``, ``… xmp``)."""
    at = 8
    budget = [_MAX_INFLATED]  # bytes inflated, all chunks together (a bomb in each)
    read = 0  # metadata text chunks read whole
    for _ in range(_MAX_PARTS):
        head = image.read(at, 8)
        if len(head) < 8 or head[4:] == b"IEND":
            return False
        length = int.from_bytes(head[:4], "big")
        kind = head[4:]
        if kind == b"eXIf" and _tiff_located(image.read(at + 8, length)):
            return True
        if (
            kind in _PNG_TEXT
            and read < _MAX_METADATA_CHUNKS
            and _PNG_METADATA.match(image.read(at + 8, min(length, 64)))
        ):
            read += 1
            # (no more of it than its text could be: a 100 MB chunk was decoded whole)
            chunk = image.read(at + 8, min(length, 2 * _MAX_INFLATED + 256))
            if _png_text_located(kind, chunk, budget):
                return True
        at += 12 + length
    return False


_PNG_TEXT = (b"tEXt", b"zTXt", b"iTXt")
#: The keywords of the text chunks that hold metadata which may say where
_PNG_METADATA = re.compile(rb"(?:XML:com\.adobe\.xmp|Raw profile type (?:exif|APP1|xmp))\0")


def _png_text_located(kind: bytes, chunk: bytes, budget: list[int]) -> bool:
    """Whether a metadata text chunk (see :data:`_PNG_METADATA`) holds a GPS position;
    ``budget``: the bytes the image's chunks may still inflate to, spent here."""
    keyword, _, rest = chunk.partition(b"\0")
    compressed = kind == b"zTXt"
    if kind == b"zTXt":
        rest = rest[1:]  # the compression method
    elif kind == b"iTXt":  # flag, method, language, translated keyword, then the text
        compressed = rest[:1] == b"\1"
        rest = rest[2:].split(b"\0", 2)[-1] if rest[2:].count(b"\0") >= 2 else b""
    if compressed:
        if budget[0] <= 0:
            return False
        try:
            rest = zlib.decompressobj().decompress(rest, budget[0])
        except zlib.error:
            return False
        budget[0] -= len(rest)
    if keyword.startswith(b"Raw profile type "):
        rest = _raw_profile(rest)
    return _metadata_located(rest)


def _raw_profile(text: bytes) -> bytes:
    """The bytes of ImageMagick's raw profile (``\\nexif\\n  <size>\\n<hex in lines>``); none
    when it is not one."""
    parts = text[: 2 * _MAX_INFLATED + 64].split(None, 2)  # (EXIF fits in 64 KB)
    digits = re.sub(rb"\s+", b"", parts[2]) if len(parts) == 3 else b""
    try:
        return bytes.fromhex(digits[: len(digits) // 2 * 2].decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return b""


def _webp_located(image: _Base64Window) -> bool:
    """An EXIF chunk whose EXIF holds a GPS position, or an XMP chunk that holds one."""
    at = 12
    for _ in range(_MAX_PARTS):
        head = image.read(at, 8)
        if len(head) < 8:
            return False
        length = int.from_bytes(head[4:], "little")
        if head[:4] == b"EXIF" and _tiff_located(image.read(at + 8, length)):
            return True
        if head[:4] == b"XMP " and _XMP_POSITION.search(image.read(at + 8, length)):
            return True
        at += 8 + length + (length & 1)
    return False


def _carries_gps(value: str) -> bool:
    """Base64 of a JPEG, PNG or WebP whose EXIF or XMP says where it was taken (a phone's photo):
    read from its metadata only, a few small decodes (the picture is not decoded)."""
    image = _Base64Window(value)
    start = image.read(0, 12)
    if start.startswith(b"\xff\xd8\xff"):
        return _jpeg_located(image)
    if start.startswith(b"\x89PNG\r\n\x1a\n"):
        return _png_located(image)
    if start[:4] == b"RIFF" and start[8:12] == b"WEBP":
        return _webp_located(image)
    return False


def session_images(session: Session) -> Iterator[list[str]]:
    """The base64 of each image object in ``session`` that goes out as it is (the fields
    redaction keeps unread: a v1 attachment's ``content`` and ``preview``, an image
    block's or an API source's ``data``), a list per object."""
    stack: list[Any] = list(session_records(session))
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            pictures = [
                data
                for key in _opaque_fields(value)
                if isinstance(data := value.get(key), str)
                and _BASE64.fullmatch(data) is not None
                and _image_bytes(data)
            ]
            if pictures:
                yield pictures
            stack += [item for item in value.values() if isinstance(item, (dict, list))]
        elif isinstance(value, list):
            stack += [item for item in value if isinstance(item, (dict, list))]


def images_with_gps(session: Session) -> int:
    """How many images of ``session`` (as it goes out) carry a GPS location in their EXIF:
    for a copy no policy touched (``share --no-redact``), which no redaction walked."""
    return sum(any(map(_carries_gps, pictures)) for pictures in session_images(session))


#: How a PDF begins, and its base64 (``%PDF-`` encoded)
_PDF_MAGIC, _PDF_BASE64 = "%PDF-", "JVBERi"


def _base64_text(value: str) -> str | None:
    """The UTF-8 text base64 encodes (an SVG, a text file), which can be scanned; None when
    the bytes are no text (or no base64). A PDF is none even when its bytes are ASCII: its
    text may be hex strings or compressed streams, which no detector reads."""
    try:
        text = base64.b64decode("".join(value.split()), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return None
    return None if text.startswith(_PDF_MAGIC) else text


def _media_type(source: dict[str, Any]) -> str:
    """The API source's ``media_type``, lower case, without parameters (``; charset=…``)."""
    media = source.get("media_type")
    return media.split(";")[0].strip().lower() if isinstance(media, str) else ""


def _base64_source(obj: dict[str, Any]) -> bool:
    """The Anthropic API's inline bytes (``{"type": "base64", "media_type": …, "data": …}``),
    the ``source`` of a document or image block in a Claude Code transcript."""
    return (
        obj.get("type") == "base64"
        and isinstance(obj.get("data"), str)
        and isinstance(obj.get("media_type"), str)  # (an argument {"type": "base64", …}: text)
    )


def _opaque_fields(obj: dict[str, Any]) -> tuple[str, ...]:
    """Fields holding base64 image bytes: kept as they are (images are not scanned) when
    they begin as an image does (`_image_bytes`); else text, scanned decoded, or bytes that
    are neither, left out. Only an image's: ``{"type": "image", "mimeType": "text/plain",
    "data": …}`` is text; an API source is an image's when its media type says so."""
    if _base64_source(obj):
        return ("data",) if _media_type(obj).startswith("image/") else ()
    if not _is_image(obj):
        return ()
    return ("data",) if "data" in obj else ("content", "preview")


def _encoded_text_fields(obj: dict[str, Any]) -> tuple[str, ...]:
    """Base64 fields of a document (a v1 attachment, ``.env`` attached to a prompt; an API
    source that is no image's, a text file or a PDF): text to decode and scan like any
    other, not opaque bytes; bytes that are no text are left out."""
    if _base64_source(obj):
        return () if _media_type(obj).startswith("image/") else ("data",)
    if obj.get("type") != "document" or _is_image(obj):
        return ()
    return ("content", "preview", "data")


def _left_out_document(value: Any) -> dict[str, str] | None:
    """The note that takes the place of an API document block whose bytes are no text (a PDF
    attached to a prompt or read by a tool: ``{"type": "document", "source": {"type":
    "base64", "media_type": "application/pdf", "data": "JVBER…"}}``), which cannot be
    scanned, so the page and the Markdown say what was there; None for any other value (a
    text document, its bytes decoded and scanned; a source by address, file id or text)."""
    if not isinstance(value, dict) or value.get("type") != "document":
        return None
    source = value.get("source")
    if not isinstance(source, dict) or not _base64_source(source):
        return None
    data, media = source["data"], _media_type(source)
    if media != "application/pdf" and _BASE64.fullmatch(data) and _base64_text(data) is not None:
        return None
    # (no media type of the file's own: one lower-cased here would carry a --secret past
    # the note's scan, which matches given secrets as written)
    pdf = media == "application/pdf" or data.lstrip().startswith(_PDF_BASE64)
    what = "PDF document" if pdf else "document"
    size = decoded_size(data)
    said = f"{what}, {fmt_int(size)} byte{'' if size == 1 else 's'}"
    return {"type": "text", "text": f"[{said}, left out: not text, so not scanned for secrets]"}


def _named_value(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    """``{"name": "DB_PASSWORD", "value": "…"}`` (k8s/ECS env, Postman headers): the value
    is judged under the name it carries, not under the word "value"."""
    for name_key, value_key in (("name", "value"), ("key", "value"), ("Name", "Value")):
        name = obj.get(name_key)
        if isinstance(name, str) and isinstance(obj.get(value_key), str):
            return value_key, name
    return None, None


class _Redactor:
    """Copies records, replacing secrets by numbered placeholders and hiding paths."""

    def __init__(
        self,
        scanner: Scanner | None,
        privacy: _PathPrivacy | None,
        report: RedactionReport,
        given: Mapping[str, str] | None = None,
    ) -> None:
        self.scanner, self.privacy, self.report = scanner, privacy, report
        # the policy's given secrets (value -> kind), as report.given_values names them
        self.given: Mapping[str, str] = given or {}
        self.active = scanner is not None or privacy is not None
        self.placeholders = report.placeholders  # secret -> placeholder, stable in one session
        self.found: dict[str, str] = {}  # secret -> context detector that found it
        self.numbers = report.numbers  # detector -> its last number, shared as placeholders
        self.same_keys: set[str] = set()  # dict keys known to come through unchanged
        self.whole_fields: frozenset[str] = frozenset()  # of this record: secrets whole
        self.place = ""  # where the text is when outside the entries (``Hit.place``)

    def record(self, record: dict[str, Any], entry_id: str | None) -> dict[str, Any]:
        """A deep copy of one JSON record, every string transformed; iterative (any depth)."""
        out: dict[str, Any] = {}
        stack: list[tuple[Any, Any, _Node]] = [(record, out, None)]
        while stack:
            source, target, node = stack.pop()
            if isinstance(source, dict):
                opaque = _opaque_fields(source)
                encoded = _encoded_text_fields(source)
                value_key, value_name = _named_value(source)
                own = _format_fields(source, node) if self.active else frozenset()
                located = False  # an image kept as it is says where it was taken (EXIF GPS)
                for key, value in source.items():
                    new_key = self._key(key, entry_id, node) if isinstance(key, str) else key
                    while new_key in target:
                        new_key = f"{new_key}~"
                    here = (node, new_key)
                    if isinstance(value, str):
                        # ids are scanned too (a hostile or damaged file can hold a token
                        # there): placeholders are stable, so links between entries hold
                        base64_like = (key in opaque or key in encoded) and _BASE64.fullmatch(value)
                        keep = key in opaque and base64_like and _image_bytes(value)
                        located = located or bool(keep and _carries_gps(value))
                        field = value_name if key == value_key else key
                        # (an SVG, or text an image's shape carries: scanned decoded)
                        decoded = (
                            _base64_text(value)
                            if base64_like and self.active and (key in encoded or not keep)
                            else None
                        )
                        if value in _FORMAT_VALUES.get(key, ()):
                            target[new_key] = value  # the format's own word, not text
                        elif key in own:
                            target[new_key] = self._format_value(key, value, entry_id, here)
                        elif decoded is not None or (
                            (key in encoded or (key in opaque and not keep))
                            and base64_like
                            and self.active
                        ):  # (bytes neither text nor a picture: left out, counted)
                            target[new_key] = self._encoded_text(value, decoded, entry_id, here)
                        else:
                            target[new_key] = (
                                value if keep else self.text(value, entry_id, here, field)
                            )
                    elif type(value) in (int, float) and _format_number(node, key):
                        target[new_key] = value  # a count or a time of Pi's: never a secret
                    elif type(value) in (int, float) and (
                        number := self._secret_number(key, value)
                    ):
                        target[new_key] = self.text(number, entry_id, here, key)
                    elif key in own and not isinstance(value, (dict, list)):
                        target[new_key] = value  # a message's time in ms
                    else:
                        target[new_key] = self._container(value, here, stack)
                self.report.count(GPS_IMAGES, located)
            else:
                # ["Authorization", "Basic …"]: a header or variable as a two-item list.
                pair = len(source) == 2 and isinstance(source[0], str)
                for index, value in enumerate(source):
                    here = (node, index)
                    field = source[0] if pair and index == 1 else None
                    if isinstance(value, str):
                        target.append(self.text(value, entry_id, here, field))
                    elif type(value) in (int, float) and (
                        number := self._secret_number(name := field or _nearest_key(node), value)
                    ):
                        target.append(self.text(number, entry_id, here, name))
                    elif self.scanner is not None and (note := _left_out_document(value)):
                        self.report.count("attachments_omitted")  # a PDF: its note instead
                        target.append(self._container(note, here, stack))
                    else:
                        target.append(self._container(value, here, stack))
        return out

    def _secret_number(self, key: Any, value: Any) -> str | None:
        """The text of a JSON number that is a secret, to redact (so it becomes a string):
        a given one (``--secret 84726193551``), or one under a password's or key's name
        (``{"password": 84726193551}`` in a tool call's arguments went out as it was). A
        whole float is read as its digits (``84726193551.0``); None for any other value."""
        if self.scanner is None:
            return None
        if type(value) is float and math.isfinite(value):
            whole = value.is_integer()
            if whole and abs(value) >= 2.0**256:
                return None
            digits = str(int(value)) if whole else repr(value)
        elif type(value) is int and value.bit_length() <= 256:
            digits = str(value)  # (no secret is 78 digits long; str() of a huge one raises)
        else:
            return None
        if digits in self.given:
            return digits
        if not isinstance(key, str) or not _secret_name(key):
            return None
        return digits if is_secret_assignment(key, digits, quoted=True, env_style=False) else None

    def _format_value(self, key: str, value: str, entry_id: str | None, node: _Node) -> str:
        """A value of the format's own (`_format_fields`): an entry's ISO time as it is (a
        ``--secret 2026`` made every time "[REDACTED…]-11-30T…"); a model's, provider's or
        API's name redacted as text is, but for a user name that is a model family's (user
        "claude": ``claude-sonnet-4-5``). Homes, other user names and every given secret
        (an AWS account in a Bedrock model's ARN) are still replaced."""
        if key == "timestamp":
            return value if _ISO_TIME.fullmatch(value) else self.text(value, entry_id, node, key)
        if self.scanner is not None and (findings := self.scanner.find(value)):
            value = self._replace(value, findings, entry_id, node)
        if self.privacy is not None:
            value = self.privacy.apply(value, model_name=True)
        return value

    @staticmethod
    def _container(value: Any, node: _Node, stack: list[tuple[Any, Any, _Node]]) -> Any:
        if isinstance(value, dict):
            copy: Any = {}
        elif isinstance(value, list):
            copy = []
        else:
            return value
        stack.append((value, copy, node))
        return copy

    def _key(self, key: str, entry_id: str | None, node: _Node) -> str:
        if not self.active or key in self.same_keys or key in _FORMAT_KEYS:
            return key
        new = self.text(key, entry_id, node, None)
        if new == key:
            self.same_keys.add(key)
        return new

    def _encoded_text(
        self, value: str, decoded: str | None, entry_id: str | None, node: _Node
    ) -> str:
        """Base64 text (``decoded``: what :func:`_base64_text` read of ``value``) redacted as
        text and encoded again; bytes that are not UTF-8 text cannot be scanned, so they are
        left out (and counted)."""
        if decoded is None:
            self.report.count("attachments_omitted")
            return ""
        redacted = self.text(decoded, entry_id, node, None)
        if redacted == decoded:
            return value
        return base64.b64encode(redacted.encode("utf-8", "surrogatepass")).decode("ascii")

    def text(self, value: str, entry_id: str | None, node: _Node, field: str | None) -> str:
        """One string: secrets -> placeholders (a sensitive field name covers it all), paths."""
        if not self.active:
            return value
        if self.scanner is not None:
            findings = self.scanner.find(value)
            sensitive = field and name_strength(field)
            whole = None
            if field in self.whole_fields and value.strip():  # a secret manager's output
                start, end = len(value) - len(value.lstrip()), len(value.rstrip())
                whole = (start, end, SECRET_OUTPUT)
            elif sensitive and is_secret_assignment(field, value, quoted=True, env_style=False):
                whole = (0, len(value), "secret-assignment")
            if whole is not None:
                hits = [(f.start, f.end, f.detector) for f in findings]
                findings = self.scanner.merge([*hits, whole])
            if findings:
                value = self._replace(value, findings, entry_id, node)
        if self.privacy is not None:
            value = self.privacy.apply(value)
        return value

    def _replace(
        self, value: str, findings: list[Finding], entry_id: str | None, node: _Node
    ) -> str:
        parts: list[str] = []
        position = 0
        path = _json_path(node)
        for finding in findings:
            secret = value[finding.start : finding.end]
            detector = _named_as_given(finding.detector, self.given.get(secret))
            placeholder = self.placeholders.get(secret)
            if detector in _KNOWN_BY_CONTEXT:  # not a shape's find, nor a literal
                self.found.setdefault(secret, detector)
            if placeholder is None:
                number = self.numbers[detector] = self.numbers.get(detector, 0) + 1
                placeholder = self.placeholders[secret] = f"[REDACTED:{detector}:{number}]"
            parts += (value[position : finding.start], placeholder)
            position = finding.end
            # counted under the kind the copy shows (a value met again keeps its first
            # placeholder, found this time by another detector): the counts match the copy
            counts = self.report.counts
            shown = _placeholder_kind(placeholder)
            counts[shown] = counts.get(shown, 0) + 1
            if detector in GIVEN_SECRETS:  # overlapping ones replace their union
                given = self.given
                inside = {secret} if secret in given else {g for g in given if g in secret}
                self.report.given_values.update(inside)
            self.report.hits.append(Hit(entry_id, path, detector, placeholder, self.place))
        parts.append(value[position:])
        return "".join(parts)


#: What the user named a secret with (``--secret``, ``--env-file``): a span that is exactly
#: such a value is named so, whatever detector also matched it (a shape heuristic such as
#: the wrapped-token join took a --secret on the line after a key; its copy never said
#: literal-secret). The environment's values keep their detector's more telling name.
_EXPLICIT_GIVEN = frozenset({"literal-secret"})
_PLACEHOLDER_PREFIX = "[REDACTED:"


def _named_as_given(detector: str, given_kind: str | None) -> str:
    """The name a replaced span goes by: the user's own word for it when they gave it."""
    return given_kind if given_kind in _EXPLICIT_GIVEN else detector


def _given_kinds(literals: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each given secret (value -> kind); a value the user named and the environment holds
    too goes by the user's name."""
    kinds: dict[str, str] = {}
    for value, kind in literals:
        if kind in GIVEN_SECRETS and kinds.get(value) not in _EXPLICIT_GIVEN:
            kinds[value] = kind
    return kinds


def _placeholder_kind(placeholder: str) -> str:
    """The kind a placeholder names (``[REDACTED:github-token:1]`` -> ``github-token``)."""
    return placeholder[len(_PLACEHOLDER_PREFIX) : placeholder.rindex(":")]


_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})?|[\"\\/bfnrt])")


def _unescaped(text: str) -> str:
    """A damaged line that does not parse (cut short), as its values read, for the scanner:
    kept as the file has it, it may write ``postgres:\\/\\/user:pass@…`` or
    ``\\u0067hp_…``, which no detector matches: its JSON escapes are decoded where they
    stand."""

    def decoded(match: re.Match[str]) -> str:
        try:
            return json.loads(f'"{match.group(0)}"')
        except ValueError:  # not expected (the pattern takes valid escapes only): as written
            return match.group(0)

    return _JSON_ESCAPE.sub(decoded, text)


def apply_policy(
    session: Session,
    policy: RedactionPolicy,
    *,
    environ: Mapping[str, str] | None = None,
    shows_name: bool = True,
) -> tuple[Session, RedactionReport]:
    """A redacted copy of ``session`` under ``policy`` and the report; the input is untouched.

    ``environ`` (default ``os.environ``) supplies env secrets and the home/user to hide.
    ``shows_name``: the output shows the session file's name (a page's footer), so what its
    redaction replaced is counted; a JSONL copy (``redact``) does not show it.

    A secret is known by its surroundings (``DB_PASSWORD=…``), and agents repeat them bare
    (``Password for app: …``, code that uses the key): when the first pass finds any, a second
    pass removes every other occurrence of those values too, under the same placeholder.
    """
    environ = os.environ if environ is None else environ
    with gc_paused():
        result, report, found = _redact_pass(session, policy, environ, {}, shows_name)
        repeats = {value: label for value, label in found.items() if _worth_repeating(value)}
        if repeats:
            result, report, _ = _redact_pass(session, policy, environ, repeats, shows_name)
    result.redaction_note = report.page_note()
    result.redaction_heading = report.page_heading()
    return result, report


def text_redactor(
    policy: RedactionPolicy,
    report: RedactionReport,
    *,
    cwd: str = "",
    environ: Mapping[str, str] | None = None,
) -> Callable[[str, tuple[str | int, ...]], str]:
    """``redact(text, json_path)`` (the path as keys) for text that goes out beside a
    session's records (the agent's system prompt and tools, not in the file): the same
    detectors, given and environment secrets, home folder and user name as
    :func:`apply_policy`, counted into ``report`` (a session's), with placeholders numbered
    on from those it used. Without redaction, the text as it is."""
    if not policy.redact:
        return lambda text, where: text
    environ = os.environ if environ is None else environ
    literals = policy.literal_secrets(environ)
    given = _given_kinds(literals)
    scanner = Scanner(literals, policy_detectors(policy))
    privacy = None
    if not policy.keep_paths:
        privacy = _PathPrivacy(*_homes_and_users(policy, environ, cwd), report)
    redactor = _Redactor(scanner, privacy, report, given)  # numbers on from the session's

    def redact(text: str, where: tuple[str | int, ...]) -> str:
        node: _Node = None
        for key in where:
            node = (node, key)
        return redactor.text(text, None, node, None)

    return redact


_KNOWN_BY_CONTEXT = CONTEXT_DETECTORS | {SECRET_OUTPUT}


def policy_detectors(policy: RedactionPolicy) -> tuple[Detector, ...]:
    """The built-in detectors, and the opt-in ones the policy asks for (``--pii``,
    ``--redact-pattern``)."""
    extra: list[Detector] = list(PII_DETECTORS) if policy.pii else []
    extra += [PatternDetector(name, re.compile(regex)) for name, regex in policy.patterns]
    return (*DETECTORS, *extra) if extra else DETECTORS


def name_scrubber(
    policy: RedactionPolicy, environ: Mapping[str, str] | None = None
) -> Callable[[str], str]:
    """What a file's name becomes where it goes out (a dataset path, a site's page and
    index): a copy saved as ``debug-ghp_….jsonl`` must not publish its token. Each secret
    in the name is replaced by ``REDACTED-<kind>``, and the user name by ``user`` (as in a
    project's page name: ``alice-notes.jsonl`` went out beside text that said ``<user>``);
    without redaction, the name as it is."""
    if not policy.redact:
        return _same_name
    scanner = Scanner(policy.literal_secrets(environ), policy_detectors(policy))
    privacy = None
    if not policy.keep_paths:
        privacy = _PathPrivacy(*policy.identity(environ), RedactionReport())

    def scrubbed(name: str) -> str:
        # a name's words are joined by "-" and ".", which glue a token to them in text
        # (`fix-hf_….jsonl`): read once as written, once with those as spaces (same offsets)
        spaced = name.replace("-", " ").replace(".", " ")
        found = sorted(
            (f.start, f.end, f.detector)
            for text in dict.fromkeys((name, spaced))
            for f in scanner.find(text)
        )
        parts, position = [], 0
        for start, end, detector in found:
            if end <= position:
                continue
            if start >= position:  # (one overlapping the last makes that one longer)
                parts += (name[position:start], f"REDACTED-{detector}")
            position = end
        name = "".join(parts) + name[position:] if parts else name
        return _without_user(privacy, name) if privacy else name

    return scrubbed


def _without_user(privacy: _PathPrivacy, name: str) -> str:
    """``name`` with the user name as ``user``, a stand-in a path can hold (``<`` and ``>``
    cannot be in a Windows file name); read part by part between ``_`` too, which joins
    words in a file's name (``alice_notes``) but not in text. A name without it is as it
    was, to the byte (a renamed path is one more file in a dataset)."""
    parts = name.split("_")
    done = [privacy.apply(part) for part in parts]
    if done == parts:
        return name
    pairs = zip(done, parts, strict=True)
    return "_".join(d.replace("<user>", "user") if d != p else p for d, p in pairs)


def _same_name(name: str) -> str:
    return name


def _secret_output_fields(session: Session, entry: Entry) -> frozenset[str]:
    """The fields of ``entry`` that hold a secret whole: the output of a shell command that
    reads one (a ``bash`` call's result, or ``!cmd``'s output)."""
    if not isinstance(entry, MessageEntry):
        return frozenset()
    if entry.role == "bashExecution":
        return _OUTPUT if reads_a_secret(entry.command) else frozenset()
    if entry.role != "toolResult":
        return frozenset()
    ref = session.call_for_result(entry.id)
    call = session.call_block(ref) if ref is not None else None
    arguments = as_dict(call.get("arguments")) if call else {}
    command = arguments.get("command")
    return _TEXT if isinstance(command, str) and reads_a_secret(command) else frozenset()


_OUTPUT, _TEXT = frozenset({"output"}), frozenset({"text"})


@functools.lru_cache(maxsize=4096)  # the few keys of numbers (usage, times) come back often
def _secret_name(key: str) -> bool:
    return name_strength(key) is not None


def _worth_repeating(value: str) -> bool:
    """A found value searched for everywhere else. A passphrase (``correct-horse-battery-
    staple``), a leetspeak or camel-case password (``s3cr3t-pa55``, ``ProdDbPass``) is, as is
    any random-looking value; what a context detector may take in error is not, so that it is
    not multiplied across the session: short values, one plain word (``development``), a
    snake-case or dotted name (``get_password``, ``settings.key``), a type's name
    (``SecretStr``), an algorithm's (``CRAM-MD5``) and code (``Optional[str]``,
    ``(required)``, ``${DB_PASSWORD}``)."""
    value = value.strip()
    if len(value) < MIN_REPEATED or is_dummy(value) or is_placeholder(value):
        return False  # (a template's `__PASSWORD__` stays where it is used elsewhere)
    if is_type_name(value) or (_ALGORITHM_NAME.fullmatch(value) and _LETTER.search(value)):
        return False  # `SecretStr` (a type), `CRAM-MD5`, `AES-256-GCM` (a mechanism's name)
    if looks_random(value) and DIGIT.search(value) and not WORDLIKE.fullmatch(value):
        return True
    return not (
        _ONE_WORD.fullmatch(value) or _CODE_NAME.fullmatch(value) or _CODE_CHARACTER.search(value)
    )


_ONE_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+|[0-9]+")
#: An algorithm's or a login mechanism's name (`CRAM-MD5`, `SCRAM-SHA-256`, `HMAC-SHA256`,
#: `AES-256-GCM`): known parts and numbers joined by dashes, not any capitals and a number
#: (`HUNTER-2024`, `ACME-PROD-2024` are passwords)
_ALGORITHM_PART = (
    r"(?:CRAM|DIGEST|SCRAM|HMAC|MD5|SHA[0-9]{0,3}|AES[0-9]{0,3}|3?DES|RSA|ECDSA|ED25519|X25519"
    r"|CHACHA20|POLY1305|GCM|CBC|CTR|ECB|PBKDF2|ARGON2(?:ID|I|D)?|PLUS|PLAIN|LOGIN|NTLM"
    r"|XOAUTH2?|OAUTHBEARER|GSSAPI|[0-9]{1,4})"
)
_ALGORITHM_NAME = re.compile(rf"{_ALGORITHM_PART}(?:-{_ALGORITHM_PART})+")
_LETTER = re.compile(r"[A-Z]")  # (`2024-1234` is no algorithm's name)
_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z]*)*\(?")
_CODE_CHARACTER = re.compile(r"[\s()\[\]{}<>/\\$\"'`,;]")


#: The shortest found secret that is removed wherever else it appears.
MIN_REPEATED = 8


def _scrubbed_source_path(
    redactor: _Redactor, report: RedactionReport, path: str, *, count_name: bool
) -> str:
    """The session's own path, redacted all the same (its folder is under the home). Only
    its file name is ever shown (a page's footer), so only the name's replacements are
    counted, and only when the output shows it: the counts are what the output holds
    (`redact` counted a home path it never wrote: one more than the file it wrote had)."""

    def redacted(text: str) -> str:
        return redactor.text(text, None, (None, "path"), None)

    def uncounted(text: str, redact: Callable[[str], str] = redacted) -> str:
        actions, counts, hits = dict(report.actions), dict(report.counts), len(report.hits)
        done = redact(text)
        report.actions.clear()
        report.actions.update(actions)
        report.counts.clear()
        report.counts.update(counts)
        del report.hits[hits:]
        return done

    def named(text: str) -> str:  # as name_scrubber names the copies: "user", also
        # between "_" ("badlogic_fix.jsonl" was shown beside its page user_fix.html)
        text = redacted(text)
        if redactor.privacy is None:
            return text
        return _without_user(redactor.privacy, text.replace("<user>", "user"))

    folder, name = os.path.split(path)
    redactor.place = _FILE_NAME
    name = named(name) if count_name else uncounted(name, named)
    redactor.place = ""
    return os.path.join(uncounted(folder), name) if folder else name


def _redact_pass(
    session: Session,
    policy: RedactionPolicy,
    environ: Mapping[str, str],
    repeats: Mapping[str, str],
    shows_name: bool = True,
) -> tuple[Session, RedactionReport, dict[str, str]]:
    """One pass over the kept entries; ``repeats`` (value -> detector) are literal secrets
    found by an earlier pass. Returns the copy, its report and what the detectors found."""
    report = RedactionReport(redacted=policy.redact, policy_key=policy.key(environ))
    kept, reparent = select_entries(session, policy)
    excluded = len(excluded_ids(session, policy.exclude)) if policy.exclude else 0
    report.count("entries_dropped", len(session.entries) - len(kept) - excluded)  # by the rules
    report.count("entries_excluded", excluded)
    scanner = privacy = None
    given: dict[str, str] = {}
    if policy.redact:
        literals = policy.literal_secrets(environ)
        given = _given_kinds(literals)
        # the explicit literals last: theirs is the name a value keeps
        scanner = Scanner([*repeats.items(), *literals], policy_detectors(policy))
        if not policy.keep_paths:
            identity = _homes_and_users(policy, environ, session.header.cwd)
            privacy = _PathPrivacy(*identity, report)
    redactor = _Redactor(scanner, privacy, report, given)
    redactor.place = _HEADER
    records = [redactor.record(session_records(session)[0], None)]
    redactor.place = ""
    report.source_lines = [session.header.line, *(entry.line for entry in kept)]
    kept_ids = {e.id for e in kept}
    for entry in kept:
        raw = cut_content(entry.raw, policy, report)
        if entry.id in reparent:
            raw = {**raw, "parentId": reparent[entry.id]}
        elif _cycle_cut(session, entry):  # keep the loader's repair: Pi hangs on a cycle
            raw = {**raw, "parentId": None}
        if entry.type == "compaction" and (moved := moved_first_kept(session, entry, kept_ids)):
            raw = {**raw, "firstKeptEntryId": moved}
        redactor.whole_fields = _secret_output_fields(session, entry) if scanner else frozenset()
        records.append(redactor.record(raw, entry.id))
        redactor.whole_fields = frozenset()
    pairs = zip(kept, records[1:], strict=True)
    renamed = {e.id: r.get("id") for e, r in pairs if r.get("id") != e.id}
    if renamed:  # the report names entries as the copy does: an id may hold a secret
        report.hits = [
            dataclasses.replace(hit, entry_id=renamed.get(hit.entry_id, hit.entry_id))
            for hit in report.hits
        ]
    path = session.path  # the page's footer names the file: a copy may be called debug-ghp_…
    if path is not None:
        path = _scrubbed_source_path(redactor, report, path, count_name=shows_name)
    result = session_from_records(records, path=path)

    def scrubbed(text: str, place: str) -> str:
        redactor.place = place
        done = redactor.text(text, None, (None, "line"), None)
        redactor.place = ""
        return done

    def damaged_text(text: str, place: str) -> str:
        """A line that parses is redacted value by value, as an entry is (written out
        again, a literal secret holding a quote or a newline no longer matched its JSON
        escapes); any other has its escapes decoded first (see :func:`_unescaped`)."""
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return scrubbed(_unescaped(text), place)
        # (under an empty key: a "line" key was redacted too, by a --secret "line")
        redactor.place = place
        redacted = redactor.record({"": value}, None)[""]
        return scrubbed(json.dumps(redacted, ensure_ascii=False), place)

    result.damaged = [
        DamagedLine(
            d.line,
            d.kind,
            scrubbed(d.message, f"{_DAMAGED} {d.line}"),
            damaged_text(d.text, f"{_DAMAGED} {d.line}"),
        )
        for d in session.damaged
    ]
    result.parents_on_damaged_lines = dict(session.parents_on_damaged_lines)
    # the loader's messages quote ids and values from the file: they go on the page too
    result.diagnostics = [
        dataclasses.replace(d, message=scrubbed(d.message, _WARNINGS)) for d in session.diagnostics
    ]
    return result, report, redactor.found
