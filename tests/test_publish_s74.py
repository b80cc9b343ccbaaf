"""Stop 74 (helper hunt of `publish` to a Hugging Face dataset): a dataset made or created
public while a run redacted took the run's sessions (and the run said "private"); a
.gitignore in the dataset made the Hub drop files the run said it added; a commit answered
200 with a malformed body failed with a KeyError though it landed; the Hub's own 403 text
(storage, quota) was blamed on the token, a git-lfs ``message`` was lost; per-object LFS
batch errors came out raw, by SHA-256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from exporter.publish import hub
from tests.fakes.hub import (
    LFS_TEST_THRESHOLD,
    TOKEN,
    FakeHub,
    fake_hub_fixture,
    fake_lfs_hub_fixture,
)
from tests.test_publish import (
    REPO_ID,
    Corpus,
    assert_consistent,
    hub_env,
    make_corpus,
    publish,
    session_paths,
    small,
)

__all__ = ["fake_hub_fixture", "fake_lfs_hub_fixture", "hub_env", "small"]  # fixtures, by name


def _error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if "error:" in x]
    return line


def _while_redacting(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    """``change`` done on the Hub once every session was redacted, before the first commit
    (a teammate's click on the settings page during a long run)."""
    prepare = hub._prepare

    def prepared(*args: Any, **kwargs: Any) -> Any:
        done = prepare(*args, **kwargs)
        change()
        return done

    monkeypatch.setattr(hub, "_prepare", prepared)


# --- 1. a dataset public by the time of the first commit ---------------------------------------


def test_a_dataset_made_public_while_the_run_redacted_is_refused(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dataset's privacy was read once, before the redacting: one made public since
    took every session (README: a public dataset takes a run only with --public)."""
    fake_hub.new_repo(REPO_ID)
    _while_redacting(monkeypatch, lambda: setattr(fake_hub.repo(REPO_ID), "private", False))
    result = publish(fake_hub, small)
    assert result.exit_code == 1, result.output
    line = _error_line(result.stderr)
    assert "alice/sessions is public on the Hub now" in line and "--public" in line, line
    assert not fake_hub.commits and not session_paths(fake_hub)
    assert "the dataset is private" not in result.output


def test_a_dataset_created_public_by_someone_else_while_the_run_redacted_is_refused(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Missing at the first read, created public meanwhile: the run's own creation got 409
    (exists), and it committed into the public dataset, saying "the dataset is private"."""
    _while_redacting(monkeypatch, lambda: fake_hub.new_repo(REPO_ID, private=False))
    result = publish(fake_hub, small)
    assert result.exit_code == 1, result.output
    assert "alice/sessions is public on the Hub now" in _error_line(result.stderr)
    assert not fake_hub.commits and not session_paths(fake_hub)
    assert "the dataset is private" not in result.output


def test_a_dataset_made_public_with_public_given_takes_the_run(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_hub.new_repo(REPO_ID)
    _while_redacting(monkeypatch, lambda: setattr(fake_hub.repo(REPO_ID), "private", False))
    result = publish(fake_hub, small, "--public")
    assert result.exit_code == 0, result.output
    assert "the dataset is private" not in result.output
    assert_consistent(fake_hub)


# --- 2. a .gitignore in the dataset ------------------------------------------------------------


@pytest.mark.parametrize("pattern", [b"*.jsonl\n", b"*.json\n", b"sessions/\n"])
def test_files_the_datasets_gitignore_matches_stop_the_run_naming_it(
    fake_hub: FakeHub, small: Corpus, pattern: bytes
) -> None:
    """The Hub answers such files shouldIgnore and huggingface_hub drops them from the
    commit without a word: the run said "8 added", the manifest named files the dataset
    did not hold, and every re-run said "8 added" again."""
    repo = fake_hub.new_repo(REPO_ID)
    repo.files[".gitignore"] = pattern
    repo.history[repo.sha] = dict(repo.files)
    for _ in range(2):  # a re-run says the same, never "added"
        result = publish(fake_hub, small)
        assert result.exit_code == 3, result.output
        line = _error_line(result.stderr)
        assert "the .gitignore in alice/sessions matches" in line, line
        assert "edit or delete the dataset's .gitignore" in line and "nothing was committed" in line
        assert "added" not in result.stdout
        assert not fake_hub.commits
    assert set(fake_hub.files(REPO_ID)) == {".gitattributes", ".gitignore"}


def test_a_gitignore_that_matches_nothing_published_is_no_obstacle(
    fake_hub: FakeHub, small: Corpus
) -> None:
    repo = fake_hub.new_repo(REPO_ID)
    repo.files[".gitignore"] = b"*.parquet\n__pycache__/\n"
    repo.history[repo.sha] = dict(repo.files)
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert_consistent(fake_hub)


# --- 3. a commit answered 200 with a malformed body --------------------------------------------


@pytest.mark.parametrize(
    "body",
    [{"ok": True}, {"success": True, "commitOid": None, "commitUrl": None}],
    ids=["no-commit-url", "null-oid"],
)
def test_a_commit_that_landed_with_a_malformed_answer_is_taken(
    fake_hub: FakeHub, small: Corpus, body: dict[str, Any]
) -> None:
    """huggingface_hub failed on it ("committing failed: KeyError: 'commitUrl'", or an
    AttributeError for a null commit id): exit 3 though the commit was in the dataset."""
    fake_hub.fail(200, body=body, path="/commit/", method="POST", applied=True)
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "did not confirm a commit, but the dataset holds it; going on" in result.stderr
    assert "Error" not in result.output
    assert len(fake_hub.commits) == 1
    assert_consistent(fake_hub)


def test_a_commit_with_a_malformed_answer_that_did_not_land_is_said_so(
    fake_hub: FakeHub, small: Corpus
) -> None:
    fake_hub.fail(200, body={"ok": True}, path="/commit/", method="POST")
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "answered the commit with something that cannot be read" in line, line
    assert "committing failed" not in line and not fake_hub.commits


# --- 4. the Hub's own 403 text -------------------------------------------------------------------


STORAGE = (
    "Your storage patterns tripped our internal systems! Please contact us at "
    "website@huggingface.co so we can verify your account"
)
QUOTA = "Private repository storage limit reached, please upgrade your plan"


@pytest.mark.parametrize(
    ("path", "text"), [("/commit/", STORAGE), ("/preupload/", QUOTA)], ids=["commit", "preupload"]
)
def test_a_403_for_storage_leads_with_the_hubs_text_not_the_token(
    fake_hub: FakeHub, small: Corpus, path: str, text: str
) -> None:
    """whoami confirmed the token may write, yet the storage refusal said "no write access
    ... the token needs the write role" with the Hub's reason at the end."""
    fake_hub.fail(403, path=path, method="POST", body={"error": text})
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert f"refused {'committing' if path == '/commit/' else 'preparing'}" in line, line
    assert f"(HTTP 403): {text}" in line and "not the token" in line
    assert "write role" not in line and "no write access" not in line


def test_a_403_about_rights_still_blames_the_token(fake_hub: FakeHub, small: Corpus) -> None:
    fake_hub.fail(403, path="/commit/", method="POST", body={"error": "You don't have the rights"})
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "no write access to 'alice'" in line and "the token needs the write role" in line


def test_an_lfs_batch_403_says_the_git_lfs_message(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """The batch endpoint answers git-lfs's ``{"message": ...}``, which huggingface_hub does
    not read: the reason was lost and the token blamed."""
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    batch = r"\.git/info/lfs/objects/batch"
    fake_lfs_hub.fail(403, path=batch, body={"message": QUOTA, "documentation_url": "x"})
    result = publish(fake_lfs_hub, corpus)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert f"refused uploading large files (HTTP 403): {QUOTA}" in line, line
    assert "write role" not in line and not fake_lfs_hub.commits


# --- 5. per-object LFS batch errors --------------------------------------------------------------


def test_per_object_lfs_batch_errors_name_the_step_the_files_and_the_reason(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """Said as "committing failed: ValueError: LFS batch API returned errors: Encountered
    error for file with OID ...: `Object size exceeds the limit ..." (the wrong step, files
    by SHA-256, an unclosed backtick)."""
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    fake_lfs_hub.lfs_object_error = {"code": 422, "message": "Object size exceeds the limit"}
    result = publish(fake_lfs_hub, corpus)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "while uploading large files (sessions/" in line, line
    assert ".jsonl: Object size exceeds the limit)" in line
    assert "OID" not in line and "`" not in line and "ValueError" not in line
    assert "committing" not in line and TOKEN not in result.output
    assert not fake_lfs_hub.commits
    fake_lfs_hub.lfs_object_error = None
    assert publish(fake_lfs_hub, corpus).exit_code == 0
    assert_consistent(fake_lfs_hub)


# --- 6. Xet failures, a missing revision or file ------------------------------------------------


def test_a_xet_refusal_names_the_large_file_step_and_the_status(
    tmp_path: Path, fixtures_dir: Path
) -> None:
    """hf_xet raises a bare ConnectionError ("Network error: ... (403 Forbidden), domain:
    ..."): it was said "cannot reach <the Hub> while committing (connection failed)"."""
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    with FakeHub(lfs_threshold=LFS_TEST_THRESHOLD) as fake:  # the client's Xet left on
        fake.fail(403, path="/xet-write-token/", times=100)
        result = publish(fake, corpus)
        assert not fake.commits
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "answered HTTP 403 while uploading large files (Xet storage)" in line, line
    assert "cannot reach" not in line and "committing" not in line.split("error:")[1]


@pytest.mark.parametrize(
    ("route", "method", "code", "said"),
    [
        (r"/tree/", "GET", "RevisionNotFound", "answered that revision "),
        (r"/resolve/.*/manifest.json", "HEAD", "EntryNotFound", "answered that the file, at "),
    ],
    ids=["revision", "file"],
)
def test_a_missing_revision_or_file_is_not_said_as_a_missing_dataset(
    fake_hub: FakeHub, small: Corpus, route: str, method: str, code: str, said: str
) -> None:
    """A 404 for a revision (or a file) of a dataset that exists said "dataset
    alice/sessions not found on ... (or not visible to this token)"."""
    assert publish(fake_hub, small).exit_code == 0
    headers = {"X-Error-Code": code, "X-Error-Message": "Invalid rev id"}
    fake_hub.fail(404, path=route, method=method, headers=headers, body={"error": "gone"})
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert said in line and "is not in alice/sessions while" in line, line
    assert "dataset alice/sessions not found" not in line


# --- publish --html: a cached page it could not delete is counted as that (review) -------------


def test_pages_the_cache_could_not_delete_are_not_said_unwritten(tmp_path: Path) -> None:
    """A session no longer published whose cached page (search text) the cache folder would
    not let go stopped the run rightly, but said "0 html/ pages could not be written"."""
    import errno
    from types import SimpleNamespace

    from exporter.site import SitePagesUnwritten, SiteReport

    site = tmp_path / "cache"
    refused = PermissionError(errno.EACCES, "Permission denied", "sessions/p/a.html")
    report = SiteReport(
        undeleted=[("sessions/p/a.html", refused)],
        undeleted_search=[(".pi-session-search/a.json", refused)],
    )
    run: Any = SimpleNamespace(req=SimpleNamespace(dry_run=False), result=SimpleNamespace())
    said = str(hub._unwritten_pages(run, SitePagesUnwritten(report, site), site))
    assert "0 html/ page" not in said and "could not be written" not in said, said
    assert (
        "Permission denied: 1 html/ page of sessions no longer published could not be deleted "
        "and the search text of 1 session no longer published could not be deleted in the "
        f"local publish cache {site}; nothing was sent"
    ) in said, said


def test_a_publish_cache_that_cannot_be_written_is_said_as_that(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fixtures_dir: Path
) -> None:
    """XDG_CACHE_HOME a file (or a cache folder of another user's): "error: …/pi-session-
    export/…: Not a directory" said neither what the folder is for nor what to do."""
    import shutil

    import tests.test_state_s71 as state_s71
    from tests.test_publish_state_s70 import _publish

    root = tmp_path / "sessions"
    (root / state_s71.PROJECT).mkdir(parents=True)
    for name in state_s71.SESSION_FILES:
        shutil.copy(fixtures_dir / name, root / state_s71.PROJECT / name)
    blocker = tmp_path / "afile"
    blocker.write_text("x\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    with FakeHub() as fake:
        run = _publish(fake, root, "--html")
        assert run.exit_code == 2, run.output
        said = " ".join(run.stderr.split())
        assert f"the local publish cache cannot be written ({blocker}/pi-session-export/" in said
        assert "nothing was sent" in said and "XDG_CACHE_HOME" in said, said
        assert not fake.commits


# --- review: the privacy read is retried, and made before any byte of the commit ------------


def test_a_brief_5xx_on_the_privacy_read_is_tried_again(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read of the dataset's privacy right before the first commit is one more request:
    a 503 to it ended the run (exit 3, nothing sent) where a 503 to the commit is retried."""
    from exporter.publish import hub_repo

    monkeypatch.setattr(hub_repo, "SERVER_ERROR_WAITS", (0, 0))
    fake_hub.new_repo(REPO_ID)
    _while_redacting(
        monkeypatch,
        lambda: fake_hub.fail(503, method="GET", path=rf"^/api/datasets/{REPO_ID}/?$"),
    )
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "HTTP 503 while reading the dataset; trying again" in result.stderr
    assert len(fake_hub.commits) == 1 and session_paths(fake_hub)


def test_the_privacy_read_comes_before_any_large_file_is_sent(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made public while the run redacted: its large files were pre-uploaded to the now
    public dataset's storage before the refusal that said "none of this run's sessions was
    sent"."""
    fake_hub.new_repo(REPO_ID)
    _while_redacting(monkeypatch, lambda: setattr(fake_hub.repo(REPO_ID), "private", False))
    result = publish(fake_hub, small)
    assert result.exit_code == 1, result.output
    assert not [r for r in fake_hub.requests if "preupload" in r.route or "/lfs" in r.route]


def test_a_403_is_about_access_by_whole_words_only() -> None:
    """Substrings misjudged the Hub's texts: "investigated" held "gated", "copyrights"
    "rights"; "not authorized" matched nothing."""
    from exporter.publish.hub_repo import _about_access

    assert not _about_access("Your storage usage is being investigated")
    assert not _about_access("This dataset is disabled (copyrights claim)")
    assert _about_access("You are not authorized to push to this repo")
    assert _about_access("Access to this gated dataset is restricted")


def test_a_xet_failure_takes_only_an_http_status_for_one() -> None:
    """Any three digits in brackets were taken for the status: "(120 s)" was "HTTP 120"."""
    from exporter.publish.hub_repo import HubRepo

    repo = HubRepo.__new__(HubRepo)
    repo.host, repo._token = "huggingface.co", "hf_x"
    timed_out = str(repo._xet_failure(ConnectionError("Internal Error: upload timed out (120 s)")))
    assert "HTTP 120" not in timed_out and "cannot reach huggingface.co" in timed_out, timed_out
    refused = ConnectionError(
        "HTTP status client error (403 Forbidden), domain: https://cas.example/xet-write-token/main"
    )
    assert "cas.example answered HTTP 403" in str(repo._xet_failure(refused))


def test_a_secret_in_a_file_name_is_not_printed_by_publish_warnings(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """publish is run by CI, whose logs may be read by others: its per-file warnings named
    the local file, a token in its name included (the dataset's path has it replaced)."""
    token = "ghp_" + "Zq8Xw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Ty4"
    source = small.files[0]
    named = source.with_name(f"notes-{token}.jsonl")
    lines = source.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"type":"message","id":"cut","parentId":null,"message":{"role":\n')
    named.write_bytes(b"".join(lines))
    source.unlink()
    result = publish(fake_hub, small)
    assert "1 damaged line left out of the upload" in result.stderr, result.output
    assert token not in result.output
