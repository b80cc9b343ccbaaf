"""Stop 57: a publish of many small sessions sent the whole manifest and index again with
every commit (77 MB for 2 MB of sessions at 3,000), and its dry run counted them once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from exporter.publish import hub_commits
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_publish import (
    Corpus,
    assert_consistent,
    hub_env,
    publish,
    remote_json,
    session_paths,
)

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name


def _tiny_corpus(root: Path, count: int) -> Corpus:
    """``count`` sessions of one prompt and one answer each (~700 bytes)."""
    files = []
    folder = root / encode_cwd("/work/tiny")
    folder.mkdir(parents=True)
    for number in range(count):
        stamp = f"2026-03-{1 + number % 27:02d}T10:{number % 60:02d}:00.000Z"
        lines = [
            {"type": "session", "version": 3, "id": f"tiny-{number:04d}", "timestamp": stamp,
             "cwd": "/work/tiny"},
            {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp,
             "message": {"role": "user", "content": f"question {number}", "timestamp": 0}},
            {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp,
             "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                         "stopReason": "stop", "timestamp": 0}},
        ]  # fmt: skip
        path = folder / f"2026-03-01T10-00-00-000Z_tiny-{number:04d}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        files.append(path)
    return Corpus(root, files, [])


def _size(said: str) -> float:
    """``12.3 KB`` (as the dry run prints it) in bytes."""
    found = re.search(r"([0-9.,]+) (B|KB|MB|GB) to upload", said)
    assert found is not None, said
    unit = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[found[2]]
    return float(found[1].replace(",", "")) * unit


def test_many_small_sessions_send_the_metadata_a_few_times(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 8)  # 5 sessions a commit
    corpus = _tiny_corpus(tmp_path / "sessions", 120)
    dry = publish(fake_hub, corpus, "--dry-run")
    assert dry.exit_code == 0, dry.output
    planned = _size(dry.stdout)
    done = publish(fake_hub, corpus)
    assert done.exit_code == 0, done.output
    commits = fake_hub.commits
    assert len(commits) == 24
    with_meta = [c for c in commits if "manifest.json" in c.added]
    assert commits[-1] in with_meta  # the dataset ends complete
    assert len(with_meta) <= 8, [commits.index(c) for c in with_meta]  # not 24
    assert_consistent(fake_hub)
    assert (
        len(session_paths(fake_hub))
        == 120
        == len(remote_json(fake_hub, "manifest.json")["sessions"])
    )
    # the dry run's total is what went: every session and every metadata write
    final = sum(len(fake_hub.files("alice/sessions")[name]) for name in hub_commits.META_FILES)
    sessions = sum(len(fake_hub.files("alice/sessions")[p]) for p in session_paths(fake_hub))
    assert sessions + final <= planned * 1.05
    assert planned <= sessions + final * len(with_meta)


def test_a_run_stopped_between_metadata_writes_is_completed_by_the_next(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions a stopped run sent after its last metadata write are named by the next
    run's manifest and index, without being sent again."""
    monkeypatch.setattr(hub_commits, "MAX_FILES_PER_COMMIT", 8)
    corpus = _tiny_corpus(tmp_path / "sessions", 60)
    fake_hub.drop_commits_after(9, applied=False)
    failed = publish(fake_hub, corpus)
    assert failed.exit_code == 3 and len(fake_hub.commits) == 9
    manifest = remote_json(fake_hub, "manifest.json")["sessions"]
    assert len(manifest) < len(session_paths(fake_hub)) == 45  # the last ones not named yet
    fake_hub.clear_requests()
    resumed = publish(fake_hub, corpus)
    assert resumed.exit_code == 0, resumed.output
    later = [p for c in fake_hub.commits[9:] for p in c.added if p.startswith("sessions/")]
    assert len(later) == 15  # only what the first run did not send
    assert_consistent(fake_hub)
