"""Stop 63 (helper hunt of `publish --all -j 2` and `share`): a Ctrl-C while the pool's
forkserver was starting printed its traceback under "interrupted"; a gist read or delete
that GitHub answered with 5xx suggested a smaller upload or Hugging Face; an update GitHub
took but answered unreadably was said as failed and left the share state as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.conftest import ctrl_c_as_at_a_terminal
from tests.fakes.github import FakeGitHub
from tests.fakes.hub import TOKEN, FakeHub
from tests.share_env import isolated_share_env, share

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")
FIXTURES = SHARED / "fixtures"
SHARED_SESSION = FIXTURES / "pi-branched-1.jsonl"

# --- 1. Ctrl-C while the pool's forkserver starts -----------------------------------------------

#: Put on the PYTHONPATH of a `publish`: in the forkserver only (``python -c CODE``, so its
#: ``sys.argv`` is ``["-c"]``), it holds at the named stage, says so in HOLD_DIR/holding and
#: waits for HOLD_DIR/go, so that the test's Ctrl-C lands there every time.
_HOLDING_SITECUSTOMIZE = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path

    _DIR, _STAGE = os.environ.get("S63_HOLD_DIR"), os.environ.get("S63_HOLD_STAGE")


    def _hold():
        Path(_DIR, "holding").write_text(str(os.getpid()), encoding="utf-8")
        deadline = time.monotonic() + 60
        while not Path(_DIR, "go").exists() and time.monotonic() < deadline:
            time.sleep(0.02)


    class _HoldImport:
        def find_spec(self, name, path=None, target=None):
            if name == _STAGE:
                _hold()
            return None


    if _DIR and sys.argv == ["-c"]:
        if _STAGE == "startup":  # the interpreter starting, before the forkserver's code
            _hold()
        else:  # importing the preload module
            sys.meta_path.insert(0, _HoldImport())
    """
)


