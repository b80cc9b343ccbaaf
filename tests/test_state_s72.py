"""State and output paths that did not heal (bug hunt 72), each through the real CLI on real
files.

* A file where a site's ``sessions/`` (or ``projects/``) folder goes: every ``export --all``
  failed every page ("Not a directory", exit 2) or failed after rendering them all ("File
  exists"). An empty file is removed (the site heals); any other is refused before a page
  is written, naming the real path, and left as it is. ``publish --html``, whose site is its
  own cache, drops that cache and renders it again.
* A folder where a site's lock goes: every build failed ("Is a directory", exit 2). An empty
  one is removed; one that holds anything is refused, naming it, and left as it is.
* A file where the folder of ``publish.key`` goes: every run took a throw-away key (a new
  manifest commit each time, every page of a redacted site rendered again). Our own
  folder's name is moved aside as a damaged key is, said once; a dry run leaves it and says
  what a real run will do; a file higher up (not ours) is named, and left.

Against the loopback fake of the Hub (tests/fakes/hub.py), as tests/test_state_s71.py.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import Result

import exporter.publish.publish_key as publish_key
import exporter.site as site_module
import tests.test_state_s71 as state_s71
from tests.fakes.hub import FakeHub
from tests.test_publish_state_s70 import REPO_ID, _export_site, _publish  # the same CLI calls

SITE_LOCK = ".pi-session-site.lock"  # exporter.site.LOCK_NAME

# the same fixtures as stop 71's: three real sessions of one project, a site built from
# them once (with project pages), the loopback Hub
sessions = state_s71.sessions
site = state_s71.site
hub = state_s71.hub

#: The folders a site's pages go in (exporter.site_manifest._SITE_FOLDERS).
PAGE_FOLDERS = {"sessions": "the sessions' pages", "projects": "the project pages"}


def _said(result: Result) -> str:
    return " ".join(result.stderr.split())


def _files(site: Path) -> dict[str, bytes]:
    """Every file of the site but its lock, by path."""
    found = (p for p in site.rglob("*") if p.is_file() and p.name != SITE_LOCK)
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in found}


def _file_for_folder(site: Path, name: str, text: str) -> dict[str, bytes]:
    """The folder ``name`` of the site replaced by a file holding ``text``; the site's
    other files as they are then."""
    shutil.rmtree(site / name)
    (site / name).write_text(text, "utf-8")
    return {k: v for k, v in _files(site).items() if k != name}


# --- 1. a file where a folder of pages goes ------------------------------------------------


@pytest.mark.parametrize("name", sorted(PAGE_FOLDERS))
def test_a_file_where_a_folder_of_pages_goes_is_refused_by_its_path(
    sessions: Path, site: Path, name: str
) -> None:
    """Every build failed (exit 2): each page "cannot write sessions/...: Not a directory",
    or "File exists (.../projects)" after every page was rendered. Refused before any page
    is written, naming the file and what to do; the file is left as it is."""
    kept = _file_for_folder(site, name, "mine")
    for _ in range(2):
        refused = _export_site(sessions, site)
        assert refused.exit_code == 1, refused.output
        assert "Traceback" not in refused.output and "warning" not in refused.stderr
        said = _said(refused)
        assert (
            f"error: {site / name} is a file, not a folder: {PAGE_FOLDERS[name]} go there; "
            "move it away (or remove it) and build again (no page was written)"
        ) in said, said
    assert (site / name).read_text("utf-8") == "mine"
    assert {k: v for k, v in _files(site).items() if k != name} == kept


@pytest.mark.parametrize("name", sorted(PAGE_FOLDERS))
def test_an_empty_file_where_a_folder_of_pages_goes_heals(
    sessions: Path, site: Path, name: str
) -> None:
    """An empty file holds nothing of anyone's: removed, and the folder made in its place."""
    pages = _files(site)
    _file_for_folder(site, name, "")
    healed = _export_site(sessions, site)
    assert healed.exit_code == 0, healed.output
    rendered = 3 if name == "sessions" else 0  # (the session pages went with their folder)
    assert f"{rendered} rendered, {3 - rendered} unchanged, 0 removed, 0 failed" in healed.stderr
    assert (site / name).is_dir()
    assert _files(site) == pages
    assert "0 rendered, 3 unchanged" in _export_site(sessions, site).stderr


# --- 2. a folder where the site's lock goes -----------------------------------------------


