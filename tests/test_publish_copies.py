"""`publish` of a session that sits in two project folders as byte-identical copies (a
project folder renamed or copied, its sessions with it). Every other command counts such
copies as one session; publish sent both, the second as ``NAME-2.jsonl``, so the dataset
held the same trace twice. A copy that went on (other bytes) is another session and goes up.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import PI_NAME, Home, _home

REPO = "alice/copies"


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """PI_NAME in its project and a byte-identical copy of it in a renamed project."""
    made = _home(tmp_path)
    renamed = made.sessions / encode_cwd("/srv/renamed webapp")
    renamed.mkdir(parents=True)
    shutil.copyfile(made.session, renamed / PI_NAME)
    return made


def _sessions_sent(fake: FakeHub) -> list[str]:
    return sorted(p for p in fake.files(REPO) if p.startswith("sessions/"))


def _publish(home: Home, fake: FakeHub, *extra: str) -> tuple[int, str, str]:
    hub = ["--endpoint", fake.url, "--token", TOKEN, "-j", "1", "--yes"]
    result = home.run("publish", REPO, "--all", *hub, *extra)
    return result.code, result.stdout, result.stderr


def test_identical_copies_are_published_once(home: Home, fake_hub: FakeHub) -> None:
    code, out, err = _publish(home, fake_hub)
    assert code == 0, err
    assert _sessions_sent(fake_hub) == [f"sessions/2026-11/{PI_NAME}"]
    assert "1 added" in out, out
    said = [line for line in err.splitlines() if "byte-identical copy" in line]
    assert len(said) == 1 and said[0].startswith("pi-session: warning: "), err
    assert "one session, published once" in said[0] and PI_NAME in said[0]
    # a second run finds it unchanged: the copy is not "new" either
    code, out, err = _publish(home, fake_hub)
    assert code == 0, err
    assert "nothing changed" in out and _sessions_sent(fake_hub) == [f"sessions/2026-11/{PI_NAME}"]


def test_a_dry_run_plans_one_session_for_the_copies(home: Home, fake_hub: FakeHub) -> None:
    code, out, err = _publish(home, fake_hub, "--dry-run")
    assert code == 0, err
    assert out.count("\nadd ") + out.startswith("add ") == 1, out
    assert "-2.jsonl" not in out and "byte-identical copy" in err


def test_a_copy_that_went_on_goes_up_once_as_the_later_state(home: Home, fake_hub: FakeHub) -> None:
    """The copy in the renamed folder was continued there: the other file is an earlier
    state of the same session (all its entries are in the copy), so only the copy goes up.
    Both went up before 0.2.41: two rows with one id, the shared turns counted twice, and
    each re-run moved them between paths (stop 58)."""
    (copy,) = (p for p in home.sessions.glob(f"*/{PI_NAME}") if p != home.session)
    with open(copy, "ab") as handle:  # one more entry on the copy's leaf: a new session state
        handle.write(copy.read_bytes().splitlines(keepends=True)[-1])
    code, _, err = _publish(home, fake_hub)
    assert code == 0, err
    assert "byte-identical copy" not in err
    assert "is an earlier state of" in err
    assert len(_sessions_sent(fake_hub)) == 1
    commits = len(fake_hub.commits)
    code, _, err = _publish(home, fake_hub)  # unchanged: nothing moves
    assert code == 0 and len(fake_hub.commits) == commits, err


def test_copies_that_went_on_apart_both_go_up_and_stay(home: Home, fake_hub: FakeHub) -> None:
    """Each copy holds entries the other does not: both have something of their own, so
    both go up, said on stderr, and an unchanged re-run sends nothing."""
    (copy,) = (p for p in home.sessions.glob(f"*/{PI_NAME}") if p != home.session)
    for path, text in ((copy, "there"), (home.session, "here")):
        last = json.loads(path.read_bytes().splitlines()[-1])
        said = {"role": "user", "content": f"went on {text}", "timestamp": 1}
        entry = {"type": "message", "id": f"apart-{text}", "parentId": last["id"],
                 "timestamp": "2026-11-30T01:00:00.000Z", "message": said}  # fmt: skip
        with open(path, "ab") as handle:
            handle.write(json.dumps(entry).encode() + b"\n")
    code, _, err = _publish(home, fake_hub)
    assert code == 0, err
    assert "hold one session that went on apart: each is published" in err
    sent = _sessions_sent(fake_hub)
    assert len(sent) == 2
    commits = len(fake_hub.commits)
    for _ in range(2):
        code, _, err = _publish(home, fake_hub)
        assert code == 0 and len(fake_hub.commits) == commits, err
    assert _sessions_sent(fake_hub) == sent
