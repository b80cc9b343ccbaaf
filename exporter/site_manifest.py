"""The site folder's bookkeeping: its manifest (what each page was built from), which files
in the folder this tool owns, and the checks that decide a page can be kept as it is.

Paths read from the manifest are never trusted: a page is touched only when its name matches
the names this tool writes.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import math
import os
import re
import shlex
import stat
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exporter import __version__
from exporter.claude_code import sub_agent_stamps
from exporter.formatting import escape_surrogates, plural
from exporter.fsutil import DISK_FULL, atomic_open, atomic_write_text

__all__ = [
    "MANIFEST_NAME",
    "NOT_CURED_BY_RUNNING_AGAIN",
    "SEARCH_DIR",
    "Mark",
    "SiteBusy",
    "SiteError",
    "SiteFileInTheWay",
    "SiteInTheWay",
    "SiteIncomplete",
    "SiteLinkInTheWay",
    "check_folder",
    "clear_in_the_way",
    "delete_page",
    "is_temp_name",
    "is_unchanged",
    "load_manifest",
    "marked_digest",
    "not_curable_by_running_again",
    "refuse_links_out",
    "save_manifest",
    "source_digest",
    "source_id",
    "stays_inside",
    "sweep",
    "unlink_or_error",
    "write_if_changed",
]

MANIFEST_NAME = ".pi-session-site.json"
#: The folder of each session's searchable text (``exporter.site_search``). Hidden:
#: ``publish`` uploads no dot-file of the site, and no page reads it.
SEARCH_DIR = ".pi-session-search"
MANIFEST_FORMAT = 1
OWNED_PAGE = re.compile(r"^(?:sessions/[a-z0-9._-]+/[A-Za-z0-9._-]+|projects/[a-z0-9._-]+)\.html$")


class SiteError(Exception):
    """The site folder cannot be used (e.g. it holds files this tool did not write)."""


class SiteBusy(SiteError):
    """Another build holds the site folder's lock: this one changed nothing and can run
    again once that one ends. A type of its own, so a caller (``publish --html``, whose
    site is its own cache) tells it from the other refusals without reading the text."""


class SiteInTheWay(SiteError, IsADirectoryError):
    """A folder (with something in it) where the build writes the site's index or manifest:
    the user's to move, never deleted. Also an ``IsADirectoryError`` (``EISDIR``, with the
    folder's path), as the write would have failed: ``publish --html``, whose site is its
    own cache, drops and rebuilds a cache it finds so."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(errno.EISDIR, message, str(path))

    def __str__(self) -> str:
        return str(self.strerror)


