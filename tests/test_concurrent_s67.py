"""Publishes that run at once: two first runs to one new dataset, first runs on a new machine
making the publish key, a run meeting another's html/ build, and the kept copies two runs to
one dataset share. Every interleaving is made to happen (a hook at the step where the other
run comes in), never left to timing: against the loopback fake Hub, with real files."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.publish import hub_repo
from exporter.publish.hub_site import (
    copies_cache_dir,
    html_cache_dir,
    keep_copies,
    remote_copies,
)
from exporter.publish.hub_state import RemoteFile, RemoteState, git_oid
from exporter.publish.publish_key import PublishKey, key_file, load_publish_key
from tests.conftest import FIXTURES_DIR
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture, isolate_hub

__all__ = ["fake_hub_fixture"]

REPO_ID = "alice/traces"
RUN_A = ["every-entry-type.jsonl", "pi-branched-1.jsonl"]
RUN_B = ["pi-branched-2.jsonl", "pi-branched-3.jsonl"]
#: The lock each publish holds (shared) while it uses the kept copies, as ``copies_in_use``
#: takes it (spelled here: the test must load, and fail, on the code before it existed).
IN_USE_LOCK = ".copies-in-use.lock"
SITE_LOCK = ".pi-session-site.lock"  # exporter.site.LOCK_NAME


@pytest.fixture(autouse=True)
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_hub(monkeypatch, tmp_path)


def _publish(fake: FakeHub, names: list[str], *extra: str) -> Result:
    files = [str(FIXTURES_DIR / name) for name in names]
    args = ["publish", REPO_ID, *files, "--endpoint", fake.url, "--token", TOKEN, "-j", "1"]
    return CliRunner().invoke(cli, [*args, *extra], catch_exceptions=False)


def _manifest(fake: FakeHub) -> set[str]:
    return set(json.loads(fake.files(REPO_ID)["manifest.json"])["sessions"])


def _consistent(fake: FakeHub) -> set[str]:
    """The published sessions, once manifest, index and tree are seen to agree."""
    files = fake.files(REPO_ID)
    rows = {json.loads(line)["path"] for line in files["index.jsonl"].splitlines()}
    tree = {path for path in files if path.startswith("sessions/")}
    assert _manifest(fake) == rows == tree
    return tree


def _named(paths: set[str], names: list[str]) -> bool:
    """Are ``paths`` the dataset paths of exactly the fixture files ``names``?"""
    return sorted(Path(p).name for p in paths) == sorted(names)


# --- 1. two first publishes to a dataset that does not exist yet --------------------------


def test_a_first_publish_overtaken_after_creating_stops_instead_of_overwriting(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run A found no dataset and planned a first publish. Between its creating the dataset
    and reading its head, run B (also a first run) published: A committed on top of B's
    head, its manifest, index and card replaced B's, and B's sessions stayed in the tree
    listed nowhere, both exiting 0. A must stop, as at any concurrent commit (exit 3)."""
    real_create = hub_repo.HubRepo.create
    overtaken: list[Result] = []

    def create_then_another_run_publishes(self: hub_repo.HubRepo, *, private: bool) -> None:
        real_create(self, private=private)
        if not overtaken:  # once: run B is the whole other publish, in this very moment
            overtaken.append(_publish(fake_hub, RUN_B))

    monkeypatch.setattr(hub_repo.HubRepo, "create", create_then_another_run_publishes)
    result = _publish(fake_hub, RUN_A)
    assert overtaken and overtaken[0].exit_code == 0, overtaken[0].output
    assert result.exit_code == 3, result.output
    assert "changed on the Hub while publishing (another publisher?)" in result.stderr
    assert "none of this run's sessions was sent" in result.stderr
    assert "Traceback" not in result.output and TOKEN not in result.output
    assert len(fake_hub.commits) == 1  # B's only
    assert _named(_consistent(fake_hub), RUN_B)  # B's sessions, all listed
    # A's re-run publishes on top of B's, and every session is listed
    monkeypatch.setattr(hub_repo.HubRepo, "create", real_create)
    again = _publish(fake_hub, RUN_A)
    assert again.exit_code == 0, again.output
    assert _named(_consistent(fake_hub), RUN_A + RUN_B)