def _publish_env(tmp_path: Path, hold_dir: Path, stage: str) -> dict[str, str]:
    """A `publish` process of its own: its HF home, cache and key, the token, no proxies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.pop("PI_SESSION_PUBLISH_KEY", None)
    for name in ("hf-home", "cache", "config"):
        (tmp_path / name).mkdir()
    env.update(
        HF_HOME=str(tmp_path / "hf-home"),
        HF_TOKEN=TOKEN,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_PROXY="127.0.0.1,localhost",
        HTTPS_PROXY="http://127.0.0.1:9",  # anything not loopback fails fast
        HTTP_PROXY="http://127.0.0.1:9",
        PYTHONPATH=os.pathsep.join([str(hold_dir), str(REPO)]),
        S63_HOLD_DIR=str(hold_dir),
        S63_HOLD_STAGE=stage,
    )
    return env


def _wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None:
            _, err = process.communicate()
            pytest.fail(f"publish ended before its forkserver started: {err}")
        if time.monotonic() > deadline:
            pytest.fail("the forkserver never reached the stage held")
        time.sleep(0.02)


@pytest.mark.parametrize("stage", ["startup", "exporter.publish.hub_plan"])
def test_ctrl_c_while_the_forkserver_starts_says_interrupted_and_nothing_else(
    tmp_path: Path, stage: str
) -> None:
    """A Ctrl-C at the terminal reaches the whole process group. The forkserver ignored it
    only once its preload module (hub_plan, then the detectors: a second or more) was
    imported, so a Ctrl-C early in `publish --all -j 2` printed a ``KeyboardInterrupt``
    traceback from the forkserver under "pi-session: interrupted". Held at its start-up and
    at that import, it must ignore the Ctrl-C: exit 130 and only our words."""
    sessions = tmp_path / "sessions" / "--home-dev-projects-webapp--"
    sessions.mkdir(parents=True)
    for n, name in enumerate(["pi-branched-1", "pi-branched-2", "pi-v1-before-compaction"]):
        stamp = f"2026-11-30T00-57-0{n}-000Z"
        shutil.copy(FIXTURES / f"{name}.jsonl", sessions / f"{stamp}_{name}.jsonl")
    hold_dir = tmp_path / "hold"
    hold_dir.mkdir()
    (hold_dir / "sitecustomize.py").write_text(_HOLDING_SITECUSTOMIZE, encoding="utf-8")
    with FakeHub() as hub:
        args = ["publish", "alice/sessions", "--all", "--sessions-dir", str(tmp_path / "sessions")]
        process = subprocess.Popen(
            [sys.executable, "-m", "exporter", *args, "--endpoint", hub.url, "-j", "2"],
            env=_publish_env(tmp_path, hold_dir, stage),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            start_new_session=True,  # a group of its own, as a terminal's job is
            preexec_fn=ctrl_c_as_at_a_terminal,  # (a run in the background ignores it)
        )
        try:
            _wait_for(hold_dir / "holding", process)
            os.killpg(process.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):  # (failed below)
                process.wait(timeout=60)
        finally:
            (hold_dir / "go").write_text("", encoding="utf-8")  # the forkserver goes on
        try:
            _, err = process.communicate(timeout=120)  # until the forkserver closes stderr
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            pytest.fail("publish or its forkserver hung after a Ctrl-C")
    assert process.returncode == 130, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1:] == ["pi-session: interrupted"], err
    assert all(line.startswith("pi-session: ") for line in lines), err
    assert "Traceback" not in err and "Exception ignored" not in err


# --- share: the loopback GitHub -----------------------------------------------------------------


class _UpdateAnsweredUnreadably(FakeGitHub):
    """Applies the next PATCH as GitHub does, then answers its 200 with ``odd_update``
    (raw bytes; None: as always); with ``reads_fail_after_update``, every read after that
    update is answered HTTP 500."""

    odd_update: bytes | None = None
    reads_fail_after_update = False
    _updated = False

    def _handle(self, h: Any) -> None:
        if self.reads_fail_after_update and self._updated and h.command == "GET":
            self._send(h, 500, {"message": "Server Error"}, {})
            return
        super()._handle(h)

    def _send(self, h: Any, status: int, payload: Any, headers: dict[str, str]) -> None:
        odd = self.odd_update
        if odd is None or h.command != "PATCH" or status != 200:
            super()._send(h, status, payload, headers)
            return
        self.odd_update, self._updated = None, True
        h.send_response(200)
        h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(odd)))
        h.end_headers()
        h.wfile.write(odd)


@pytest.fixture
def fake() -> FakeGitHub:
    with _UpdateAnsweredUnreadably() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setattr("time.sleep", lambda seconds: None)  # retries' waits are said only
    return isolated_share_env(tmp_path, fake.token, monkeypatch)


def error_line(result: Result, fake: FakeGitHub) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("pi-session: error")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.output and fake.token not in result.output
    return errors[0]


# --- 2. a 5xx to a read or a delete ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_read_or_delete_github_answers_with_5xx_suggests_no_smaller_upload(
    fake: FakeGitHub, env: dict[str, str], method: str
) -> None:
    """Re-sharing reads the session's gist first, and --delete reads it then deletes it:
    GitHub's 5xx there was said as "the upload is too big ... or publish to Hugging Face
    instead", though nothing was being uploaded and Hugging Face deletes no gist."""
    assert share(fake, str(SHARED_SESSION)).exit_code == 0
    (gist_id,) = fake.gists
    fake.fail(500, method=method, times=5)
    args = ["--delete", gist_id] if method == "DELETE" else [str(SHARED_SESSION), "--no-thinking"]
    result = share(fake, *args)
    assert result.exit_code == 3, result.output
    line = error_line(result, fake)
    assert line == (
        "pi-session: error: GitHub answered HTTP 500 3 times in a row; it may be having "
        "problems. Try again later."
    )


def test_an_update_github_answers_with_5xx_still_names_its_size(
    fake: FakeGitHub, env: dict[str, str]
) -> None:
    """An upload's 5xx may be its size: that advice stays for the update."""
    assert share(fake, str(SHARED_SESSION)).exit_code == 0
    fake.fail(502, method="PATCH", times=5)
    result = share(fake, str(SHARED_SESSION), "--no-thinking")
    assert result.exit_code == 3, result.output
    line = error_line(result, fake)
    assert "it may be having problems or the upload is too big" in line
    assert "publish to Hugging Face instead" in line