class SiteFileInTheWay(SiteError, NotADirectoryError):
    """A file (not an empty one) where the build makes a folder of pages: the user's to
    move, never deleted. Also a ``NotADirectoryError`` (``ENOTDIR``, with the file's
    path), as the writes would have failed: ``publish --html`` drops and rebuilds a cache
    it finds so."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(errno.ENOTDIR, message, str(path))

    def __str__(self) -> str:
        return str(self.strerror)


class SiteLinkInTheWay(SiteError, OSError):
    """A symbolic link where the build makes its lock file: refused, never followed (it
    would make the file wherever it points). Also an ``OSError`` (``ELOOP``, with the
    link's path), as opening it without following fails: ``publish --html`` drops and
    rebuilds a cache it finds so."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(errno.ELOOP, message, str(path))

    def __str__(self) -> str:
        return str(self.strerror)


class SiteIncomplete(OSError):
    """The pages were made but the site could not be finished (a full disk): ``report``
    says which pages were written and which failed, as a finished build's would."""

    def __init__(self, error: OSError, report: Any, out_dir: Path) -> None:
        reason = error.strerror or str(error)
        where = f" ({error.filename})" if error.filename else ""
        named = isinstance(error.filename, (str, bytes)) and error.filename
        path = Path(os.fsdecode(error.filename)) if named else None
        advice = not_curable_by_running_again(error, path, out_dir) if path else None
        if advice is None:
            advice = f"{'make room and ' if error.errno in DISK_FULL else ''}run again"
        super().__init__(
            error.errno,
            f"{reason}{where}: {plural(report.rendered, 'page')} written, but the site in "
            f"{out_dir} is not finished (its index may be missing or out of date); "
            f"{advice} (pages already made are kept)",
        )
        self.report = report


#: What a folder of another user's (``sudo pi-session export --all`` made it), one without
#: write permission, or a read-only file system fails with: every run alike.
_NOT_ALLOWED = frozenset({errno.EACCES, errno.EPERM})

#: How :func:`not_curable_by_running_again`'s advice ends (a caller that would add "it is
#: rendered again at the next build" leaves that out after it).
NOT_CURED_BY_RUNNING_AGAIN = "running again alone cannot help"


def not_curable_by_running_again(error: OSError, path: Path, out_dir: Path) -> str | None:
    """What to do about ``error``, met making or deleting ``path`` in the site folder
    ``out_dir``, when running again alone cannot cure it (a folder of another user's or
    without write permission, a read-only file system): the folder named, and its owner
    when it is another user's; None for any other error."""
    folder = path.parent
    if error.errno == errno.EROFS:
        return (
            f"{folder} is on a read-only file system: build the site on a writable one (or "
            f"mount it read-write); {NOT_CURED_BY_RUNNING_AGAIN}"
        )
    if error.errno not in _NOT_ALLOWED:
        return None
    try:
        owner = os.stat(folder).st_uid
    except OSError:
        owner = None
    me = os.geteuid() if hasattr(os, "geteuid") else None
    if owner is None or me is None or owner == me:
        return (
            f"{folder} does not let you make or delete files in it: give yourself write "
            f"permission (chmod -R u+w {shlex.quote(str(folder))}); "
            f"{NOT_CURED_BY_RUNNING_AGAIN}"
        )
    top = _highest_owned_by(folder, owner, out_dir)
    return (
        f"{folder} belongs to {_user_name(owner)}, not to you ({_user_name(me)}): make it "
        f"yours (sudo chown -R {shlex.quote(_user_name(me))} {shlex.quote(str(top))}); "
        f"{NOT_CURED_BY_RUNNING_AGAIN}"
    )


def _highest_owned_by(folder: Path, owner: int, out_dir: Path) -> Path:
    """The outermost folder from ``folder`` up to the site folder ``out_dir`` (itself too)
    that ``owner`` owns, all the way down: a ``sudo`` build made the whole tree its user's,
    and a ``chown`` of only the folder named fails at the next one."""
    top, root = folder, os.path.realpath(out_dir)
    if not stays_inside(out_dir, folder):  # (never a folder above the site: / is root's)
        return folder
    while os.path.realpath(top) != root and top.parent != top:
        try:
            if os.stat(top.parent).st_uid != owner:
                break
        except OSError:
            break
        top = top.parent
    return top


def _user_name(uid: int) -> str:
    """The user ``uid`` is, by name (its number when it has none)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return str(uid)


def load_manifest(path: Path) -> dict[str, Any]:
    """The manifest, keeping only entries shaped as this tool writes them.

    The site folder may come from anywhere (a clone, a download): an entry with another
    shape is dropped, so that session is simply rendered again, and nothing read here can
    name a file outside the folder.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    ok = isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT
    if not ok or not isinstance(data.get("sessions"), dict):
        return {}
    sessions = _own_pages({k: v for k, v in data["sessions"].items() if _valid_entry(v)})
    pages = data.get("project_pages")
    if not isinstance(pages, dict):
        pages = {}
    pages = {k: v for k, v in pages.items() if isinstance(v, str) and OWNED_PAGE.match(v)}
    return {**data, "sessions": sessions, "project_pages": pages}


def _own_pages(sessions: dict[str, Any]) -> dict[str, Any]:
    """The entries whose page and stem no other entry claims: two sessions pointed at one
    page (a tampered manifest) would link to, and then delete, each other's page."""
    stems = Counter(str(e.get("stem") or "").lower() for e in sessions.values())
    pages = Counter(e.get("page") for e in sessions.values())
    return {
        sid: entry
        for sid, entry in sessions.items()
        if (not entry.get("stem") or stems[str(entry["stem"]).lower()] == 1)
        and (not entry.get("page") or pages[entry["page"]] == 1)
    }


STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,159}")  # what site._safe_stem produces
_ROW_NUMBERS = ("messages", "entries", "branches", "tokens", "cost", "problems")
_ROW_TEXTS = ("id", "name", "title", "first_prompt", "cwd", "started", "last_activity",
              "file", "page", "error", "prompt_later")  # fmt: skip
