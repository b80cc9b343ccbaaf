"""Stop 48, helper 162: `publish` against an --endpoint that cannot be reached, and --skip
of a session that is in several project folders.

1. A dry run whose --endpoint was typed and cannot be reached redacted every session (minutes
   on a big folder) before it said exit 3; it stops at the first request, before any session
   is hashed or redacted. From HF_ENDPOINT (or the default) the plan is still made, a guess.
2. `--skip ID` of a session with byte-identical copies in two project folders (one session
   to the CLI since stop 47) skipped one copy and published the other; an id prefix naming
   two different sessions skipped this project's one silently and published the other.
"""

from __future__ import annotations

import shlex
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.publish import hub as hub_module
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import FIXTURES, PI_NAME, Home, _error, _home
from tests.test_cli_review150 import _run_in
from tests.test_publish import REPO_ID, Corpus, make_corpus

SESSION_ID = "01a229f4-9ff2-7641-920f-f99cb5e24cb7"  # PI_NAME's (pi-branched-1.jsonl)
#: pi-branched-2.jsonl: another session whose id also starts with "01a229f4"
OTHER_NAME = "2026-11-30T00-57-08-167Z_01a229f4-a346-7019-99dc-c72325edfccd.jsonl"


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- 1: an --endpoint typed that cannot be reached ------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path, fixtures_dir: Path) -> Corpus:
    """Eight sessions, two of them with planted secrets: a redaction would show."""
    return make_corpus(tmp_path / "sessions", fixtures_dir, count=8)


