"""Site, stop 74: what a site folder the user cannot change (a folder of another user's, left
by a ``sudo pi-session export --all``; a read-only file system) does to ``export --all``.

A deleted session's page that could not be deleted was counted removed, the build exited 0,
the page stayed (and was served) and the manifest forgot it: now the build names the page
and why, does not count it removed, keeps it in the manifest for the next build, and exits
2; the same of its search text in ``.pi-session-search`` (which the index's search
fetches, so served too). A page, a stray temp file or search text the folder would not
take said "run again", which can never help: now the folder is named, with its owner when
another user's, and how to make it the user's; a temp file that cannot be deleted is a
warning, not a failed build.

The OS refusals are made in-process (``os.unlink`` / ``os.replace`` made to raise for the
one path, as the kernel would): a test as root cannot get EACCES from a chmod, and CI has
no second user. Real fixtures, the real CLI (``-j 1``: rendered in this process).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli

SHARED = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES = SHARED / "fixtures"
PROJECT = "--home-alice-proj--"
MANIFEST = ".pi-session-site.json"  # exporter.site_manifest.MANIFEST_NAME
SEARCH_DIR = ".pi-session-search"  # exporter.site_manifest.SEARCH_DIR
NO_HELP = "running again alone cannot help"


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """A sessions folder of one project: two real fixtures."""
    folder = tmp_path / "sessions" / PROJECT
    folder.mkdir(parents=True)
    for name in ("pi-branched-1.jsonl", "pi-branched-2.jsonl"):
        shutil.copy(FIXTURES / name, folder / name)
    return folder


def _export(tmp_path: Path, *extra: str) -> Result:
    site = tmp_path / "site"
    args = ["export", "--all", "--sessions-dir", str(tmp_path / "sessions"), "-o", str(site)]
    result = CliRunner().invoke(cli, [*args, "-j", "1", *extra])
    assert "Traceback" not in result.output + result.stderr, result.stderr
    return result


def _said(result: Result) -> str:
    return " ".join(result.stderr.split())


def _page(site: Path, stem: str) -> Path:
    (page,) = (site / "sessions").glob(f"*/{stem}.html")
    return page


def _grow(path: Path) -> None:
    """The session goes on: a user message appended on its last entry, as Pi appends."""
    last = json.loads(path.read_bytes().splitlines()[-1])
    entry = {
        "type": "message",
        "id": "s74grown",
        "parentId": last["id"],
        "timestamp": "2026-12-08T01:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "and one more"}]},
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def _entries(site: Path) -> dict[str, dict[str, object]]:
    return json.loads((site / MANIFEST).read_text(encoding="utf-8"))["sessions"]


def _refuse(error_number: int) -> OSError:
    return OSError(error_number, os.strerror(error_number))


@pytest.fixture
def refuse_unlink(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, int], None]:
    """``os.unlink`` of one path fails as the kernel says it (its folder another user's:
    EACCES; a read-only mount: EROFS)."""
    real = os.unlink

    def refuse(path: Path, error_number: int) -> None:
        def unlink(target: object, *args: object, **kwargs: object) -> None:
            if os.fspath(target) == os.fspath(path):  # type: ignore[arg-type]
                raise OSError(error_number, os.strerror(error_number), os.fspath(path))
            real(target, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "unlink", unlink)

    return refuse


@pytest.fixture
def refuse_replace(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[str], bool], int], None]:
    """``os.replace`` over the paths ``which`` picks fails, as a rename into a folder of
    another user's (EACCES) or on a read-only mount (EROFS) does: naming both files."""
    real = os.replace

    def refuse(which: Callable[[str], bool], error_number: int) -> None:
        def replace(src: object, dst: object, *args: object, **kwargs: object) -> None:
            if which(os.fspath(dst)):  # type: ignore[arg-type]
                why = os.strerror(error_number)
                raise OSError(error_number, why, os.fspath(src), os.fspath(dst))  # type: ignore[arg-type]
            real(src, dst, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "replace", replace)

    return refuse


