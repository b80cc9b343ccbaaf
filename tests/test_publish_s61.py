"""Stop 61 (helper hunt of `publish` to a Hugging Face dataset): an answer that is not JSON
(cut off, an HTML error page) was blamed on "committing", never retried, and a commit that
landed was reported as failed; a large file's storage refusing its bytes was blamed on the
token, its check on a missing dataset; a download the Hub answered with HTTP 500 said
"cannot reach"; two identical unreadable files were said to be one session "published once".
"""

from __future__ import annotations

import json
import time
import types
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from exporter.publish import hub_commits
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture, fake_lfs_hub_fixture
from tests.test_publish import (
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


def _no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub's retry waits and ours recorded, not slept."""
    import huggingface_hub.utils._http as hf_http

    from exporter.publish import hub_repo

    shim = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    shim.sleep = lambda _seconds: None
    monkeypatch.setattr(hf_http, "time", shim)
    monkeypatch.setattr(hub_repo, "SERVER_ERROR_WAITS", (0, 0))


# --- 1. an answer that is not JSON --------------------------------------------------------------


def test_a_commit_that_landed_with_its_answer_cut_off_is_taken_and_the_batch_goes_on(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub reads the commit's answer as JSON: one cut off raised a bare
    JSONDecodeError, said "committing failed: JSONDecodeError" (exit 3) though the commit
    was in the dataset, and the batch stopped there."""
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=12)
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 6)  # 4 commits
    fake_hub.fail(
        200, path="/commit/", body=b'{"commitOid":"ab', applied=True, after_commits=1
    )  # the second commit lands, its answer is cut off
    result = publish(fake_hub, corpus)
    assert result.exit_code == 0, result.output
    assert "did not confirm a commit, but the dataset holds it; going on" in result.stderr
    assert "JSONDecodeError" not in result.output and "error:" not in result.stderr
    assert len(fake_hub.commits) == 4 and len(session_paths(fake_hub)) == 12
    assert len(fake_hub.routes("POST", r"/commit/")) == 4  # the landed one not sent again
    assert_consistent(fake_hub)


def test_a_commit_answered_with_a_cut_off_answer_that_did_not_land_is_said_so(
    fake_hub: FakeHub, small: Corpus
) -> None:
    fake_hub.fail(200, path="/commit/", body=b'{"commitOid":"ab')
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "sent an answer that is not JSON (HTTP 200) while committing" in line, line
    assert "JSONDecodeError" not in line and "a re-run resumes" in line
    assert not fake_hub.commits
    again = publish(fake_hub, small)
    assert again.exit_code == 0, again.output
    assert_consistent(fake_hub)


def test_a_card_check_answered_with_an_html_502_is_named_and_tried_again(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub reads validate-yaml's answer as JSON before its status: a proxy's
    HTML 502 said "committing failed: JSONDecodeError: Expecting value", not retried."""
    _no_waits(monkeypatch)
    fake_hub.fail(502, path="/validate-yaml", body=b"<html>Bad gateway</html>")
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "answered HTTP 502 while checking the dataset card; trying again in 0 s" in (
        result.stderr
    )
    assert "JSONDecodeError" not in result.output
    assert len(fake_hub.routes("POST", r"/validate-yaml")) == 2
    assert len(fake_hub.commits) == 1
    assert_consistent(fake_hub)


def test_a_card_check_that_keeps_failing_names_its_step_and_status(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_waits(monkeypatch)
    fake_hub.fail(502, path="/validate-yaml", body=b"<html>Bad gateway</html>", times=100)
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "answered HTTP 502 while checking the dataset card: try again later" in line, line
    assert "JSONDecodeError" not in line and "committing" not in line
    assert len(fake_hub.routes("POST", r"/validate-yaml")) == 3  # 1 try + 2 (SERVER_ERROR_WAITS)
    assert fake_hub.routes("POST", r"/commit/") == [] and not fake_hub.commits
    assert TOKEN not in result.output


def test_an_lfs_batch_answer_that_is_not_json_names_the_large_file_step(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    fake = fake_lfs_hub
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    fake.fail(200, path=r"info/lfs/objects/batch", body=b'{"transfer":', times=100)
    result = publish(fake, corpus)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "sent an answer that is not JSON (HTTP 200) while uploading large files" in line, line
    assert "committing" not in line and "JSONDecodeError" not in line
    assert not fake.commits


# --- 2. a status said by its step -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "method", "path", "body", "part"),
    [
        (403, "PUT", r"^/lfs/",
         b"<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
         "sending a file's bytes"),
        (404, "POST", r"^/lfs-verify", None, "checking an uploaded file"),
    ],
    ids=["storage-put-403", "verify-404"],
)  # fmt: skip
def test_a_large_file_refused_by_its_storage_is_not_blamed_on_the_token(
    fake_lfs_hub: FakeHub,
    tmp_path: Path,
    fixtures_dir: Path,
    status: int,
    method: str,
    path: str,
    body: bytes | None,
    part: str,
) -> None:
    """A 403 from the storage (an expired upload address) said "no write access ... the
    token needs the write role"; a 404 on the verify said "dataset ... not found"."""
    fake = fake_lfs_hub
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    fake.fail(status, method=method, path=path, body=body, times=100)
    result = publish(fake, corpus)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert f"answered HTTP {status} while uploading large files ({part})" in line, line
    assert "not the token or access to alice/sessions" in line
    assert "no write access" not in line and "not found" not in line
    assert "write role" not in line and TOKEN not in result.output
    assert not fake.commits
    fake.failures.clear()
    done = publish(fake, corpus)
    assert done.exit_code == 0, done.output
    assert_consistent(fake)


def test_a_download_the_hub_answers_with_a_500_says_the_status(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub hides a failed HEAD of a download in LocalEntryNotFoundError: a Hub
    answering HTTP 500 was said as "cannot reach ... (LocalEntryNotFoundError)"."""
    assert publish(fake_hub, small).exit_code == 0
    _no_waits(monkeypatch)
    fake_hub.fail(500, path=r"/resolve/", times=100)
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    line = _error_line(result.stderr)
    assert "answered HTTP 500 while reading manifest.json: try again later" in line, line
    assert "cannot reach" not in line and "LocalEntryNotFoundError" not in line


# --- 3. identical unreadable files ---------------------------------------------------------------


def test_identical_unreadable_files_are_each_named_as_skipped(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    """Two byte-identical files that are no session were said to be "one session, published
    once", and only the first was named as skipped."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/bob/proj")
    folder.mkdir(parents=True)
    files = [folder / f"b-{n}.jsonl" for n in range(2)]
    for path in files:
        path.write_bytes(b"garbage\nnot json\n")
    result = publish(fake_hub, Corpus(root, files, []))
    assert result.exit_code == 2, result.output
    assert "byte-identical copy" not in result.stderr and "published once" not in result.stderr
    skipped = [line for line in result.stderr.splitlines() if "warning: skipped" in line]
    assert len(skipped) == 2, result.stderr
    assert "b-0.jsonl" in skipped[0] + skipped[1] and "b-1.jsonl" in skipped[0] + skipped[1]
    assert "none of the 2 sessions selected could be read" in result.stderr


def test_identical_readable_copies_are_still_published_once(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    root = tmp_path / "sessions"
    files = []
    header = {"type": "session", "version": 3, "id": "61616161-1111-4111-8111-111111111111",
              "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/bob/x"}  # fmt: skip
    prompt = {"type": "message", "id": "m1", "parentId": None,
              "timestamp": "2026-03-03T10:00:01.000Z",
              "message": {"role": "user", "content": "hello", "timestamp": 1}}  # fmt: skip
    for project in ("/home/bob/x", "/home/bob/renamed"):
        folder = root / encode_cwd(project)
        folder.mkdir(parents=True)
        path = folder / "s.jsonl"
        path.write_text("".join(json.dumps(v) + "\n" for v in (header, prompt)), "utf-8")
        files.append(path)
    result = publish(fake_hub, Corpus(root, files, []))
    assert result.exit_code == 0, result.output
    assert "byte-identical copy" in result.stderr and len(session_paths(fake_hub)) == 1


def test_a_header_after_an_entry_gives_the_id_the_loader_gives(tmp_path: Path) -> None:
    """The review: the loader takes a header after an entry for the session's; publish
    still took the file name's id, so the plan and the manifest named it differently."""
    from exporter.loader import load_session
    from exporter.publish.hub_plan import probe_sources

    entry = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-01-01T00:00:00Z",
             "message": {"role": "user", "content": "hi", "timestamp": 1}}  # fmt: skip
    header = {"type": "session", "version": 3, "id": "sess-h2", "cwd": "/w",
              "timestamp": "2025-01-01T00:00:00Z"}  # fmt: skip
    path = tmp_path / "2025-01-01T00-00-00-000Z_x.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in (entry, header)) + "\n", encoding="utf-8")
    ((source,), failed) = probe_sources([path])
    assert not failed and source.session_id == load_session(path).id == "sess-h2"