def test_a_first_publish_whose_dataset_was_created_meanwhile_goes_on(
    fake_hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset another run created (holding only what creation makes) is no conflict."""
    real_create = hub_repo.HubRepo.create

    def created_by_another_run_first(self: hub_repo.HubRepo, *, private: bool) -> None:
        fake_hub.new_repo(REPO_ID, private=True)
        real_create(self, private=private)  # exist_ok: the Hub's 409 is fine

    monkeypatch.setattr(hub_repo.HubRepo, "create", created_by_another_run_first)
    result = _publish(fake_hub, RUN_A)
    assert result.exit_code == 0, result.output
    assert _named(_consistent(fake_hub), RUN_A)


# --- 2. first runs on a new machine make the publish key at once -------------------------


def _environ(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}


def test_first_runs_at_once_read_one_key_never_a_half_written_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run reads the key file while the first is writing it: it took the file
    (created, still empty) for a damaged key and went on with a throw-away key, so its
    marks differed from the kept key's. Both must use the one key the file keeps."""
    environ = _environ(tmp_path)
    real_fdopen = os.fdopen
    second: list[PublishKey] = []
    started: list[bool] = []

    class WriterInterrupted:
        """The first run's key file being written: the second run reads in between."""

        def __init__(self, stream: Any) -> None:
            self.stream = stream

        def __enter__(self) -> WriterInterrupted:
            return self

        def __exit__(self, *exc: object) -> None:
            self.stream.close()

        def write(self, data: bytes) -> int:
            if not started:
                started.append(True)
                second.append(load_publish_key(environ))
            return self.stream.write(data)

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        stream = real_fdopen(fd, *args, **kwargs)
        return WriterInterrupted(stream) if not started else stream

    monkeypatch.setattr(os, "fdopen", fdopen)
    first = load_publish_key(environ)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert second, "the second run did not read while the first wrote"
    assert "throw-away" not in (second[0].note or ""), second[0].note
    assert "damaged" not in (second[0].note or "")
    assert first.mark("x") == second[0].mark("x")
    path = key_file(environ)
    assert load_publish_key(environ).mark("x") == first.mark("x")  # the kept key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["publish.key"]  # no temp file


def test_a_short_key_file_just_written_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key file another run has created but not written yet (an older version's way, or
    a file system without hard links) is read again, not taken for a damaged one."""
    environ = _environ(tmp_path)
    path = key_file(environ)
    path.parent.mkdir(parents=True)
    path.touch(mode=0o600)
    theirs = b"f" * 64
    waits: list[float] = []

    def the_other_run_finishes(seconds: float) -> None:
        waits.append(seconds)
        path.write_bytes(theirs + b"\n")

    monkeypatch.setattr(time, "sleep", the_other_run_finishes)
    key = load_publish_key(environ)
    assert waits, "the short, fresh key file was not waited for"
    assert key.note is None, key.note
    assert key.mark("x") == PublishKey(theirs).mark("x")


def test_a_short_key_file_written_long_ago_is_moved_aside_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not waited for, and not a throw-away key on every run (bug hunt 70): kept beside
    the new key as publish.key.damaged-<time>."""
    environ = _environ(tmp_path)
    path = key_file(environ)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"short\n")
    path.chmod(0o600)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))

    def no_wait(seconds: float) -> None:
        raise AssertionError("an old damaged key file was waited for")

    monkeypatch.setattr(time, "sleep", no_wait)
    key = load_publish_key(environ)
    assert "was damaged" in (key.note or "") and "moved aside" in (key.note or ""), key.note
    (aside,) = path.parent.glob("publish.key.damaged-*")
    assert aside.read_bytes() == b"short\n"
    assert len(path.read_bytes().strip()) == 64
    assert load_publish_key(environ).mark("x") == key.mark("x")


