"""`pi-session publish` end to end against the loopback fake Hub, with the real huggingface_hub.

The fake answers ``regular`` in preupload, so every byte travels base64 in the NDJSON commit
and the fake sees (and we can check) all of it. Nothing may leave 127.0.0.1: the endpoint is
always explicit, name resolution of other hosts fails in-process, and subprocesses get a dead
proxy for anything that is not loopback.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import os
import random
import re
import socket
import string
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.loader import load_session, parse_session_bytes
from exporter.publish import hub_commits, hub_repo
from exporter.publish.dataset_card import INDEX_FIELDS
from exporter.publish.publish_key import load_publish_key
from exporter.redact import RedactionPolicy
from exporter.usage import compute_stats
from tests.browser_util import CLAUDE_CODE_PATH, CODEX_PATH, embedded_jsonl, fixture_path
from tests.claude_code_corpus import sub_agent_session
from tests.conftest import REPO, GeneratedSessions, time_limit
from tests.fakes.hub import READ_TOKEN, TOKEN, Account, FakeHub, fake_hub_fixture, isolate_hub
from tests.fakes.hub import git_oid as fake_oid

__all__ = ["fake_hub_fixture"]

REPO_ID = "alice/sessions"
SMALL = ["every-entry-type.jsonl", "pi-branched-1.jsonl", "pi-branched-2.jsonl"]
PROJECTS = ["/home/dev/projects/webapp", "/home/dev/projects/api", "/home/dev/work/tools"]
COMMAND = ("exporter.publish_cli", "publish_command")


@pytest.fixture(autouse=True)
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_hub(monkeypatch, tmp_path)


@dataclass
class Corpus:
    root: Path
    files: list[Path]
    secrets: list[str]


def _rand(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _plant(rng: random.Random) -> list[str]:
    return [
        "ghp_" + _rand(rng, 36),
        "hf_" + _rand(rng, 34),
        "AKIA" + _rand(rng, 16, string.ascii_uppercase + string.digits),
    ]


def make_corpus(root: Path, fixtures: Path, count: int = 20, seed: int = 7) -> Corpus:
    """``count`` sessions from the fixtures: new ids, three projects, twelve months, and a
    user message appended at the leaf (a distinct last activity in 2027, the month after the
    start), carrying planted secrets in every fourth session."""
    rng = random.Random(seed)
    files, planted = [], []
    for i in range(count):
        lines = (fixtures / SMALL[i % len(SMALL)]).read_bytes().splitlines()
        header = json.loads(lines[0])
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        month, day, minute = 1 + i % 12, 1 + i % 27, i % 60
        stamp = f"2026-{month:02d}-{day:02d}T10:{minute:02d}:00.000Z"
        header.update(id=sid, cwd=PROJECTS[i % len(PROJECTS)], timestamp=stamp)
        text = f"question {i}"
        if i % 4 == 0:
            secrets = _plant(rng)
            planted += secrets
            text = f"use {secrets[0]} and HF {secrets[1]}; aws_access_key_id={secrets[2]}"
        last = json.loads(lines[-1])["id"]
        message = {"role": "user", "content": text, "timestamp": 1800000000000 + i}
        entry = {"type": "message", "id": f"plant{i:03d}", "parentId": last,
                 "timestamp": f"2027-{month:02d}-{day:02d}T11:{minute:02d}:00.000Z",
                 "message": message}  # fmt: skip
        body = [json.dumps(header).encode(), *lines[1:], json.dumps(entry).encode()]
        folder = root / encode_cwd(header["cwd"])
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stamp.replace(':', '-').replace('.', '-')}_{sid}.jsonl"
        path.write_bytes(b"\n".join(body) + b"\n")
        files.append(path)
    return Corpus(root, files, planted)


@pytest.fixture
def corpus(tmp_path: Path, fixtures_dir: Path) -> Corpus:
    return make_corpus(tmp_path / "sessions", fixtures_dir)


@pytest.fixture
def small(tmp_path: Path, fixtures_dir: Path) -> Corpus:
    """Eight sessions (two with secrets), for the tests about one behaviour."""
    return make_corpus(tmp_path / "sessions", fixtures_dir, count=8)


def publish(fake: FakeHub, corpus: Corpus, *extra: str, token: str | None = TOKEN) -> Result:
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(corpus.root)]
    args += ["--endpoint", fake.url, "-j", "2", *extra]
    if token:
        args += ["--token", token]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def remote_json(fake: FakeHub, name: str) -> Any:
    return json.loads(fake.files(REPO_ID)[name])


def index_rows(fake: FakeHub) -> list[dict[str, Any]]:
    return [json.loads(line) for line in fake.files(REPO_ID)["index.jsonl"].splitlines()]


def session_paths(fake: FakeHub) -> set[str]:
    return {p for p in fake.files(REPO_ID) if p.startswith("sessions/")}


def assert_consistent(fake: FakeHub) -> None:
    """Manifest, index and tree agree, and every published file is what they say."""
    files = fake.files(REPO_ID)
    manifest = remote_json(fake, "manifest.json")["sessions"]
    rows = {r["path"]: r for r in index_rows(fake)}
    assert set(manifest) == set(rows) == session_paths(fake)
    for path, entry in manifest.items():
        data = files[path]
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] == rows[path]["sha256"]
        assert len(data) == entry["bytes"] == rows[path]["bytes"]


# --- the fake speaks what huggingface_hub 2.4 sends ----------------------------------------


def test_fake_hub_contract_with_the_real_client(tmp_path: Path) -> None:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import (
        HfHubHTTPError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
    )

    with FakeHub(page_size=2) as fake:
        api = HfApi(endpoint=fake.url, token=TOKEN)
        url = api.create_repo(REPO_ID, repo_type="dataset", private=True, exist_ok=True)
        assert url == api.create_repo(REPO_ID, repo_type="dataset", exist_ok=True)  # 409 path
        head = api.repo_info(REPO_ID, repo_type="dataset").sha
        card = b"---\nconfigs:\n- config_name: default\n  data_files: index.jsonl\n---\n"
        ops = [CommitOperationAdd(f"d/{i}.txt", b"%d" % i) for i in range(3)]
        info = api.create_commit(
            REPO_ID, [*ops, CommitOperationAdd("README.md", card)], commit_message="one",
            repo_type="dataset", parent_commit=head,
        )  # fmt: skip
        again = api.create_commit(
            REPO_ID, [CommitOperationAdd("d/0.txt", b"0")], commit_message="same",
            repo_type="dataset",
        )  # fmt: skip
        assert again.oid == info.oid and len(fake.commits) == 1  # preupload oid: no-op
        tree = api.list_repo_tree(REPO_ID, repo_type="dataset", recursive=True)
        assert {t.path for t in tree} >= {"d", "d/0.txt", "d/2.txt", "README.md"}
        got = api.hf_hub_download(REPO_ID, "d/1.txt", repo_type="dataset", cache_dir=tmp_path)
        assert Path(got).read_bytes() == b"1"
        with pytest.raises(RemoteEntryNotFoundError):
            api.hf_hub_download(REPO_ID, "nope", repo_type="dataset", cache_dir=tmp_path)
        with pytest.raises(HfHubHTTPError) as stale:
            api.create_commit(REPO_ID, [CommitOperationDelete("d/0.txt")], commit_message="x",
                              repo_type="dataset", parent_commit=head)  # fmt: skip
        assert stale.value.response.status_code == 412
        with pytest.raises(RepositoryNotFoundError):
            api.repo_info("alice/missing", repo_type="dataset")
        with pytest.raises(HfHubHTTPError) as bad:
            HfApi(endpoint=fake.url, token="hf_nope").repo_info(REPO_ID, repo_type="dataset")
        assert bad.value.response.status_code == 401
    assert fake.routes()[:3] == [
        "POST /api/repos/create",
        "POST /api/repos/create",
        "GET /api/datasets/alice/sessions",
    ]
    assert "POST /api/validate-yaml" in fake.routes()


# --- the end-to-end story --------------------------------------------------------------------


def test_publish_rerun_and_change_one(fake_hub: FakeHub, corpus: Corpus) -> None:
    result = publish(fake_hub, corpus)
    assert result.exit_code == 0, result.output
    assert fake_hub.url + "/datasets/alice/sessions" in result.stdout
    assert "20 added" in result.stdout
    repo = fake_hub.repo(REPO_ID)
    assert repo.private
    create = next(r for r in fake_hub.requests if r.route == "/api/repos/create")
    assert create.json["visibility"] == "private"
    assert len(fake_hub.commits) == 1
    files = fake_hub.files(REPO_ID)
    # Layout: sessions/<YYYY-MM>/<original name>, by the header's month.
    expected = set()
    for path in corpus.files:
        month = json.loads(path.read_bytes().splitlines()[0])["timestamp"][:7]
        expected.add(f"sessions/{month}/{path.name}")
    assert session_paths(fake_hub) == expected
    assert_consistent(fake_hub)
    # The index: one fixed schema, typed, one row per session.
    rows = index_rows(fake_hub)
    assert len(rows) == 20
    for row in rows:
        assert list(row) == list(INDEX_FIELDS)
        for name, kind in INDEX_FIELDS.items():
            assert isinstance(row[name], kind), (name, row[name])
        assert not row["project"].startswith("/home/dev")  # the home folder became ~
    # The manifest: marks of each source and of the policy's redaction key (HMACs under the
    # local publish key, see test_the_dataset_cannot_confirm_a_guessed_secret).
    manifest = remote_json(fake_hub, "manifest.json")
    assert manifest["schema_version"] == 1
    marks = load_publish_key()
    key = marks.mark(RedactionPolicy(redact=True, drop_hidden=True).key())
    by_name = {Path(p).name: e for p, e in manifest["sessions"].items()}
    for path in corpus.files:
        entry = by_name[path.name]
        assert entry["source_mark"] == marks.mark(hashlib.sha256(path.read_bytes()).hexdigest())
        assert entry["redaction_key"] == key
    assert sum(sum(e["redactions"].values()) for e in manifest["sessions"].values()) >= 15
    # The card's YAML parses and points the default config at index.jsonl.
    card = files["README.md"].decode()
    front = yaml.safe_load(card.split("---\n")[1])
    assert {"agent-traces", "pi"} <= set(front["tags"])
    assert front["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "index.jsonl"}]},
        # the traces themselves, for the Hub's trace viewer and load_dataset(..., "sessions")
        {"config_name": "sessions",
         "data_files": [{"split": "train", "path": "sessions/*/*.jsonl"}]},
    ]  # fmt: skip
    from fnmatch import fnmatch

    assert all(fnmatch(p, "sessions/*/*.jsonl") for p in session_paths(fake_hub))
    assert front["license"] == "other" and "| sessions | 20 |" in card
    from huggingface_hub import DatasetCard

    data = DatasetCard(card).data  # huggingface_hub's own card-metadata parser agrees
    assert data.configs == front["configs"] and "agent-traces" in data.tags
    # Published sessions are Pi sessions without hidden entries or the planted secrets.
    received = fake_hub.received_bytes()
    for secret in corpus.secrets:
        assert secret.encode() not in received
        assert secret.encode() not in b"".join(files.values())
    for path in session_paths(fake_hub):
        session = parse_session_bytes(files[path])
        assert session.entries and not any(e.type == "custom" for e in session.entries)
    assert b"/home/dev/" not in received

    # Re-run with nothing changed: reads only, no commit.
    fake_hub.clear_requests()
    again = publish(fake_hub, corpus)
    assert again.exit_code == 0, again.output
    assert "no commit" in again.stdout and "20 unchanged" in again.stdout
    assert len(fake_hub.commits) == 1
    assert fake_hub.routes("POST") == []

    # Change one session: only it, the index, the manifest (and the card's counts) go up.
    changed = corpus.files[5]
    last = json.loads(changed.read_bytes().splitlines()[-1])["id"]
    message = {"role": "user", "content": "one more question", "timestamp": 1}
    extra = {"type": "message", "id": "more0001", "parentId": last,
             "timestamp": "2027-12-30T12:00:00.000Z", "message": message}  # fmt: skip
    with changed.open("ab") as handle:
        handle.write(json.dumps(extra).encode() + b"\n")
    third = publish(fake_hub, corpus)
    assert third.exit_code == 0, third.output
    assert "1 updated" in third.stdout and "19 unchanged" in third.stdout
    assert len(fake_hub.commits) == 2
    commit = fake_hub.commits[-1]
    assert commit.parent == fake_hub.commits[0].sha
    sessions_sent = [p for p in commit.added if p.startswith("sessions/")]
    assert sessions_sent == [p for p in session_paths(fake_hub) if p.endswith(changed.name)]
    assert (
        {"index.jsonl", "manifest.json"}
        <= set(commit.added)
        <= {
            *sessions_sent,
            "index.jsonl",
            "manifest.json",
            "README.md",
        }
    )
    assert_consistent(fake_hub)


@pytest.mark.parametrize("applied", [False, True], ids=["lost-commit", "lost-answer"])
def test_interrupted_batch_resumes_without_duplicates(
    fake_hub: FakeHub,
    tmp_path: Path,
    fixtures_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    applied: bool,
) -> None:
    corpus = make_corpus(tmp_path / "sessions", fixtures_dir, count=12)
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 6)  # 3 sessions per commit: 4 commits
    fake_hub.drop_commits_after(2, applied=applied)
    report = tmp_path / "report.jsonl"
    if applied:  # the third commit landed, its answer lost: the head holds it, the run goes on
        done = publish(fake_hub, corpus, "--report", str(report))
        assert done.exit_code == 0, done.output
        assert "did not confirm a commit, but the dataset holds it; going on" in done.stderr
        assert len(fake_hub.commits) == 4 and len(session_paths(fake_hub)) == 12
        assert [c.parent for c in fake_hub.commits[1:]] == [c.sha for c in fake_hub.commits[:-1]]
        assert_consistent(fake_hub)
        return
    failed = publish(fake_hub, corpus, "--report", str(report))
    assert failed.exit_code == 3
    assert "cannot reach 127.0.0.1" in failed.stderr and "re-run" in failed.stderr
    assert "Traceback" not in failed.output
    # what was redacted is reported though a commit failed: a re-run skips those sessions
    # and would never report them (review 2026-12-01)
    assert "(2 of 4 commits confirmed)" in failed.stderr
    assert "pi-session: redact: " in failed.stderr and "secrets in 3 sessions" in failed.stderr
    records = [json.loads(x) for x in report.read_text(encoding="utf-8").splitlines()]
    assert len({r["session"] for r in records if r["type"] == "summary"}) == 12
    done = 3 if applied else 2
    assert len(fake_hub.commits) == done
    assert len(session_paths(fake_hub)) == 3 * done
    assert_consistent(fake_hub)  # every commit carried the manifest of what it contained
    earlier = set(session_paths(fake_hub))

    fake_hub.clear_requests()
    resumed = publish(fake_hub, corpus)
    assert resumed.exit_code == 0, resumed.output
    assert f"{3 * done} unchanged" in resumed.stdout
    later = [p for c in fake_hub.commits[done:] for p in c.added if p.startswith("sessions/")]
    assert len(later) == len(set(later)) == 12 - 3 * done
    assert not set(later) & earlier  # nothing uploaded twice
    assert len(session_paths(fake_hub)) == 12
    assert_consistent(fake_hub)
    assert [c.parent for c in fake_hub.commits[1:]] == [c.sha for c in fake_hub.commits[:-1]]


def test_rate_limited_commit_waits_and_retries(fake_hub: FakeHub, small: Corpus) -> None:
    fake_hub.rate_limit(path=r"/commit/", reset=0)
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "rate limited by 127.0.0.1" in result.stderr and "waiting 1 s" in result.stderr
    assert len(fake_hub.commits) == 1
    # more than 3 sessions: the title keeps to the counts
    assert fake_hub.commits[0].summary == "pi-session publish: 8 added, 0 updated, 0 removed (1/1)"


def test_long_rate_limit_is_a_clear_error(fake_hub: FakeHub, small: Corpus) -> None:
    fake_hub.rate_limit(path=r"/commit/", reset=3600)
    result = publish(fake_hub, small)
    assert result.exit_code == 3
    assert "rate limited by 127.0.0.1:" in result.stderr
    assert "while committing: retry after" in result.stderr
    assert fake_hub.commits == []


@pytest.mark.parametrize(
    ("repo_id", "token", "inject", "message"),
    [
        (REPO_ID, None, None, "no Hugging Face token: pass --token, set HF_TOKEN"),
        (REPO_ID, "hf_invalidtoken000000000000000000", None, "rejected the token"),
        (REPO_ID, READ_TOKEN, None, "the token is read-only on 127.0.0.1:"),
        ("bob/sessions", TOKEN, None, "no write access to 'bob'"),
        (REPO_ID, TOKEN, "gone", "dataset alice/sessions not found on 127.0.0.1:"),
        (REPO_ID, TOKEN, "down", "answered HTTP 503 while committing"),
    ],
    ids=["no-token", "invalid-token", "read-only-token", "other-namespace", "not-found", "5xx"],
)
def test_auth_and_remote_errors_are_one_line(
    fake_hub: FakeHub,
    small: Corpus,
    monkeypatch: pytest.MonkeyPatch,
    repo_id: str,
    token: str | None,
    inject: str | None,
    message: str,
) -> None:
    if token == READ_TOKEN:
        fake_hub.new_repo(REPO_ID)
    if inject == "gone":
        fake_hub.fail(404, path="/commit/", headers={"X-Error-Code": "RepoNotFound"})
    if inject == "down":  # down for good: each of the commit's tries gets a 503
        fake_hub.fail(503, path="/commit/", times=3)
        monkeypatch.setattr("exporter.publish.hub_repo.SERVER_ERROR_WAITS", (0, 0))
    args = ["publish", repo_id, "--all", "--sessions-dir", str(small.root)]
    args += ["--endpoint", fake_hub.url, "-j", "1"] + (["--token", token] if token else [])
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 3, result.output
    lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert "Traceback" not in result.output
    if token:
        assert token not in result.output
    if token == READ_TOKEN:  # told before any session is read, redacted or sent
        assert [r.route for r in fake_hub.requests] == ["/api/whoami-v2"]


def test_a_read_only_token_is_named_in_a_dry_run_and_a_commit_still_maps_403(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dry run may read with a read token but says a real run would be refused; where
    the Hub cannot tell the token's role, the commit's 403 is still one clear line."""
    fake_hub.new_repo(REPO_ID)
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root)]
    args += ["--endpoint", fake_hub.url, "-j", "1", "--token", READ_TOKEN]
    dry = CliRunner().invoke(cli, [*args, "--dry-run"], catch_exceptions=False)
    assert dry.exit_code == 0, dry.output
    assert "warning: the token is read-only: a real run would be refused" in dry.stderr
    fake_hub.fail(429, path="/api/whoami-v2", times=1)  # role unknown: the work goes on
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 3, result.output
    assert "no write access to 'alice'" in result.stderr and "Traceback" not in result.output
    assert any(r.method == "POST" for r in fake_hub.requests)  # the 403 came from a write