def test_a_folder_holding_something_where_the_lock_goes_is_refused_by_its_path(
    sessions: Path, site: Path
) -> None:
    """Every build failed (exit 2, "...lock: Is a directory", nothing said of what to do).
    Refused, naming the folder and what to do; the folder and the site are left as they
    are."""
    lock = site / SITE_LOCK
    lock.unlink()
    (lock / "x").mkdir(parents=True)
    (lock / "x" / "mine.txt").write_text("mine", "utf-8")
    files = _files(site)
    for _ in range(2):
        refused = _export_site(sessions, site)
        assert refused.exit_code == 1, refused.output
        assert "Traceback" not in refused.output
        said = _said(refused)
        assert f"error: {lock} is a folder, not a file: the site's lock" in said, said
        assert "move the folder away (or remove it) and build again (nothing was changed)" in said
    assert (lock / "x" / "mine.txt").read_text("utf-8") == "mine"
    assert _files(site) == files


def test_an_empty_folder_where_the_lock_goes_heals(sessions: Path, site: Path) -> None:
    """An empty folder is removed and the lock made in its place."""
    files = _files(site)
    lock = site / SITE_LOCK
    lock.unlink()
    lock.mkdir()
    healed = _export_site(sessions, site)
    assert healed.exit_code == 0, healed.output
    assert "0 rendered, 3 unchanged" in healed.stderr
    assert lock.is_file() and _files(site) == files


@pytest.mark.parametrize("target", ["missing", "file"])
def test_a_lock_that_is_a_link_out_of_the_site_is_refused_and_nothing_made_there(
    sessions: Path, site: Path, tmp_path: Path, target: str
) -> None:
    """The lock was opened through a symbolic link: a link out of the site (a clone or an
    archive can hold one) made (or appended to) a file wherever it pointed."""
    outside = tmp_path / "elsewhere" / "not-yours.txt"
    outside.parent.mkdir()
    if target == "file":
        outside.write_bytes(b"mine")
    lock = site / SITE_LOCK
    lock.unlink()
    lock.symlink_to(outside)
    files = _files(site)
    refused = _export_site(sessions, site)
    assert refused.exit_code == 1, refused.output
    assert "Traceback" not in refused.output
    assert f"{SITE_LOCK} in {site} is a symbolic link" in _said(refused)
    assert (outside.read_bytes() == b"mine") if target == "file" else not outside.exists()
    assert lock.is_symlink() and _files(site) == files


# --- 3. publish --html: a file where its cached site's sessions/ goes ----------------------