#: What the build adds to a row for the listing alone (site._counted_rows): never stored.
_LISTING_ONLY = ("counted", "copy_of")


def _valid_entry(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    stem, page, row = entry.get("stem"), entry.get("page"), entry.get("row")
    if stem is not None and not (isinstance(stem, str) and STEM.fullmatch(stem)):
        return False
    if page is not None and not (isinstance(page, str) and OWNED_PAGE.match(page)):
        return False
    if page is not None and (not stem or not page.endswith(f"/{stem}.html")):
        return False  # a session's page is named by its stem (sessions/<project>/<stem>.html)
    if "turns" in entry and not _valid_turns(entry["turns"]):
        return False
    # the row's page becomes the listing's and the text search's links: the entry's own
    # (checked above) or none, never one a tampered manifest points elsewhere
    return row is None or (_valid_row(row) and row.get("page") in (None, page))


def _valid_turns(turns: Any) -> bool:
    """``{"days": [day...], "each": [[key, day number, tokens, cost]...], "messages":
    [keys...]}`` (site._turns), or None; read for every turn of the site at each build, so
    checked plainly."""
    if turns is None:
        return True
    if not isinstance(turns, dict):
        return False
    days, each = turns.get("days"), turns.get("each")
    if not isinstance(days, list) or not isinstance(each, list):
        return False
    messages = turns.get("messages", [])
    if not isinstance(messages, list) or not all(isinstance(m, str) for m in messages):
        return False
    if not all(isinstance(d, str) and _DAY.fullmatch(d) for d in days):
        return False
    count = len(days)
    for turn in each:
        if not (isinstance(turn, list) and len(turn) == 4):
            return False
        key, day, tokens, cost = turn
        if not (isinstance(key, str) and type(day) is int and -1 <= day < count):
            return False
        if not (_finite_number(tokens) and _finite_number(cost)):
            return False
    return True


def _valid_row(row: Any) -> bool:
    if not isinstance(row, dict):
        return False
    if any(not _finite_number(row.get(key, 0)) for key in _ROW_NUMBERS):
        return False
    if any(not isinstance(row.get(key), (str, type(None))) for key in _ROW_TEXTS):
        return False
    models = row.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        return False
    if any(key in row for key in _LISTING_ONLY):
        return False
    prompts = row.get("prompts", [])
    if not isinstance(prompts, list) or not all(_valid_prompt(p) for p in prompts):
        return False
    more = row.get("prompt_more", [])
    if not isinstance(more, list) or not all(_valid_more_words(m, len(prompts)) for m in more):
        return False
    by_day = row.get("cost_by_day", {})
    return isinstance(by_day, dict) and all(
        isinstance(day, str) and _DAY.fullmatch(day) and _finite_number(cost)
        for day, cost in by_day.items()
    )


def _valid_prompt(prompt: Any) -> bool:
    """``[anchor, text]``: an anchor the page gives an entry (it goes into a link)."""
    return (
        isinstance(prompt, list)
        and len(prompt) == 2
        and all(isinstance(part, str) for part in prompt)
        and _ANCHOR.fullmatch(prompt[0]) is not None
    )


def _valid_more_words(more: Any, prompts: int) -> bool:
    """``[number of a listed prompt, its other words]``."""
    return (
        isinstance(more, list)
        and len(more) == 2
        and type(more[0]) is int
        and 0 <= more[0] < prompts
        and isinstance(more[1], str)
    )


_ANCHOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:~-]{0,80}")
_DAY = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])")


def _finite_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)  # a 400-digit int is finite too