# --- 3. an update taken but answered unreadably ---------------------------------------------------


def _state(env: dict[str, str]) -> dict[str, Any]:
    path = Path(env["XDG_STATE_HOME"]) / "pi-session-export" / "gists.json"
    (sessions,) = json.loads(path.read_text("utf-8"))["gists"].values()
    (record,) = sessions.values()
    return record


@pytest.mark.parametrize("answer", [b'{"id": "', b"<html>OK</html>", b'{"message": "OK"}'])
def test_an_update_taken_but_answered_unreadably_is_recorded(
    fake: _UpdateAnsweredUnreadably, env: dict[str, str], answer: bytes
) -> None:
    """GitHub took the update (the gist holds the new files) but its 200 could not be read
    (cut off, not JSON, no gist in it): this was "error: GitHub returned HTTP 200 with a
    body that is not JSON." (exit 3), and the state kept the earlier share's content and
    policy, so a later share weaker than the one in the gist went through unrefused."""
    assert share(fake, str(SHARED_SESSION)).exit_code == 0
    (gist_id,) = fake.gists
    before = _state(env)
    fake.odd_update = answer
    stronger = share(fake, str(SHARED_SESSION), "--no-thinking")
    assert stronger.exit_code == 0, stronger.output
    assert fake.odd_update is None  # the PATCH was answered so
    assert (
        f"pi-session: warning: GitHub received the update of gist {gist_id} (HTTP 200), but "
        "its answer could not be read ("
    ) in stronger.stderr
    assert "the gist now holds this share" in stronger.stderr
    assert "pi-session: gist updated (secret)" in stronger.stderr
    assert f"Gist: {fake.base_url}/gist-html/{gist_id}\n" in stronger.stdout  # as read back
    after = _state(env)
    assert after["gist_id"] == gist_id
    assert after["content_sha256"] != before["content_sha256"]
    weaker = share(fake, str(SHARED_SESSION))  # with the thinking the gist no longer has
    assert weaker.exit_code == 1, weaker.output
    assert f"share --delete {gist_id}" in weaker.stderr
    unchanged = share(fake, str(SHARED_SESSION), "--no-thinking")  # what the gist holds
    assert unchanged.exit_code == 0, unchanged.output
    assert "gist unchanged" in unchanged.stderr


def test_an_update_answered_unreadably_whose_gist_cannot_be_read_back_is_recorded(
    fake: _UpdateAnsweredUnreadably, env: dict[str, str]
) -> None:
    """When reading the gist back fails too, the update is still GitHub's: recorded, with
    the gist's address built from its id."""
    assert share(fake, str(SHARED_SESSION)).exit_code == 0
    (gist_id,) = fake.gists
    fake.odd_update, fake.reads_fail_after_update = b"not json", True
    result = share(fake, str(SHARED_SESSION), "--no-thinking")
    assert result.exit_code == 0, result.output
    assert "the gist now holds this share" in result.stderr
    assert f"Gist: {fake.base_url}/gists/{gist_id}\n" in result.stdout
    assert _state(env)["gist_id"] == gist_id
    fake.reads_fail_after_update = False
    assert share(fake, str(SHARED_SESSION)).exit_code == 1  # weaker: refused


def test_an_abandoned_pool_leaves_the_forkserver_to_a_pool_still_working() -> None:
    """Abandoning one batch's pool stopped the forkserver under another batch of the same
    process (a library caller's thread): that pool broke and ran its tasks one at a time
    (review s63). The forkserver goes with the last pool."""
    from multiprocessing import forkserver

    from exporter import workers

    context = workers.server_context("os")
    working = workers._new_pool(2, context)
    try:
        assert working.submit(os.getpid).result(timeout=60) != os.getpid()
        server = forkserver._forkserver._forkserver_pid
        workers._abandon(workers._new_pool(2, context))
        assert forkserver._forkserver._forkserver_pid == server
        assert working.submit(os.getpid).result(timeout=60) != os.getpid()
    finally:
        workers._abandon(working)
    assert forkserver._forkserver._forkserver_pid is None  # the last one: stopped
