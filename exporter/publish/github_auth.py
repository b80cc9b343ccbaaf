"""Where a GitHub token comes from, and which host an API URL means.

Order: ``--token``, then the environment (``GH_TOKEN``/``GITHUB_TOKEN``; Enterprise hosts read
``GH_ENTERPRISE_TOKEN``/``GITHUB_ENTERPRISE_TOKEN`` first, as ``gh`` does), then
``gh auth token --hostname HOST``. A token never appears in a message.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from exporter.publish.errors import NoTokenError, clean_token

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"

#: How long ``gh auth token`` may take before it is stopped (seconds).
GH_TIMEOUT = 10.0

TOKEN_HINT = (
    "create a classic token with the `gist` scope (or a fine-grained token with "
    '"Gists: read and write") and set GH_TOKEN or pass --token, or run `gh auth login`'
)


def token_hint(api_url: str) -> str:
    """Where a token for this API goes: GH_TOKEN is github.com's, as in gh."""
    if not _uses_enterprise_vars(api_url):
        return TOKEN_HINT
    host = github_host(api_url)
    return (
        f"create a token with the `gist` scope on {host} and set GH_ENTERPRISE_TOKEN or pass "
        f"--token, or run `gh auth login --hostname {host}`"
    )


# --------------------------------------------------------------------------- hosts


def _hostname(api_url: str) -> str:
    return (urlsplit(api_url).hostname or "").lower()


def github_host(api_url: str) -> str:
    """Host that ``gh`` and the token variables refer to (``api.github.com`` -> ``github.com``).

    GHES serves the API at ``https://HOST/api/v3`` (-> ``HOST``), GHE.com at
    ``https://api.SUB.ghe.com`` (-> ``SUB.ghe.com``).
    """
    parts = urlsplit(api_url)
    host = (parts.hostname or "").lower()
    if host in ("api.github.com", "github.com"):
        return "github.com"
    if host.startswith("api.") and host.endswith(".ghe.com"):
        return host[len("api.") :]
    return f"{host}:{parts.port}" if parts.port else host


def is_enterprise(api_url: str) -> bool:
    """True for any API other than api.github.com: public gist viewers can't read those gists."""
    return _hostname(api_url) not in ("api.github.com", "github.com")


def _uses_enterprise_vars(api_url: str) -> bool:
    """GHES hosts read GH_ENTERPRISE_TOKEN first; github.com and *.ghe.com do not (as in gh)."""
    return is_enterprise(api_url) and not _hostname(api_url).endswith(".ghe.com")


# --------------------------------------------------------------------------- tokens


@dataclass(frozen=True)
class FoundToken:
    """A token and where it was found: ``--token``, a variable's name, or ``gh``'s command.
    A refusal names the source (never the token): a stale GH_TOKEN that overrides a good
    ``gh`` login was told to run ``gh auth login``, which cannot help while it is set."""

    token: str
    source: str

    def __repr__(self) -> str:
        return f"FoundToken(source={self.source!r})"


#: How a token got from `gh` is named in messages (its source).
GH_SOURCE = "`gh auth token --hostname {host}`"


def token_source_fix(source: str, env: Mapping[str, str] = os.environ) -> str:
    """Where the token a server refused came from, and what makes it another one: a
    variable overrides ``gh``'s login, so it is to be unset (or given a new token), with
    the other one of its kind that is set in ``env`` and would be used next (unset GH_TOKEN
    alone, and GITHUB_TOKEN was sent instead of gh's login)."""
    if source == "--token":
        return "the token was passed with --token: pass a working one"
    if source.startswith("`gh "):
        host = source.removesuffix("`").rsplit(" ", 1)[-1]
        return (
            f"the token came from {source}: run `gh auth login --hostname {host}` (or "
            f"`gh auth refresh --hostname {host} --scopes gist`)"
        )
    kind = next((names for names in _TOKEN_VARIABLES if source in names), (source,))
    also = [name for name in kind if name != source and (env.get(name) or "").strip()]
    unset = " and ".join([source, *also])
    return (
        f"the token came from {source}, which is used before a `gh auth login`: unset "
        f"{unset} to use gh's login instead (or put a working token in {source})"
    )


#: The token variables of github.com and of another host, each in the order they are read.
_TOKEN_VARIABLES = (
    ("GH_TOKEN", "GITHUB_TOKEN"),
    ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"),
)


