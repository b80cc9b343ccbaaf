"""`watch --exclude ID` without SESSION follows Pi's /new to a newer session, which has no
entry ID: the library now refuses an exclude that names no entry, and the watch stopped
with that error instead of following (the ids are checked against the first session)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from exporter.discover import encode_cwd
from tests.conftest import Build
from tests.test_watch import copy_of, http_get, start_watch


def test_a_watch_with_exclude_follows_a_new_session_without_the_entry(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    sessions = tmp_path / "sessions"
    folder = sessions / encode_cwd(str(project))
    folder.mkdir(parents=True)
    copy_of("pi-branched-1.jsonl", folder)
    args = ("--sessions-dir", str(sessions), "--exclude", "7c756ead")
    process, url = start_watch(*args, cwd=project)
    try:
        first = http_get(url)[1]
        assert b"pi-branched-1.jsonl" in first and b"think then say hello" not in first
        fresh = folder / "2026-12-02T11-00-00-000Z_0198-fresh.jsonl"
        lines = (Build.header("fresh-session"), Build.user("f1", None, "typed after /new"))
        fresh.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        deadline = time.monotonic() + 30
        while b"typed after /new" not in http_get(url)[1]:
            assert process.poll() is None, "the watch stopped"
            assert time.monotonic() < deadline, "the new session was not followed"
            time.sleep(0.2)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert f"now watching {fresh}, a new session of this folder" in errors, errors
    assert "Traceback" not in errors and "no entry" not in errors, errors