def test_a_namespace_the_token_cannot_write_is_refused_before_any_redaction(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Publishing to another user's namespace redacted every session, then failed at the
    first write with "no write access to 'bob'" (review 2026-12-04). The whoami answer the
    read-only check already asks for says whose the token is and which organizations they
    are in: the run stops there, as for a read-only token. A dry run says so and goes on,
    and an organization the user belongs to is not refused."""
    from exporter.publish import hub

    real_prepare = hub.prepare_all
    redacted: list[int] = []

    def counting_prepare(sources: list[Any], *args: Any, **kwargs: Any) -> Any:
        redacted.append(len(sources))
        return real_prepare(sources, *args, **kwargs)

    monkeypatch.setattr(hub, "prepare_all", counting_prepare)
    args = ["publish", "bob/x", "--all", "--sessions-dir", str(small.root)]
    args += ["--endpoint", fake_hub.url, "-j", "1", "--token", TOKEN]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 3, result.output
    lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "no write access to 'bob' on 127.0.0.1:" in lines[0], lines
    assert "redact:" not in result.stderr and redacted == []  # the redaction never ran
    assert "alice" in lines[0] and TOKEN not in result.output
    assert [r.route for r in fake_hub.requests] == ["/api/whoami-v2"]
    assert fake_hub.repos == {} and fake_hub.commits == []

    dry = CliRunner().invoke(cli, [*args, "--dry-run"], catch_exceptions=False)
    assert dry.exit_code == 0, dry.output
    assert "no write access to 'bob'" in dry.stderr and "a real run would be refused" in dry.stderr

    team = CliRunner().invoke(cli, ["publish", "team/x", *args[2:]], catch_exceptions=False)
    assert team.exit_code == 0 and "8 added" in team.stdout, team.output  # alice is in team
    assert ("dataset", "team/x") in fake_hub.repos


def test_what_whoami_rules_out_and_what_it_leaves_to_the_hub() -> None:
    """Only what the Hub's answer says refuses a run: a namespace that is neither the user
    nor one of their organizations, the read role in one; anything not told (or told in
    another shape), and a fine-grained token, lets the run go on."""
    from exporter.publish.hub_repo import TokenAccess

    def access(role: str, **answer: Any) -> TokenAccess:
        return TokenAccess.from_whoami(
            {"name": "alice", "auth": {"accessToken": {"role": role}}, **answer}
        )

    orgs = {
        "orgs": [{"name": "Team", "roleInOrg": "write"}, {"name": "viewers", "roleInOrg": "read"}]
    }
    assert access("write", **orgs).refusal("alice/x") is None
    assert access("write", **orgs).refusal("ALICE/x") is None  # names are case-insensitive
    assert access("write", **orgs).refusal("team/x") is None
    assert "neither alice nor" in (access("write", **orgs).refusal("bob/x") or "")
    assert "read role" in (access("write", **orgs).refusal("viewers/x") or "")
    assert access("write").refusal("bob/x") is None  # no orgs in the answer: not told
    assert access("write", orgs=[{"id": 1}]).refusal("bob/x") is None  # an org without a name
    assert TokenAccess.from_whoami("nonsense").refusal("bob/x") is None
    assert TokenAccess().refusal("bob/x") is None  # whoami failed (rate limited, offline)

    # a fine-grained token is left to the Hub: its global permissions name no namespace
    answer = {"name": "alice", "auth": {"accessToken": {"role": "fineGrained"}}, **orgs}
    assert TokenAccess.from_whoami(answer).refusal("bob/x") is None


def test_the_html_pages_of_unchanged_sessions_are_not_committed_again(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every second `publish --html` re-uploaded every page although nothing changed
    (review 2026-12-04): a page made from this run's upload said "scanned for secrets, none
    found", the page of the same copy made from the kept (downloaded) copy, under the home
    folder as the cache is by default, said "...; home paths → ~: 1" (its place on disk).
    A page now says what was done to the session the copy was made from (the counts the
    manifest records, home paths included) and is the same bytes whichever way it was
    built: run 2 (dry or not) and run 3 commit nothing, and neither does a run that built
    the site anew from downloaded copies."""
    import shutil

    from exporter.redact import RedactionReport

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))  # the default: under home

    def pages() -> dict[str, bytes]:
        return {p: d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("html/")}

    first = publish(fake_hub, small, "--html")
    assert first.exit_code == 0 and "8 added" in first.stdout, first.output
    built = pages()
    dry = publish(fake_hub, small, "--html", "--dry-run")
    assert dry.exit_code == 0 and "0 commit(s)" in dry.stdout, dry.output
    assert "html/:" not in dry.stdout  # no page to upload
    for run in (2, 3):
        again = publish(fake_hub, small, "--html")
        assert again.exit_code == 0 and "no commit" in again.stdout, (run, again.output)
        assert len(fake_hub.commits) == 1 and pages() == built, run
    # the site and the copies kept here gone (another machine): every page is built anew
    # from downloaded copies, and comes out the same bytes
    for kept in (home / ".cache" / "pi-session-export").glob("publish-*"):
        for folder in kept.iterdir():
            shutil.rmtree(folder)
    fake_hub.clear_requests()
    anew = publish(fake_hub, small, "--html")
    assert anew.exit_code == 0 and "no commit" in anew.stdout, anew.output
    assert len(fake_hub.routes("GET", r"/resolve/.*sessions/")) == 8  # every copy downloaded
    # each page says what was done to the session it shows, as the manifest records it
    manifest = remote_json(fake_hub, "manifest.json")["sessions"]
    notes = {
        Path(path).stem: RedactionReport(
            counts=entry["redactions"], actions=entry["actions"]
        ).page_note()
        for path, entry in manifest.items()
    }
    shown = {}
    for path, data in built.items():
        if path.startswith("html/sessions/"):
            (note,) = re.findall(r"<dt>Redaction</dt><dd>(.*?)</dd>", data.decode("utf-8"))
            shown[Path(path).stem] = html.unescape(note)  # "user names → &lt;user&gt;"
    assert shown == notes and len(shown) == 8
    assert all("home paths → ~" in note for note in shown.values())
    assert sum("replaced by [REDACTED" in note for note in shown.values()) == 2


def test_a_server_echoing_the_token_never_gets_it_printed(fake_hub: FakeHub, small: Corpus) -> None:
    echo = {"error": f"token {TOKEN} is bad"}
    fake_hub.fail(400, body=echo, headers={"X-Error-Message": f"hdr {TOKEN}"}, path="/commit/")
    result = publish(fake_hub, small)
    assert result.exit_code == 3 and "error:" in result.output
    assert TOKEN not in result.output and "***" in result.output


@pytest.mark.parametrize("token", [f"{TOKEN}\n", f"hf_A B{TOKEN}", "hf_x\r\nX-Evil: 1"])
def test_tokens_with_control_characters_are_refused(
    fake_hub: FakeHub, small: Corpus, token: str
) -> None:
    result = publish(fake_hub, small, token=token)
    if token.strip() == TOKEN:  # surrounding whitespace is only trimmed
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 1 and "control characters" in result.output
    assert token.strip() not in result.output


