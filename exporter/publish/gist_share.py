"""What a share puts in a gist and where readers open it: the viewer link, create-or-update
of the session's gist (so re-sharing keeps the link) and GitHub's size limits.

The HTTP side (requests, retries, rate limits, errors) is ``gist.GistClient``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from exporter.publish.errors import NotFoundError, TooLargeError
from exporter.publish.gist import GIST_WARN_BYTES, Gist, GistClient
from exporter.publish.github_auth import DEFAULT_API_URL, is_enterprise
from exporter.publish.share_state import ShareState, earlier_gists

__all__ = [
    "DEFAULT_VIEWER",
    "GIST_MAX_BYTES",
    "PI_VIEWER",
    "check_size",
    "check_viewer_template",
    "file_sizes",
    "files_size",
    "ignored_env_viewer",
    "is_pi_format_viewer",
    "share_files",
    "viewer_link",
]

log = logging.getLogger(__name__)

DEFAULT_VIEWER = "https://gisthost.github.io/"
#: Where Pi's own /share sends readers (reference §1.5): for a page with Pi's session-data.
PI_VIEWER = "https://pi.dev/session/"
DEFAULT_FILENAME = "session.html"
#: Every file name ``share`` uploads; on re-share, those this share does not send are deleted.
SHARED_FILE_NAMES = frozenset({DEFAULT_FILENAME, "session.jsonl", "README.md"})
#: Files over 10 MB are only promised through ``git clone``, and big uploads
#: tend to fail with HTTP 502, so refuse by default.
GIST_MAX_BYTES = 10 * 1024 * 1024


# --------------------------------------------------------------------------- viewers


def _pi_style_link(base: str, gist_id: str) -> str:
    """Pi's rule for PI_SHARE_VIEWER_URL: the gist id goes after ``#``, replacing any fragment."""
    base = base.strip()
    base = base.split("#", 1)[0] + "#"
    return f"{base}{gist_id}"


#: Viewers that show any HTML file of a gist, read from ``?ID/FILE`` (reference §1.5): a
#: base URL of theirs gets that form, not Pi's ``#ID``, which they do not read.
_QUERY_VIEWER_HOSTS = frozenset({"gisthost.github.io", "gistpreview.github.io"})
#: Viewers of Pi's own export format (pi.dev, as Pi's /share prints): they show only a page
#: that carries Pi's ``<script id="session-data">`` block, which ours does not have.
_PI_FORMAT_HOSTS = frozenset({"pi.dev"})


def _viewer_host(address: str) -> str:
    try:
        host = urlsplit(address.replace("{id}", "x").replace("{file}", "x")).hostname
    except ValueError:
        return ""
    return (host or "").lower().rstrip(".")


def is_pi_format_viewer(address: str) -> bool:
    """A viewer of Pi's own exports, which cannot show our page: a base URL given the gist
    id after ``#`` (Pi's rule for PI_SHARE_VIEWER_URL, read only by such viewers), or a
    known one (pi.dev). gisthost-style viewers (``?ID/FILE``) and ``{id}`` templates of
    other hosts are not."""
    host = _viewer_host(address.strip())
    if host in _PI_FORMAT_HOSTS or any(host.endswith(f".{h}") for h in _PI_FORMAT_HOSTS):
        return True
    return "{id}" not in address and host not in _QUERY_VIEWER_HOSTS


def _base_link(base: str, gist: Gist) -> str:
    """A base URL without ``{id}``: gisthost's form for a gisthost-style viewer, else Pi's."""
    if _viewer_host(base) in _QUERY_VIEWER_HOSTS:
        plain = base.strip().split("#", 1)[0].split("?", 1)[0]
        return f"{plain}?{gist.id}/{_viewer_file(gist)}"
    return _pi_style_link(base, gist.id)


