"""What a shared or published copy keeps: the redaction and share policy, and its key.

Kept apart from the redaction engine (``exporter.redact``) so a plain export, which uses
no policy, does not load and compile the secret detectors.
"""

from __future__ import annotations

import dataclasses
import functools
import getpass
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from exporter.fsutil import home

__all__ = [
    "GIVEN_SECRETS",
    "MIN_LITERAL",
    "RedactionPolicy",
    "cut_option",
    "given_digest",
    "given_secret_count",
    "opt_in_cuts",
]

MIN_LITERAL = 4  # shorter --secret values would shred ordinary words

#: Secrets a run is given rather than finds: ``--secret``/``--env-file`` values, the
#: environment's sensitive values and the upload's token. A later run without them (a cron
#: job, another shell) finds nothing there, and the values would go up in clear.
GIVEN_SECRETS = ("auth-token", "env-secret", "literal-secret")


def given_digest(value: str, salt: str = "") -> str:
    """What a record keeps of a given secret it replaced: a SHA-256, under a salt or an HMAC
    (``mark``) before it goes anywhere, so it cannot confirm a guess on its own."""
    return hashlib.sha256((salt + value).encode("utf-8", "surrogatepass")).hexdigest()


def given_secret_count(counts: Mapping[str, Any]) -> int:
    """How many replacements in a report's (or a published record's) counts were of given
    secrets; counted together, so a value moved from the environment to --secret is equal."""
    return sum(n for name, n in counts.items() if name in GIVEN_SECRETS and type(n) is int)


