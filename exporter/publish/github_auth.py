"""Where a GitHub token comes from, and which host an API URL means.

Order: ``--token``, then the environment (``GH_TOKEN``/``GITHUB_TOKEN``; Enterprise hosts read
``GH_ENTERPRISE_TOKEN``/``GITHUB_ENTERPRISE_TOKEN`` first, as ``gh`` does), then
``gh auth token --hostname HOST``. A token never appears in a message.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
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


def resolve_github_token(
    explicit: str | None,
    api_url: str = DEFAULT_API_URL,
    env: Mapping[str, str] = os.environ,
    gh_binary: str = "gh",
    *,
    gh_timeout: float | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """Find a token: ``--token``, then env vars for the host, then ``gh auth token``
    (stopped after ``gh_timeout`` s, ``GH_TIMEOUT`` by default, which ``warn`` says).

    As in gh, ``GH_TOKEN``/``GITHUB_TOKEN`` are github.com's (and *.ghe.com's): another
    host (GHES, or any --api-url) reads only ``GH_ENTERPRISE_TOKEN``/
    ``GITHUB_ENTERPRISE_TOKEN``, so a github.com token never goes to a host it was not made
    for. Raises ``NoTokenError`` with a one-line hint when nothing is found.
    """
    candidates = [explicit]
    if _uses_enterprise_vars(api_url):
        candidates += [env.get("GH_ENTERPRISE_TOKEN"), env.get("GITHUB_ENTERPRISE_TOKEN")]
    else:
        candidates += [env.get("GH_TOKEN"), env.get("GITHUB_TOKEN")]
    for candidate in candidates:
        token = clean_token(candidate, "GitHub")
        if token:
            return token

    host = github_host(api_url)
    timeout = GH_TIMEOUT if gh_timeout is None else gh_timeout
    token = _token_from_gh(gh_binary, host, env, timeout, warn or log.warning)
    if token:
        return token

    if _uses_enterprise_vars(api_url):
        seen = _set_names(env, ("GH_TOKEN", "GITHUB_TOKEN"))
        if seen:  # said: "no token found" with GH_TOKEN set read as if it were not seen
            raise NoTokenError(
                f"no GitHub token found for {host}: {seen} only for "
                f"github.com (and *.ghe.com), so it is not sent to {host}; for {host} set "
                f"GH_ENTERPRISE_TOKEN, pass --token, or run `gh auth login --hostname {host}`."
            )
        raise NoTokenError(f"no GitHub token found for {host}: {token_hint(api_url)}.")
    seen = _set_names(env, ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"))
    if seen:
        raise NoTokenError(
            f"no GitHub token found for {host}: {seen} only for a GitHub "
            f"Enterprise Server --api-url, so it is not sent to {host}; {TOKEN_HINT}."
        )
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
) -> str | None:
    """Ask ``gh auth token``; any failure (missing, logged out) just means no token, and a
    ``gh`` that does not answer in time is said with ``warn`` (the "no token" error alone
    did not say why). What gh prints before the token (a notice, an update note) is not
    part of it: the token is its last line that looks like one (review s60 #7)."""
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
        return None
    tokens = [line.strip() for line in proc.stdout.splitlines() if _looks_like_token(line)]
    return tokens[-1] if tokens else None


def _looks_like_token(line: str) -> bool:
    """A line of ``gh auth token``'s output that can be a token: one word of printable
    ASCII (a notice has spaces)."""
    word = line.strip()
    return bool(word) and word.isascii() and word.isprintable() and " " not in word