def ignored_env_viewer(
    api_url: str, template: str | None, env: Mapping[str, str], pi_format: bool = False
) -> str:
    """PI_SHARE_VIEWER_URL when it was set for Pi's /share (a Pi-format viewer) and would
    otherwise have made the View link: ``viewer_link`` leaves it out; "" when not so (and
    for a page in Pi's format, ``pi_format``, which such a viewer shows)."""
    if template or pi_format or is_enterprise(api_url):
        return ""
    base = (env.get("PI_SHARE_VIEWER_URL") or "").strip()
    return base if base and is_pi_format_viewer(base) else ""


def _viewer_file(gist: Gist) -> str:
    if not gist.files or DEFAULT_FILENAME in gist.files:
        return DEFAULT_FILENAME
    html = [name for name in gist.files if name.lower().endswith((".html", ".htm"))]
    return html[0] if html else next(iter(gist.files))


#: What a --viewer-url template may name; the link fills them in.
VIEWER_PLACEHOLDERS = ("id", "file")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def check_viewer_template(template: str) -> None:
    """Raise ``ValueError`` for a template that is not an http(s) address (a printed
    ``javascript:`` link is one click from running), or that names a ``{...}`` placeholder
    the link does not fill in: a typo (``{idx}``) made the template count as a base URL, and
    the link kept ``{idx}`` in it."""
    if any(ch == "\\" or unicodedata.category(ch)[0] in "CZ" for ch in template):
        # printed as the View line: a newline, an escape (C0 or C1), a bidi or zero-width
        # mark would write the terminal or hide part of the address
        raise ValueError("a viewer address holds no spaces, backslashes or control characters")
    try:
        parts = urlsplit(template.replace("{id}", "x").replace("{file}", "x"))
        host = parts.hostname
    except ValueError:
        parts, host = None, None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise ValueError("a viewer must be an http(s) address with a host")
    unknown = [m.group() for m in _PLACEHOLDER.finditer(template)]
    unknown = [p for p in unknown if p[1:-1] not in VIEWER_PLACEHOLDERS]
    if unknown:
        raise ValueError(
            f"unknown placeholder {unknown[0]} (a template may use {{id}} and {{file}})"
        )
    if "{file}" in template and "{id}" not in template:  # it would be a base URL: {file} kept
        raise ValueError("a template with {file} needs {id} too (the gist's id)")


def viewer_link(
    gist: Gist,
    api_url: str = DEFAULT_API_URL,
    template: str | None = None,
    env: Mapping[str, str] = os.environ,
    pi_format: bool = False,
) -> str:
    """Link that renders the shared HTML in a browser (gists themselves show only source).

    Order: ``template`` (``{id}``/``{file}`` placeholders; without ``{id}`` it is a base
    URL: gisthost-style viewers get ``?ID/FILE``, others Pi's ``#ID``) > the gist's
    ``html_url`` for non-github.com APIs (public viewers only read api.github.com) >
    ``PI_SHARE_VIEWER_URL`` unless it is a Pi-format viewer (``ignored_env_viewer``: Pi's
    users set it for Pi's own exports, which those viewers need) > gisthost, which follows
    ``raw_url`` for files over 1 MB. A page in Pi's format (``pi_format``: it carries
    Pi's session-data block) goes where Pi's /share sends it: PI_SHARE_VIEWER_URL, else
    pi.dev.
    """
    if template:
        if "{id}" in template:
            return template.replace("{id}", gist.id).replace("{file}", _viewer_file(gist))
        return _base_link(template, gist)
    if is_enterprise(api_url):
        return gist.html_url
    base = (env.get("PI_SHARE_VIEWER_URL") or "").strip()
    if base and not ignored_env_viewer(api_url, template, env, pi_format):
        if "{id}" in base:
            return base.replace("{id}", gist.id).replace("{file}", _viewer_file(gist))
        return _base_link(base, gist)
    if pi_format:
        return _pi_style_link(PI_VIEWER, gist.id)
    return f"{DEFAULT_VIEWER}?{gist.id}/{_viewer_file(gist)}"