def test_publish_html_drops_a_cached_site_with_a_file_where_its_pages_go(
    hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """The cached site is this machine's: a file in place of its ``sessions/`` made every
    page fail at every run. The cache is dropped and made again, said once; the dataset is
    left as it is."""
    assert _publish(hub, sessions, "--html").exit_code == 0
    published = hub.files(REPO_ID)
    (html,) = (tmp_path / "cache" / "pi-session-export" / "publish-html").iterdir()
    _file_for_folder(html, "sessions", "x")
    commits = len(hub.commits)
    again = _publish(hub, sessions, "--html")
    assert again.exit_code == 0, again.output
    assert "Traceback" not in again.output
    said = _said(again)
    assert "the local cache of html/ pages" in said and "dropped" in said, said
    assert hub.files(REPO_ID) == published and len(hub.commits) == commits
    quiet = _publish(hub, sessions, "--html")
    assert quiet.exit_code == 0 and "damaged" not in quiet.stderr, quiet.output


def test_publish_html_drops_a_cached_site_with_a_link_where_its_lock_goes(
    hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """A link where the cached site's lock goes is refused by a build (never followed);
    the cache is this machine's: dropped and made again, not refused at every run with
    an internal path."""
    assert _publish(hub, sessions, "--html").exit_code == 0
    published = hub.files(REPO_ID)
    (html,) = (tmp_path / "cache" / "pi-session-export" / "publish-html").iterdir()
    outside = tmp_path / "elsewhere.txt"
    (html / SITE_LOCK).unlink()
    (html / SITE_LOCK).symlink_to(outside)
    again = _publish(hub, sessions, "--html")
    assert again.exit_code == 0, again.output
    assert "the local cache of html/ pages" in _said(again) and not outside.exists()
    assert hub.files(REPO_ID) == published
    assert (html / SITE_LOCK).is_file() and not (html / SITE_LOCK).is_symlink()


def test_two_builds_that_find_an_empty_folder_where_the_lock_goes_both_go_on(
    sessions: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other build removed the empty folder and made the lock file between this one's
    open and its removal of the folder: that lock is opened, not refused as "a folder"."""
    lock = site / SITE_LOCK
    lock.unlink()
    lock.mkdir()
    real = site_module._open_lock_file
    calls = []

    def the_other_build_first(path: Path) -> object:
        calls.append(path)
        if len(calls) == 1:  # this build found the folder; the other one then healed it
            try:
                return real(path)
            finally:
                path.rmdir()
                real(path).close()
        return real(path)

    monkeypatch.setattr(site_module, "_open_lock_file", the_other_build_first)
    built = _export_site(sessions, site)
    assert built.exit_code == 0, built.output
    assert len(calls) == 2 and lock.is_file()


# --- 4. a file where the folder of publish.key goes ----------------------------------------


def _key_folder_a_file(tmp_path: Path) -> Path:
    """The folder of the key file replaced by a file (the user's, kept)."""
    folder = tmp_path / "config" / "pi-session-export"
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("mine", "utf-8")
    return folder


def _moved_aside(folder: Path) -> list[Path]:
    return [p for p in folder.parent.iterdir() if p.name.startswith(f"{folder.name}.damaged-")]


def test_a_file_where_the_publish_key_folder_goes_is_moved_aside_once(
    hub: FakeHub, sessions: Path, tmp_path: Path
) -> None:
    """Every run warned "could not keep a publish key ... (Not a directory)", took a
    throw-away key and committed a new manifest, forever (a dry run said "no publish key
    yet: the first real run will" make one, which it did not). Moved aside (kept) and a key
    made, said once; the next run commits nothing."""
    assert _publish(hub, sessions).exit_code == 0
    folder = _key_folder_a_file(tmp_path)
    dry = _publish(hub, sessions, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert (
        f"{folder} is a file, not the folder of the publish key {folder / 'publish.key'}: "
        "the next run that is not a dry run moves it aside and makes a new key; this run "
        "uses a throw-away key"
    ) in _said(dry), dry.stderr
    assert folder.read_text("utf-8") == "mine" and not _moved_aside(folder)
    commits = len(hub.commits)
    replaced = _publish(hub, sessions)
    assert replaced.exit_code == 0, replaced.output
    assert re.search(
        rf"{re.escape(str(folder))} was a file, not the folder of the publish key: moved "
        r"aside as pi-session-export\.damaged-\S+, and a new key made in \S+publish\.key",
        _said(replaced),
    ), replaced.stderr
    assert re.fullmatch(rb"[0-9a-f]{64}", (folder / "publish.key").read_bytes().strip())
    (aside,) = _moved_aside(folder)
    assert aside.read_text("utf-8") == "mine"
    assert len(hub.commits) <= commits + 1  # the manifest's marks, under the new key
    quiet = _publish(hub, sessions)
    assert quiet.exit_code == 0, quiet.output
    assert "publish key" not in quiet.stderr
    assert "no commit" in quiet.stdout and len(hub.commits) <= commits + 1


def test_a_file_where_the_publish_key_folder_goes_does_not_rerender_a_redacted_site(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --all --redact`` keys its manifest by the publish key: every build rendered
    every page again under a throw-away key."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    folder = _key_folder_a_file(tmp_path)
    site = tmp_path / "site"
    first = _export_site(sessions, site, "--redact")
    assert first.exit_code == 0, first.output
    assert "was a file, not the folder of the publish key: moved aside" in _said(first)
    again = _export_site(sessions, site, "--redact")
    assert again.exit_code == 0, again.output
    assert "publish key" not in again.stderr
    assert "0 rendered, 3 unchanged" in again.stderr
    (aside,) = _moved_aside(folder)
    assert aside.read_text("utf-8") == "mine"


def test_a_file_in_place_of_the_config_folder_is_named_and_left(
    sessions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$XDG_CONFIG_HOME`` itself a file is not ours to move: the warning named only the
    key file ("Not a directory"); it names the file in the way, which is left as it is."""
    config = tmp_path / "config"
    config.write_text("mine", "utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    built = _export_site(sessions, tmp_path / "site", "--redact")
    assert built.exit_code == 0, built.output
    key = config / "pi-session-export" / "publish.key"
    assert (
        f"could not keep a publish key in {key}: {config} is a file, not a folder; move it away"
    ) in _said(built), built.stderr
    assert config.read_text("utf-8") == "mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("config")] == ["config"]


def test_a_key_folder_made_by_another_run_meanwhile_is_read_not_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This run judged the file; another moved it aside and made the folder and its key
    before this one moved it: the other's key is read (it was moved aside as "a file")."""
    folder = _key_folder_a_file(tmp_path)
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    real = publish_key._plain_file
    theirs: list[str] = []

    def judged_then_the_other_run(path: Path) -> object:
        found = real(path)
        if not theirs:
            monkeypatch.setattr(publish_key, "_plain_file", real)
            theirs.append(publish_key.load_publish_key(environ, create=True).mark("a"))
        return found

    monkeypatch.setattr(publish_key, "_plain_file", judged_then_the_other_run)
    mine = publish_key.load_publish_key(environ, create=True)
    assert theirs and mine.mark("a") == theirs[0]
    assert "was a file" not in (mine.note or ""), mine.note
    (aside,) = _moved_aside(folder)
    assert aside.read_text("utf-8") == "mine" and (folder / "publish.key").is_file()