def save_manifest(path: Path, sessions: dict[str, Any], projects: dict[str, str]) -> None:
    """One session per line (diffable), streamed to a temp file and renamed (atomic, and
    without holding the whole document in memory twice)."""
    compact = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"))

    def dump(value: Any) -> str:  # lone surrogates (session text, odd file names) as \uXXXX
        return escape_surrogates(compact(value))

    head = {"format": MANIFEST_FORMAT, "generator": f"pi-session-export {__version__}"}
    with atomic_open(path, "w", encoding="utf-8") as out:
        out.write(dump(head)[:-1] + f',"project_pages":{dump(projects)},"sessions":{{')
        for n, (key, value) in enumerate(sorted(sessions.items())):
            out.write(f"{',' if n else ''}\n{dump(key)}:{dump(value)}")
        out.write("\n}}\n")


def stays_inside(out_dir: Path, path: Path) -> bool:
    """Is ``path`` (a folder or a file, through any links) really in the site folder? A
    site from a clone or an archive can hold a link elsewhere: a page deleted or written
    through it would be a file outside the site."""
    root = os.path.realpath(out_dir)
    return os.path.realpath(path).startswith(root.rstrip(os.sep) + os.sep)


def refuse_links_out(out_dir: Path) -> None:
    """Raise ``SiteError`` when a name the build writes, deletes or sweeps under is a
    symbolic link out of the site folder (a clone or an archive can hold one): its pages,
    folders and temp files would be made or removed elsewhere."""
    names = [out_dir / n for n in ("index.html", MANIFEST_NAME, "sessions", "projects", SEARCH_DIR)]
    for folder in ("sessions", "projects", SEARCH_DIR):
        if not (out_dir / folder).is_symlink():  # (checked itself above)
            with contextlib.suppress(OSError):
                names += sorted((out_dir / folder).iterdir())
    for path in names:
        if path.is_symlink() and not stays_inside(out_dir, path):
            rel = path.relative_to(out_dir).as_posix()
            raise SiteError(
                f"{rel} in {out_dir} is a symbolic link out of the site folder: a build would "
                "write or delete files there; remove the link"
            )


def delete_page(out_dir: Path, page: Any) -> OSError | None:
    """Delete a page this tool wrote (paths from the manifest are checked, never trusted);
    why a page that is there could not be deleted (a folder of another user's, a read-only
    file system), or None: the page of a session deleted for a secret it held is still
    served, which the build must say."""
    if not isinstance(page, str) or not OWNED_PAGE.match(page):
        return None
    target = out_dir / page
    if not stays_inside(out_dir, target.parent):
        return None
    try:
        target.unlink()
    except FileNotFoundError:
        pass
    except OSError as error:
        return error
    with contextlib.suppress(OSError):
        target.parent.rmdir()  # only succeeds when the project folder is now empty
    return None


def check_folder(out_dir: Path, manifest_path: Path) -> None:
    """Refuse a folder holding a site's names without the manifest that says which of its
    files this tool wrote: a build would write over, and sweep, pages that may be the
    user's. One whose index.html is a site index of ours lost its manifest (copied by
    ``cp -r site/*``, which leaves dot-files behind): the refusal says how to go on."""
    if manifest_path.exists():
        return
    foreign = [n for n in ("index.html", "sessions", "projects") if (out_dir / n).exists()]
    if not foreign:
        return
    remedy = "build into a new folder, or remove its index.html, sessions/ and projects/ first"
    if _index_is_ours(out_dir / "index.html"):
        raise SiteError(
            f"{out_dir} holds a pi-session site without its {MANIFEST_NAME} (copied without "
            f"its dot-files?), which says which pages are ours: {remedy}"
        )
    raise SiteError(
        f"{out_dir} already has {', '.join(foreign)} but no {MANIFEST_NAME}: "
        f"not a pi-session site; choose an empty or new folder (or, for a pi-session site "
        f"that lost its {MANIFEST_NAME}, {remedy})"
    )