def resolve_github_token(
    explicit: str | None,
    api_url: str = DEFAULT_API_URL,
    env: Mapping[str, str] = os.environ,
    gh_binary: str = "gh",
    *,
    gh_timeout: float | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """``find_github_token``'s token alone."""
    return find_github_token(
        explicit, api_url, env, gh_binary, gh_timeout=gh_timeout, warn=warn
    ).token


def find_github_token(
    explicit: str | None,
    api_url: str = DEFAULT_API_URL,
    env: Mapping[str, str] = os.environ,
    gh_binary: str = "gh",
    *,
    gh_timeout: float | None = None,
    warn: Callable[[str], None] | None = None,
) -> FoundToken:
    """Find a token: ``--token``, then env vars for the host, then ``gh auth token``
    (stopped after ``gh_timeout`` s, ``GH_TIMEOUT`` by default, which ``warn`` says).

    As in gh, ``GH_TOKEN``/``GITHUB_TOKEN`` are github.com's (and *.ghe.com's): another
    host (GHES, or any --api-url) reads only ``GH_ENTERPRISE_TOKEN``/
    ``GITHUB_ENTERPRISE_TOKEN``, so a github.com token never goes to a host it was not made
    for. Returns the token with where it was found (``FoundToken.source``). Raises
    ``NoTokenError`` with a one-line hint when nothing is found.
    """
    names = _TOKEN_VARIABLES[1] if _uses_enterprise_vars(api_url) else _TOKEN_VARIABLES[0]
    candidates = [("--token", explicit), *((name, env.get(name)) for name in names)]
    for source, candidate in candidates:
        token = clean_token(candidate, "GitHub", source=source)
        if token:
            return FoundToken(token, source)

    host = github_host(api_url)
    timeout = GH_TIMEOUT if gh_timeout is None else gh_timeout
    failed: list[str] = []
    token = _token_from_gh(gh_binary, host, env, timeout, warn or log.warning, failed)
    if token:
        return FoundToken(token, GH_SOURCE.format(host=host))
    # gh is there but gave none: its own word says why (logged out, no host), said along
    # with a variable set for the other kind of host (it hid that hint)
    gh_said = f"{GH_SOURCE.format(host=host)} failed{failed[0]}; " if failed else ""
    if _uses_enterprise_vars(api_url):
        seen = _set_names(env, _TOKEN_VARIABLES[0])
        if seen:  # said: "no token found" with GH_TOKEN set read as if it were not seen
            raise NoTokenError(
                f"no GitHub token found for {host}: {gh_said}{seen} only for "
                f"github.com (and *.ghe.com), so it is not sent to {host}; for {host} set "
                f"GH_ENTERPRISE_TOKEN, pass --token, or run `gh auth login --hostname {host}`."
            )
        raise NoTokenError(f"no GitHub token found for {host}: {gh_said}{token_hint(api_url)}.")
    seen = _set_names(env, _TOKEN_VARIABLES[1])
    if seen:
        raise NoTokenError(
            f"no GitHub token found for {host}: {gh_said}{seen} only for a GitHub "
            f"Enterprise Server --api-url, so it is not sent to {host}; {TOKEN_HINT}."
        )
    if gh_said:
        raise NoTokenError(f"no GitHub token found for {host}: {gh_said}{TOKEN_HINT}.")
    raise NoTokenError(f"no GitHub token found: {TOKEN_HINT}.")


def _set_names(env: Mapping[str, str], names: tuple[str, ...]) -> str:
    """Which of these token variables are set, as "X is set, but it is used" / "X and Y are
    set, but they are used" (their names only, never a value); "" for none."""
    found = [name for name in names if (env.get(name) or "").strip()]
    if not found:
        return ""
    one = len(found) == 1
    return f"{' and '.join(found)} {'is set, but it is' if one else 'are set, but they are'} used"


def _token_from_gh(
    gh_binary: str,
    host: str,
    env: Mapping[str, str],
    timeout: float,
    warn: Callable[[str], None],
    failed: list[str] | None = None,
) -> str | None:
    """Ask ``gh auth token``; any failure (missing, logged out) just means no token, and a
    ``gh`` that does not answer in time is said with ``warn`` (the "no token" error alone
    did not say why). What gh prints before the token (a notice, an update note) is not
    part of it: the token is its last line that looks like one (review s60 #7). A ``gh``
    that exits non-zero has its first stderr line put in ``failed`` (": LINE"), with no
    token shape in it: the "no token found" alone did not say gh was logged out."""
    search_path = env.get("PATH")
    if not search_path:
        return None
    gh = shutil.which(gh_binary, path=search_path)
    if gh is None:
        return None
    command = f"`gh auth token --hostname {host}`"
    try:
        proc = subprocess.run(
            [gh, "auth", "token", "--hostname", host],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=timeout,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        warn(f"warning: {command} timed out (no answer within {timeout:g} s); stopped")
        return None
    except (OSError, subprocess.SubprocessError):
        log.debug("`gh auth token` could not be run for %s", host)
        return None
    if proc.returncode != 0:
        log.debug("`gh auth token` exited %d for %s", proc.returncode, host)
        if failed is not None:
            first = next((line.strip() for line in proc.stderr.splitlines() if line.strip()), "")
            first = _GH_TOKEN_LIKE.sub("***", first)
            first = "".join(ch if ch.isprintable() else " " for ch in first)[:200]
            said = f': "{first}"' if first else ""
            failed.append(f" (exit {proc.returncode}{said})")
        return None
    tokens = [line.strip() for line in proc.stdout.splitlines() if _looks_like_token(line)]
    return tokens[-1] if tokens else None


#: Token shapes hidden from what gh says on stderr (none should be there): a prefixed one
#: even glued to a word ("x_ghp_…", where ``\b`` saw none), and any run of 32 or more
#: token characters (a classic token is 40 hex digits, with no prefix).
_GH_TOKEN_LIKE = re.compile(
    r"(?<![A-Za-z0-9])(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{4,}|[A-Za-z0-9_]{32,}"
)


def _looks_like_token(line: str) -> bool:
    """A line of ``gh auth token``'s output that can be a token: one word of printable
    ASCII (a notice has spaces)."""
    word = line.strip()
    return bool(word) and word.isascii() and word.isprintable() and " " not in word