@pytest.mark.parametrize("token", ["", "  "])
def test_an_empty_token_is_refused_not_replaced_by_the_environments(
    fake_hub: FakeHub, small: Corpus, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--token "$WORK_TOKEN"` with the variable unset published with HF_TOKEN: maybe
    another account, and nothing said so (newcomer review 2026-12-01)."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root)]
    result = CliRunner().invoke(cli, [*args, "--endpoint", fake_hub.url, "--token", token])
    assert result.exit_code == 1 and "--token: the value is empty" in result.stderr
    assert fake_hub.requests == [] and TOKEN not in result.output


@pytest.mark.parametrize("token", ["令牌abc", f"{TOKEN}é", f"\u201c{TOKEN}\u201d"])
def test_tokens_with_non_ascii_characters_are_a_usage_error(
    fake_hub: FakeHub, small: Corpus, token: str
) -> None:
    """A review: ``--token 令牌abc`` failed as "reading the dataset failed:
    UnicodeEncodeError" with exit 3 (an HTTP header takes Latin-1; tokens are ASCII)."""
    result = publish(fake_hub, small, token=token)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(lines) == 1 and "non-ASCII characters" in lines[0], result.stderr
    assert token not in result.output and "Traceback" not in result.output


def test_bad_endpoint_is_a_usage_error(small: Corpus) -> None:
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root)]
    # no token over plain http, nor to a host the checks did not see
    for endpoint in ("http://[::1", "http://hub.example.com", "http://evil.invalid\\@127.0.0.1"):
        result = CliRunner().invoke(cli, [*args, "--endpoint", endpoint, "--token", TOKEN])
        assert result.exit_code == 1 and "--endpoint" in result.output
        assert "Traceback" not in result.output


def test_unreachable_endpoint(small: Corpus) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "--endpoint", url]
    result = CliRunner().invoke(cli, [*args, "--token", TOKEN], catch_exceptions=False)
    assert result.exit_code == 3
    assert "cannot reach 127.0.0.1" in result.stderr
    # a dry run still shows what would go up, redacted, planned as a first publish: it
    # stopped with the same error, so checking a redaction needed the network. The plan is
    # said to be a guess; an --endpoint typed on the command line is exit 3 (review 150)
    import huggingface_hub.constants  # noqa: F401  (read once, before HF_ENDPOINT is set)

    from_env = [a for a in args if a not in ("--endpoint", url)]
    for token, typed in (([TOKEN], True), ([], True), ([TOKEN], False), ([], False)):
        given = [
            *(args if typed else from_env),
            "--dry-run",
            *(["--token", *token] if token else []),
        ]
        dry = CliRunner(env={"HF_ENDPOINT": url}).invoke(cli, given)
        if typed:  # stopped at once, before any session is redacted (stop 48)
            assert dry.exit_code == 3 and dry.stdout == "", dry.output
            last = dry.stderr.strip().splitlines()[-1]
            assert "--endpoint 127.0.0.1:" in last and "no plan was made" in last
            assert "redact:" not in dry.stderr and "Traceback" not in dry.output
            continue
        assert dry.exit_code == 0, dry.output
        assert "the plan above is a guess" in dry.stderr.strip().splitlines()[-1]
        assert "(not reached: planned as new, private)" in dry.stdout
        assert dry.stdout.count("\nadd ") == 8 and "nothing was sent" in dry.stdout
        assert "would be 8 added, 0 updated, 0 removed, 0 unchanged" in dry.stdout
        assert "redact: 6 secrets in 2 sessions" in dry.stderr
        assert f"cannot reach 127.0.0.1:{url.rsplit(':', 1)[1]}: planned as a first" in dry.stderr
        assert ("no token: a real run needs one" in dry.stderr) == (not token)
        assert "read anonymously" not in dry.stderr and "Traceback" not in dry.output


def test_concurrent_publisher_is_detected(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    from exporter.publish.hub import HubRepo

    original = HubRepo.commit

    def other_publisher_first(self: HubRepo, *args: Any, **kwargs: Any) -> str:
        repo = fake_hub.repo(REPO_ID)
        repo.sha = "f" * 40  # someone else committed since we read the head
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HubRepo, "commit", other_publisher_first)
    result = publish(fake_hub, small)
    assert result.exit_code == 3
    assert "changed on the Hub while publishing (another publisher?)" in result.stderr


def test_dry_run_reports_and_sends_nothing(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    key_file = tmp_path / "config" / "pi-session-export" / "publish.key"
    result = publish(fake_hub, small, "--dry-run")
    assert result.exit_code == 0, result.output
    # nor does it write anything here: the publish key is the first real run's to create
    assert not key_file.exists() and "a dry run creates none" in result.stderr
    assert fake_hub.repos == {} and fake_hub.routes("POST") == []
    assert "would be created, private" in result.stdout
    assert result.stdout.count("\nadd ") == 8 and "nothing was sent" in result.stdout
    assert "redact: 6 secrets in 2 sessions" in result.stderr
    # the files a reader sees first are said too, and counted in what goes up
    own = re.search(r"and the dataset's own files: (.*)\n", result.stdout)
    assert own is not None, result.stdout
    sizes = dict(re.findall(r"(README\.md|index\.jsonl|manifest\.json)\D*([\d,]+) B", own[1]))
    assert set(sizes) == {"README.md", "index.jsonl", "manifest.json"}, own[1]
    assert "README.md (dataset card)" in own[1]
    sessions = sum(
        int(n.replace(",", "")) for n in re.findall(r"\nadd +\S+ +([\d,]+)", result.stdout)
    )
    total = sessions + sum(int(n.replace(",", "")) for n in sizes.values())
    assert f"{total / 1e6:.1f} MB to upload" in result.stdout, (total, result.stdout)
    # After a real publish, a changed and a deleted session show as update / remove.
    assert publish(fake_hub, small).exit_code == 0
    assert key_file.exists()
    small.files[0].write_bytes(small.files[0].read_bytes() + b"\n")  # same output: refresh
    small.files[1].unlink()
    small.files[2].write_bytes(small.files[2].read_bytes().replace(b"question 2", b"Q2"))
    fake_hub.clear_requests()
    plan = publish(fake_hub, small, "--dry-run", "--prune")
    assert plan.exit_code == 0, plan.output
    assert fake_hub.routes("POST") == [] and len(fake_hub.commits) == 1
    assert "would be 0 added, 1 updated, 1 removed, 6 unchanged" in plan.stdout
    assert "index.jsonl" in plan.stdout and "manifest.json" in plan.stdout  # one row fewer
    assert "1 commit(s)" in plan.stdout  # the refreshed source hash still needs the manifest


def test_prune_and_broken_sessions(fake_hub: FakeHub, small: Corpus) -> None:
    broken = small.files[3].with_name("2026-01-01T00-00-00-000Z_broken.jsonl")
    broken.write_bytes(b"\x00\x01 not a session\n")
    first = publish(fake_hub, small)
    assert first.exit_code == 0, first.output
    assert "skipped 2026-01-01T00-00-00-000Z_broken.jsonl: not a Pi session" in first.stderr
    assert "8 added" in first.stdout and "1 failed" in first.stdout
    (broken.parent / "2026-01-02T00-00-00-000Z_empty.jsonl").write_bytes(b"")
    again = publish(fake_hub, small)  # files that fail are tried again, and redact nothing
    assert "redact: nothing new to redact" in again.stderr, again.stderr  # not "no secrets found"
    gone = small.files[2]
    gone.unlink()
    kept = publish(fake_hub, small)
    assert "0 removed" in kept.stdout and len(session_paths(fake_hub)) == 8
    # said, not only counted: "7 selected, 8 in the dataset" was all (review 2026-12-01)
    assert (
        "note: 1 published session has no file in this selection; it stays in the "
        "dataset (--prune removes it)"
    ) in kept.stderr
    pruned = publish(fake_hub, small, "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert "1 removed" in pruned.stdout
    assert fake_hub.commits[-1].deleted == [p for p in fake_hub.commits[0].added if gone.name in p]
    assert len(session_paths(fake_hub)) == 7
    assert_consistent(fake_hub)


def test_skip_keeps_sessions_out_and_prune_takes_them_back(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """`--skip` (an id, a path, or a file listing them) keeps sessions out of an --all run:
    a cron job's way to reject one for good. With --prune, a skipped session the dataset
    holds is deleted from it. A name it cannot find is refused before anything is sent."""
    sid = small.files[1].stem.split("_", 1)[1]
    listed = tmp_path / "rejected.txt"
    listed.write_bytes(  # as Notepad writes it: a BOM and CRLF
        f"\ufeff# kept out of the dataset\r\n\r\n{small.files[2]}  # a client's\r\n"
        f"{sid[:13]}\r\n".encode()
    )
    first = publish(fake_hub, small, "--skip", str(small.files[0]), "--skip", str(listed))
    assert first.exit_code == 0, first.output
    assert "--skip leaves out 3 of the 8 sessions selected" in first.stderr
    assert "5 added" in first.stdout
    published = " ".join(session_paths(fake_hub))
    assert len(session_paths(fake_hub)) == 5
    for skipped in small.files[:3]:
        assert skipped.stem.split("_", 1)[1] not in published
    received = fake_hub.received_bytes()  # each file's last entry is plant<i>
    assert b'"plant003"' in received
    assert not any(f'"plant00{i}"'.encode() in received for i in range(3))
    # published, then rejected: --prune deletes it; the others stay
    assert publish(fake_hub, small).exit_code == 0
    assert len(session_paths(fake_hub)) == 8
    pruned = publish(fake_hub, small, "--skip", sid, "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert "1 removed" in pruned.stdout and len(session_paths(fake_hub)) == 7
    assert sid not in " ".join(session_paths(fake_hub))
    assert_consistent(fake_hub)
    sent = len(fake_hub.requests)
    dash = publish(fake_hub, small, "--skip", "-")
    assert dash.exit_code == 1 and "not -" in dash.stderr, dash.output
    typo = publish(fake_hub, small, "--skip", "no-such-session-id")
    assert typo.exit_code == 1, typo.output
    assert "--skip no-such-session-id:" in typo.stderr and "nothing sent" in typo.stderr
    listed.write_text("zz-typo\n", encoding="utf-8")
    in_list = publish(fake_hub, small, "--skip", str(listed))
    assert in_list.exit_code == 1 and f"--skip {listed}:1:" in in_list.stderr, in_list.output
    every = [arg for f in small.files for arg in ("--skip", str(f))]
    nothing = publish(fake_hub, small, *every)
    assert nothing.exit_code == 2, nothing.output
    assert "--skip leaves out every selected session; nothing sent" in nothing.stderr
    assert len(fake_hub.requests) == sent
    assert "Traceback" not in typo.output + in_list.output + nothing.output


def test_a_selection_of_which_nothing_can_be_read_creates_nothing(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    """`publish REPO --all` over a folder of broken files created the dataset, committed an
    empty card, index and manifest, and exited 0 (review 2026-12-03)."""
    folder = tmp_path / "sessions" / "--home-me-proj--"
    folder.mkdir(parents=True)
    (folder / "2026-01-01T00-00-00-000Z_a.jsonl").write_bytes(b"\x00\x01 not a session\n")
    (folder / "2026-01-02T00-00-00-000Z_b.jsonl").write_bytes(b"{not json\n")
    broken = Corpus(tmp_path / "sessions", sorted(folder.iterdir()), [])
    result = publish(fake_hub, broken)
    assert result.exit_code == 2, result.output
    assert "none of the 2 sessions selected could be read; nothing was sent" in result.stderr
    assert "skipped 2026-01-01T00-00-00-000Z_a.jsonl" in result.stderr  # and why
    assert "Traceback" not in result.output and result.stdout == ""
    assert fake_hub.repos == {} and fake_hub.commits == []
    assert not fake_hub.routes("POST")  # no create, no commit
    dry = publish(fake_hub, broken, "--dry-run")
    assert dry.exit_code == 2 and "nothing would be sent" in dry.stderr, dry.output
    # one readable session among them: the dataset is created at its commit, private
    good = folder / "2026-01-03T00-00-00-000Z_c.jsonl"
    good.write_bytes(fixture_path("pi-branched-1.jsonl").read_bytes())
    broken.files.append(good)
    result = publish(fake_hub, broken)
    assert result.exit_code == 0, result.output
    assert "1 added" in result.stdout and "2 failed" in result.stdout
    assert fake_hub.repo(REPO_ID).private and len(fake_hub.commits) == 1
    assert_consistent(fake_hub)


def test_damaged_lines_left_out_of_the_upload_are_reported(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A line the loader could not read was dropped from the uploaded copy without a word
    (``redact`` says so for the same file)."""
    source = small.files[0]
    lines = source.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"type":"message","id":"cut","parentId":null,"message":{"role":\n')
    source.write_bytes(b"".join(lines))
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert f"/{source.name}: 1 damaged line left out of the upload (line 3: " in (
        result.stderr
    )  # (named by its path in the dataset: a secret in the file's name is not printed)
    assert result.stderr.count("damaged line") == 1  # the other sessions are whole
    hostile = source.with_name(source.stem + "_\x1b]0;PWNED\x07.jsonl")
    source.rename(hostile)  # a file name is untrusted text too: no escape reaches a terminal
    hostile.write_bytes(hostile.read_bytes() + b'{"type":"message","id":"cut2"\n')  # new bytes
    renamed = publish(fake_hub, small)
    assert renamed.exit_code == 0, renamed.output
    assert "2 damaged lines left out" in renamed.stderr and "\x1b" not in renamed.stderr


def test_unusable_token_counts_are_reported_as_export_reports_them(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A turn whose usage gives ``1e308`` tokens counts as 0 in the index row: export and
    stats warn of it, publish said nothing and published the row's totals as if whole."""
    source = small.files[0]
    lines = source.read_bytes().splitlines(keepends=True)
    for number, line in enumerate(lines):
        entry = json.loads(line)
        message = entry.get("message") or {}
        if message.get("role") == "assistant" and isinstance(message.get("usage"), dict):
            message["usage"]["output"] = 1e308
            lines[number] = json.dumps(entry).encode() + b"\n"
            break
    else:
        raise AssertionError("no assistant turn with usage in the fixture")
    source.write_bytes(b"".join(lines))
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    warning = f"/{source.name}: line {number + 1}: token count 1e+308 in a turn's usage"
    assert warning in result.stderr, result.stderr
    assert "counted as 0 tokens [bad-usage] (in the index row's tokens and cost too)" in (
        result.stderr
    )
    assert result.stderr.count("[bad-usage]") == 1  # the other sessions' counts are whole


def test_html_pages_come_from_the_published_copies_whatever_the_selection(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A damaged session's page was made from its local file (damaged lines and all) when
    the run had it, and from its published copy (which has none) when it did not: runs of
    another project and of all of them made a commit each, with nothing published (review
    2026-12-01)."""
    source = small.files[0]  # in PROJECTS[0]
    lines = source.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"type":"message","id":"cut","parentId":null,"message":{"role":\n')
    source.write_bytes(b"".join(lines))
    assert publish(fake_hub, small, "--html").exit_code == 0
    base = ["publish", REPO_ID, "--sessions-dir", str(small.root), "--endpoint", fake_hub.url,
            "--token", TOKEN]  # fmt: skip
    for selection in (["--cwd", PROJECTS[1]], ["--all"], ["--cwd", PROJECTS[1]], ["--all"]):
        commits = len(fake_hub.commits)
        result = CliRunner().invoke(cli, [*base, *selection])
        assert result.exit_code == 0 and "no commit" in result.stdout, (selection, result.output)
        assert len(fake_hub.commits) == commits
    pages = [d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("html/sessions/")]
    assert not any(b"Damaged lines" in page for page in pages)  # left out of the upload
    assert_consistent(fake_hub)


def test_usage_errors(fake_hub: FakeHub, small: Corpus) -> None:
    one = str(small.files[0])
    for args, text in [
        (["publish", REPO_ID, one, "--prune"], "--prune needs a whole selection"),
        (["publish", REPO_ID, one, "--all"], "SESSION and --cwd/--all both choose"),
        (["publish", "no-namespace"], "REPO_ID must look like namespace/name"),
        (["publish", "alice/b--c"], "not a valid Hub repo id: Cannot have -- or .."),
        (["publish", "alice/trailing."], "not a valid Hub repo id"),
        (["publish", "alice/" + "x" * 97], "not a valid Hub repo id"),  # was exit 3
        (["publish", REPO_ID, "--no-redact"], "no such option"),
        (["publish", REPO_ID, "--keep-hidden"], "no such option"),
        (["publish", REPO_ID, "--keep-paths"], "no such option"),
        (["publish", REPO_ID, "--no-env-secrets"], "no such option"),
    ]:
        result = CliRunner().invoke(cli, [*args, "--endpoint", fake_hub.url])
        assert result.exit_code in (1, 2) and text in result.output, (args, result.output)
        assert not fake_hub.requests, args  # refused before anything is sent


def test_since_and_session_arguments(fake_hub: FakeHub, corpus: Corpus) -> None:
    args = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1", "--dry-run"]
    selection = ["--all", "--sessions-dir", str(corpus.root), "--since", "2027-10-01"]
    late = CliRunner().invoke(cli, ["publish", REPO_ID, *selection, *args])
    assert late.exit_code == 0, late.output
    months = [line.split()[1][9:16] for line in late.stdout.splitlines() if line.startswith("add")]
    assert sorted(set(months)) == ["2026-10", "2026-11", "2026-12"]
    two = CliRunner().invoke(cli, ["publish", REPO_ID, *map(str, corpus.files[:2]), *args])
    assert two.exit_code == 0 and two.stdout.count("\nadd ") == 2, two.output
    # relative ages as `export --all --since` takes them (they were refused here)
    every = ["--all", "--sessions-dir", str(corpus.root)]
    weeks = CliRunner().invoke(cli, ["publish", REPO_ID, *every, "--since", "5200w", *args])
    assert weeks.exit_code == 0 and weeks.stdout.count("add ") == len(corpus.files), weeks.output
    sent = len(fake_hub.requests)
    typo = CliRunner().invoke(cli, ["publish", REPO_ID, *every, "--since", "7x", *args])
    assert typo.exit_code == 1 and "7d/12h/2w" in typo.stderr
    assert len(fake_hub.requests) == sent
    future = CliRunner().invoke(cli, ["publish", REPO_ID, *every, "--since", "2999-01-01", *args])
    assert future.exit_code == 2, future.output
    assert f"no Pi sessions for any project under {corpus.root} active since 2999-01-01 00:00" in (
        future.stderr.replace("\n", " ")
    )


def test_an_empty_selection_says_where_it_looked_and_what_else_there_is(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review: `publish --all` over an empty folder said "try --all". Each empty
    selection names the folder it read and offers only what would find something, in the
    words of every other command."""
    args = ["--endpoint", fake_hub.url, "--token", TOKEN, "--dry-run"]
    empty = tmp_path / "empty"
    empty.mkdir()
    every = CliRunner().invoke(
        cli, ["publish", REPO_ID, "--all", "--sessions-dir", str(empty), *args]
    )
    assert every.exit_code == 2, every.output
    assert f"no Pi sessions for any project under {empty}; nothing sent" in every.stderr
    assert "try --all" not in every.stderr
    nowhere = tmp_path / "nowhere"
    gone = CliRunner().invoke(
        cli, ["publish", REPO_ID, "--all", "--sessions-dir", str(nowhere), *args]
    )
    assert gone.exit_code == 2 and str(nowhere) in gone.stderr, gone.output
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    here = CliRunner().invoke(cli, ["publish", REPO_ID, "--sessions-dir", str(small.root), *args])
    assert here.exit_code == 2, here.output
    said = here.stderr.replace("\n", " ")
    assert f"no Pi sessions for {elsewhere} under {small.root}; 8 sessions of other " in said
    assert "8 sessions of other projects are there: --all publishes them; nothing sent" in said
    assert fake_hub.requests == []


def test_an_empty_since_and_the_first_date_there_is(fake_hub: FakeHub, small: Corpus) -> None:
    """A review: ``--since ''`` said "use YYYY-MM-DD" as for a typo, and ``--since
    0001-01-01`` was refused with "use YYYY-MM-DD" although it is one."""
    empty = publish(fake_hub, small, "--since", "", "--dry-run")
    assert empty.exit_code == 1 and "the value is empty" in empty.stderr, empty.output
    first = publish(fake_hub, small, "--since", "0001-01-01", "--dry-run")
    assert first.exit_code == 1, first.output
    assert "out of range, the earliest date is 0001-01-02" in first.stderr
    assert "YYYY-MM-DD" not in first.stderr and not fake_hub.requests
    earliest = publish(fake_hub, small, "--since", "0001-01-02", "--dry-run")
    assert earliest.exit_code == 0, earliest.output
    assert earliest.stdout.count("\nadd ") == len(small.files), earliest.output


def test_the_dataset_cannot_confirm_a_guessed_secret(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest held each source file's plain SHA-256 and the policy key (which covers
    --secret values and the user's name): with the redacted copy, a reader of the dataset
    could rebuild the original with a guessed password and check the guess offline. Only
    HMACs under a key that stays on this machine are published now."""
    assert publish(fake_hub, small, "--secret", "Tr0ub4dor&3").exit_code == 0
    key_file = tmp_path / "config" / "pi-session-export" / "publish.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    sent = fake_hub.received_bytes()
    plain = RedactionPolicy(redact=True, drop_hidden=True, secrets=("Tr0ub4dor&3",)).key()
    assert plain.encode() not in sent
    assert key_file.read_bytes().strip() not in sent
    for path in small.files:
        assert hashlib.sha256(path.read_bytes()).hexdigest().encode() not in sent
    again = publish(fake_hub, small, "--secret", "Tr0ub4dor&3")
    assert "nothing changed, no commit" in again.stdout, again.output
    # Another machine (another key) re-checks every session; its copies come out the same,
    # so no session file is uploaded again, only the manifest with its own marks.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "other-machine"))
    commits = len(fake_hub.commits)
    other = publish(fake_hub, small, "--secret", "Tr0ub4dor&3")
    assert other.exit_code == 0, other.output
    assert len(fake_hub.commits) == commits + 1
    assert not [p for p in fake_hub.commits[-1].added if p.startswith("sessions/")]
    assert "manifest.json" in fake_hub.commits[-1].added
    # A key file others can read is used, with a warning.
    other_key = tmp_path / "other-machine" / "pi-session-export" / "publish.key"
    other_key.chmod(0o644)
    readable = publish(fake_hub, small, "--secret", "Tr0ub4dor&3")
    assert readable.exit_code == 0 and "can be read by other users" in readable.stderr
    # A key from the environment (a CI runner is a new machine every time) is used as given.
    monkeypatch.setenv("PI_SESSION_PUBLISH_KEY", "short")
    refused = publish(fake_hub, small)
    assert refused.exit_code == 1 and "PI_SESSION_PUBLISH_KEY is too short" in refused.stderr


def test_an_upgrade_drops_the_plain_hashes_of_sessions_it_does_not_touch(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """Entries an earlier version wrote (plain source_sha256, unkeyed redaction_key) were
    copied as they were for every session a run did not touch, so the guess check stayed in
    the live manifest; they are dropped, and the next run with the file re-checks it."""
    assert publish(fake_hub, small).exit_code == 0
    repo = fake_hub.repo(REPO_ID)
    old = json.loads(repo.files["manifest.json"])
    plain = RedactionPolicy(redact=True, drop_hidden=True).key()
    by_name = {p.name: p for p in small.files}
    for path, entry in old["sessions"].items():
        del entry["source_mark"]
        entry["source_sha256"] = hashlib.sha256(by_name[Path(path).name].read_bytes()).hexdigest()
        entry["redaction_key"] = plain
    repo.files["manifest.json"] = json.dumps(old).encode()
    one = small.files[0]
    args = ["publish", REPO_ID, str(one), "--endpoint", fake_hub.url, "--token", TOKEN]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = fake_hub.files(REPO_ID)["manifest.json"].decode()
    assert "source_sha256" not in text and plain not in text
    assert len(json.loads(text)["sessions"]) == len(small.files)  # no session lost


def test_public_repo_and_paged_tree(small: Corpus) -> None:
    with FakeHub(page_size=4) as fake:  # the tree listing needs several pages
        first = publish(fake, small, "--public")
        assert first.exit_code == 0, first.output
        assert not fake.repo(REPO_ID).private
        again = publish(fake, small, "--public")
        assert again.exit_code == 0 and "no commit" in again.stdout, again.output
        assert len(fake.routes("GET", r"/tree/")) >= 4
        # without --public (the dataset was made public on the Hub, say): refused before any
        # session is read, and the dry run says so (review 2026-12-01: it published, then
        # warned)
        small.files[0].write_text(small.files[0].read_text("utf-8") + "\n", "utf-8")
        commits = len(fake.commits)
        refused = publish(fake, small)
        assert refused.exit_code == 1, refused.output
        assert "alice/sessions is public: what is published is visible to all; pass --public " \
            "to publish to it" in refused.stderr  # fmt: skip
        dry = publish(fake, small, "--dry-run")
        assert dry.exit_code == 0 and "pass --public, or a real run is refused" in dry.stderr
        assert len(fake.commits) == commits


def _subprocess_env(home: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        HF_HOME=str(home),
        XDG_CACHE_HOME=str(cache),
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_PROXY="127.0.0.1,localhost",
        HTTPS_PROXY="http://127.0.0.1:9",  # anything not loopback fails fast
        HTTP_PROXY="http://127.0.0.1:9",
        PYTHONPATH=str(REPO),
    )
    return env


def test_cli_subprocess_uses_the_token_file(fake_hub: FakeHub, small: Corpus, tmp_path: Path):
    home = tmp_path / "sub-home"
    home.mkdir()
    (home / "token").write_text(TOKEN, encoding="utf-8")  # what `hf auth login` writes
    code = (
        "from exporter.cli import LAZY_COMMANDS, main\n"
        f"LAZY_COMMANDS.setdefault('publish', {COMMAND!r})\n"
        "main()\n"
    )
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "-j", "2"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args, "--endpoint", fake_hub.url],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_subprocess_env(home, tmp_path / "sub-cache"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "8 added" in done.stdout and TOKEN not in done.stdout + done.stderr
    auth = {
        r.headers.get("authorization") or r.headers.get("Authorization") for r in fake_hub.requests
    }
    assert auth == {f"Bearer {TOKEN}"}
    assert_consistent(fake_hub)


def _publish_at_a_terminal(
    fake: FakeHub, corpus: Corpus, tmp_path: Path, typed: bytes, *extra: str
) -> subprocess.CompletedProcess[str]:
    """`publish` in a real process whose stdin is a terminal (a pty) on which ``typed``
    was typed ahead; stdout and stderr are pipes, as in a shell that captures them."""
    import pty

    home = tmp_path / f"tty-home-{len(fake.commits)}-{len(typed)}"
    home.mkdir()
    code = (
        "from exporter.cli import LAZY_COMMANDS, main\n"
        f"LAZY_COMMANDS.setdefault('publish', {COMMAND!r})\n"
        "main()\n"
    )
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(corpus.root), "-j", "1"]
    args += ["--endpoint", fake.url, "--token", TOKEN, *extra]
    master, slave = pty.openpty()
    try:
        os.write(master, typed)
        return subprocess.run(
            [sys.executable, "-c", code, *args],
            stdin=slave,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=_subprocess_env(home, tmp_path / "sub-cache"),
            timeout=120,
        )
    finally:
        os.close(slave)
        os.close(master)


def test_publishing_to_a_public_dataset_asks_first_at_a_terminal(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """`--public` created a public dataset and sent every session without a word of what
    was going out. At a terminal it now shows what goes up (sessions, what was redacted)
    and asks, default no; --yes skips the question; a script (no terminal) is not asked."""
    declined = _publish_at_a_terminal(fake_hub, small, tmp_path, b"\n", "--public")
    assert declined.returncode == 1, declined.stderr
    err = declined.stderr
    assert "alice/sessions will be created public: anyone can read what goes up" in err
    assert "Going up: 8 sessions (8 new, 0 updated), 0 removed" in err
    assert "redact: 6 secrets in 2 sessions" in err
    assert "Publish to the public dataset alice/sessions? [y/N]" in err
    assert "not published: nothing was sent to alice/sessions (--yes skips the question)" in err
    assert fake_hub.routes("POST") == [] and fake_hub.commits == []  # not even created
    assert TOKEN not in declined.stdout + err

    agreed = _publish_at_a_terminal(fake_hub, small, tmp_path, b"y\n", "--public")
    assert agreed.returncode == 0, agreed.stderr
    assert "8 added" in agreed.stdout and len(fake_hub.commits) == 1
    assert fake_hub.repo(REPO_ID).private is False

    _touch(small.files[1], "question 1", "question one")
    told = _publish_at_a_terminal(fake_hub, small, tmp_path, b"", "--public", "--yes")
    assert told.returncode == 0, told.stderr
    assert "[y/N]" not in told.stderr and "1 updated" in told.stdout
    _touch(small.files[2], "question 2", "question two")
    asked = _publish_at_a_terminal(fake_hub, small, tmp_path, b"n\n", "--public")
    assert asked.returncode == 1 and "alice/sessions exists and is public" in asked.stderr
    assert "Going up: 1 session (0 new, 1 updated)" in asked.stderr
    assert len(fake_hub.commits) == 2
    # no terminal (CliRunner's stdin is not one): a script goes on as before, not asked
    scripted = publish(fake_hub, small, "--public")
    assert scripted.exit_code == 0 and "[y/N]" not in scripted.output, scripted.output
    assert len(fake_hub.commits) == 3
    help_text = " ".join(CliRunner().invoke(cli, ["publish", "--help"]).output.split())
    assert "--yes" in help_text and "without one (a script, a pipe) it is not" in help_text


def test_a_token_piped_to_token_dash_publishes(fake_hub: FakeHub, small: Corpus) -> None:
    """`--token -` reads the token from stdin, out of the process list (as share does)."""
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "-j", "1"]
    args += ["--endpoint", fake_hub.url, "--token", "-"]
    result = CliRunner().invoke(cli, args, input=f"{TOKEN}\n", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "8 added" in result.stdout and TOKEN not in result.output
    auth = {r.headers.get("authorization") or r.headers.get("Authorization")
            for r in fake_hub.requests}  # fmt: skip
    assert auth == {f"Bearer {TOKEN}"}
    empty = CliRunner().invoke(cli, args, input="")
    assert empty.exit_code == 1 and "--token -: nothing was piped in" in empty.stderr


def test_html_site_is_uploaded_redacted(fake_hub: FakeHub, small: Corpus) -> None:
    result = publish(fake_hub, small, "--html")
    assert result.exit_code == 0, result.output
    files = fake_hub.files(REPO_ID)
    pages = [p for p in files if p.startswith("html/")]
    assert "html/index.html" in files and len(pages) > 8
    assert not any(Path(p).name.startswith(".") for p in pages)  # the site's own manifest stays
    assert "`html/`" in files["README.md"].decode()
    received = fake_hub.received_bytes()
    # each page carries the (redacted) session as gzip+base64 JSONL
    embedded = [blob for page in pages for blob in embedded_jsonl(files[page])]
    assert len(embedded) == 8
    for secret in small.secrets:
        assert secret.encode() not in received
        assert not any(secret.encode() in data for data in embedded)
    assert len(fake_hub.commits) == 1
    again = publish(fake_hub, small, "--html")
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    assert {fake_oid(d) for d in fake_hub.files(REPO_ID).values()} == {
        fake_oid(d) for d in files.values()
    }


def test_the_kept_site_and_copies_are_readable_by_the_user_only(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """The publish caches hold a private dataset's sessions and pages: they were made 0755
    (the umask's), so any user of the machine could read them. Made 0700 now, and a cache
    an older version left open is closed on the next run."""
    ours = tmp_path / "cache" / "pi-session-export"
    (ours / "publish-html").mkdir(parents=True, mode=0o755)
    os.chmod(ours, 0o755)  # as an older version left them
    os.chmod(ours / "publish-html", 0o755)
    assert publish(fake_hub, small, "--html").exit_code == 0
    kept = [ours, *ours.glob("publish-*"), *ours.glob("publish-*/*")]
    assert {p.name for p in ours.iterdir()} >= {"publish-html", "publish-copies"}
    assert len(kept) == 5 and all(p.is_dir() for p in kept), kept
    assert {oct(p.stat().st_mode & 0o777) for p in kept} == {"0o700"}
    pages = list(ours.glob("publish-html/*/sessions/**/*.html"))
    assert len(pages) == 8  # what the folders keep from others


def test_generated_sessions_publish_and_rerun(
    fake_hub: FakeHub, generated_sessions: GeneratedSessions
) -> None:
    """Sessions written by Pi's own SessionManager (the suite's shared generated set)."""
    count = len(generated_sessions.files)
    corpus = Corpus(generated_sessions.folder, generated_sessions.files, [])
    result = publish(fake_hub, corpus)
    assert result.exit_code == 0, f"{result.output} {generated_sessions.describe()}"
    assert f"{count} added" in result.stdout
    assert_consistent(fake_hub)
    rows = index_rows(fake_hub)
    assert len(rows) == count and all(r["messages"] > 0 and r["entries"] > 0 for r in rows)
    again = publish(fake_hub, corpus)
    assert "no commit" in again.stdout and len(fake_hub.commits) == 1


def test_a_dataset_with_a_site_keeps_it_in_step(fake_hub: FakeHub, small: Corpus) -> None:
    """html/ was only touched with --html: a later run that redacted more (or pruned) left
    the old pages up; and a run with only some sessions' files (--since, one project, SESSION
    arguments, files deleted here) cut html/ down to those. The site is now every session of
    the dataset, the others from their published copies, rebuilt by every run."""
    assert publish(fake_hub, small, "--html").exit_code == 0

    def pages() -> dict[str, bytes]:
        return {p: d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("html/")}

    session_pages = {p for p in pages() if p.startswith("html/sessions/")}
    assert len(session_pages) == 8
    scrub = "question 5"  # the user message appended to session 5, in its page
    assert any(scrub.encode() in d for d in pages().values())
    again = publish(fake_hub, small, "--secret", scrub)
    assert again.exit_code == 0 and "rebuilding it too" in again.output, again.output
    assert not any(scrub.encode() in d for d in pages().values())
    # a new policy key: every session is redacted again under it, not only the site; the
    # one whose text changed is uploaded, the others' copies are the same bytes
    assert "0 added, 1 updated, 0 removed, 7 unchanged" in again.stdout, again.stdout
    sessions = [d for p, d in fake_hub.files(REPO_ID).items() if p.startswith("sessions/")]
    assert len(sessions) == 8 and not any(scrub.encode() in d for d in sessions)
    base = ["--endpoint", fake_hub.url, "--token", TOKEN, "--sessions-dir", str(small.root)]
    # (each run gives the values earlier runs removed from its sessions: without them it is
    # refused, as the last shows)
    scrubs = ["--secret", "question 5", "--secret", "question 6"]
    runs = [
        ([str(small.files[6]), "--secret", "question 6"], b"question 6"),  # one SESSION
        (["--cwd", PROJECTS[0], "--secret", "question 3", *scrubs], b"question 3"),  # a project
        (["--all", "--since", "2027-06-01", "--html", "--secret", "question 3", *scrubs], None),
    ]
    for extra, scrubbed in runs:
        result = CliRunner().invoke(cli, ["publish", REPO_ID, *extra, *base])
        assert result.exit_code == 0, result.output
        assert {p for p in pages() if p.startswith("html/sessions/")} == session_pages, extra
        assert scrubbed is None or not any(scrubbed in d for d in pages().values()), extra
        index = pages()["html/index.html"].decode()
        assert index.count('<td class="title">') == 8, extra  # every session, not this run's
    refused = CliRunner().invoke(cli, ["publish", REPO_ID, "--all", *base])
    assert refused.exit_code == 1 and "3 sessions would be published again" in refused.stderr
    small.files[1].unlink()  # deleted here: its published copy keeps its page
    assert publish(fake_hub, small, "--allow-weaker-policy").exit_code == 0
    assert {p for p in pages() if p.startswith("html/sessions/")} == session_pages
    pruned = publish(fake_hub, small, "--prune")
    assert pruned.exit_code == 0 and "1 removed" in pruned.stdout, pruned.output
    assert len({p for p in pages() if p.startswith("html/sessions/")}) == 7


def test_a_hub_that_never_answers_times_out() -> None:
    """huggingface_hub sends every request with no timeout: a server that accepted the
    connection and never answered hung `publish` for good (still silent after 150 s)."""
    import threading
    import time

    import huggingface_hub

    from exporter.publish.errors import PublishError
    from exporter.publish.hub import HubRepo

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    try:
        repo = HubRepo(REPO_ID, endpoint=url, token=TOKEN, timeout=1.0)
        for _ in range(2):  # the second time on the client made after close_session()
            started = time.monotonic()
            with time_limit(30), pytest.raises(PublishError, match=r"\(no answer in time\)"):
                repo.read_state()  # a hang fails the test (TimeoutError) instead
            assert time.monotonic() - started < 30
            # huggingface_hub replaces its shared client after a connection error
            huggingface_hub.close_session()
    finally:
        server.close()
        for connection in held:
            connection.close()


BEGIN, END = "<!-- pi-session:begin -->", "<!-- pi-session:end -->"


def _put_card(fake: FakeHub, card: bytes | None, message: str = "edit") -> None:
    """Edit (or, with None, delete) README.md on the Hub, as its owner would."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    op = (
        CommitOperationDelete("README.md")
        if card is None
        else CommitOperationAdd("README.md", card)
    )
    HfApi(endpoint=fake.url, token=TOKEN).create_commit(
        REPO_ID, [op], commit_message=message, repo_type="dataset"
    )


def _touch(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_an_edited_card_keeps_its_owners_text_and_its_block_is_refreshed(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """The card was frozen once its owner edited it on the Hub: its counts and redaction
    section went stale for good. Now the generated part lives between marker lines that
    every run refreshes; the owner's text around it and their YAML keys stay, and our
    ``configs`` are put right."""
    assert publish(fake_hub, small).exit_code == 0
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert card.count(BEGIN) == card.count(END) == 1 and card.index(BEGIN) < card.index(END)
    assert "| sessions | 8 |" in card[card.index(BEGIN) : card.index(END)]
    assert "## License" in card[card.index(END) :]  # the owner's to edit
    edited = (
        card.replace("license: other\n", "license: cc-by-4.0\nlanguage:\n- en\n")
        .replace("# sessions (Pi coding agent)\n", "# Alice's traces\n\nMy own words.\n")
        .replace("Not chosen yet", "CC BY 4.0. Not chosen yet")
    )
    _put_card(fake_hub, edited.encode("utf-8"))
    commits = len(fake_hub.commits)
    again = publish(fake_hub, small)
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    assert "README.md" not in again.stderr  # nothing to say: the card is kept current
    assert len(fake_hub.commits) == commits
    small.files[-1].unlink()
    _touch(small.files[1], "question 1", "question one")
    changed = publish(fake_hub, small, "--prune")
    assert changed.exit_code == 0 and "1 updated" in changed.stdout, changed.output
    assert "README.md" not in changed.stderr
    now = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    block = now[now.index(BEGIN) : now.index(END)]
    assert "| sessions | 7 |" in block and "| sessions | 8 |" not in now  # refreshed
    assert now[: now.index(BEGIN)] == edited[: edited.index(BEGIN)]  # YAML, title, words
    assert now[now.index(END) :] == edited[edited.index(END) :]  # the license section
    # the owner drops our `sessions` config and adds one of theirs: ours is put back, theirs
    # and their other keys stay, and text inside the block is the generated one again
    mine = {"config_name": "mine", "data_files": [{"split": "train", "path": "index.jsonl"}]}
    front = yaml.safe_load(now.split("---\n")[1])
    front["configs"] = [front["configs"][0], mine]
    body = now.split("---\n", 2)[2].replace("| sessions | 7 |", "| sessions | many |")
    _put_card(fake_hub, f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}".encode())
    fixed = publish(fake_hub, small)
    assert fixed.exit_code == 0, fixed.output
    final = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    meta = yaml.safe_load(final.split("---\n")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["default", "sessions", "mine"]
    assert meta["configs"][1]["data_files"] == [{"split": "train", "path": "sessions/*/*.jsonl"}]
    assert meta["license"] == "cc-by-4.0" and meta["language"] == ["en"]
    assert "| sessions | 7 |" in final and "many" not in final and "My own words." in final
    from huggingface_hub import DatasetCard

    assert DatasetCard(final).data.configs == meta["configs"]
    assert_consistent(fake_hub)


def test_an_edited_card_without_the_block_is_kept_and_said_once(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A card without the marker lines (an older version's) that its owner edited stays as
    it is: said once, with how to opt back in; with the markers added the next run fills
    them in and keeps the rest; deleted, a new card is written."""
    assert publish(fake_hub, small).exit_code == 0
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    old = "\n".join(line for line in card.split("\n") if "pi-session:" not in line)
    old = old.replace("license: other", "license: cc-by-4.0")  # an older card, edited
    _put_card(fake_hub, old.encode("utf-8"))
    commits = len(fake_hub.commits)
    again = publish(fake_hub, small)
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    (said,) = [line for line in again.stderr.splitlines() if "README.md" in line]
    assert "README.md was edited on the Hub: kept as it is" in said
    assert f"put a line {BEGIN} and a line {END} in it" in said
    assert "delete README.md for a new card" in said and "not brought up to date" not in said
    _touch(small.files[1], "question 1", "question one")
    changed = publish(fake_hub, small)
    assert changed.exit_code == 0 and "1 updated" in changed.stdout, changed.output
    assert "README.md" not in changed.stderr  # said once, not on every run
    assert (
        fake_hub.files(REPO_ID)["README.md"] == old.encode()
        and len(fake_hub.commits) == commits + 1
    )
    # opting back in: the owner puts the two lines where the generated part goes
    opted = old.replace("## License", f"{BEGIN}\n{END}\n\n## License")
    _put_card(fake_hub, opted.encode("utf-8"))
    filled = publish(fake_hub, small)
    assert filled.exit_code == 0 and "README.md" not in filled.stderr, filled.output
    now = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert now.startswith(opted[: opted.index(BEGIN)])  # all of the owner's card kept
    assert now.endswith(opted[opted.index(END) :])
    assert "| sessions | 8 |" in now[now.index(BEGIN) : now.index(END)]
    _put_card(fake_hub, None)
    assert publish(fake_hub, small).exit_code == 0
    assert b"license: other" in fake_hub.files(REPO_ID)["README.md"]  # generated again


def test_a_card_whose_block_is_broken_is_kept_and_said(fake_hub: FakeHub, small: Corpus) -> None:
    """Markers out of order (or YAML that does not parse, which the Hub itself refuses to
    take): the card is kept as it is (not overwritten, not a traceback), and why is said."""
    from exporter.publish.dataset_card import card_problem

    assert publish(fake_hub, small).exit_code == 0
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    broken = card.replace(END, "(gone)") + f"\n{END}\n{END}\n"
    _put_card(fake_hub, broken.encode("utf-8"))
    _touch(small.files[2], "question 2", "question two")
    result = publish(fake_hub, small)
    assert result.exit_code == 0 and "1 updated" in result.stdout, result.output
    assert "Traceback" not in result.output
    assert "README.md: its pi-session block cannot be brought up to date" in result.stderr
    assert "lines are not one of each, in that order" in result.stderr
    assert fake_hub.files(REPO_ID)["README.md"] == broken.encode("utf-8")
    unparsed = card.replace("license: other", "license: [other")
    assert "its YAML front matter does not parse" in (card_problem(unparsed) or "")
    assert card_problem(card) is None


def test_hand_edited_index_and_manifest_values_are_warned_about_not_a_traceback(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A count written as text, a time as a number or counts as a list in the dataset's
    index.jsonl or manifest.json (a hand edit, another tool) stopped every later publish
    with a traceback when the card was built (refactoring review 2026-12-01)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    assert publish(fake_hub, small).exit_code == 0
    rows = index_rows(fake_hub)
    rows[0].update(messages="many", started_at=5, project=["a", "b"], cost="free")
    rows[1].update(ended_at=7, models="gpt", entries=True)
    manifest = remote_json(fake_hub, "manifest.json")
    first, second = sorted(manifest["sessions"])[:2]
    manifest["sessions"][first]["redactions"] = {"url-credentials": "many", "email": 2}
    manifest["sessions"][second]["redactions"] = ["email"]
    edits = [
        CommitOperationAdd("index.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode()),
        CommitOperationAdd("manifest.json", json.dumps(manifest).encode()),
    ]
    HfApi(endpoint=fake_hub.url, token=TOKEN).create_commit(
        REPO_ID, edits, commit_message="by hand", repo_type="dataset"
    )
    small.files[3].write_text(
        small.files[3].read_text(encoding="utf-8").replace("question 3", "question three"),
        encoding="utf-8",
    )
    again = publish(fake_hub, small)
    assert again.exit_code == 0, again.output
    assert "Traceback" not in again.output
    assert "remote index.jsonl: 2 rows with fields of the wrong type" in again.output
    assert "remote manifest.json: 2 entries with replacement counts" in again.output
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert "| sessions | 8 |" in card
    for row in index_rows(fake_hub):  # the index is typed again
        assert isinstance(row["messages"], int) and isinstance(row["project"], str)
        assert row["started_at"] is None or isinstance(row["started_at"], str)


def test_a_file_named_like_another_sessions_file_does_not_replace_it(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """Repo paths come from file names: publishing project B's file after project A's file
    of the same name replaced A's session, reported as "1 updated"."""
    a, b = small.files[0], small.files[1]
    same = "2026-11-01T10-00-00-000Z_same.jsonl"
    a, b = a.rename(a.with_name(same)), b.rename(b.with_name(same))
    lines = b.read_text(encoding="utf-8").split("\n")
    header = json.loads(lines[0])
    header["timestamp"] = json.loads(a.read_text(encoding="utf-8").split("\n", 1)[0])["timestamp"]
    b.write_text("\n".join([json.dumps(header), *lines[1:]]), encoding="utf-8")  # same month
    assert a.parent != b.parent
    args = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"]
    for path in (a, b, a, b):
        result = CliRunner().invoke(cli, ["publish", REPO_ID, str(path), *args])
        assert result.exit_code == 0, result.output
    assert "0 added, 0 updated" in result.stdout  # the last runs changed nothing
    rows = index_rows(fake_hub)
    assert sorted(r["path"].rsplit("/", 1)[-1] for r in rows) == [
        "2026-11-01T10-00-00-000Z_same-2.jsonl",
        "2026-11-01T10-00-00-000Z_same.jsonl",
    ]
    ids = {json.loads(path.read_text(encoding="utf-8").split("\n", 1)[0])["id"] for path in (a, b)}
    assert {r["id"] for r in rows} == ids and len(ids) == 2


def test_hub_retries_are_one_line_each(fake_hub: FakeHub, small: Corpus) -> None:
    """huggingface_hub printed "HTTP Error 503 thrown while requesting POST <url>" and
    "Retrying in 1s [Retry 1/5]" for every retry, around our one-line messages."""
    fake_hub.fail(503, path="/preupload/", times=1)
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "pi-session: the Hub is busy or failed; retrying in 1 s (1/5)" in result.stderr
    assert "thrown while requesting" not in result.stderr and "[Retry" not in result.stderr
    assert all(line.startswith("pi-session") for line in result.stderr.splitlines()), result.stderr


def test_a_file_with_a_blank_first_line_does_not_replace_another_session(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A file whose line 1 is no header had no known id and skipped the path check: with the
    name of another project's published file it replaced that session ("1 updated")."""
    a, b = small.files[0], small.files[1]
    same = "2026-01-01T10-00-00-000Z_same.jsonl"
    a, b = a.rename(a.with_name(same)), b.rename(b.with_name(same))
    b.write_text("\n" + b.read_text(encoding="utf-8"), encoding="utf-8")  # blank line 1
    stamp = datetime(2026, 1, 15, tzinfo=timezone.utc).timestamp()
    os.utime(b, (stamp, stamp))  # b's month then comes from its mtime: a's month
    args = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"]
    for path in (a, b, b):
        result = CliRunner().invoke(cli, ["publish", REPO_ID, str(path), *args])
        assert result.exit_code == 0, result.output
    rows = index_rows(fake_hub)
    assert len(rows) == 2 and len({r["id"] for r in rows}) == 2, rows
    assert "0 added, 0 updated" in result.stdout  # the third run found b where it put it


def test_a_renamed_file_keeps_its_place(fake_hub: FakeHub, small: Corpus) -> None:
    """Renaming a session file published it a second time (the index then counted it twice)."""
    assert publish(fake_hub, small).exit_code == 0
    moved = small.files[3].rename(small.files[3].with_name("renamed.jsonl"))
    again = publish(fake_hub, small)
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    rows = index_rows(fake_hub)
    assert len(rows) == 8 and len({r["id"] for r in rows}) == 8
    assert moved.exists()


@pytest.mark.parametrize("shape", ["header-without-id", "blank-first-line"])
def test_a_session_without_a_header_id_keeps_one_path(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, shape: str
) -> None:
    """The path check compared the header's id with the manifest's (the loader's, from the
    file name when the header has none): every run added the session again at -2, -3..."""
    folder = tmp_path / "sessions" / "--home-dev-projects-webapp--"
    folder.mkdir(parents=True)
    lines = (fixtures_dir / "pi-branched-1.jsonl").read_text(encoding="utf-8").split("\n")
    if shape == "header-without-id":
        header = json.loads(lines[0])
        del header["id"]
        lines[0] = json.dumps(header)
    else:
        lines.insert(0, "")
    (folder / "2026-11-30T00-00-00-000Z_odd.jsonl").write_text("\n".join(lines), encoding="utf-8")
    corpus = Corpus(tmp_path / "sessions", [], [])
    for _ in range(3):
        result = publish(fake_hub, corpus)
        assert result.exit_code == 0, result.output
        assert len(session_paths(fake_hub)) == 1, sorted(session_paths(fake_hub))
    assert "0 added" in result.stdout and "no commit" in result.stdout


def test_the_site_survives_a_failed_copy_and_an_unreadable_manifest(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """Copies of the other sessions were recorded only when all had arrived (one failed
    download lost the rest and failed the publish); and the list of other sessions came from
    the manifest, so an unreadable one made a one-session run cut html/ to one page."""
    from huggingface_hub import CommitOperationAdd, HfApi

    assert publish(fake_hub, small, "--html").exit_code == 0

    def session_pages() -> set[str]:
        return {p for p in fake_hub.files(REPO_ID) if p.startswith("html/sessions/")}

    assert len(session_pages()) == 8
    (index,) = (tmp_path / "cache").rglob("copies.json")  # the uploads, kept as copies
    assert len(json.loads(index.read_text(encoding="utf-8"))) == 8
    index.unlink()  # as on another machine, whose cache holds none

    def copies_asked() -> set[str]:
        return {r.split("/resolve/", 1)[1].split("/", 1)[1]
                for r in fake_hub.routes(None, r"/resolve/.*sessions/")}  # fmt: skip

    one = [str(small.files[6]), "--endpoint", fake_hub.url, "--token", TOKEN]
    fake_hub.fail(403, path=r"/resolve/.*sessions/.*\.jsonl", times=1)  # one copy fails
    fake_hub.clear_requests()
    first = CliRunner().invoke(cli, ["publish", REPO_ID, *one, "--secret", "question 6"])
    assert first.exit_code == 0, first.output
    assert "html/ was not rebuilt: 1 published session(s) could not be downloaded" in first.output
    assert len(copies_asked()) == 7  # every other session's copy was asked for
    fake_hub.clear_requests()
    again = CliRunner().invoke(cli, ["publish", REPO_ID, *one, "--secret", "question 6"])
    assert again.exit_code == 0 and "rebuilding it too" in again.output, again.output
    assert len(copies_asked()) == 1  # only the one that failed: the others were kept
    assert len(session_pages()) == 8
    garbage = [CommitOperationAdd("manifest.json", b"not json")]
    HfApi(endpoint=fake_hub.url, token=TOKEN).create_commit(
        REPO_ID, garbage, commit_message="break", repo_type="dataset"
    )
    # (with the --secret it was published with: the copy there stays as it is; without
    # it the run is refused, the manifest no longer telling how the copy was redacted)
    broken = CliRunner().invoke(cli, ["publish", REPO_ID, *one, "--secret", "question 6"])
    assert broken.exit_code == 0, broken.output
    assert len(session_pages()) == 8  # the other sessions come from the tree, not the manifest


def test_kept_copies_are_checked_pruned_and_shared_with_dry_runs(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """The other sessions' published copies are kept between runs. A copy edited by hand
    went into the site as it was; copies of sessions deleted from the dataset were kept
    forever; and a dry run downloaded every copy again into a scratch folder."""
    from huggingface_hub import CommitOperationDelete, HfApi

    assert publish(fake_hub, small, "--html").exit_code == 0
    one = [str(small.files[6]), "--endpoint", fake_hub.url, "--token", TOKEN]

    def copies_asked() -> set[str]:
        return {r.split("/resolve/", 1)[1].split("/", 1)[1]
                for r in fake_hub.routes(None, r"/resolve/.*sessions/")}  # fmt: skip

    def run(*extra: str) -> Result:
        fake_hub.clear_requests()
        result = CliRunner().invoke(cli, ["publish", REPO_ID, *one, *extra])
        assert result.exit_code == 0, result.output
        return result

    run()
    assert copies_asked() == set()  # the first run kept what it uploaded
    (index,) = (tmp_path / "cache").rglob("copies.json")
    kept = json.loads(index.read_text(encoding="utf-8"))
    edited = index.parent / sorted(kept)[0]
    edited.write_bytes(edited.read_bytes().replace(b"question", b"QUESTION"))
    run()
    assert copies_asked() == {sorted(kept)[0]}  # the edited copy was fetched again
    assert b"QUESTION" not in edited.read_bytes()
    run("--dry-run")
    assert copies_asked() == set()  # a dry run uses the kept copies
    deleted = sorted(kept)[1]
    HfApi(endpoint=fake_hub.url, token=TOKEN).create_commit(
        REPO_ID, [CommitOperationDelete(deleted)], commit_message="rm", repo_type="dataset"
    )
    run()
    assert deleted not in json.loads(index.read_text(encoding="utf-8"))
    assert not (index.parent / deleted).exists()


def test_a_copy_path_that_leaves_the_cache_is_never_written(tmp_path: Path) -> None:
    from exporter.publish.hub_site import remote_copies
    from exporter.publish.hub_state import RemoteFile, RemoteState

    remote = RemoteState(files={"sessions/../../escape.jsonl": RemoteFile(3, "x"),
                                "sessions/2025-01/ok.jsonl": RemoteFile(3, "y")})  # fmt: skip
    folder = tmp_path / "cache" / "copies"
    copies, missing = remote_copies(sorted(remote.files), remote, folder, lambda p: b"{}\n")
    assert missing == ["sessions/../../escape.jsonl"]
    assert copies == [folder / "sessions/2025-01/ok.jsonl"]
    assert not (tmp_path / "escape.jsonl").exists()


def test_a_dry_run_copies_the_kept_site_or_starts_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dry run copies the kept site; another run writing there makes temp files come and
    go under the copy, which raised a traceback. Temp files are skipped, and a copy that
    fails starts from an empty site instead."""
    import shutil

    from exporter.publish import hub

    kept = tmp_path / "kept"
    (kept / "sessions").mkdir(parents=True)
    (kept / "index.html").write_text("index", encoding="utf-8")
    (kept / "sessions" / ".p.html.x1.tmp").write_text("half", encoding="utf-8")
    copy = hub._scratch_copy(kept, tmp_path / "a")
    assert (copy / "index.html").is_file() and not (copy / "sessions" / ".p.html.x1.tmp").exists()

    def vanishing(src: object, dst: Path, **_: object) -> None:
        Path(dst).mkdir()
        (Path(dst) / "index.html").write_text("half a copy", encoding="utf-8")
        raise shutil.Error([(str(src), str(dst), "[Errno 2] No such file or directory")])

    monkeypatch.setattr(hub.shutil, "copytree", vanishing)
    empty = hub._scratch_copy(kept, tmp_path / "b")
    assert not empty.exists()  # build_site starts a new site there


def test_a_lone_surrogate_in_a_name_does_not_stop_the_batch(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """Pi writes a lone surrogate as a valid JSON escape; one such session name once stopped
    the whole batch after the repo was made (the index and card could not be encoded)."""
    source = small.files[1]
    last = json.loads(source.read_bytes().splitlines()[-1])["id"]
    named = {"type": "session_info", "id": "named01", "parentId": last,
             "timestamp": "2027-03-01T00:00:00.000Z", "name": "caf\ud800 notes"}  # fmt: skip
    source.write_bytes(source.read_bytes() + json.dumps(named).encode() + b"\n")
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "8 added" in result.stdout
    names = {row["name"] for row in index_rows(fake_hub)}
    assert "caf\ufffd notes" in names
    uploaded = [fake_hub.files(REPO_ID)[p] for p in session_paths(fake_hub)]
    # the session file's copy says U+FFFD too: an escaped lone surrogate is valid JSON, but
    # `datasets` (Arrow) refused the whole sessions config over it (stop 58); the local
    # file keeps what Pi wrote
    assert any(b'"caf\\ufffd notes"' in data for data in uploaded)
    assert not any(b"\\ud800" in data for data in uploaded)
    assert b"caf\\ud800 notes" in source.read_bytes()
    assert "1 half character (a lone surrogate" in result.stderr
    assert_consistent(fake_hub)


def test_a_named_session_that_fails_fails_the_run(fake_hub: FakeHub, small: Corpus) -> None:
    """`publish REPO garbage.jsonl` said "1 failed" and exited 0; with --all a broken file
    in a big folder is a warning, but a session named on the command line was wanted."""
    broken = small.root / "garbage.jsonl"
    broken.write_bytes(b"\x00\x01 not a session\n")
    args = ["publish", REPO_ID, str(small.files[0]), str(broken)]
    result = CliRunner().invoke(cli, [*args, "--endpoint", fake_hub.url, "--token", TOKEN])
    assert result.exit_code == 2, result.output
    assert f"{REPO_ID}: 2 selected, 1 in the dataset; 1 added" in result.stdout
    assert "skipped garbage.jsonl" in result.stderr
    assert "1 of the 2 sessions you named could not be published" in result.stderr
    assert len(session_paths(fake_hub)) == 1


def test_a_pipe_is_refused_and_a_dry_run_fails_a_named_session(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """`publish -` hashed stdin, then read it again (empty) to redact it, and still made a
    commit; a named FIFO hung. And a dry run said 0 for a named session it could not read."""
    pipe = tmp_path / "s.fifo"
    os.mkfifo(pipe)
    args = ["--endpoint", fake_hub.url, "--token", TOKEN]
    refused = CliRunner().invoke(cli, ["publish", REPO_ID, str(pipe), *args])
    assert refused.exit_code == 1 and "not a pipe" in refused.stderr
    assert fake_hub.commits == []
    # `-` with stdin from a file read it as a file, and it went up as "stdin.jsonl"
    with open(small.files[0], "rb") as stdin:
        dash = subprocess.run(
            [sys.executable, "-m", "exporter", "publish", REPO_ID, "-", *args],
            stdin=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
        )
    assert dash.returncode == 1, dash.stderr
    assert "publish needs session files, not - (stdin): name the file" in dash.stderr
    assert fake_hub.commits == [] and "Traceback" not in dash.stderr
    # gzip: its header is read uncompressed, as the loader reads it (it went up again on
    # every run, -2, -3, ..., when read as written); tests/test_cli_consistency.py publishes
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(fixture_path("pi-branched-1.jsonl").read_bytes()))
    planned = CliRunner().invoke(cli, ["publish", REPO_ID, str(packed), *args, "--dry-run"])
    assert planned.exit_code == 0, planned.output
    assert "sessions/2026-11/s.jsonl" in planned.stdout and "1 added" in planned.stdout
    assert fake_hub.commits == []
    # UTF-16: read as the loader reads it, filed by its header (tests/test_cli_consistency.py
    # publishes it and compares the upload with the UTF-8 file's)
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(fixture_path("pi-branched-1.jsonl").read_text("utf-8").encode("utf-16"))
    planned = CliRunner().invoke(cli, ["publish", REPO_ID, str(wide), *args, "--dry-run"])
    assert planned.exit_code == 0, planned.output
    assert "sessions/2026-11/wide.jsonl" in planned.stdout and "1 added" in planned.stdout
    assert fake_hub.commits == []
    broken = small.root / "broken.jsonl"
    broken.write_bytes(b"not json\n")
    dry = CliRunner().invoke(cli, ["publish", REPO_ID, str(broken), *args, "--dry-run"])
    assert dry.exit_code == 2, dry.output
    assert "the session selected could not be read; nothing would be sent" in dry.stderr


def test_a_run_that_removes_less_is_refused_and_the_card_tells_the_mix(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """Week 1 published --no-tool-output --no-thinking; week 2 the same command without them
    re-uploaded every session with its tool output and thinking, and the card said nothing
    was removed (review 2026-12-01)."""
    first = publish(fake_hub, small, "--no-tool-output", "--no-thinking")
    assert first.exit_code == 0, first.output
    manifest = remote_json(fake_hub, "manifest.json")["sessions"]
    assert {tuple(e["cuts"]) for e in manifest.values()} == {("no_thinking", "no_tool_output")}
    card = fake_hub.files(REPO_ID)["README.md"].decode()
    assert "- Also: tool results are replaced by a note." in card
    commits = len(fake_hub.commits)
    for extra in ((), ("--dry-run",), ("--no-thinking",)):
        refused = CliRunner().invoke(
            cli,
            ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "--endpoint",
             fake_hub.url, "--token", TOKEN, *extra],
        )  # fmt: skip
        assert refused.exit_code == 1, refused.output
        assert f"{len(small.files)} with --no-tool-output" in refused.stderr
        assert ("--no-thinking" in refused.stderr) == ("--no-thinking" not in extra)
        assert "--allow-weaker-policy" in refused.stderr
    assert len(fake_hub.commits) == commits  # nothing sent
    # more removed is always fine; then one project again with less, when asked for
    assert (
        publish(fake_hub, small, "--no-tool-output", "--no-thinking", "--no-images").exit_code == 0
    )
    project = small.files[0].parent
    args = ["publish", REPO_ID, "--sessions-dir", str(small.root), "--endpoint", fake_hub.url,
            "--token", TOKEN, "--cwd", PROJECTS[0], "--allow-weaker-policy"]  # fmt: skip
    allowed = CliRunner().invoke(cli, args)
    assert allowed.exit_code == 0, allowed.output
    mine = len(list(project.glob("*.jsonl")))
    card = fake_hub.files(REPO_ID)["README.md"].decode()
    others = len(small.files) - mine
    assert f"- Also, in {others:,} of the {len(small.files):,} sessions: tool results" in card
    assert f"in {others:,} of the {len(small.files):,} sessions: images are replaced" in card
    assert_consistent(fake_hub)


def test_a_run_without_the_given_secrets_is_refused(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Week 1 published with --secret and a sensitive variable in the shell; week 2's cron
    job, without either, re-published both values in clear with no word (review 2026-12-01:
    no detector knows them, so only the values given to a run remove them)."""
    password, codename = "Xk29fLq7Wm3nRt8Z", "internal-codename-BLUEFALCON"
    target = small.files[1]
    text = target.read_text(encoding="utf-8").replace("question 1", f"{password} {codename}")
    target.write_text(text, encoding="utf-8")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", password)
    first = publish(fake_hub, small, "--secret", codename)
    assert first.exit_code == 0, first.output
    assert "env-secret 1" in first.stderr and "literal-secret 1" in first.stderr
    commits = len(fake_hub.commits)
    held = fake_hub.files(REPO_ID)
    assert not any(password.encode() in v or codename.encode() in v for v in held.values())

    monkeypatch.delenv("MY_SERVICE_PASSWORD")
    for extra in ((), ("--dry-run",), ("--secret", codename)):
        refused = publish(fake_hub, small, *extra)
        assert refused.exit_code == 1, refused.output
        lost = "1 secret" if extra[-1:] == (codename,) else "2 secrets"
        assert f"1 session would be published again without replacing {lost} an earlier run " \
            "was given (first: sessions/" in refused.stderr  # fmt: skip
        assert "--allow-weaker-policy" in refused.stderr
        assert "(a token replaced since: the old one with --secret)" in refused.stderr
        assert password not in refused.output and codename not in refused.output
    assert len(fake_hub.commits) == commits  # nothing sent

    # the same values given another way remove as much: not refused
    moved = publish(fake_hub, small, "--secret", codename, "--secret", password)
    assert moved.exit_code == 0, moved.output
    held = fake_hub.files(REPO_ID)
    assert not any(password.encode() in v or codename.encode() in v for v in held.values())
    # asked for, it goes up as the run redacts it
    allowed = publish(fake_hub, small, "--allow-weaker-policy")
    assert allowed.exit_code == 0, allowed.output
    held = fake_hub.files(REPO_ID)
    assert any(password.encode() in v for v in held.values())
    assert_consistent(fake_hub)


def test_given_secrets_are_known_by_value_not_by_count(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By count, a session that grew hid a lost secret (a password gone from the shell, one
    more mention of a --secret: 2 = 2, published in clear), and a run that cut the value away
    with its tool output was refused though it was given everything (delta review
    2026-12-01). The manifest now keeps marks of the values each copy replaced."""
    password, codename = "Xk29fLq7Wm3nRt8Z", "internal-codename-BLUEFALCON"
    target = small.files[1]
    records = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    result = next(r for r in records if r.get("message", {}).get("role") == "toolResult")
    result["message"]["content"][0]["text"] += f"\nconnected with {password}\n"
    records[-1]["message"]["content"] = f"the {codename} plan, log in with {password}"
    target.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", password)
    assert publish(fake_hub, small, "--secret", codename).exit_code == 0
    (entry,) = [e for e in remote_json(fake_hub, "manifest.json")["sessions"].values()
                if e.get("given")]  # fmt: skip
    assert len(entry["given"]) == 2 and entry["redactions"]["env-secret"] == 2
    # cut away with the tool output, everything given: not a loss
    cut = publish(fake_hub, small, "--secret", codename, "--no-tool-output")
    assert cut.exit_code == 0, cut.output
    # the session grows by one more mention of the codename; the password is not given
    grown = target.read_text("utf-8") + json.dumps({**records[-1], "id": "more",
        "parentId": records[-1]["id"], "message": {"role": "user", "content": codename,
        "timestamp": 1900000000000}}) + "\n"  # fmt: skip
    target.write_text(grown, encoding="utf-8")
    monkeypatch.delenv("MY_SERVICE_PASSWORD")
    refused = publish(fake_hub, small, "--secret", codename, "--no-tool-output")
    assert refused.exit_code == 1, refused.output
    assert "without replacing 1 secret an earlier run was given" in refused.stderr
    # another machine's key (a CI runner, a new laptop) cannot read the marks: the counts
    # judge, and the same values given pass (re-review 2026-12-01: every session refused)
    monkeypatch.setenv("PI_SESSION_PUBLISH_KEY", "k" * 12 + "Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0Ja")
    monkeypatch.setenv("MY_SERVICE_PASSWORD", password)
    other_key = publish(fake_hub, small, "--secret", codename, "--no-tool-output")
    assert other_key.exit_code == 0, other_key.output


def test_a_new_token_in_hf_token_re_redacts_nothing(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `--token` a rotated token changed nothing; in HF_TOKEN its value counted as one
    of the shell's secrets, so every run after a rotation re-redacted every session and made
    a manifest-only commit (review 2026-12-01)."""
    rotated = "hf_" + "Rt7Zq8Xw2Lm5Nc7Vb1Tr4Yp9Ks3Hd6Gf0J"
    fake_hub.accounts[rotated] = Account("alice", "write", ("team",))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert publish(fake_hub, small, token=None).exit_code == 0
    commits = len(fake_hub.commits)
    monkeypatch.setenv("HF_TOKEN", rotated)
    again = publish(fake_hub, small, token=None)
    assert again.exit_code == 0, again.output
    assert "nothing new to redact" in again.stderr and "no commit" in again.stdout
    assert len(fake_hub.commits) == commits


def test_prune_over_one_project_leaves_the_other_projects_alone(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """`--cwd A --prune` (or --prune from a project folder) removed every session of every
    other project from the dataset (review 2026-12-01)."""
    assert publish(fake_hub, small).exit_code == 0
    gone_here, gone_there = small.files[0], small.files[1]  # projects 0 and 1
    published = session_paths(fake_hub)
    gone_here.unlink()
    gone_there.unlink()
    args = ["publish", REPO_ID, "--cwd", PROJECTS[0], "--sessions-dir", str(small.root),
            "--endpoint", fake_hub.url, "--token", TOKEN, "--prune"]  # fmt: skip
    plan = CliRunner().invoke(cli, [*args, "--dry-run"])
    assert plan.exit_code == 0 and "would be 0 added, 0 updated, 1 removed" in plan.stdout
    pruned = CliRunner().invoke(cli, args)
    assert pruned.exit_code == 0 and "1 removed" in pruned.stdout, pruned.output
    left = session_paths(fake_hub)
    (removed,) = published - left
    assert gone_here.name in removed  # project 1's deleted session stays: not selected
    assert any(gone_there.name in path for path in left)
    everywhere = publish(fake_hub, small, "--prune")  # --all: every project's
    assert everywhere.exit_code == 0 and "1 removed" in everywhere.stdout, everywhere.output
    assert not any(gone_there.name in path for path in session_paths(fake_hub))
    assert_consistent(fake_hub)


def test_a_dry_run_without_a_token_does_not_guess_a_private_dataset_is_missing(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """Anonymous, a private dataset reads as missing: the dry run said "would be created"
    and listed every session to add, where a real run would do nothing (review 2026-12-01)."""
    assert publish(fake_hub, small).exit_code == 0
    blind = publish(fake_hub, small, "--dry-run", token=None)
    assert blind.exit_code == 3, blind.output
    assert "is not visible anonymously (missing, or private)" in blind.stderr
    assert "would be created" not in blind.stdout and len(fake_hub.commits) == 1


def test_commit_titles_say_what_each_commit_holds(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit of html/ pages only, or of the manifest only, was titled "0 added, 0
    updated, 0 removed" in the dataset's history (review 2026-12-01)."""
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 6)
    assert publish(fake_hub, small, "--html").exit_code == 0
    titles = [c.summary for c in fake_hub.commits]
    assert titles[0].startswith("pi-session publish: 3 added, 0 updated, 0 removed (1/")
    # a commit of 1-3 sessions names them after its counts (review s45 POLISH)
    named = sorted(p.rsplit("/", 1)[-1].removesuffix(".jsonl")
                   for p in fake_hub.commits[0].added if p.startswith("sessions/"))  # fmt: skip
    assert len(named) == 3 and titles[0].endswith(f"): {', '.join(named)}"), titles[0]
    assert any(re.fullmatch(r"pi-session publish: html/ site \(\d+ files\) \(\d+/\d+\)", t)
               for t in titles), titles  # fmt: skip
    before = len(fake_hub.commits)
    rechecked = publish(fake_hub, small, "--html", "--secret", "a-value-found-nowhere-1234")
    assert rechecked.exit_code == 0, rechecked.output
    assert [c.summary for c in fake_hub.commits[before:]] == [
        "pi-session publish: manifest and card (1/1)"
    ]


def test_a_commit_the_hub_failed_with_a_5xx_is_tried_again(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One 503 on a commit stopped a weekly run (review 2026-12-01). Tried again only when the
    head is still the commit's parent: then the first try did not land."""
    monkeypatch.setattr("exporter.publish.hub_repo.SERVER_ERROR_WAITS", (0, 0))
    fake_hub.fail(503, path="/commit/")
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert "answered HTTP 503; trying again in 0 s" in result.stderr
    assert len(fake_hub.commits) == 1 and len(session_paths(fake_hub)) == 8
    assert_consistent(fake_hub)


@pytest.mark.parametrize(
    ("waits", "prune"), [((0,), False), ((0, 0), True)], ids=["adds-one-wait", "removal-two-waits"]
)
def test_a_commit_that_landed_but_was_answered_5xx_is_not_sent_again(
    fake_hub: FakeHub,
    small: Corpus,
    monkeypatch: pytest.MonkeyPatch,
    waits: tuple[int, ...],
    prune: bool,
) -> None:
    """The 5xx retry tries a commit again only while the head is still its parent. A commit
    the Hub applied and then answered 503 must not be tried again on the moved head (for a
    removal that is a second commit POST, refused with 412 and reported as "changed on the
    Hub ... another publisher?") (test audit M3); since stop 57 the head's tree is read, and
    when it holds what the commit wrote, the run counts it and goes on (it stopped with exit
    3, "0 of 1 commits confirmed", and a cron job saw a failure for a publish that worked)."""
    monkeypatch.setattr("exporter.publish.hub_repo.SERVER_ERROR_WAITS", waits)
    extra: tuple[str, ...] = ()
    left = 8
    if prune:  # one session published, then deleted here: the commit removes it
        assert publish(fake_hub, small).exit_code == 0
        small.files[0].unlink()
        extra, left = ("--prune",), 7
    before = len(fake_hub.commits)
    fake_hub.clear_requests()
    fake_hub.fail(503, path="/commit/", applied=True)
    result = publish(fake_hub, small, *extra)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "error:" not in result.stderr
    assert "answered HTTP 503; trying again in 0 s" in result.stderr
    assert "did not confirm a commit, but the dataset holds it; going on" in result.stderr
    assert "changed on the Hub" not in result.stderr
    # the commit was not tried again: one preupload and one commit POST, no second attempt
    assert len(fake_hub.routes("POST", r"/preupload/")) == 1
    assert len(fake_hub.routes("POST", r"/commit/")) == 1
    assert len(fake_hub.commits) == before + 1 and len(session_paths(fake_hub)) == left
    assert_consistent(fake_hub)
    landed = fake_hub.files(REPO_ID)

    fake_hub.clear_requests()
    again = publish(fake_hub, small, *extra)
    assert again.exit_code == 0, again.output
    assert "no commit" in again.stdout and f"{left} unchanged" in again.stdout
    assert fake_hub.routes("POST") == [] and len(fake_hub.commits) == before + 1
    assert fake_hub.files(REPO_ID) == landed


def test_a_head_is_taken_for_a_commit_only_when_its_tree_holds_what_the_commit_wrote(
    fake_hub: FakeHub, small: Corpus, tmp_path: Path
) -> None:
    """Another publisher's head (a tree without this commit's files, or with other bytes
    at its paths, or still holding a file it removes) is not taken for this commit."""
    from exporter.publish.hub_commits import Commit, Op
    from exporter.publish.hub_repo import HubRepo

    assert publish(fake_hub, small).exit_code == 0
    repo = HubRepo(REPO_ID, endpoint=fake_hub.url, token=TOKEN)
    files = fake_hub.files(REPO_ID)
    path = sorted(session_paths(fake_hub))[0]
    same, other = tmp_path / "same.jsonl", tmp_path / "other.jsonl"
    same.write_bytes(files[path])
    other.write_bytes(files[path] + b"\n")
    head = fake_hub.commits[-1].sha
    ours = Commit([Op("update", path, same.stat().st_size, same)], {})
    assert repo._landed(ours, "an-older-commit") == head
    assert repo._landed(ours, head) is None  # the head did not move: not landed
    assert repo._landed(Commit([Op("update", path, 1, other)], {}), "an-older-commit") is None
    assert repo._landed(Commit([Op("remove", path)], {}), "an-older-commit") is None
    card = {"README.md": files["README.md"] + b"x"}
    assert repo._landed(Commit([], card), "an-older-commit") is None


def test_a_preupload_that_keeps_failing_is_tried_by_one_layer_and_named(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 5xx on every preupload was tried 18 times over 77 s: huggingface_hub's own 5
    retries, inside a loop that sent the whole commit 3 times; and the error said "while
    committing" (review s45 #3). Now huggingface_hub's retries are the only ones for that
    step (23 s of waits, here recorded instead of slept), and the message names it."""
    import types

    import huggingface_hub.utils._http as hf_http

    slept: list[float] = []
    shim = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
    shim.sleep = slept.append
    monkeypatch.setattr(hf_http, "time", shim)
    monkeypatch.setattr("exporter.publish.hub_repo.SERVER_ERROR_WAITS", (0, 0))
    fake_hub.fail(500, path="/preupload/", times=100)
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert "answered HTTP 500 while preparing the upload (preupload)" in errors[0]
    assert "while committing" not in result.stderr and "trying again in" not in result.stderr
    assert len(fake_hub.routes("POST", r"/preupload/")) == 6  # 1 try + huggingface_hub's 5
    assert fake_hub.routes("POST", r"/commit/") == [] and fake_hub.commits == []
    assert sum(slept) <= 30, slept
    assert TOKEN not in result.output


def _record_sleeps(monkeypatch: pytest.MonkeyPatch) -> tuple[list[float], list[float]]:
    """The waits of huggingface_hub's retry loop and of ours, recorded instead of slept."""
    import types

    import huggingface_hub.utils._http as hf_http

    theirs: list[float] = []
    ours: list[float] = []
    for module, into in ((hf_http, theirs), (hub_repo, ours)):
        shim = types.SimpleNamespace(**{n: getattr(time, n) for n in dir(time) if n[0] != "_"})
        shim.sleep = into.append
        monkeypatch.setattr(module, "time", shim)
    return theirs, ours


def test_a_preupload_kept_rate_limited_is_waited_out_by_one_layer_and_named(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 on every preupload was waited out by huggingface_hub's retries (6 tries)
    inside ours (6 more times): 36 preuploads. Ours is the only layer now: 6 tries, each
    wait the one the answer named, and the error names the step."""
    theirs, ours = _record_sleeps(monkeypatch)
    fake_hub.rate_limit(path="/preupload/", reset=0, times=100)
    result = publish(fake_hub, small)
    assert result.exit_code == 3, result.output
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert re.search(
        r"rate limited by 127\.0\.0\.1:\d+ while preparing the upload \(preupload\) "
        r"\(6 tries\): retry after", errors[0]
    ), errors[0]  # fmt: skip
    assert len(fake_hub.routes("POST", r"/preupload/")) == 6
    assert theirs == [] and ours == [1.0] * 5
    assert fake_hub.routes("POST", r"/commit/") == [] and fake_hub.commits == []
    assert TOKEN not in result.output


@pytest.mark.parametrize("when", ["seconds", "date"])
def test_a_preupload_429_waits_as_retry_after_says_once(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """A 429 with ``Retry-After`` (seconds, or an HTTP date, which huggingface_hub does not
    read) is waited out once, for that long, by our layer alone; then the publish goes on."""
    from email.utils import format_datetime

    theirs, ours = _record_sleeps(monkeypatch)
    later = datetime.now(timezone.utc).replace(microsecond=0).timestamp() + 40
    value = "7" if when == "seconds" else format_datetime(
        datetime.fromtimestamp(later, timezone.utc), usegmt=True
    )  # fmt: skip
    fake_hub.fail(429, headers={"Retry-After": value}, path="/preupload/")
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert theirs == [] and len(ours) == 1
    if when == "seconds":
        assert ours == [7.0]
        assert "while preparing the upload (preupload); waiting 7 s" in result.stderr
    else:
        assert 30 <= ours[0] <= 40, ours
    assert len(fake_hub.routes("POST", r"/preupload/")) == 2
    assert len(fake_hub.commits) == 1
    assert_consistent(fake_hub)


def test_jsonl_gz_files_left_out_of_a_folder_run_are_said(fake_hub: FakeHub, small: Corpus) -> None:
    """`publish --all` left a `.jsonl.gz` in the sessions folder out unsaid, while the README
    read as if it were published (review s45 #2). Discovery stays `*.jsonl` (as `list`), a
    gzip beside its own `.jsonl` (the page's download) is a copy, and the others are said,
    with how to publish them: named, filed by header month as `<name>.jsonl`."""
    folder = small.files[0].parent
    copy = small.files[1].with_name(small.files[1].name + ".gz")  # beside its .jsonl
    copy.write_bytes(gzip.compress(small.files[1].read_bytes()))
    lone = folder / "2026-03-01T10-00-00-000Z_packed.jsonl.gz"
    lone.write_bytes(gzip.compress(fixture_path("pi-branched-1.jsonl").read_bytes()))
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if ".jsonl.gz" in line]
    assert said == [
        f"pi-session: warning: 1 .jsonl.gz file in the sessions folder ignored ({lone}): "
        "name it to publish it (`pi-session publish REPO FILE...`) or gunzip it"
    ], result.stderr
    assert "8 selected" in result.stdout and len(session_paths(fake_hub)) == 8
    other = CliRunner().invoke(cli, ["publish", REPO_ID, "--cwd", PROJECTS[1], "--sessions-dir",
                                     str(small.root), "--endpoint", fake_hub.url, "--token",
                                     TOKEN, "-j", "1"])  # fmt: skip
    assert other.exit_code == 0 and ".jsonl.gz" not in other.stderr, other.output  # not its
    named = CliRunner().invoke(cli, ["publish", REPO_ID, str(lone), "--endpoint", fake_hub.url,
                                     "--token", TOKEN, "-j", "1"])  # fmt: skip
    assert named.exit_code == 0, named.output
    assert "sessions/2026-11/2026-03-01T10-00-00-000Z_packed.jsonl" in session_paths(fake_hub)


def test_the_redaction_summary_comes_before_the_upload_and_the_title_does_not_repeat(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """`publish` said `redact: ...` after `commit 1/1: ...`, when it was up already (`share`
    says it first); and a dataset named "sessions" was titled "Pi coding-agent sessions:
    sessions" (review s45 POLISH)."""
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    found = [i for i, line in enumerate(lines) if line.startswith("pi-session: redact: ")]
    sent = [i for i, line in enumerate(lines) if line.startswith("pi-session: commit 1/1:")]
    assert len(found) == 1 and len(sent) == 1 and found[0] < sent[0], result.stderr
    assert "6 secrets in 2 sessions" in lines[found[0]], lines[found[0]]
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert 'pretty_name: "sessions (Pi coding agent)"' in card
    assert "\n# sessions (Pi coding agent)\n" in card and "sessions: sessions" not in card
    again = publish(fake_hub, small)  # nothing to upload: said once, as before
    assert again.exit_code == 0 and again.stderr.count("redact: ") == 1, again.stderr


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("sessions", "sessions (Pi coding agent)"),
        ("pi-sessions-2026", "pi-sessions-2026 (Pi coding agent)"),
        ("Work_Session", "Work_Session (Pi coding agent)"),
        ("work", "Pi coding-agent sessions: work"),
        ("obsessions", "Pi coding-agent sessions: obsessions"),
    ],
)
def test_the_card_title_names_sessions_once(name: str, title: str) -> None:
    from exporter.publish.dataset_card import render_card

    card = render_card(f"alice/{name}", [], {}, RedactionPolicy()).decode("utf-8")
    assert f"pretty_name: {json.dumps(title)}" in card and f"\n# {title}\n" in card


def test_an_endpoint_s_user_part_is_never_printed(fake_hub: FakeHub, small: Corpus) -> None:
    """Every Hub message named the endpoint's netloc, user part and all (delta review)."""
    endpoint = fake_hub.url.replace("http://", "http://u:SECRETX12345@")
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "--endpoint",
            endpoint, "--token", "hf_invalidtoken000000000000000000"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # refused before any request (s64)
    assert "SECRETX12345" not in result.output and "***@127.0.0.1" in result.stderr


def _sessions_at(root: Path, fixtures: Path, cwd: str, count: int, seed: int) -> list[Path]:
    """``count`` copies of a fixture recorded in ``cwd`` (new ids), in a sessions folder."""
    rng = random.Random(seed)
    folder = root / encode_cwd(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(count):
        lines = (fixtures / SMALL[i % len(SMALL)]).read_bytes().splitlines()
        header = json.loads(lines[0])
        header.update(id=str(uuid.UUID(int=rng.getrandbits(128))), cwd=cwd)
        path = folder / f"2026-0{i + 1}-01T10-00-00-000Z_{header['id']}.jsonl"
        path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]) + b"\n")
        made.append(path)
    return made


def test_prune_leaves_a_teammate_s_checkout_at_the_same_path_alone(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alice's ~/src/app and Bob's ~/src/app are one project in the index: Bob's `--cwd
    --prune` would have deleted all of Alice's sessions (delta review 2026-12-01). A scoped
    prune removes only sessions this machine's key published."""
    alice = _sessions_at(tmp_path / "alice", fixtures_dir, "/home/alice/src/app", 3, 1)
    bob = _sessions_at(tmp_path / "bob", fixtures_dir, "/home/bob/src/app", 2, 2)

    def run(who: str, *extra: str) -> Result:
        monkeypatch.setenv("PI_SESSION_PUBLISH_KEY", f"{who}-machine-key-0123456789")
        cwd = f"/home/{who}/src/app"
        args = ["publish", REPO_ID, "--sessions-dir", str(tmp_path / who), "--cwd", cwd,
                "--endpoint", fake_hub.url, "--token", TOKEN, *extra]  # fmt: skip
        return CliRunner().invoke(cli, args)

    assert run("alice").exit_code == 0 and run("bob").exit_code == 0
    assert len(session_paths(fake_hub)) == 5
    plan = run("bob", "--prune", "--dry-run")
    assert plan.exit_code == 0 and "0 removed" in plan.stdout, plan.output
    assert "no file in this selection" not in plan.stderr
    bob[0].unlink()
    noted = run("bob")
    assert "note: 1 published session has no file in this selection" in noted.stderr
    pruned = run("bob", "--prune")
    assert pruned.exit_code == 0 and "1 removed" in pruned.stdout, pruned.output
    left = session_paths(fake_hub)
    assert len(left) == 4 and all(any(a.name in p for p in left) for a in alice)
    bob[1].unlink()  # missing now, but --since selects by date: no count, no hint
    _sessions_at(tmp_path / "bob", fixtures_dir, "/home/bob/src/app", 1, 3)
    later = run("bob", "--since", "2025-01-01")
    assert later.exit_code == 0, later.output
    assert "no file in this selection" not in later.stderr
    assert_consistent(fake_hub)


def _delete_on_the_hub(fake: FakeHub, path: str) -> None:
    """What a user does on the Hub: one commit deleting ``path`` (file or index row)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(endpoint=fake.url, token=TOKEN)
    if path.startswith("sessions/"):
        op: Any = CommitOperationDelete(path)
    else:  # ``row:<path>``: that session's row left out of index.jsonl
        target = path.removeprefix("row:")
        kept = [line for line in fake.files(REPO_ID)["index.jsonl"].splitlines()
                if json.loads(line)["path"] != target]  # fmt: skip
        op = CommitOperationAdd("index.jsonl", b"".join(line + b"\n" for line in kept))
    api.create_commit(REPO_ID, [op], commit_message="by hand", repo_type="dataset")


@pytest.mark.parametrize("lost", ["file", "row"])
def test_a_session_whose_file_or_row_was_deleted_on_the_hub_is_published_again(
    fake_hub: FakeHub, small: Corpus, lost: str
) -> None:
    """The manifest still names a session whose file (or index row) someone deleted on the
    Hub: it is not "unchanged", the re-run of the same selection publishes it again, and
    the manifest never names what is not there (test audit M6, hub_commits' ``keep``)."""
    assert publish(fake_hub, small).exit_code == 0
    target = sorted(session_paths(fake_hub))[3]
    row = next(r for r in index_rows(fake_hub) if r["path"] == target)
    data = fake_hub.files(REPO_ID)[target]
    _delete_on_the_hub(fake_hub, target if lost == "file" else f"row:{target}")
    assert target in remote_json(fake_hub, "manifest.json")["sessions"]  # stale now
    before = len(fake_hub.commits)

    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert len(fake_hub.commits) == before + 1
    commit = fake_hub.commits[-1]
    if lost == "file":  # uploaded again
        assert "1 added, 0 updated, 0 removed, 7 unchanged" in result.stdout
        assert [p for p in commit.added if p.startswith("sessions/")] == [target]
    else:  # the file is as published: only its row and manifest entry are written again
        assert "0 added, 0 updated, 0 removed, 8 unchanged" in result.stdout
        assert "index.jsonl" in commit.added and target not in commit.added
    assert fake_hub.files(REPO_ID)[target] == data
    assert next(r for r in index_rows(fake_hub) if r["path"] == target) == row
    assert len(session_paths(fake_hub)) == 8
    assert_consistent(fake_hub)
    again = publish(fake_hub, small)
    assert again.exit_code == 0 and "no commit" in again.stdout, again.output
    assert len(fake_hub.commits) == before + 1


def test_a_run_of_other_sessions_drops_a_file_deleted_on_the_hub_from_the_manifest(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A run that does not select the session whose file was deleted on the Hub still
    writes a manifest and index without it: a manifest never names a missing file, whatever
    the selection (test audit M6: ``keep = set(remote.manifest)`` kept the stale entry)."""
    assert publish(fake_hub, small).exit_code == 0
    target = sorted(session_paths(fake_hub))[3]
    _delete_on_the_hub(fake_hub, target)
    other = next(f for f in small.files if not target.endswith("/" + f.name))
    before = len(fake_hub.commits)
    args = ["publish", REPO_ID, str(other), "--endpoint", fake_hub.url, "--token", TOKEN]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "0 added, 0 updated, 0 removed, 1 unchanged" in result.stdout
    assert [c.summary for c in fake_hub.commits[before:]] == [
        "pi-session publish: manifest and card (1/1)"
    ]
    assert target not in remote_json(fake_hub, "manifest.json")["sessions"]
    assert len(session_paths(fake_hub)) == 7
    assert_consistent(fake_hub)
    back = publish(fake_hub, small)
    assert back.exit_code == 0 and "1 added" in back.stdout, back.output
    assert len(session_paths(fake_hub)) == 8
    assert_consistent(fake_hub)


def test_the_fake_refuses_an_anonymous_write_as_the_hub_does() -> None:
    """Over https huggingface_hub reads an anonymous 401 on /api/datasets/... as
    RepositoryNotFoundError by its URL alone; the http:// fake has to say it with
    ``X-Error-Code`` (publish-apis.md §2.5), or the client's no-token path differs from the
    Hub's (test audit L5). ``/api/repos/create`` is no such URL: a plain 401 there."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

    with FakeHub() as fake:
        fake.new_repo(REPO_ID, private=False)  # visible anonymously: only the write is refused
        api = HfApi(endpoint=fake.url, token=False)
        with pytest.raises(RepositoryNotFoundError) as anonymous:
            api.create_commit(REPO_ID, [CommitOperationAdd("a.txt", b"a")], commit_message="x",
                              repo_type="dataset")  # fmt: skip
        response = anonymous.value.response
        assert response.status_code == 401
        assert response.headers["X-Error-Code"] == "RepoNotFound"
        assert response.headers["X-Error-Message"] == "You must be authenticated to write"
        with pytest.raises(HfHubHTTPError) as create:
            api.create_repo("alice/other", repo_type="dataset")
        assert not isinstance(create.value, RepositoryNotFoundError)
        assert create.value.response.status_code == 401
        assert "X-Error-Code" not in create.value.response.headers
        assert fake.commits == [] and ("dataset", "alice/other") not in fake.repos


def test_a_token_in_a_file_name_is_published_nowhere(fake_hub: FakeHub, small: Corpus) -> None:
    """A copy saved as ``debug-ghp_….jsonl``: its name makes the dataset path, the index's
    and manifest's keys, the page's name, the site index's links and the page footer."""
    token = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi"
    source = small.files[1]
    renamed = source.with_name(f"debug-{token}.jsonl")
    source.rename(renamed)
    result = publish(fake_hub, small, "--html")
    assert result.exit_code == 0, result.output
    files = fake_hub.files(REPO_ID)
    assert any("debug-REDACTED-github-token" in path for path in session_paths(fake_hub))
    assert any(p.endswith("debug-REDACTED-github-token.html") for p in files), sorted(files)
    assert token.encode() not in fake_hub.received_bytes()
    for path, data in files.items():
        assert token not in path
        assert token.encode() not in data, path
    assert_consistent(fake_hub)
    assert renamed.read_bytes()  # the local file keeps its name and bytes


def test_pii_and_patterns_are_recorded_and_a_run_without_them_is_refused(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """--pii and --redact-pattern are recorded per session as what was removed: the card
    says so (a pattern by its name, never its regex) and a run without them is refused."""
    secret_regex = "ACME-[0-9]{6}"
    first = publish(fake_hub, small, "--pii", "--redact-pattern", f"acme-id={secret_regex}")
    assert first.exit_code == 0, first.output
    manifest = remote_json(fake_hub, "manifest.json")["sessions"]
    assert {tuple(e["cuts"]) for e in manifest.values()} == {("pattern:acme-id", "pii")}
    card = fake_hub.files(REPO_ID)["README.md"].decode()
    assert "e-mail addresses, phone numbers and IPv4 and IPv6 addresses are replaced" in card
    assert "the publisher's own patterns are replaced (`acme-id`)" in card
    assert secret_regex not in card and secret_regex.encode() not in fake_hub.received_bytes()
    commits = len(fake_hub.commits)
    refused = publish(fake_hub, small, "--pii")
    assert refused.exit_code == 1, refused.output
    assert f"{len(small.files)} with --redact-pattern acme-id=…" in refused.stderr
    assert len(fake_hub.commits) == commits
    assert publish(fake_hub, small, "--pii", "--redact-pattern", "acme-id=ACME-\\d+").exit_code == 0
    assert_consistent(fake_hub)


def test_a_session_published_at_a_path_with_a_secret_moves_off_it() -> None:
    """Datasets published before 0.2.14 hold `sessions/…/debug-ghp_….jsonl`; each session
    kept its published path, so the token stayed in it (review 2026-12-02). Such a session
    now takes a path without the secret, and the old one is named (without the secret)."""
    from exporter.policy import RedactionPolicy
    from exporter.publish.hub_plan import Source, claim_paths
    from exporter.publish.hub_state import RemoteFile, RemoteState
    from exporter.redact import name_scrubber

    token = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi"
    leaking, clean = f"sessions/2026-01/debug-{token}.jsonl", "sessions/2026-01/x.jsonl"
    remote = RemoteState(exists=True)
    remote.files = {leaking: RemoteFile(1, "a"), clean: RemoteFile(1, "b")}
    remote.manifest = {leaking: {"id": "s1"}, clean: {"id": "s2"}}
    scrub = name_scrubber(RedactionPolicy(env_secrets=False), environ={})
    sources = [
        Source(
            Path("/p/a.jsonl"), "sessions/2026-01/debug-REDACTED-github-token.jsonl", "h", 1, "s1"
        ),
        Source(Path("/p/x2.jsonl"), "sessions/2026-01/x2.jsonl", "h", 1, "s2"),
    ]
    moved: list[str] = []
    claimed = claim_paths(sources, remote, scrub, moved)
    assert [s.repo_path for s in claimed] == [sources[0].repo_path, clean]  # s2 keeps its path
    assert moved == ["sessions/2026-01/debug-REDACTED-github-token.jsonl"]
    assert token not in "".join(moved)


def test_a_rerun_changes_nothing_when_a_secret_is_in_an_id_or_a_month(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A session whose id holds a secret was matched by its raw id against the manifest's
    redacted one, so each run added it again (NAME-2, NAME-3, ...); a secret that is also
    a month folder's year made each run warn that every session "was published at a path
    holding a secret", with the folder mangled (bug hunt 2026-12-05)."""
    from exporter.loader import load_session

    first_id = load_session(small.files[0]).id
    assert first_id
    secret = first_id[9:13]  # a part of its id, as a --secret value could be
    years = sorted({load_session(f).header.timestamp[:4] for f in small.files})
    args = ["--secret", secret, *(a for year in years for a in ("--secret", year))]
    first = publish(fake_hub, small, *args)
    assert first.exit_code == 0, first.output
    paths = sorted(session_paths(fake_hub))
    assert {p.split("/")[1][:4] for p in paths} == set(years)  # folders are not names
    for _ in range(2):
        again = publish(fake_hub, small, *args)
        assert again.exit_code == 0, again.output
        assert "0 added" in again.output and "holding a secret" not in again.output, again.output
        assert sorted(session_paths(fake_hub)) == paths
    assert "0 added, 0 updated, 0 removed" in again.output, again.output
    assert_consistent(fake_hub)


@pytest.mark.parametrize("token_in_name", [False, True])
def test_prune_keeps_a_published_session_whose_file_now_fails(
    fake_hub: FakeHub, small: Corpus, token_in_name: bool
) -> None:
    """A file that fails now keeps its published copy under --prune; one whose name held a
    secret was pruned, its dataset path being the name without it (review 2026-12-02)."""
    source = small.files[1]
    if token_in_name:
        source = source.rename(
            source.with_name("debug-ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi.jsonl")
        )
    first = publish(fake_hub, small)
    assert first.exit_code == 0, first.output
    before = session_paths(fake_hub)
    source.write_bytes(b"\x00\x01 not a session\n")
    pruned = publish(fake_hub, small, "--prune")
    assert "1 failed" in pruned.output, pruned.output
    assert session_paths(fake_hub) == before


def test_a_claude_code_session_is_published_as_a_pi_session(fake_hub: FakeHub) -> None:
    args = ["publish", REPO_ID, str(CLAUDE_CODE_PATH), "--endpoint", fake_hub.url]
    result = CliRunner().invoke(cli, [*args, "--token", TOKEN], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert_consistent(fake_hub)
    (path,) = session_paths(fake_hub)
    assert path.startswith("sessions/2026-11/")  # its first line (a title) has no time
    copy = parse_session_bytes(fake_hub.files(REPO_ID)[path])
    assert copy.header.raw["type"] == "session" and copy.name == "Dark mode for settings"
    assert not any(d.kind.startswith("claude-code") for d in copy.diagnostics)  # a Pi file
    (row,) = index_rows(fake_hub)
    assert row["name"] == "Dark mode for settings" and row["output_tokens"] == 471
    assert row["project"] == "~/projects/webapp"


def test_a_codex_session_is_published_as_a_pi_session(fake_hub: FakeHub) -> None:
    args = ["publish", REPO_ID, str(CODEX_PATH), "--endpoint", fake_hub.url]
    result = CliRunner().invoke(cli, [*args, "--token", TOKEN], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert_consistent(fake_hub)
    (path,) = session_paths(fake_hub)
    assert path.startswith("sessions/2025-12/")
    copy = parse_session_bytes(fake_hub.files(REPO_ID)[path])
    assert copy.header.raw["source"] == "Codex 0.77.0"
    assert copy.name == "Fix price rounding in the stock report"
    (row,) = index_rows(fake_hub)
    assert row["project"] == "~/projects/inventory"
    assert row["output_tokens"] == compute_stats(load_session(CODEX_PATH)).all.output


def test_a_claude_code_sub_agent_that_changed_alone_republishes_its_session(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    path = sub_agent_session(tmp_path / "projects" / "-w")
    args = ["publish", REPO_ID, str(path), "--endpoint", fake_hub.url, "--token", TOKEN]
    assert "1 added" in CliRunner().invoke(cli, args, catch_exceptions=False).stdout
    assert "1 unchanged" in CliRunner().invoke(cli, args, catch_exceptions=False).stdout
    agent = path.parent / path.stem / "subagents" / "agent-a1b2c3d.jsonl"
    agent.write_text(agent.read_text(encoding="utf-8").replace("Two files.", "Two test files."))
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert "1 updated" in result.stdout, result.output
    (published,) = session_paths(fake_hub)
    assert b"Two test files." in fake_hub.files(REPO_ID)[published]


def test_a_card_written_before_the_first_publish_is_kept_with_the_block_added(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """A dataset its owner made and described before the first publish: its README.md was
    replaced by a new card, the owner's words lost. It is kept, with the generated part
    added at its end between the marker lines (and our configs in its YAML), said once;
    the next run refreshes that part only."""
    from huggingface_hub import HfApi

    HfApi(endpoint=fake_hub.url, token=TOKEN).create_repo(
        REPO_ID, repo_type="dataset", private=True
    )
    owners = (
        "---\nlicense: mit  # the team's choice\n# what the Hub lists it under\n"
        "tags:\n- agents\npretty_name: 'Team traces'\n---\n# Our team's traces\n\n"
        "Collected by the tools team; ask Ana before using them 中文 🙂.\n"
    )
    _put_card(fake_hub, owners.encode("utf-8"))
    first = publish(fake_hub, small)
    assert first.exit_code == 0, first.output
    said = [line for line in first.stderr.splitlines() if "README.md" in line]
    assert len(said) == 1 and "was there before the first publish: kept" in said[0], said
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    body = owners.split("---\n", 2)[2]
    assert card.index(body) < card.index(BEGIN) < card.index(END)  # their words, then ours
    assert "| sessions | 8 |" in card[card.index(BEGIN) : card.index(END)]
    front = card.split("---\n", 2)[1]
    # their YAML as they wrote it, comments and quotes too (PyYAML wrote it all again)
    assert front.startswith(owners.split("---\n", 2)[1]) and "config_name: sessions" in front
    _touch(small.files[1], "question 1", "question one")
    again = publish(fake_hub, small)
    assert again.exit_code == 0 and "README.md" not in again.stderr, again.output
    now = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert now[: now.index(BEGIN)] == card[: card.index(BEGIN)]  # kept as it was


def test_a_card_before_the_first_publish_that_cannot_be_merged_is_left_alone(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """YAML without its closing line (the Hub's client refuses a card that is not UTF-8):
    left as it is, said, never replaced."""
    from huggingface_hub import HfApi

    HfApi(endpoint=fake_hub.url, token=TOKEN).create_repo(
        REPO_ID, repo_type="dataset", private=True
    )
    _put_card(fake_hub, b"---\nlicense: mit\n# x\n")
    result = publish(fake_hub, small, "--dry-run")
    assert result.exit_code == 0, result.output
    (said,) = [line for line in result.stderr.splitlines() if "README.md" in line]
    assert "kept as it is" in said and "no closing --- line" in said, said
    result = publish(fake_hub, small)
    assert result.exit_code == 0, result.output
    assert fake_hub.files(REPO_ID)["README.md"] == b"---\nlicense: mit\n# x\n"
    assert "index.jsonl" in fake_hub.files(REPO_ID)


def test_configs_put_back_keep_the_rest_of_the_owners_yaml_as_written() -> None:
    """Only the `configs` block is written anew; the owner's comments, quotes and order stay
    (PyYAML wrote the whole front matter again). YAML that cannot be edited by its lines
    (a flow mapping) is still written back whole."""
    import yaml

    from exporter.publish.dataset_card import _front_matter_with_our_configs

    front = (
        "license: mit  # ours\nconfigs:\n- config_name: mine  # the CSV\n  data_files: x.csv\n"
        "# shown on the Hub\npretty_name: 'Team traces'"
    )
    done = _front_matter_with_our_configs(front)
    assert done.startswith("---\nlicense: mit  # ours\nconfigs:\n- config_name: default")
    assert done.endswith("# shown on the Hub\npretty_name: 'Team traces'\n---")
    data = yaml.safe_load(done.strip("-\n"))
    assert [c["config_name"] for c in data["configs"]] == ["default", "sessions", "mine"]
    flow = yaml.safe_load(_front_matter_with_our_configs("{license: mit}").strip("-\n"))
    assert flow["license"] == "mit" and len(flow["configs"]) == 2
    # a configs key its line does not show (quoted) is not doubled: the Hub refuses that
    quoted = _front_matter_with_our_configs('"configs":\n- config_name: mine\n  data_files: x')
    assert quoted.count("configs") == 1 and "config_name: mine" in quoted


def test_a_new_private_dataset_is_said_to_need_a_paid_plan_for_its_viewer(
    fake_hub: FakeHub, small: Corpus
) -> None:
    """The Hub's Dataset Viewer shows a private dataset only on PRO, Team or Enterprise
    (reference §2.6): said once, when publish creates it private; not on later runs, and
    not for a public one."""
    note = "Dataset Viewer shows a private dataset only on a PRO, Team or Enterprise plan"
    first = publish(fake_hub, small)
    assert first.exit_code == 0, first.output
    assert first.stderr.count(note) == 1 and note not in first.stdout
    lines = small.files[0].read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["id"] = "another-session"
    (small.files[0].parent / "another.jsonl").write_text(
        "\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8"
    )
    again = publish(fake_hub, small)
    assert again.exit_code == 0, again.output
    assert "1 commit" in again.stdout and note not in again.stderr  # it exists now
    public = CliRunner().invoke(
        cli,
        ["publish", "alice/open", "--all", "--sessions-dir", str(small.root), "--public",
         "--yes", "--endpoint", fake_hub.url, "--token", TOKEN],
    )  # fmt: skip
    assert public.exit_code == 0, public.output
    assert note not in public.stderr