#: The files a build writes in the site folder itself, and what each is, as said.
_SITE_FILES = ((MANIFEST_NAME, "the site's manifest"), ("index.html", "the site's index"))


def clear_in_the_way(out_dir: Path) -> None:
    """A folder where the build writes the site's manifest or index failed every build,
    naming a temp file (the manifest's) or after rendering every page (the index's). An
    empty one is removed (nothing is lost); the manifest's is then a manifest lost, judged
    as any (:func:`check_folder`: a folder holding a site's names without it is refused,
    since nothing says which pages are ours). Any other (one that holds anything, a link)
    is refused, naming it: it is the user's to move. A file where a folder of pages goes
    is judged alike (:func:`_clear_file_in_the_way`)."""
    for name, what in _SITE_FILES:
        path = out_dir / name
        if not path.is_dir():
            continue
        if not path.is_symlink():
            try:
                path.rmdir()  # only when empty
            except OSError:
                pass
            else:
                if name == MANIFEST_NAME:
                    check_folder(out_dir, path)
                continue
        raise SiteInTheWay(
            path,
            f"{path} is a folder, not a file: {what} goes there; move the folder away (or "
            "remove it) and build again (no page was written)",
        )
    for name, what in _SITE_FOLDERS:
        _clear_file_in_the_way(out_dir / name, what)


#: The folders a build writes the site's pages in, and what each holds, as said.
_SITE_FOLDERS = (("sessions", "the sessions' pages"), ("projects", "the project pages"))


def _clear_file_in_the_way(path: Path, what: str) -> None:
    """A file where the build makes a folder of pages: every page failed ("Not a
    directory"), every build, or the project pages failed after every page was rendered
    ("File exists"). An empty file is removed (nothing is lost); any other (one that holds
    anything, a link, a device) is refused before a page is written, naming it."""
    try:
        info = os.lstat(path)
    except OSError:  # nothing there (or nothing that can be told): the build says
        return
    if stat.S_ISDIR(info.st_mode) or (stat.S_ISLNK(info.st_mode) and path.is_dir()):
        return  # (a link to a folder out of the site is refused by refuse_links_out)
    if stat.S_ISREG(info.st_mode) and info.st_size == 0:
        with contextlib.suppress(FileNotFoundError):  # (gone meanwhile: as well)
            path.unlink()
        return
    kind = "a link to no folder" if stat.S_ISLNK(info.st_mode) else "a file, not a folder"
    raise SiteFileInTheWay(
        path,
        f"{path} is {kind}: {what} go there; move it away (or remove it) and build again "
        "(no page was written)",
    )


#: What the head of a site's index says (``index.html.j2``; not a project page's, nor a
#: session page's: `export S -o docs/index.html` makes no folder a site).
_SITE_INDEX = b'<meta name="pi-session-site" content="index">'


def _index_is_ours(index: Path) -> bool:
    """True when ``index`` is a regular file whose head says it is a site's index."""
    try:
        if index.is_symlink() or not index.is_file():
            return False
        with open(index, "rb") as handle:
            return _SITE_INDEX in handle.read(4096)
    except OSError:
        return False


def source_id(path: str | os.PathLike[str], mark: Mark | None = None) -> str:
    """Manifest key of a source file: a digest, so a published site holds no local paths.
    Of its real path: the sessions folder reached through a symlink (a linked ~/.pi) is the
    same files, not 300 removed and 300 new pages. With ``mark`` (a redacted site's keyed
    HMAC) the digest is keyed too: a plain one would let a reader confirm a guessed user
    name or ``--secret`` in the path, which the pages redact."""
    text = os.path.realpath(path)
    digest = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    return (digest if mark is None else mark(digest))[:32]


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


Mark = Callable[[str], str]


def source_digest(sha256: str, mark: Mark | None) -> str:
    """What the manifest records of a source: its SHA-256, or ``mark`` of it (a keyed HMAC)."""
    return sha256 if mark is None else mark(sha256)


def marked_digest(source: str, mark: Mark | None) -> str:
    """What the manifest records of a source file as it is now (:func:`source_digest` of
    its SHA-256)."""
    return source_digest(_sha256_file(source), mark)