@pytest.fixture
def work_done(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times publish hashed (probe_sources) and redacted (prepare_all) sessions."""
    calls = {"probe_sources": 0, "prepare_all": 0}
    for name in calls:
        real = getattr(hub_module, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(hub_module, name, counted)
    return calls


def _publish(corpus: Corpus, *extra: str, env: dict[str, str] | None = None) -> Any:
    args = ["publish", REPO_ID, "--all", "--sessions-dir", str(corpus.root), "-j", "1", *extra]
    return CliRunner(env=env).invoke(cli, args)


def test_a_dry_run_to_a_typed_unreachable_endpoint_stops_before_redacting(
    corpus: Corpus, work_done: dict[str, int]
) -> None:
    """Exit 3 with the --endpoint message, and not one session read for a plan (with a
    token or without); nothing on stdout: no plan was made."""
    port = _closed_port()
    dead = f"http://127.0.0.1:{port}"
    for token in (["--token", TOKEN], []):
        result = _publish(corpus, "--dry-run", "--endpoint", dead, *token)
        assert result.exit_code == 3, result.output
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(f"pi-session: error: --endpoint 127.0.0.1:{port} cannot be reached")
        assert last.endswith("; check the URL") and "new dataset" in last
        assert "redact:" not in result.stderr and "secret" not in result.stderr
        assert result.stdout == "" and "Traceback" not in result.output
        assert TOKEN not in result.output
    assert work_done == {"probe_sources": 0, "prepare_all": 0}


def test_a_real_run_to_a_typed_unreachable_endpoint_stops_before_redacting(
    corpus: Corpus, work_done: dict[str, int]
) -> None:
    """Without --dry-run it already failed at the first read of the dataset: checked."""
    port = _closed_port()
    result = _publish(corpus, "--endpoint", f"http://127.0.0.1:{port}", "--token", TOKEN)
    assert result.exit_code == 3, result.output
    assert f"cannot reach 127.0.0.1:{port} while reading the dataset" in result.stderr
    assert "redact:" not in result.stderr and result.stdout == ""
    assert work_done == {"probe_sources": 0, "prepare_all": 0}


def test_an_endpoint_from_the_environment_still_plans_a_guess(
    corpus: Corpus, work_done: dict[str, int]
) -> None:
    """HF_ENDPOINT (not typed here) that cannot be reached: the plan is made, redacted, and
    its last line says it is a guess (exit 0), as before."""
    import huggingface_hub.constants  # noqa: F401  (read once, before HF_ENDPOINT is set)

    dead = f"http://127.0.0.1:{_closed_port()}"
    result = _publish(corpus, "--dry-run", "--token", TOKEN, env={"HF_ENDPOINT": dead})
    assert result.exit_code == 0, result.output
    assert "the plan above is a guess" in result.stderr.strip().splitlines()[-1]
    assert "redact: 6 secrets in 2 sessions" in result.stderr
    assert "would be 8 added" in result.stdout
    assert work_done["prepare_all"] == 1


# --- 2: --skip and a session in several project folders ---------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """PI_NAME in its project, an identical copy of it in a second project, and another
    session (pi-branched-2, an id with the same first 8 characters) in a third."""
    made = _home(tmp_path)
    for project, source, name in (
        ("/srv/renamed webapp", made.session, PI_NAME),
        ("/home/dev/projects/other", FIXTURES / "pi-branched-2.jsonl", OTHER_NAME),
    ):
        folder = made.sessions / encode_cwd(project)
        folder.mkdir(parents=True)
        shutil.copyfile(source, folder / name)
    return made


def _copies(home: Home) -> list[Path]:
    return sorted(home.sessions.glob(f"*/{PI_NAME}"))


def _published(fake: FakeHub) -> list[str]:
    return sorted(p for p in fake.files("alice/x") if p.startswith("sessions/"))


def test_skip_of_an_id_skips_every_identical_copy(home: Home, fake_hub: FakeHub) -> None:
    """Its id, a prefix unique to it (the copies are one session) or either copy's path:
    both copies stay out, and only the other session goes up."""
    copies = _copies(home)
    assert len(copies) == 2 and copies[0].read_bytes() == copies[1].read_bytes()
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"]
    for n, skip in enumerate((SESSION_ID, SESSION_ID[:10], str(copies[0]), str(copies[1]))):
        repo = f"alice/x{n}"
        result = home.run("publish", repo, "--all", "--skip", skip, *hub)
        assert result.code == 0, (skip, result.stderr)
        assert "--skip leaves out 2 of the 3 sessions selected" in result.stderr, skip
        assert "1 added" in result.stdout, skip
        sent = [p for p in fake_hub.files(repo) if p.startswith("sessions/")]
        assert sent == [f"sessions/2026-11/{OTHER_NAME}"], (skip, sent)


def test_skip_of_a_prefix_naming_two_sessions_is_an_error(home: Home, fake_hub: FakeHub) -> None:
    """`01a229f4` names PI_NAME (two identical copies) and another session: refused with
    the paths to pass, before anything is sent, even from the folder of one of them (where
    a SESSION argument takes that project's one). A longer prefix is fine."""
    project = home.base / "webapp"
    project.mkdir()
    mine = home.sessions / encode_cwd(str(project))
    mine.mkdir()
    shutil.copyfile(FIXTURES / "pi-branched-2.jsonl", mine / OTHER_NAME)
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"]
    for cwd in (home.work, project):
        done = _run_in(home, cwd, "publish", "alice/x", "--all", "--skip", "01a229f4", *hub)
        assert done.code == 1, done.stderr
        message = _error(done)
        assert message.startswith("--skip 01a229f4: session id prefix '01a229f4' is ambiguous")
        assert message.endswith("; pass the path of the one you mean; nothing sent")
        assert "it names 4 files: " in message
        for path in (*_copies(home), mine / OTHER_NAME):
            assert shlex.quote(str(path)) in message, (path, message)
    assert fake_hub.requests == []
    ok = home.run("publish", "alice/x", "--all", "--skip", "01a229f4-9ff2", *hub)
    assert ok.code == 0, ok.stderr
    assert "--skip leaves out 2 of the 4 sessions selected" in ok.stderr
    published = _published(fake_hub)  # pi-branched-2 (two copies of it here), not PI_NAME
    assert published and not any(SESSION_ID in path for path in published), published


def test_skip_of_an_id_two_different_files_carry_is_an_error(home: Home) -> None:
    """The same id in this project and another, with different bytes (a copy that went on):
    two sessions, as `stats ID` from a third folder says; --skip took this project's one."""
    data = home.session.read_bytes()
    grown = home.sessions / encode_cwd(str(home.work)) / PI_NAME
    grown.parent.mkdir()
    grown.write_bytes(data + data.splitlines(keepends=True)[-1])
    result = home.run("publish", "alice/x", "--all", "--skip", SESSION_ID, "--dry-run")
    assert result.code == 1, result.stderr
    message = _error(result)
    assert message.startswith(f"--skip {SESSION_ID}: session id prefix '{SESSION_ID}' is ")
    assert "is ambiguous, it names 3 files: " in message
    assert shlex.quote(str(grown)) in message and "redact:" not in result.stderr


def test_skip_of_an_id_only_a_header_carries(home: Home, fake_hub: FakeHub) -> None:
    """A session renamed (its id only in its header, no file name carrying it) is still
    found by --skip (a guard: no name matched, so there are no copies by name to look at)."""
    other = next(home.sessions.glob(f"*/{OTHER_NAME}"))
    renamed = other.parent / "renamed.jsonl"
    other.rename(renamed)
    hub = ["--endpoint", fake_hub.url, "--token", TOKEN, "-j", "1"]
    result = home.run("publish", "alice/x", "--all", "--skip", "01a229f4-a346", *hub)
    assert result.code == 0, result.stderr
    assert "--skip leaves out 1 of the 3 sessions selected" in result.stderr
    published = _published(fake_hub)  # PI_NAME's two copies (see the report), not renamed
    assert published and all(SESSION_ID in path for path in published), published