# --------------------------------------------------------------------------- share


def share_files(
    client: GistClient,
    state: ShareState,
    session_id: str,
    files: Mapping[str, str],
    description: str,
    *,
    public: bool = False,
    new: bool = False,
    source: str | None = None,
    given: Mapping[str, Any] | None = None,
    warn: Callable[[str], None] = log.warning,
    judged: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[Gist, str]:
    """Create or update the session's gist; returns the gist and what was done: "created",
    "updated", "unchanged" (the same files are there: no new revision) or "replaced" (the
    remembered gist is gone, so a new one with a new link was made). ``given`` and
    ``judged``: what the record keeps of this share's policy and of earlier gists'
    (``ShareState.remember``).

    A known gist is PATCHed so the link stays stable. Visibility can't be changed by PATCH,
    so a different ``public`` also creates a new gist.
    """
    with state.locked():  # (re-entrant: the CLI holds it from its own first read)
        gist: Gist | None = None
        action = "created"
        digest = content_digest(files, description)
        known = None if new else _gist_to_reuse(state.entry(client.api_url, session_id), public)
        if known:
            try:
                there: Gist | None = client.get(known["gist_id"])
            except NotFoundError:  # deleted (only the read says so: a refused update is an error)
                there, action = None, "replaced"
                # forgotten: kept, it was listed as still up by later shares, and its
                # policy refused shares whose way out (--delete) could not forget it
                _forget_gone(state, client.api_url, known["gist_id"])
            if there is not None:
                # A file an earlier share uploaded and this one does not (session.jsonl without
                # --with-jsonl) would stay as it was, unredacted by this share's policy: read
                # what is there, then replace and delete in one update (one new revision).
                stale = sorted(SHARED_FILE_NAMES.intersection(there.files).difference(files))
                if (
                    not stale
                    and known.get("content_sha256") == digest
                    and _same_files(there, files)
                ):
                    gist, action = there, "unchanged"
                else:
                    gist = client.update(known["gist_id"], files, description, remove=stale)
                    action = "updated"
        if gist is None:
            gist = client.create(files, description, public=public)
            action = "replaced" if action == "replaced" else "created"
        try:
            state.remember(
                client.api_url, session_id, gist.id, public=public, content=digest,
                source=source, given=given, judged=judged,
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            # The gist exists; failing now would hide its link. Re-share will just create anew.
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            warn(
                f"warning: could not save share state to {state.path}: {reason}; sharing this "
                "session again will make a new gist"
            )
        return gist, action


def _forget_gone(state: ShareState, api_url: str, gist_id: str) -> None:
    """Drop a gist GitHub no longer has from the state (as a session's gist or an earlier
    one); a state that cannot be written keeps it, which ``remember`` says next."""
    try:
        state.forget_gone_gist(api_url, gist_id)
    except (OSError, ValueError) as exc:
        log.debug("could not forget gone gist %s: %s", gist_id, exc)


def _gist_to_reuse(record: dict[str, Any] | None, public: bool) -> dict[str, Any] | None:
    """The session's gist of this visibility: its latest share's, else the latest earlier
    one (a share back from ``--public`` updates the secret gist it had, not a third)."""
    if not record:
        return None
    if bool(record.get("public", False)) == bool(public):
        return record
    same = [g for g in earlier_gists(record) if g["public"] == bool(public)]
    return same[-1] if same else None


def content_digest(files: Mapping[str, str], description: str) -> str:
    """What a share sent, to tell an unchanged re-share (the page is rendered the same way
    each time) from one that needs a new revision."""
    digest = hashlib.sha256(description.encode("utf-8", "surrogatepass"))
    for name in sorted(files):
        digest.update(b"\0" + name.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(files[name].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _same_files(there: Gist, files: Mapping[str, str]) -> bool:
    """The gist holds these files as they are (not edited on GitHub since): by content where
    the answer carried it whole, else by size (GitHub cuts files over 1 MB); files a person
    added there are theirs and not compared."""
    if SHARED_FILE_NAMES.intersection(there.files) != set(files):
        return False
    for name, text in files.items():
        held = there.files[name]
        data = text.encode("utf-8", "surrogatepass")
        if held["sha256"] is not None and held["sha256"] != hashlib.sha256(data).hexdigest():
            return False
        if held["size"] != len(data):
            return False
    return True


# --------------------------------------------------------------------------- sizes


def file_sizes(files: Mapping[str, str]) -> dict[str, int]:
    """Each file's size in bytes (UTF-8), which is what GitHub's limits count."""
    return {name: len(text.encode("utf-8", "surrogatepass")) for name, text in files.items()}


def files_size(files: Mapping[str, str]) -> int:
    """Upload size in bytes (UTF-8), which is what GitHub's limits count."""
    return sum(file_sizes(files).values())


def _mb(size: int) -> str:
    """In MiB, as GitHub's gist limits are counted, and said so (publish's MB are 10^6)."""
    return f"{size / (1024 * 1024):.1f} MiB"


#: Images this large a part of an upload (or more) get ``--no-images`` named among the ways
#: to make it smaller; the rest this large a part, the options that cut the rest.
LARGE_PART = 0.25


def _smaller_with(image_share: float) -> list[str]:
    """The options that would make the upload smaller, ``image_share`` being the part of it
    that images make: ``--no-images`` where they are a large part (a 54 MB page of
    screenshots was told to use --no-tool-output or --active-branch-only, which left it at
    54 MB: without its images it was 85 KB), the others where the rest is."""
    options = ["--no-images"] if image_share >= LARGE_PART else []
    if image_share <= 1 - LARGE_PART:
        options += ["--no-tool-output", "--active-branch-only"]
    return options


def _either(choices: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]


def check_size(
    total_bytes: int,
    force: bool = False,
    sizes: Mapping[str, int] | None = None,
    image_share: float = 0.0,
) -> str | None:
    """Warning text for a file over 1 MiB (``sizes``: each file's; without them the total
    counts as one file), which GitHub's API truncates: judged on the total, it warned of
    truncation when no file was; ``TooLargeError`` when the whole upload is over 10 MiB,
    unless ``force``. ``image_share``: the part of the upload images make (0 to 1), which
    says whether --no-images is the way to make it smaller."""
    options = _smaller_with(image_share)
    if total_bytes > GIST_MAX_BYTES and not force:
        raise TooLargeError(
            f"the export is {_mb(total_bytes)}, above the {_mb(GIST_MAX_BYTES)} gist limit; "
            f"make it smaller with {_either(options)}, publish it to Hugging Face instead, or pass "
            "--force to try anyway.",
            size_bytes=total_bytes,
            limit_bytes=GIST_MAX_BYTES,
        )
    if total_bytes > GIST_MAX_BYTES:
        return (
            f"warning: the export is {_mb(total_bytes)}; GitHub often fails on gists this big "
            f"and viewers may not load it (consider {_either([*options, 'Hugging Face'])})."
        )
    sizes = sizes if sizes is not None else {"the export": total_bytes}
    over = {name: size for name, size in sizes.items() if size > GIST_WARN_BYTES}
    if not over:
        return None
    # which file is over, where there are several (a page alone is the export)
    named = " and ".join(f"{name} is {_mb(size)}" for name, size in over.items())
    which = f", of which {named}" if len(sizes) > 1 else ""
    return (
        f"warning: the export is {_mb(total_bytes)}{which}; GitHub truncates gist files over "
        "1 MiB in its API, so only viewers that follow raw_url (like gisthost) will show "
        f"{'them' if len(over) > 1 else 'it'} ({_either(options)} "
        f"make{'' if len(options) > 1 else 's'} it smaller)."
    )