@pytest.fixture
def another_users(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The site folder is another user's (a ``sudo`` build made it): this process runs as
    someone else (its effective uid one more than the folder's owner's)."""
    me = os.geteuid() + 1
    monkeypatch.setattr(os, "geteuid", lambda: me)
    try:
        import pwd

        yield pwd.getpwuid(me).pw_name
    except KeyError:
        yield str(me)


# --- a page that could not be deleted ---------------------------------------------------------


def test_a_deleted_sessions_page_that_cannot_be_deleted_is_said_kept_and_tried_again(
    tmp_path: Path,
    sessions: Path,
    refuse_unlink: Callable[[Path, int], None],
    another_users: str,
) -> None:
    """The user deletes a session (it leaked a secret); its page's folder is root's. The
    build said "1 removed", exited 0, and the manifest forgot the page, still served."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    rel = page.relative_to(site).as_posix()
    (sessions / "pi-branched-2.jsonl").unlink()
    refuse_unlink(page, errno.EACCES)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 2, said
    assert "1 session: 0 rendered, 1 unchanged, 0 removed (1 page could not be deleted)" in said
    assert f"could not be deleted from the site in {site} ({rel})" in said, said
    assert f"{page.parent} belongs to " in said and f"(sudo chown -R {another_users} " in said
    assert said.endswith(NO_HELP), said
    assert page.is_file()
    assert rel not in (site / "index.html").read_text(encoding="utf-8")  # listed no more
    (kept,) = [e for e in _entries(site).values() if e.get("page") == rel]
    assert kept.get("left") is True and "row" not in kept
    # the folder is the user's again: the next build deletes it, and says it removed
    refuse_unlink(tmp_path / "none", errno.EACCES)
    again = _export(tmp_path)
    assert again.exit_code == 0, again.stderr
    assert "1 session: 0 rendered, 1 unchanged, 1 removed, 0 failed" in _said(again)
    assert not page.exists()
    assert all(e.get("page") != rel for e in _entries(site).values())


def test_a_session_back_after_its_page_could_not_be_deleted_is_listed_again(
    tmp_path: Path, sessions: Path, refuse_unlink: Callable[[Path, int], None]
) -> None:
    """The entry kept for a page that could not be deleted lists nothing; the session's
    file put back, the next build makes its page again and lists it (nothing removed)."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    rel = page.relative_to(site).as_posix()
    moved = tmp_path / "moved.jsonl"
    shutil.move(sessions / "pi-branched-2.jsonl", moved)
    refuse_unlink(page, errno.EROFS)
    assert _export(tmp_path).exit_code == 2
    refuse_unlink(tmp_path / "none", errno.EROFS)
    shutil.move(moved, sessions / "pi-branched-2.jsonl")
    back = _export(tmp_path)
    assert back.exit_code == 0, back.stderr
    assert "2 sessions: 1 rendered, 1 unchanged, 0 removed, 0 failed" in _said(back)
    assert page.is_file() and f'href="{rel}"' in (site / "index.html").read_text("utf-8")
    (entry,) = [e for e in _entries(site).values() if e.get("page") == rel]
    assert "left" not in entry and isinstance(entry.get("row"), dict)


def test_a_plain_page_a_redacted_build_cannot_delete_on_a_read_only_mount_is_said(
    tmp_path: Path,
    sessions: Path,
    refuse_unlink: Callable[[Path, int], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``--redact`` build deletes a plain build's pages of sessions that left before
    rendering (site._delete_leaving): one that cannot be deleted is said, not counted
    removed, and kept for the next build (exit 2)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    rel = page.relative_to(site).as_posix()
    (sessions / "pi-branched-2.jsonl").unlink()
    refuse_unlink(page, errno.EROFS)
    run = _export(tmp_path, "--redact")
    said = _said(run)
    assert run.exit_code == 2, said
    assert "0 removed (1 page could not be deleted)" in said, said
    assert "Read-only file system: 1 page the site no longer lists could not be deleted" in said
    assert f"({rel})" in said
    assert f"{page.parent} is on a read-only file system" in said and said.endswith(NO_HELP)
    assert page.is_file() and rel not in (site / "index.html").read_text(encoding="utf-8")
    assert any(e.get("page") == rel and e.get("left") for e in _entries(site).values())


# --- advice that is not "run again" -----------------------------------------------------------


@pytest.mark.parametrize("error_number", [errno.EACCES, errno.EROFS])
def test_a_page_the_folder_refuses_names_the_folder_not_run_again(
    tmp_path: Path,
    sessions: Path,
    refuse_replace: Callable[[Callable[[str], bool], int], None],
    another_users: str,
    error_number: int,
) -> None:
    """A page whose folder is root's (or on a read-only mount) said "run again", every
    run: now its folder, the owner and the ``chown`` to type (or the read-only mount)."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    page = _page(site, "pi-branched-2")
    _grow(sessions / "pi-branched-2.jsonl")
    refuse_replace(lambda dst: dst == str(page), error_number)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 2, said
    assert "1 page could not be written in the site" in said, said
    assert said.endswith(NO_HELP), said
    if error_number == errno.EROFS:
        assert f"{page.parent} is on a read-only file system" in said
    else:
        # (the site folder and all in it are that user's: the whole site is to be given)
        assert f"{page.parent} belongs to " in said
        assert f"(sudo chown -R {another_users} {site})" in said


def test_a_page_in_a_folder_without_write_permission_says_chmod(
    tmp_path: Path, sessions: Path, refuse_replace: Callable[[Callable[[str], bool], int], None]
) -> None:
    """The user's own folder, not writable: give yourself write permission."""
    assert _export(tmp_path).exit_code == 0
    page = _page(tmp_path / "site", "pi-branched-2")
    _grow(sessions / "pi-branched-2.jsonl")
    refuse_replace(lambda dst: dst == str(page), errno.EACCES)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 2, said
    assert f"(chmod -R u+w {page.parent}); {NO_HELP}" in said, said


def test_a_stray_temp_file_that_cannot_be_deleted_is_a_warning(
    tmp_path: Path,
    sessions: Path,
    refuse_unlink: Callable[[Path, int], None],
    another_users: str,
) -> None:
    """A temp file of an interrupted ``sudo`` build in a folder of root's failed every
    build ("0 pages written, but the site … is not finished … run again"): no page links
    it, so the build is made, and a warning names it and what to do."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    stray = _page(site, "pi-branched-2").parent / ".x.html.deadbeef.tmp"
    stray.write_text("half a page", encoding="utf-8")
    refuse_unlink(stray, errno.EACCES)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 0, said
    assert f"warning: a temp file of an interrupted build could not be deleted: {stray}" in said
    assert f"{stray.parent} belongs to " in said and NO_HELP in said
    assert "2 sessions: 0 rendered, 2 unchanged, 0 removed, 0 failed" in said
    assert stray.is_file()


def test_search_text_the_folder_refuses_says_what_to_do(
    tmp_path: Path,
    sessions: Path,
    refuse_replace: Callable[[Callable[[str], bool], int], None],
    another_users: str,
) -> None:
    """A ``.pi-session-search`` of root's: "rendered again at the next build" fails alike;
    the warning now says whose folder it is and what to type. The manifest (the folder may
    be published) keeps no path nor user name."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    _grow(sessions / "pi-branched-2.jsonl")
    refuse_replace(lambda dst: Path(dst).parent.name == SEARCH_DIR, errno.EACCES)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 0, said
    assert "warning: the text search cannot find 1 session" in said, said
    assert f"{site / SEARCH_DIR} belongs to " in said
    assert f"(sudo chown -R {another_users} {site}); {NO_HELP})" in said
    assert "rendered again at the next build" not in said  # (it would fail alike)
    manifest = (site / MANIFEST).read_text(encoding="utf-8")
    assert "search_error" in manifest and "chown" not in manifest and str(tmp_path) not in manifest


def test_an_index_the_folder_refuses_names_the_folder_not_run_again(
    tmp_path: Path,
    sessions: Path,
    refuse_replace: Callable[[Callable[[str], bool], int], None],
    another_users: str,
) -> None:
    """The site's index could not be written (the site folder is root's): the build is
    not finished, and the message says what to do, not only "run again"."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    _grow(sessions / "pi-branched-2.jsonl")
    refuse_replace(lambda dst: dst == str(site / "index.html"), errno.EACCES)
    run = _export(tmp_path)
    said = _said(run)
    assert run.exit_code == 2, said
    assert "is not finished" in said and f"{site} belongs to " in said, said
    assert f"(sudo chown -R {another_users} {site}); {NO_HELP} (pages already made" in said


# --- search text that could not be deleted ---------------------------------------------------


def _shard(site: Path, file: str) -> Path:
    """The search text of the session whose file is ``file`` (by its manifest key)."""
    (sid,) = [sid for sid, e in _entries(site).items() if e.get("file") == file]
    return site / SEARCH_DIR / f"{sid}.json"


def test_a_deleted_sessions_search_text_that_cannot_be_deleted_is_said_kept_and_tried_again(
    tmp_path: Path,
    sessions: Path,
    refuse_unlink: Callable[[Path, int], None],
    another_users: str,
) -> None:
    """The user deletes a session (it leaked a secret); ``.pi-session-search`` is root's.
    Its page went, but its search text (its prompts, fetched by the index's search, so
    served) stayed: the build said "1 removed", exited 0, and no later build said a word."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    shard = _shard(site, "pi-branched-2.jsonl")
    rel = shard.relative_to(site).as_posix()
    assert shard.is_file()
    (sessions / "pi-branched-2.jsonl").unlink()
    refuse_unlink(shard, errno.EACCES)
    for _ in range(2):  # (and the next build, still refused, says it again)
        run = _export(tmp_path)
        said = _said(run)
        assert run.exit_code == 2, said
        assert "0 removed (1 session's search text could not be deleted)" in said, said
        gone = f"no longer lists could not be deleted from the site in {site} ({rel})"
        assert f"1 session's search text the site {gone}" in said, said
        assert f"{site / SEARCH_DIR} belongs to " in said
        assert f"(sudo chown -R {another_users} {site}); {NO_HELP}" in said  # (all of it)
        assert said.endswith(NO_HELP), said
        assert shard.is_file()
        manifest = (site / MANIFEST).read_text(encoding="utf-8")
        assert "chown" not in manifest and str(tmp_path) not in manifest
        assert another_users not in manifest
        (kept,) = [e for e in _entries(site).values() if e.get("file") == "pi-branched-2.jsonl"]
        assert kept.get("left") is True and "row" not in kept
    assert not list((site / "sessions").glob("*/pi-branched-2.html"))  # (the page went)
    # the folder is the user's again: the next build deletes it, and says it removed
    refuse_unlink(tmp_path / "none", errno.EACCES)
    again = _export(tmp_path)
    assert again.exit_code == 0, again.stderr
    assert "1 session: 0 rendered, 1 unchanged, 1 removed, 0 failed" in _said(again)
    assert not shard.exists()
    assert all(e.get("file") != "pi-branched-2.jsonl" for e in _entries(site).values())


def test_a_plain_search_text_a_redacted_build_cannot_delete_on_a_read_only_mount_is_said(
    tmp_path: Path,
    sessions: Path,
    refuse_unlink: Callable[[Path, int], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``--redact`` build deletes a plain build's search text of sessions that left
    before rendering (site._delete_leaving): one that cannot be deleted is said, not
    counted removed, and kept for the next build (exit 2)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("PI_SESSION_PUBLISH_KEY", raising=False)
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    shard = _shard(site, "pi-branched-2.jsonl")
    (sessions / "pi-branched-2.jsonl").unlink()
    refuse_unlink(shard, errno.EROFS)
    run = _export(tmp_path, "--redact")
    said = _said(run)
    assert run.exit_code == 2, said
    assert "0 removed (1 session's search text could not be deleted)" in said, said
    assert f"{site / SEARCH_DIR} is on a read-only file system" in said and said.endswith(NO_HELP)
    assert shard.is_file()
    assert any(e.get("left") and "row" not in e for e in _entries(site).values())


def test_a_session_back_after_its_search_text_could_not_be_deleted_is_listed_again(
    tmp_path: Path, sessions: Path, refuse_unlink: Callable[[Path, int], None]
) -> None:
    """The entry kept for search text that could not be deleted lists nothing; the
    session's file put back, the next build makes its page and text again and lists it."""
    assert _export(tmp_path).exit_code == 0
    site = tmp_path / "site"
    shard = _shard(site, "pi-branched-2.jsonl")
    moved = tmp_path / "moved.jsonl"
    shutil.move(sessions / "pi-branched-2.jsonl", moved)
    refuse_unlink(shard, errno.EACCES)
    assert _export(tmp_path).exit_code == 2
    refuse_unlink(tmp_path / "none", errno.EACCES)
    shutil.move(moved, sessions / "pi-branched-2.jsonl")
    back = _export(tmp_path)
    assert back.exit_code == 0, back.stderr
    assert "2 sessions: 1 rendered, 1 unchanged, 0 removed, 0 failed" in _said(back)
    page = _page(site, "pi-branched-2")
    assert f'href="{page.relative_to(site).as_posix()}"' in (site / "index.html").read_text("utf-8")
    (entry,) = [e for e in _entries(site).values() if e.get("file") == "pi-branched-2.jsonl"]
    assert "left" not in entry and isinstance(entry.get("row"), dict) and shard.is_file()