def is_unchanged(
    entry: dict[str, Any], source: str, out_dir: Path, key: str, mark: Mark | None = None
) -> bool:
    """Same tool, options and bytes, and the page is still there; hash only if stat differs.

    The stat is size, mtime and ctime: a file replaced by other bytes of its size with its
    mtime set back (``cp -p``, ``touch -r``, ``os.utime``) keeps both, but not its ctime,
    which no one can set. An entry from before ctime was kept is hashed once."""
    same_build = (entry.get("tool_version"), entry.get("options_key")) == (__version__, key)
    page = entry.get("page")
    ours = isinstance(page, str) and OWNED_PAGE.match(page)  # the manifest is not trusted
    if entry.get("error") or not same_build or not ours or not _page_whole(out_dir / page, entry):
        return False
    try:
        if sub_agent_stamps(Path(source)) != entry.get("sub_agents", ""):
            return False  # a sub-agent's transcript changed, came or went
        info = os.stat(source)
        stat = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if stat == (entry.get("size"), entry.get("mtime_ns"), entry.get("ctime_ns")):
            return True
        same = info.st_size == entry.get("size") and source_digest(
            _sha256_file(source), mark
        ) == entry.get("sha256")
    except OSError:
        return False
    if same:  # touched (or moved, or from before ctime was kept): stat matches next time
        entry.update(mtime_ns=info.st_mtime_ns, ctime_ns=info.st_ctime_ns)
    return same


#: How every page this tool writes ends (page.html.j2), whitespace after it aside.
PAGE_END = b"</html>"


def _page_whole(page: Path, entry: dict[str, Any]) -> bool:
    """Is the page as it was written: a regular file of the size the entry records, ending
    as a page ends? One cut short (a full disk, an interrupted copy or sync) was kept, and
    ``publish --html`` uploaded it. Cheap: a stat and its last bytes, not a hash. An entry
    from before the size was recorded is judged by the ending alone, and given the size."""
    try:
        if not page.is_file():
            return False
        with open(page, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - 64))
            tail = handle.read(64)
    except OSError:
        return False
    if not tail.rstrip().endswith(PAGE_END):
        return False
    recorded = entry.get("page_bytes")
    if recorded is None:  # (saved with the manifest: checked by size from the next build)
        entry["page_bytes"] = size
        return True
    return type(recorded) is int and recorded == size


def is_temp_name(name: str) -> bool:
    """A temp file's name, as ``fsutil.atomic_open`` makes them (``.page.html.1a2b.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


def sweep(out_dir: Path, keep: set[Any]) -> list[tuple[str, OSError]]:
    """Delete pages and temp files no manifest entry owns (left by an interrupted build),
    and the temp copies of the index and manifest in the site's own folder; those that
    could not be deleted (path in the site, why): never a failed build, as the site is
    made, but a page left is still served, and the caller says so."""
    left: list[tuple[str, OSError]] = []
    for path in out_dir.iterdir() if out_dir.is_dir() else []:
        ours = path.name.startswith((".index.html.", f".{MANIFEST_NAME}."))
        if ours and path.name.endswith(".tmp") and (error := unlink_or_error(path)):
            left.append((path.name, error))
    for folder in ("sessions", "projects"):
        root = out_dir / folder
        for path in sorted(root.rglob("*")) if root.is_dir() else []:
            rel = path.relative_to(out_dir).as_posix()
            if not path.is_file() or rel in keep:
                continue
            # (a page: only names this tool writes)
            temp = is_temp_name(path.name)
            error = unlink_or_error(path) if temp else delete_page(out_dir, rel)
            if error is not None:
                left.append((rel, error))
    return left


def unlink_or_error(path: Path) -> OSError | None:
    """Delete ``path`` (gone already is fine); why it could not be, or None."""
    try:
        path.unlink(missing_ok=True)
    except OSError as error:
        return error
    return None


def write_if_changed(path: Path, text: str) -> None:
    """Keep the file (and its mtime) when nothing changed: friendlier to git and rsync."""
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return
    atomic_write_text(path, text)
