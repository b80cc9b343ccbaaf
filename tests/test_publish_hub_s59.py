"""Stop 59 (helper hunt of `publish` to a Hugging Face dataset): a file the Hub stores with
LFS (over 10 MiB) looked changed on every run and its landed commit read as failed; an
interrupted ``--prune`` left a manifest naming removed files; the head of a token echoed
across the cut of a server message was printed; a repo creation the Hub kept answering
"another conflicting operation is in progress" was sent again at once, forever; ``--token``
beside HF_TOKEN re-redacted every session; a failed LFS upload hid its HTTP 500."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import time
from pathlib import Path

import httpx2
import pytest

from exporter.publish import errors, hub_commits, hub_http
from exporter.publish.hub_state import RemoteFile, RemoteState, git_oid
from tests.conftest import time_limit
from tests.fakes.hub import (
    LFS_TEST_THRESHOLD,
    READ_TOKEN,
    TOKEN,
    Account,
    FakeHub,
    fake_hub_fixture,
    fake_lfs_hub_fixture,
    lfs_pointer,
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

CONFLICT = {"error": "Cannot create repo: another conflicting operation is in progress"}


def _add_prompt(path: Path, text: str) -> None:
    last = json.loads(path.read_bytes().splitlines()[-1])["id"]
    entry = {"type": "message", "id": f"p{abs(hash(text)) % 10**8}", "parentId": last,
             "timestamp": "2027-06-01T00:00:00.000Z",
             "message": {"role": "user", "content": text, "timestamp": 1}}  # fmt: skip
    path.write_bytes(path.read_bytes() + json.dumps(entry).encode() + b"\n")


# --- the fake's LFS mode speaks the Hub's protocol -------------------------------------------


def test_the_fake_lfs_mode_with_the_real_client(fake_lfs_hub: FakeHub, tmp_path: Path) -> None:
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.hf_api import RepoFile

    fake = fake_lfs_hub
    api = HfApi(endpoint=fake.url, token=TOKEN)
    api.create_repo(REPO_ID, repo_type="dataset", private=True)
    big, small = b"x" * (LFS_TEST_THRESHOLD + 1), b"small"
    ops = [CommitOperationAdd("big.bin", big), CommitOperationAdd("small.txt", small)]
    api.create_commit(REPO_ID, ops, commit_message="m", repo_type="dataset")
    assert fake.lfs_files(REPO_ID) == {"big.bin"}
    assert any("lfs/objects/batch" in r for r in fake.routes("POST"))
    assert fake.routes("PUT") == [f"PUT /lfs/{hashlib.sha256(big).hexdigest()}"]
    assert fake.routes("POST", "/lfs-verify")
    tree = {f.path: f for f in api.list_repo_tree(REPO_ID, repo_type="dataset")}
    assert all(isinstance(f, RepoFile) for f in tree.values())
    listed = tree["big.bin"]
    assert listed.blob_id == git_oid(lfs_pointer(big)) != git_oid(big)
    assert listed.lfs is not None and listed.lfs.sha256 == hashlib.sha256(big).hexdigest()
    assert listed.size == listed.lfs.size == len(big)
    assert tree["small.txt"].lfs is None and tree["small.txt"].blob_id == git_oid(small)
    path = api.hf_hub_download(REPO_ID, "big.bin", repo_type="dataset", cache_dir=tmp_path)
    assert Path(path).read_bytes() == big
    # the same bytes again: preupload's SHA-256 tells the client, which commits nothing
    commits = len(fake.commits)
    api.create_commit(REPO_ID, [CommitOperationAdd("big.bin", big)], commit_message="m",
                      repo_type="dataset")  # fmt: skip
    assert len(fake.commits) == commits


def test_the_fake_lfs_mode_refuses_what_the_hub_refuses(fake_lfs_hub: FakeHub) -> None:
    fake = fake_lfs_hub
    fake.new_repo(REPO_ID)
    auth = {"authorization": f"Bearer {TOKEN}"}
    big = b"y" * (LFS_TEST_THRESHOLD + 1)
    digest = hashlib.sha256(big).hexdigest()

    def commit(*lines: dict) -> int:
        body = "\n".join(json.dumps(x) for x in [{"key": "header", "value": {}}, *lines])
        url = f"{fake.url}/api/datasets/{REPO_ID}/commit/main"
        headers = {**auth, "Content-Type": "application/x-ndjson"}
        return httpx2.post(url, content=body, headers=headers).status_code

    def lfs_line(data: bytes) -> dict:
        oid = hashlib.sha256(data).hexdigest()
        value = {"path": "b.bin", "algo": "sha256", "oid": oid, "size": len(data)}
        return {"key": "lfsFile", "value": value}

    regular = {"path": "b.bin", "content": base64.b64encode(big).decode(), "encoding": "base64"}
    assert commit({"key": "file", "value": regular}) == 400  # too big for a regular file
    assert commit(lfs_line(big)) == 400  # never uploaded
    assert httpx2.put(f"{fake.url}/lfs/{digest}", content=b"other").status_code == 400
    assert httpx2.post(f"{fake.url}/lfs-verify", json={"oid": digest, "size": 1}).status_code == 404
    assert httpx2.put(f"{fake.url}/lfs/{digest}", content=big).status_code == 200
    assert httpx2.post(f"{fake.url}/lfs-verify", json={"oid": digest, "size": len(big)}).is_success
    little = b"z" * 10
    httpx2.put(f"{fake.url}/lfs/{hashlib.sha256(little).hexdigest()}", content=little)
    assert commit(lfs_line(little)) == 400  # stored as LFS only over the threshold
    assert commit(lfs_line(big)) == 200 and fake.lfs_files(REPO_ID) == {"b.bin"}
    batch = f"{fake.url}/datasets/{REPO_ID}.git/info/lfs/objects/batch"
    answer = httpx2.post(batch, headers=auth, json={
        "operation": "upload", "transfers": ["basic"], "hash_algo": "sha256",
        "objects": [{"oid": digest, "size": len(big)}, {"oid": "0" * 64, "size": 3}]})  # fmt: skip
    objects = answer.json()["objects"]
    assert "actions" not in objects[0] and "upload" in objects[1]["actions"]
    read_only = {"authorization": f"Bearer {READ_TOKEN}"}
    assert httpx2.post(batch, headers=read_only, json={}).status_code == 403
    assert httpx2.post(batch, headers=auth, json={"operation": "download"}).status_code == 422
    off = FakeHub()
    assert off._lfs_line(lfs_line(big)["value"])[0] is None  # the mode is off: refused


# --- 1. files stored as LFS are compared by SHA-256 ------------------------------------------


def test_remote_files_compare_lfs_by_sha256_and_others_by_git_id() -> None:
    data = b"session bytes"
    regular = RemoteFile(len(data), git_oid(data))
    lfs = RemoteFile(len(data), git_oid(lfs_pointer(data)), hashlib.sha256(data).hexdigest())
    for there in (regular, lfs, RemoteFile.of(data)):
        assert there.holds(data) and not there.holds(data + b"x")
        assert there.matches(git_oid(data), hashlib.sha256(data).hexdigest())
    assert not lfs.matches(git_oid(data), None)  # an LFS file is known by its SHA-256 only
    assert not regular.matches(None, hashlib.sha256(data).hexdigest())


def test_the_plan_reads_files_stored_as_lfs_by_sha256(tmp_path: Path) -> None:
    """Each comparison of the plan with the dataset: a session's refresh (not an update),
    a page, the metadata."""
    from exporter.publish.hub_plan import Prepared, Source

    data = b"the published copy\n"
    digest = hashlib.sha256(data).hexdigest()
    lfs = RemoteFile(len(data), git_oid(lfs_pointer(data)), digest)
    paths = ("sessions/2026-01/a.jsonl", "html/a.html", "index.jsonl")
    remote = RemoteState(exists=True, files=dict.fromkeys(paths, lfs))
    source = Source(tmp_path / "a.jsonl", paths[0], "0" * 64, len(data))
    item = Prepared(source, sha256=digest, size=len(data), oid=git_oid(data), row={"id": "a"})
    (op,) = hub_commits.session_ops([item], remote, "key", lambda value: value)
    assert op.action == "refresh"
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_bytes(data)
    assert hub_commits.html_ops(site, remote, skip=lambda rel: False) == []
    commits, _ = hub_commits.plan_commits([], remote, lambda entries, rows: {"index.jsonl": data})
    assert commits == []


def test_sessions_and_pages_stored_as_lfs_are_unchanged_on_a_rerun(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    fake = fake_lfs_hub
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    first = publish(fake, corpus, "--html")
    assert first.exit_code == 0, first.output
    stored = fake.lfs_files(REPO_ID)
    assert {p for p in stored if p.startswith("sessions/")} and {
        p for p in stored if p.startswith("html/")
    }, stored
    assert_consistent(fake)
    dry = publish(fake, corpus, "--html", "--dry-run")
    assert dry.exit_code == 0 and "0 commit(s)" in dry.stdout, dry.output
    assert "html/:" not in dry.stdout
    fake.clear_requests()
    again = publish(fake, corpus, "--html")
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    assert len(fake.commits) == 1
    assert not fake.routes("GET", r"/resolve/.*(sessions|html)/")  # nothing downloaded again


def test_a_landed_commit_of_lfs_files_whose_answer_was_lost_is_found(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    fake = fake_lfs_hub
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    assert publish(fake, corpus).exit_code == 0
    big = max(corpus.files, key=lambda p: p.stat().st_size)
    assert big.stat().st_size > LFS_TEST_THRESHOLD
    _add_prompt(big, "one more question")
    fake.drop_commits_after(0, applied=True)
    done = publish(fake, corpus)
    assert done.exit_code == 0, done.output
    assert "did not confirm a commit, but the dataset holds it; going on" in done.stderr
    assert len(fake.commits) == 2
    assert_consistent(fake)


# --- 2. an interrupted --prune --------------------------------------------------------------


def test_an_interrupted_prune_leaves_no_manifest_naming_removed_files(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert publish(fake_hub, small).exit_code == 0
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 6)  # 3 files per commit
    for path in small.files[:4]:
        path.unlink()
    fake_hub.drop_commits_after(1)  # the prune's second commit is lost
    failed = publish(fake_hub, small, "--prune")
    assert failed.exit_code == 3, failed.output
    assert "(1 of 2 commits confirmed)" in failed.stderr
    assert len(session_paths(fake_hub)) == 5
    assert_consistent(fake_hub)  # the first commit wrote the manifest of what it left
    resumed = publish(fake_hub, small, "--prune")
    assert resumed.exit_code == 0, resumed.output
    assert len(session_paths(fake_hub)) == 4
    assert_consistent(fake_hub)


# --- 3. a token echoed across the cut of a server message -------------------------------------


def test_a_token_echoed_across_the_cut_of_a_server_message_is_hidden(
    fake_hub: FakeHub, small: Corpus
) -> None:
    head = "Bad request: request headers were " + "x" * 130 + " authorization: Bearer "
    assert len(head) < 200 < len(head) + len(TOKEN)  # the message is cut inside the token
    fake_hub.fail(400, path="/preupload/", body={"error": head + TOKEN + " end"})
    result = publish(fake_hub, small)
    assert result.exit_code == 3 and "Bad request: request headers" in result.stderr
    assert TOKEN[:6] not in result.output, result.output


def test_heads_of_a_secret_are_hidden_wherever_a_message_was_cut() -> None:
    secret = TOKEN
    assert errors.clipped(f"echo {secret} and more", 12, secret) == "echo *** and"
    assert errors.hidden(f"cut by the server: {secret[:20]}…", secret) == "cut by the server: ***…"
    assert (
        errors.hidden(f"a {secret[:7]} is too short to tell", secret)
        == f"a {secret[:7]} is too short to tell"
    )
    assert errors.hidden("nothing", None) == "nothing"


# --- 4. a repo creation that keeps conflicting ------------------------------------------------


def test_a_repo_creation_that_keeps_conflicting_is_bounded(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits = (0.2, 0.2, 0.2)
    monkeypatch.setattr(hub_http, "CREATE_CONFLICT_WAITS", waits, raising=False)
    fake_hub.fail(409, path="^/api/repos/create$", times=10**6, body=CONFLICT)
    started = time.monotonic()
    with time_limit(20):
        result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    assert "kept answering that another operation on 'alice' is in progress" in result.stderr
    assert len(fake_hub.routes("POST", "^/api/repos/create$")) == 4
    assert time.monotonic() - started >= 0.6  # it waited between the tries
    assert not fake_hub.repos
    fake_hub.failures.clear()
    fake_hub.clear_requests()
    fake_hub.fail(409, path="^/api/repos/create$", times=2, body=CONFLICT)
    with time_limit(20):
        done = publish(fake_hub, small)
    assert done.exit_code == 0, done.output
    assert len(fake_hub.routes("POST", "^/api/repos/create$")) == 3
    assert_consistent(fake_hub)


# --- 5. HF_TOKEN beside --token ------------------------------------------------------------


def test_a_token_in_hf_token_beside_token_is_no_part_of_the_settings(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = "hf_secondtokenABCDEFGHIJKLMNOPQRSTUV"
    fake_hub.accounts[other] = Account("alice", "write")
    _add_prompt(small.files[0], f"my token is {other}")
    monkeypatch.setenv("HF_TOKEN", other)
    first = publish(fake_hub, small)  # --token TOKEN, HF_TOKEN beside it
    assert first.exit_code == 0, first.output
    commits = len(fake_hub.commits)
    for token in (None, TOKEN):  # HF_TOKEN alone (the token in use), then both again
        again = publish(fake_hub, small, token=token)
        assert again.exit_code == 0, again.output
        assert "no commit" in again.stdout and "8 unchanged" in again.stdout, again.output
    assert len(fake_hub.commits) == commits
    assert other.encode() not in b"".join(fake_hub.files(REPO_ID).values())


# --- 6. a failed large file upload ---------------------------------------------------------


def test_a_failed_large_file_upload_names_its_step_and_status(
    fake_lfs_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.lfs
    from huggingface_hub.utils import http_backoff

    fast = functools.partial(http_backoff, base_wait_time=0, max_wait_time=0)
    monkeypatch.setattr(huggingface_hub.lfs, "http_backoff", fast)  # its 5 retries, no waits
    fake = fake_lfs_hub
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=3)
    fake.fail(500, method="PUT", path="^/lfs/", times=100)
    failed = publish(fake, corpus)
    assert failed.exit_code == 3, failed.output
    (line,) = [x for x in failed.stderr.splitlines() if "error:" in x]
    assert "answered HTTP 500 while uploading large files" in line, line
    assert "a re-run resumes" in line and "RuntimeError" not in line
    assert not fake.commits
    fake.failures.clear()
    done = publish(fake, corpus)
    assert done.exit_code == 0, done.output
    assert_consistent(fake)