@dataclass(frozen=True)
class RedactionPolicy:
    """Everything that decides what a published copy contains (see the CLI's policy options)."""

    redact: bool = True
    active_branch_only: bool = False
    no_thinking: bool = False
    no_tool_output: bool = False
    no_tool_calls: bool = False
    no_images: bool = False
    drop_hidden: bool = False
    keep_paths: bool = False
    #: Entry ids to leave out (``ID/``: with everything after it), for one session.
    exclude: tuple[str, ...] = ()
    #: Also replace e-mail addresses, phone numbers and IPv4 and IPv6 addresses (``--pii``).
    pii: bool = False
    #: The user's own (name, regex) patterns to replace (``--redact-pattern NAME=REGEX``).
    patterns: tuple[tuple[str, str], ...] = ()
    secrets: tuple[str, ...] = ()
    env_secrets: bool = True
    home: str | None = None
    user: str | None = None
    #: The token this upload authenticates with (from --token, gh or a token file): hidden
    #: like a --secret, but not part of the key, so a rotated token re-uploads nothing.
    auth_tokens: tuple[str, ...] = ()
    #: The environment's sensitive values, read once (``resolved``); None: read at each use.
    env_values: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        """Refuse what a library caller may pass by mistake, before anything goes out: a
        bare str where a tuple of strings belongs (``secrets="hunter2"``) was read one
        character at a time, each too short to look for, so the secret went out in clear
        with a report that found none; a regex that does not compile failed late, as a bare
        ``re.error``. Lists and other iterables of strings are taken (kept as tuples)."""
        for name in ("exclude", "secrets", "auth_tokens", "env_values"):
            value = getattr(self, name)
            if value is not None or name != "env_values":
                object.__setattr__(self, name, _strings(name, value))
        object.__setattr__(self, "patterns", _patterns(self.patterns))
        for name in ("home", "user"):
            value = getattr(self, name)
            if isinstance(value, os.PathLike):
                value = os.fsdecode(value)
                object.__setattr__(self, name, value)
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"RedactionPolicy({name}=...) takes a str or None, not {_kind(value)}"
                )

    def resolved(self, environ: Mapping[str, str] | None = None) -> RedactionPolicy:
        """This policy with what it reads from the environment fixed now: env secrets, home
        and user. Worker processes get it: a forkserver's environment is the one it started
        with, so a long-lived caller's changed ``os.environ`` would not reach them (its key
        said one thing while the workers redacted another). The key stays the same."""
        homes, users = self.identity(environ)
        values = self.env_values
        if values is None and self.env_secrets:
            from exporter.redact import env_secret_values

            values = tuple(env_secret_values(os.environ if environ is None else environ))
        return dataclasses.replace(
            self,
            env_values=values,
            home=homes[0] if homes else self.home,
            user=users[0] if users else self.user,
        )

    def literal_secrets(self, environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
        """(value, detector name) of every exact secret: ``--secret``/``--env-file``, env,
        the upload's own token."""
        found = [(s, "literal-secret") for s in self.secrets if len(s) >= MIN_LITERAL]
        found += [(t, "auth-token") for t in self.auth_tokens if len(t) >= MIN_LITERAL]
        if self.env_secrets:
            values = self.env_values
            if values is None:
                from exporter.redact import env_secret_values

                values = env_secret_values(os.environ if environ is None else environ)
            found += [(value, "env-secret") for value in values]
        return [*found, *_json_escaped_forms(found)]

    def given_values(self, environ: Mapping[str, str] | None = None) -> set[str]:
        """The secrets this policy is given (not found): what it replaces wherever they are."""
        return {value for value, kind in self.literal_secrets(environ) if kind in GIVEN_SECRETS}

    def identity(self, environ: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
        """The local home directories and user names to hide (explicit ones win)."""
        env = os.environ if environ is None else environ
        home = self.home or env.get("HOME") or _home_dir()
        user = self.user or env.get("USER") or env.get("LOGNAME") or _login_name()
        return [home] if home else [], [user] if user else []

    def key(self, environ: Mapping[str, str] | None = None) -> str:
        """Stable hash of everything that changes the output (publishing caches on it).

        Secrets enter only through a slow salted hash, so the key cannot confirm a guess.
        """
        flags = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("secrets", "home", "user", "auth_tokens", "env_values"):
            flags.pop(name)
        # (options a policy does not use stay out, so the keys of others stayed the same)
        if not self.exclude:
            flags.pop("exclude")
        else:
            flags["exclude"] = sorted(self.exclude)
        if not self.pii:
            flags.pop("pii")
        flags.pop("patterns")
        if self.patterns:  # a regex may spell out what it looks for: hashed like secrets
            flags["patterns"] = _slow_digest(tuple(sorted(map(tuple, self.patterns))))
        payload: dict[str, Any] = dict(flags)
        if self.redact:  # only redaction runs the detectors (and a plain key skips loading them)
            from exporter.detectors import DETECTOR_VERSION

            payload["detectors"] = DETECTOR_VERSION
            key_secrets = dataclasses.replace(self, auth_tokens=()).literal_secrets(environ)
            secrets = tuple(sorted({v for v, _ in key_secrets}))
            payload["secrets"] = _slow_digest(secrets)
            if not self.keep_paths:
                payload["identity"] = _slow_digest(tuple(map(tuple, self.identity(environ))))
        text = json.dumps(payload, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def _kind(value: Any) -> str:
    """A value's type for an error, never the value (it may be a secret)."""
    return type(value).__name__


def _strings(name: str, value: Any) -> tuple[str, ...]:
    """A policy field's tuple of strings, from any iterable of them; a TypeError naming the
    field (never the value: it may be a secret) for one str or an item that is no str."""
    if isinstance(value, (str, bytes)):
        raise TypeError(
            f"RedactionPolicy({name}=...) takes a tuple of strings, not one {_kind(value)}: "
            f"a str would be read one character at a time; write {name}=(value,)"
        )
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(
            f"RedactionPolicy({name}=...) takes a tuple of strings, not {_kind(value)}"
        ) from None
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(
                f"RedactionPolicy({name}=...): item {index} is {_kind(item)}, not a str"
            )
    return items


def _patterns(value: Any) -> tuple[tuple[str, str], ...]:
    """``patterns`` as (name, regex) pairs, each checked as ``--redact-pattern NAME=REGEX``
    checks one (:func:`~exporter.pii_detectors.parse_pattern`): a TypeError for what is not
    such a pair, a ValueError naming the pattern for a bad name or regex."""
    if isinstance(value, (str, bytes)):
        raise TypeError(
            "RedactionPolicy(patterns=...) takes (name, regex) pairs, not one "
            f"{_kind(value)}: write patterns=((name, regex),)"
        )
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(
            f"RedactionPolicy(patterns=...) takes (name, regex) pairs, not {_kind(value)}"
        ) from None
    pairs = []
    for index, item in enumerate(items):
        pair = () if isinstance(item, (str, bytes)) else tuple(item) if _iterable(item) else ()
        if len(pair) != 2 or not all(isinstance(part, str) for part in pair):
            raise TypeError(
                f"RedactionPolicy(patterns=...): item {index} is no (name, regex) pair of "
                "strings: write patterns=((name, regex),)"
            )
        _check_pattern(*pair)
        pairs.append(pair)
    return tuple(pairs)


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _check_pattern(name: str, regex: str) -> None:
    """A ValueError, in the CLI's words, when ``--redact-pattern name=regex`` would be
    refused (its name and regex checked once: ``dataclasses.replace`` makes policies anew)."""
    from exporter.pii_detectors import parse_pattern  # the detectors load only when used

    if "=" in name or name != name.strip().lower():  # (the CLI takes "Cust " as "cust")
        said = "a name is 1-32 lowercase letters, digits and dashes"
        raise ValueError(f"RedactionPolicy patterns: {name!r}: {said}")
    try:
        parse_pattern(f"{name}={regex}")
    except ValueError as error:
        raise ValueError(f"RedactionPolicy patterns: {error}") from None


def opt_in_cuts(policy: RedactionPolicy) -> list[str]:
    """The opt-in redaction a policy asks for, as a share's record and a published
    session's cuts keep it: ``pii`` and each ``pattern:<name>`` (a name, never its regex)."""
    return (["pii"] if policy.pii else []) + sorted({f"pattern:{n}" for n, _ in policy.patterns})


def cut_option(name: str) -> str:
    """The option a recorded cut came from: ``--no-thinking``, ``--redact-pattern cust=…``."""
    if name.startswith("pattern:"):
        return f"--redact-pattern {name.removeprefix('pattern:')}=…"
    return f"--{name.replace('_', '-')}"


def _home_dir() -> str | None:
    try:
        return str(home())
    except OSError:  # no HOME and no passwd entry
        return None


def _login_name() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return None


@functools.lru_cache(maxsize=64)
def _slow_digest(values: tuple[Any, ...]) -> str:
    data = json.dumps(values, ensure_ascii=True).encode()
    return hashlib.pbkdf2_hmac("sha256", data, b"pi-session-export/redaction-key", 20_000).hex()


def _json_escaped_forms(literals: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each secret as a tool printing JSON shows it: ``cat config.json`` holds ``pa\\"ss``
    where the secret given was ``pa"ss``. Python writes ``\\u00e9``, Go ``\\u0026`` for
    ``&`` (and ``<``, ``>``), .NET upper-case hex; JSON inside a JSON string is escaped twice."""
    forms = []
    for value, kind in literals:
        found: set[str] = set()
        for once in (json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1]):
            go = once.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            for form in (once, go, json.dumps(once, ensure_ascii=False)[1:-1]):
                found |= {form, _UNICODE_ESCAPE.sub(lambda m: m.group().upper(), form)}
        found.discard(value)
        forms += [(form, kind) for form in sorted(found)]
    return forms


#: ``\u00e9``'s hex digits, as .NET writes them (upper case); the ``u`` stays lower
_UNICODE_ESCAPE = re.compile(r"(?<=\\u)[0-9a-f]{4}")