def test_a_short_key_file_that_stays_short_is_damaged_after_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh file that never fills (its writer died) is waited for boundedly."""
    environ = _environ(tmp_path)
    path = key_file(environ)
    path.parent.mkdir(parents=True)
    path.touch(mode=0o600)
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    key = load_publish_key(environ)
    assert "damaged" in (key.note or ""), key.note
    assert 0 < sum(waits) <= 5


# --- 3. a publish --html meeting another publish's site build ----------------------------


def test_publish_html_meeting_another_build_says_another_publish_runs(
    fake_hub: FakeHub,
) -> None:
    """It said "another pi-session build is writing <cache folder>" (exit 1, a usage
    error): a folder and a build the user never made, and not that nothing was sent."""
    site = html_cache_dir(fake_hub.url, REPO_ID)
    site.mkdir(parents=True, exist_ok=True)
    with open(site / SITE_LOCK, "a+b") as lock:  # held as the site's build holds it
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = _publish(fake_hub, RUN_A, "--html")
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    assert result.exit_code == 3, result.output
    said = (
        f"pi-session: error: another publish to {REPO_ID} is running (its html/ pages are "
        "being built); nothing was sent; run again when it ends"
    )
    assert said in result.stderr, result.stderr
    assert str(site) not in result.output and "publish-html" not in result.output
    assert "Traceback" not in result.output
    assert fake_hub.commits == [] and fake_hub.repos == {}  # not even created
    again = _publish(fake_hub, RUN_A, "--html")  # once it ended
    assert again.exit_code == 0, again.output
    assert "html/index.html" in fake_hub.files(REPO_ID)


# --- 4. the kept copies two publishes to one dataset share --------------------------------


def _kept(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "copies.json").read_text(encoding="utf-8"))


def test_a_copy_another_run_keeps_meanwhile_stays_recorded(tmp_path: Path) -> None:
    """Run A downloads copies for its pages; meanwhile run B keeps its uploads. A wrote
    copies.json as it had read it before B: B's copies were recorded nowhere."""
    folder = tmp_path / "copies"
    data = b'{"type":"session"}\n'
    remote = RemoteState(exists=True, files={"sessions/2026-01/a.jsonl": RemoteFile.of(data)})
    upload = tmp_path / "b.jsonl"
    upload.write_bytes(b'{"type":"session","id":"b"}\n')

    def download_while_b_keeps(path: str) -> bytes:
        keep_copies({"sessions/2026-02/b.jsonl": (upload, git_oid(upload.read_bytes()))}, folder)
        return data

    copies, missing = remote_copies(sorted(remote.files), remote, folder, download_while_b_keeps)
    assert missing == [] and copies == [folder / "sessions/2026-01/a.jsonl"]
    assert set(_kept(folder)) == {"sessions/2026-01/a.jsonl", "sessions/2026-02/b.jsonl"}


def test_a_run_does_not_delete_the_copies_another_run_is_using(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    """Run B kept its uploads as copies (before its commit) and builds its pages from them;
    run A, whose view of the dataset lacks them, deleted them as gone from the dataset, and
    B's pages lost their source. Deleted only by a run alone, they still go in the end."""
    assert _publish(fake_hub, RUN_A, "--html").exit_code == 0
    folder = copies_cache_dir(fake_hub.url, REPO_ID)
    upload = tmp_path / "b-upload.jsonl"
    upload.write_bytes((FIXTURES_DIR / RUN_B[0]).read_bytes())
    b_path = f"sessions/2099-01/{RUN_B[0]}"  # not in the dataset: B's commit is to come
    keep_copies({b_path: (upload, git_oid(upload.read_bytes()))}, folder)
    with open(folder / IN_USE_LOCK, "a+b") as in_use:  # run B, building its pages
        fcntl.flock(in_use.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        during = _publish(fake_hub, RUN_A, "--html")
        fcntl.flock(in_use.fileno(), fcntl.LOCK_UN)
    assert during.exit_code == 0, during.output
    assert (folder / b_path).read_bytes() == upload.read_bytes()
    assert b_path in _kept(folder)
    after = _publish(fake_hub, RUN_A, "--html")  # alone, and B's commit never came
    assert after.exit_code == 0, after.output
    assert not (folder / b_path).exists() and b_path not in _kept(folder)
