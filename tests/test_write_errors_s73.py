"""Stop 73 (helper hunt of writes on a full disk): a ``publish --report`` that could not be
written hid the Hub's error (exit 3) or the summary of a publish that went through; a gist
deleted whose share state could not be saved was said as a failure; a full TMPDIR was said
as the sessions' failure ("none ... could be read", or some left out and exit 0); a failed
rename named our temporary file; `search >/dev/full` did not name standard output; the dry
run of a share wrote its files one at a time.

A full disk without root: RLIMIT_FSIZE in the child (Python ignores SIGXFSZ, so a write past
it fails with EFBIG, "File too large"), a file where a folder goes, /dev/full, /proc.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from exporter.fsutil import atomic_write_text
from tests.fakes.github import FakeGitHub
from tests.fakes.hub import TOKEN, FakeHub

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")
FIXTURES = SHARED / "fixtures"
#: Sessions of one project, small to large (every-entry-type is ~9 kB, the others ~170-280 kB).
SESSIONS = ("every-entry-type", "pi-branched-1", "pi-branched-3", "pi-branched-2")
DATASET = "alice/t5"
_NO_FILES_IN_PROC = "the folder /proc does not allow creating files"


def _env(tmp_path: Path) -> dict[str, str]:
    """A process of its own: its HF home, caches, config, share state and TMPDIR, no token
    or proxy but the fakes' (loopback), no `gh` on the PATH."""
    drop = ("HF_", "HUGGING", "GH_", "GITHUB_", "XDG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    for name in ("PI_SESSION_PUBLISH_KEY", "http_proxy", "https_proxy", "ALL_PROXY", "TMPDIR"):
        env.pop(name, None)
    for name in ("hf-home", "cache", "config", "state", "tmp", "empty-bin"):
        (tmp_path / name).mkdir(exist_ok=True)
    env.update(
        HF_HOME=str(tmp_path / "hf-home"),
        HF_TOKEN=TOKEN,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        TMPDIR=str(tmp_path / "tmp"),
        NO_PROXY="127.0.0.1,localhost",
        HTTPS_PROXY="http://127.0.0.1:9",  # anything not loopback fails fast
        HTTP_PROXY="http://127.0.0.1:9",
        PATH=str(tmp_path / "empty-bin"),
        PYTHONPATH=str(REPO),
    )
    return env


def _files_up_to(limit: int) -> Callable[[], None]:
    """A child's ``preexec_fn``: no file written past ``limit`` bytes (a full disk)."""

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return small_files


def _cli(
    tmp_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    limit: int | None = None,
    stdout: object = subprocess.PIPE,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`pi-session ARGS` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        env=env or _env(tmp_path),
        cwd=cwd or tmp_path,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        timeout=300,
        preexec_fn=None if limit is None else _files_up_to(limit),
        check=False,
    )


def _sessions(tmp_path: Path, names: tuple[str, ...] = SESSIONS) -> Path:
    """A sessions folder holding the fixtures ``names`` (one project)."""
    folder = tmp_path / "sessions" / "--home-dev-projects-webapp--"
    folder.mkdir(parents=True)
    for n, name in enumerate(names):
        stamp = f"2026-11-30T00-57-0{n}-000Z"
        shutil.copy(FIXTURES / f"{name}.jsonl", folder / f"{stamp}_{name}.jsonl")
    return folder.parent


def _publish(
    tmp_path: Path,
    hub: FakeHub,
    *extra: str,
    limit: int | None = None,
    jobs: int = 1,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    sessions = _sessions(tmp_path)
    return _cli(
        tmp_path,
        "publish", DATASET, "--all", "--sessions-dir", str(sessions),
        "--endpoint", hub.url, "-j", str(jobs), *extra,
        limit=limit, env=env,
    )  # fmt: skip


def _unwritable_report() -> Path:
    """A --report path that cannot be written, even by root, and that the checks before
    the run let through (a folder that is there): /proc, where no file may be made."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    return Path("/proc/pi-session-report.jsonl")


# --- 1. publish --report that cannot be written ----------------------------------------------


def test_publish_report_unwritable_after_the_hub_refused_keeps_the_hubs_error(
    tmp_path: Path,
) -> None:
    """The Hub refused the commit (403: exit 3) and the report then failed: only the
    report's error was said, exit 2; the Hub's error and its exit code were lost."""
    report = _unwritable_report()
    with FakeHub() as hub:
        hub.fail(403, path="/commit/", times=1000)
        done = _publish(tmp_path, hub, "--report", str(report))
        assert not hub.commits
    assert done.returncode == 3, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("pi-session: error:")]
    assert len(errors) == 2, done.stderr
    assert errors[0].startswith("pi-session: error: no write access to 'alice' on "), errors
    assert errors[1] == (
        f"pi-session: error: could not write the report {report}: {_NO_FILES_IN_PROC}"
    ), errors
    assert done.stderr.splitlines()[-1] == errors[1]


def test_publish_report_unwritable_after_a_publish_still_says_what_went_up(
    tmp_path: Path,
) -> None:
    """The commit went through and the report then failed: the summary line and the
    dataset's URL were never printed (a script could not tell that it had published)."""
    report = _unwritable_report()
    with FakeHub() as hub:
        done = _publish(tmp_path, hub, "--report", str(report))
        assert len(hub.commits) == 1
        url = f"{hub.url}/datasets/{DATASET}"
    assert done.returncode == 2, done.stderr
    out = done.stdout.splitlines()
    assert out[0].startswith(f"{DATASET}: 4 selected, 4 in the dataset; 4 added"), done.stdout
    assert out[1] == url, done.stdout
    assert done.stderr.splitlines()[-1] == (
        f"pi-session: error: could not write the report {report}: {_NO_FILES_IN_PROC}"
    ), done.stderr


# --- 2. share --delete whose share state cannot be saved -------------------------------------


def test_delete_says_the_gist_deleted_when_the_state_cannot_be_saved(tmp_path: Path) -> None:
    """The gist was deleted, but a share state that could not be written (a full disk)
    made the run an error (exit 2) that never said the gist was gone."""
    env = _env(tmp_path)
    with FakeGitHub() as fake:
        env["GH_ENTERPRISE_TOKEN"] = fake.token  # a loopback API is not github.com
        api = ["--api-url", fake.base_url]
        shared = _cli(tmp_path, "share", str(FIXTURES / "pi-branched-1.jsonl"), *api, env=env)
        assert shared.returncode == 0, shared.stderr
        (gist_id,) = fake.gists
        state = tmp_path / "state" / "pi-session-export" / "gists.json"
        before = state.read_bytes()
        deleted = _cli(tmp_path, "share", "--delete", gist_id, *api, env=env, limit=16)
        assert gist_id not in fake.gists
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout == f"Deleted gist {gist_id}\n"
    assert deleted.stderr == (
        f"pi-session: warning: could not save share state to {state}: File too large; it "
        f"still names the deleted gist {gist_id} (sharing its session again makes a new gist)\n"
    )
    assert state.read_bytes() == before  # as it was: no half-written file


# --- 3. publish with a full TMPDIR -----------------------------------------------------------


@pytest.mark.parametrize(
    ("limit", "jobs"),
    [(4_000, 1), (200_000, 1), (200_000, 2)],  # room for no redacted copy; for the smaller
    ids=["none-fits", "some-fit", "some-fit-2-workers"],
)
def test_publish_with_a_full_tmpdir_stops_before_sending(
    tmp_path: Path, limit: int, jobs: int
) -> None:
    """A redacted copy that could not be staged was said as the session's failure: "none of
    the 4 sessions selected could be read" (they were read), or, with room for some, those
    left out, "N failed" and exit 0."""
    env = _env(tmp_path)
    # the workers' forkserver makes its socket in TMPDIR: a path short enough for AF_UNIX
    tmp = Path(tempfile.mkdtemp(prefix="s73-")) if jobs > 1 else tmp_path / "tmp"
    env["TMPDIR"] = str(tmp)
    try:
        with FakeHub() as hub:
            done = _publish(tmp_path, hub, limit=limit, jobs=jobs, env=env)
            assert not hub.commits  # nothing sent
        assert not list(tmp.iterdir())  # its staging folder removed
    finally:
        if jobs > 1:
            shutil.rmtree(tmp, ignore_errors=True)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert "could be read" not in done.stderr and "skipped" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"pi-session: error: could not write a redacted copy to the temporary folder {tmp}: "
        f"File too large; nothing was sent: make room in {tmp} (or set TMPDIR to a folder "
        "with room) and run again"
    ), done.stderr


# --- 4. a failed rename names the file asked for ---------------------------------------------


def test_failed_rename_names_the_file_not_the_temporary_one(tmp_path: Path) -> None:
    """The rename of the finished temporary file over the target failed (here a folder
    stands there; a bind-mounted file says EBUSY): the error named ``.p.html.….tmp``, a
    file the user never gave and which no longer exists."""
    target = tmp_path / "p.html"
    (target / "inside").mkdir(parents=True)
    with pytest.raises(OSError) as failed:
        atomic_write_text(target, "<p>page</p>\n")
    assert failed.value.filename == str(target)
    assert ".tmp" not in str(failed.value), failed.value
    assert failed.value.strerror == os.strerror(failed.value.errno)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.html"]  # no temporary file left


# --- 5. search into a full standard output ---------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_search_into_a_full_stdout_names_standard_output(tmp_path: Path) -> None:
    """`search … >/dev/full` said "error: No space left on device", as if a file of its own
    had failed; every other command says "standard output: …"."""
    sessions = _sessions(tmp_path)
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = _cli(
            tmp_path, "search", "the", "--all", "--sessions-dir", str(sessions), stdout=full
        )
    assert done.returncode == 2
    assert "pi-session: error: standard output: No space left on device" in done.stderr


# --- 6. the dry run of a share writes all its files or none ----------------------------------


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_share_dry_run_writes_all_of_its_files_or_none(tmp_path: Path) -> None:
    """The page, the .jsonl and the .md were put in place one at a time: when the last
    could not be written, the new page and .jsonl stood beside an earlier dry run's .md
    (or none). Its .md is a link into /proc, where no file may be made (not even by root)."""
    work = tmp_path / "work"
    work.mkdir()
    stem = "pi-session-share-every-entry-type"
    earlier = {".html": "earlier page\n", ".jsonl": "{}\n"}
    for suffix, text in earlier.items():
        (work / f"{stem}{suffix}").write_text(text, encoding="utf-8")
    (work / f"{stem}.md").symlink_to("/proc/version")
    session = str(FIXTURES / "every-entry-type.jsonl")
    done = _cli(
        tmp_path, "share", session, "--dry-run", "--with-jsonl", "--with-markdown", cwd=work
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1].startswith("pi-session: error: /proc/version: ")
    for suffix, text in earlier.items():  # neither replaced
        assert (work / f"{stem}{suffix}").read_text(encoding="utf-8") == text
    assert sorted(p.name for p in work.iterdir()) == sorted(
        f"{stem}{suffix}" for suffix in (".html", ".jsonl", ".md")
    )  # no temporary file left
