"""`pi-session share` at stop 74: real HTTP to the loopback fake GitHub, real sessions.

An answer trickled a byte at a time is cut at a deadline per try (it held the share, and
the share state's lock, forever); a refused token is said with where it came from (a
variable overriding `gh`'s login is to be unset); an --api-url with a query or fragment
is a usage error; a rate-limit wait is counted from the answer's Date; GitHub's message
ending in a full stop gets no second one; a share state that cannot be written is refused
before anything is uploaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from exporter.publish import gist as gist_module
from exporter.publish.errors import PublishError
from exporter.publish.gist import GistClient
from tests.fakes.github import Failure, FakeGitHub
from tests.share_env import isolated_share_env, share

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
WRONG = "ghp_wrongwrongwrongwrongwrongwrong74"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolated_share_env(tmp_path, fake.token, monkeypatch)


def fake_gh(tmp_path: Path, script: str) -> None:
    """A `gh` on the (otherwise empty) PATH running ``script``."""
    gh = tmp_path / "empty-bin" / "gh"
    gh.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)


# --- 1: an answer that never ends ---------------------------------------------------------------


def test_an_update_answer_trickled_forever_is_cut_at_the_deadline_and_retried(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Headers, then a byte every 0.3 s: each byte reset the 30 s read timeout, so the share
    waited forever (holding gists.json.lock). Now each try ends at the deadline, is retried
    as a timeout is, and the share fails saying why."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    monkeypatch.setattr(gist_module, "REQUEST_DEADLINE", 1.0)
    fake.inject(Failure(action="trickle", delay=0.3, times=3, method="PATCH"))
    started = time.monotonic()
    result = share(fake, str(FIXTURE), "--no-thinking")  # a different page: an update
    took = time.monotonic() - started
    assert result.exit_code == 3, result.output
    assert took < 20, took
    reason = "the answer did not arrive whole within 1 s"
    assert f"GitHub request failed ({reason}), try 1/3; retrying in 1 s" in result.stderr
    assert "try 2/3; retrying in 2 s" in result.stderr
    assert f"after 3 tries ({reason})" in result.stderr
    assert [r.method for r in fake.requests].count("PATCH") == 3


def test_a_create_answer_trickled_forever_is_said_not_repeated(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A create whose answer never ends may have made the gist: said so once, not retried."""
    monkeypatch.setattr(gist_module, "REQUEST_DEADLINE", 1.0)
    fake.inject(Failure(action="trickle", delay=0.3, times=1, method="POST"))
    started = time.monotonic()
    result = share(fake, str(FIXTURE))
    assert time.monotonic() - started < 10
    assert result.exit_code == 3, result.output
    assert (
        "creating the gist failed (the answer did not arrive whole within 1 s) after GitHub "
        "may already have received it" in result.stderr
    )
    assert [r.method for r in fake.requests] == ["POST"]


# --- 2: where a refused token came from ---------------------------------------------------------


def test_a_rejected_token_from_a_variable_says_to_unset_it(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale GH_ENTERPRISE_TOKEN over a good `gh` login was told "run gh auth login",
    which cannot help while the variable is set."""
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", WRONG)
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert "rejected the token (401)" in result.stderr
    assert "came from GH_ENTERPRISE_TOKEN" in result.stderr
    assert "unset GH_ENTERPRISE_TOKEN" in result.stderr
    assert WRONG not in result.output and WRONG[:12] not in result.output


def test_a_rejected_token_from_the_option_or_gh_names_it(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passed = share(fake, str(FIXTURE), "--token", WRONG)
    assert passed.exit_code == 3, passed.output
    assert "token was passed with --token: pass a working one" in passed.stderr
    assert "unset" not in passed.stderr
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    fake_gh(tmp_path, f"echo {WRONG}")
    host = fake.base_url.removeprefix("http://")
    from_gh = share(fake, str(FIXTURE))
    assert from_gh.exit_code == 3, from_gh.output
    assert f"came from `gh auth token --hostname {host}`" in from_gh.stderr
    assert f"run `gh auth login --hostname {host}`" in from_gh.stderr
    assert WRONG not in passed.output + from_gh.output


def test_a_token_without_gist_rights_from_a_variable_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    noscope = "ghp_no_gist_scope_s74_ABCDEFG"
    with FakeGitHub(tokens=[noscope], no_scope_tokens=[noscope]) as fake:
        isolated_share_env(tmp_path, noscope, monkeypatch)
        result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert "missing gist scope?" in result.stderr
    assert "came from GH_ENTERPRISE_TOKEN" in result.stderr
    assert noscope not in result.output


def test_a_token_variable_with_a_control_character_is_named_not_said_passed(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "ghp_FAKE74\rX")
    result = share(fake, str(FIXTURE))
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "ghp_FAKE74é")
    accented = share(fake, str(FIXTURE))
    for said in (result, accented):
        assert said.exit_code == 1, said.output
        assert "token in GH_ENTERPRISE_TOKEN contains" in said.stderr
        assert "pass it again" not in said.stderr
        assert "set GH_ENTERPRISE_TOKEN again without them, or unset it" in said.stderr
        assert "FAKE74" not in said.output
    assert fake.requests == []


def test_a_gh_that_fails_is_quoted(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gh auth token` exiting 1 had its stderr dropped: only "no GitHub token found"."""
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    fake_gh(
        tmp_path,
        "echo 'no oauth token found for 127.0.0.1 (had ghp_leakedleakedleaked)' >&2\n"
        "echo 'second line' >&2\nexit 1",
    )
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert "failed (exit 1: " in result.stderr
    assert "no oauth token found for 127.0.0.1" in result.stderr
    assert "second line" not in result.stderr
    assert "leaked" not in result.output
    assert fake.requests == []


# --- 3: an --api-url with a query or fragment --------------------------------------------------


@pytest.mark.parametrize("tail", ["?per_page=1", "?access_token=SECRETQ74", "#frag"])
def test_an_api_url_with_a_query_or_fragment_is_a_usage_error(
    fake: FakeGitHub, env: dict, tail: str
) -> None:
    from click.testing import CliRunner

    from exporter.cli import cli

    api = fake.ghes_url + tail
    result = CliRunner().invoke(cli, ["share", str(FIXTURE), "--api-url", api])
    assert result.exit_code == 1, result.output
    assert "query or fragment" in result.output
    assert "SECRETQ74" not in result.output
    assert fake.requests == []


# --- 4: a rate-limit wait by the answer's clock -------------------------------------------------


def test_a_rate_limit_wait_is_counted_from_the_answers_date(fake: FakeGitHub) -> None:
    """A local clock 10 min fast took a reset 30 s away as long past: waited 1 s and was
    refused again. The answer's Date says how far the reset is."""
    waits: list[float] = []
    fast = GistClient(
        fake.base_url, fake.token, sleep=waits.append, clock=lambda: time.time() + 600
    )
    fake.rate_limit(reset_in=30)
    fast.create({"session.html": "<p>x</p>"}, "d")
    (waited,) = waits
    assert 28 <= waited <= 33, waited


# --- 5: a message with its own full stop --------------------------------------------------------


def test_githubs_full_stop_is_not_doubled(fake: FakeGitHub) -> None:
    client = GistClient(fake.base_url, fake.token, sleep=lambda _s: None)
    made = client.create({"session.html": "<p>x</p>"}, "d")
    fake.fail(409, body={"message": "Gist cannot be updated."}, method="PATCH")
    with pytest.raises(PublishError) as err:
        client.update(made.id, {"session.html": "<p>y</p>"})
    assert str(err.value).endswith("HTTP 409: Gist cannot be updated.")


# --- 6: a share state that cannot be written ---------------------------------------------------


def test_a_share_whose_state_cannot_be_written_is_refused_before_uploading(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gist was made, "could not save share state" said, exit 0: every share again made
    another gist, and none was held to what an earlier one left out."""
    blocker = tmp_path / "afile"
    blocker.write_text("x\n", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker / "x"))
    folder = blocker / "x" / "pi-session-export"
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 2, result.output
    assert f"the share state cannot be written in {folder}" in result.stderr
    assert "nothing was uploaded" in result.stderr and "XDG_STATE_HOME" in result.stderr
    assert fake.requests == [] and fake.gists == {}
    dry = share(fake, str(FIXTURE), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"warning: the share state cannot be written in {folder}" in dry.stderr
    assert fake.requests == []


def test_delete_with_a_state_that_cannot_be_written_still_deletes(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--delete is not refused: the gist goes, and the state not saved is warned of."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gist_id,) = fake.gists
    blocker = tmp_path / "afile"
    blocker.write_text("x\n", encoding="utf-8")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker / "x"))
    gone = share(fake, "--delete", gist_id)
    assert gone.exit_code == 0, gone.output
    assert fake.gists == {}


def test_a_dry_run_makes_no_state_folder(fake: FakeGitHub, env: dict) -> None:
    """The check that the state can be written makes no folder for a dry run."""
    dry = share(fake, str(FIXTURE), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "share state cannot be written" not in dry.stderr
    assert not Path(env["XDG_STATE_HOME"]).exists()


# --- 7: urllib3 with read1 (review of s74 share, #1) -------------------------------------------


def test_urllib3_with_read1_is_a_dependency() -> None:
    """The deadline reads the answer with urllib3's ``read1`` (2.2 on): with an older one
    the answer was read whole, unbounded, and nothing in pyproject.toml kept it out."""
    import tomllib
    from packaging.requirements import Requirement

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    with pyproject.open("rb") as handle:
        wanted = tomllib.load(handle)["project"]["dependencies"]
    (urllib3,) = [Requirement(r) for r in wanted if Requirement(r).name == "urllib3"]
    assert "2.2.0" in urllib3.specifier and "3.0" not in urllib3.specifier
    assert "2.1.0" not in urllib3.specifier and "1.26.20" not in urllib3.specifier


# --- 8: the deadline begins when the answer does (review of s74 share, #2) --------------------


def test_an_answer_that_comes_whole_after_a_slow_upload_is_kept(fake: FakeGitHub) -> None:
    """The deadline began before the upload: an answer that came whole after a slow upload
    (or a server slow to begin its answer) was thrown away as too slow, and retried."""
    client = GistClient(fake.base_url, fake.token, sleep=lambda _s: None, deadline=1.0)
    made = client.create({"session.html": "<p>x</p>"}, "d")
    fake.inject(
        Failure(status=409, body={"message": "Gist cannot be updated."}, delay=1.5, method="PATCH")
    )
    with pytest.raises(PublishError) as err:
        client.update(made.id, {"session.html": "<p>y</p>"})
    assert str(err.value).endswith("HTTP 409: Gist cannot be updated."), str(err.value)
    assert [r.method for r in fake.requests].count("PATCH") == 1


# --- 9: a failing gh keeps the variable's hint (review of s74 share, #3) -----------------------


def test_a_failing_gh_keeps_the_hint_about_the_other_hosts_variable(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from exporter.publish.errors import NoTokenError
    from exporter.publish.github_auth import resolve_github_token

    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    monkeypatch.setenv("GH_TOKEN", WRONG)
    fake_gh(tmp_path, "echo 'not logged into any hosts' >&2\nexit 1")
    host = fake.base_url.removeprefix("http://").removesuffix("/api/v3")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert 'failed (exit 1: "not logged into any hosts")' in result.stderr
    assert "GH_TOKEN is set, but it is used only for github.com" in result.stderr
    assert f"set GH_ENTERPRISE_TOKEN, pass --token, or run `gh auth login --hostname {host}`" in (
        result.stderr
    )
    assert WRONG not in result.output and fake.requests == []
    github_com = {"PATH": env["PATH"], "GH_ENTERPRISE_TOKEN": WRONG}
    with pytest.raises(NoTokenError) as err:
        resolve_github_token(None, "https://api.github.com", github_com)
    assert 'failed (exit 1: "not logged into any hosts")' in str(err.value)
    assert "GH_ENTERPRISE_TOKEN is set, but it is used only for a GitHub Enterprise" in str(
        err.value
    )


# --- 10: no query in any --api-url or --endpoint message (review of s74 share, #4) -------------


QUERY = "is followed by a query or fragment"


@pytest.mark.parametrize(
    ("api", "said"),
    [
        ("http://example.com/api/v3?access_token=SECRETQ", f"'http://example.com/api/v3' {QUERY}"),
        (
            "https://example.com/api/v3?access_token=SECRETQ\\x",
            f"'https://example.com/api/v3' {QUERY}",
        ),
        ("https://ex ample.com/api/v3#SECRETQ", f"'https://ex ample.com/api/v3' {QUERY}"),
        (
            "http://127.0.0.1:99999/api/v3?access_token=SECRETQ",
            "'http://127.0.0.1:99999/api/v3' names a port",
        ),
        (
            "ftp://example.com/api?access_token=SECRETQ",
            "'ftp://example.com/api' is not an http(s) URL",
        ),
    ],
)
def test_no_api_url_message_shows_its_query(
    fake: FakeGitHub, env: dict, api: str, said: str
) -> None:
    """Plain http, a bad port and an ambiguous host were said with the query (a token in
    it too), and a backslash in the query was said as an ambiguous host."""
    from click.testing import CliRunner

    from exporter.cli import cli

    result = CliRunner().invoke(cli, ["share", str(FIXTURE), "--api-url", api])
    assert result.exit_code == 1, result.output
    assert "SECRETQ" not in result.output
    assert said in result.output
    assert "ambiguously" not in result.output and "unencrypted" not in result.output
    assert fake.requests == []


@pytest.mark.parametrize("where", ["--endpoint", "HF_ENDPOINT"])
@pytest.mark.parametrize("tail", ["?token=SECRETQ", "#SECRETQ"])
def test_a_hub_endpoint_with_a_query_is_refused_naming_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, tail: str
) -> None:
    """An HF_ENDPOINT error said "--endpoint", which was never typed."""
    from click.testing import CliRunner

    from exporter.cli import cli

    endpoint = "https://hub.example.com" + tail
    args = ["publish", "someone/sessions", "--all", "--sessions-dir", str(tmp_path)]
    if where == "HF_ENDPOINT":
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
    else:
        monkeypatch.delenv("HF_ENDPOINT", raising=False)
        args += ["--endpoint", endpoint]
    result = CliRunner().invoke(cli, [*args, "--token", "hf_FAKE74"])
    assert result.exit_code == 1, result.output
    assert "'https://hub.example.com' is followed by a query or fragment" in result.output
    assert where in result.output
    if where == "HF_ENDPOINT":
        assert "--endpoint" not in result.output
    assert "SECRETQ" not in result.output


# --- 11: a Date without a zone, or far off (review of s74 share, #5) ---------------------------


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 5 h behind UTC (4 in summer)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@contextlib.contextmanager
def rate_limited_api(date: str) -> Iterator[str]:
    """A loopback API whose every answer is an exhausted rate limit, reset in 30 s, sent
    with this ``Date`` header (the fake GitHub sends the true one)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args: object) -> None:
            pass

        def date_time_string(self, timestamp: float | None = None) -> str:
            return date

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            body = json.dumps({"message": "API rate limit exceeded for user ID 1."}).encode()
            self.send_response(403)
            self.send_header("x-ratelimit-remaining", "0")
            self.send_header("x-ratelimit-reset", str(int(time.time()) + 30))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "date",
    [
        "naive",
        "-0000",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "Fri, 31 Dec 9999 23:59:59 GMT",
    ],
)
def test_a_rate_limit_wait_with_a_zoneless_or_far_off_date(new_york: None, date: str) -> None:
    """A Date without a zone was read as local time (in New York the 30 s wait became
    1 s); one in 1970 made it "try again in 24 h", one in year 9999 1 s."""
    stamp = time.strftime("%a, %d %b %Y %H:%M:%S", time.gmtime())
    date = {"naive": stamp, "-0000": f"{stamp} -0000"}.get(date, date)
    waits: list[float] = []
    with rate_limited_api(date) as api:
        client = GistClient(api, "ghp_" + "a" * 36, sleep=waits.append)
        with pytest.raises(PublishError):
            client.create({"session.html": "<p>x</p>"}, "d")
    assert len(waits) == 1 and 28 <= waits[0] <= 33, waits


# --- 12: one full stop between GitHub's words and ours (review of s74 share, #6) --------------


def test_githubs_full_stop_is_not_doubled_on_422_or_403(fake: FakeGitHub) -> None:
    client = GistClient(fake.base_url, fake.token, sleep=lambda _s: None)
    fake.fail(422, body={"message": "Validation Failed."}, method="POST")
    with pytest.raises(PublishError) as rejected:
        client.create({"session.html": "<p>x</p>"}, "d")
    assert str(rejected.value) == "GitHub rejected the gist (422): Validation Failed."
    made = client.create({"session.html": "<p>x</p>"}, "d")
    message = "Resource not accessible by personal access token."
    fake.fail(403, body={"message": message}, method="PATCH")
    with pytest.raises(PublishError) as refused:
        client.update(made.id, {"session.html": "<p>y</p>"})
    assert f"(403): {message} The token lacks permission" in str(refused.value)
    fake.fail(401, body={"message": "Bad credentials."}, method="PATCH")
    with pytest.raises(PublishError) as bad:
        client.update(made.id, {"session.html": "<p>y</p>"})
    assert "(401): Bad credentials. It is invalid" in str(bad.value)
    for said in (rejected, refused, bad):
        assert ".." not in str(said.value) and ".;" not in str(said.value)


# --- 13: token shapes gh's stderr may hold (review of s74 share, #7) ---------------------------


@pytest.mark.parametrize(
    "secret",
    [
        "0123456789abcdef0123456789abcdef01234567",  # a classic 40-hex token
        "x_ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",  # glued to a word character
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789",  # any long run of token characters
    ],
)
def test_a_failing_gh_hides_every_token_shape(
    fake: FakeGitHub, env: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    fake_gh(tmp_path, f"echo 'bad token {secret} for host' >&2\nexit 1")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert 'failed (exit 1: "bad token ' in result.stderr
    assert secret not in result.output and "ABCDEFGHIJKLMNOP" not in result.output
    assert "0123456789abcdef" not in result.output


# --- 14: every variable that would still be used is named (review of s74 share, #8) ----------


def test_a_rejected_variable_token_names_the_one_used_next(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "unset GH_ENTERPRISE_TOKEN to use gh's login" with GITHUB_ENTERPRISE_TOKEN set too:
    that one was used next, not gh's login."""
    from exporter.publish.github_auth import token_source_fix

    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", WRONG)
    monkeypatch.setenv("GITHUB_ENTERPRISE_TOKEN", WRONG + "2")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    assert "unset GH_ENTERPRISE_TOKEN and GITHUB_ENTERPRISE_TOKEN to use gh's login" in (
        result.stderr
    )
    assert WRONG not in result.output
    both = {"GH_TOKEN": "a", "GITHUB_TOKEN": "b", "GH_ENTERPRISE_TOKEN": "c"}
    assert "unset GH_TOKEN and GITHUB_TOKEN to use" in token_source_fix("GH_TOKEN", both)
    assert "unset GITHUB_TOKEN to use" in token_source_fix("GITHUB_TOKEN", {"GITHUB_TOKEN": "b"})


# --- second review: a trickle inside one read, a slow uplink, the raw download, credentials ----


def _raw_server(answer: Callable[[Any], None]) -> tuple[Any, str]:
    """A one-connection loopback server: reads the request (headers and a body of the
    length they say) and lets ``answer`` write to the socket. The listener and its URL."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        conn, _ = listener.accept()
        with contextlib.suppress(OSError), conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            header, _, body = head.partition(b"\r\n\r\n")
            length = 0
            for line in header.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            while len(body) < length:
                body += conn.recv(65536)
            answer(conn)

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


def _trickle(head: bytes) -> Callable[[Any], None]:
    """An answer: ``head``, then a byte every 0.1 s for 10 s."""

    def answer(conn: Any) -> None:
        conn.sendall(head)
        for _ in range(100):
            conn.sendall(b"a")
            time.sleep(0.1)

    return answer


def test_a_trickle_inside_one_read_is_cut_at_the_deadline() -> None:
    """A chunk's extension (or a gzip comment, or trailers) trickled inside one read of
    the library: the check between reads never ran, and the deadline was passed by as long
    as the server went on (http.client reads a 64 KB line a byte at a time)."""

    listener, url = _raw_server(
        _trickle(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=")
    )
    with listener:
        client = GistClient(url, "ghp_" + "a" * 36, max_tries=1, deadline=1.0)
        started = time.monotonic()
        with pytest.raises(PublishError) as error:
            client.get("abc")
        assert time.monotonic() - started < 5, "the trickle went on past the deadline"
    assert "the answer did not arrive whole within 1 s" in str(error.value)


def test_the_raw_copy_of_a_gist_is_read_under_the_deadline_too() -> None:
    """An old record's gist copy is downloaded from its raw address under the share
    state's lock: that download had no deadline, and held every share on the machine."""

    listener, url = _raw_server(_trickle(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"))
    with listener:
        client = GistClient(url, "ghp_" + "a" * 36, max_tries=1, deadline=1.0)
        started = time.monotonic()
        with pytest.raises(gist_module.AnswerTooSlow):
            client.download(f"{url}/raw/session.jsonl")
        assert time.monotonic() - started < 5


def test_an_upload_still_going_out_from_the_send_buffer_gets_its_answer(
    fake: FakeGitHub,
) -> None:
    """The system takes a body of up to a few MB into its send buffer at once; the wait
    for the answer (30 s) then began while the upload still went out on a slow link, and
    a steady 100 KB at 20 KB/s failed, said as "GitHub may have received it" (scaled
    here: a 1 s timeout for 5 s of upload)."""
    import socket

    port = int(fake.base_url.rsplit(":", 1)[1].split("/")[0])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def pipe(source: Any, sink: Any, rate: float | None) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(8192):
                if rate:
                    time.sleep(len(data) / rate)
                sink.sendall(data)
        for each in (source, sink):
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)

    def throttle() -> None:  # a slow uplink: the client is read at 20 KB/s
        client_side, _ = listener.accept()
        server_side = socket.create_connection(("127.0.0.1", port))
        threading.Thread(target=pipe, args=(client_side, server_side, 20_000), daemon=True).start()
        threading.Thread(target=pipe, args=(server_side, client_side, None), daemon=True).start()

    threading.Thread(target=throttle, daemon=True).start()
    with listener:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        client = GistClient(url, fake.token, timeout=1.0, max_tries=1, sleep=lambda _s: None)
        made = client.create({"session.html": "<p>" + "x" * 100_000 + "</p>"}, "d")
    assert made.id in fake.gists


def test_a_password_holding_a_query_character_is_never_shown() -> None:
    """The user part was masked only up to a "?" or "#": 'https://user:pa#SECRET@host/'
    was said as 'https://user:pa'."""
    import click

    from exporter.cli import check_http_url

    for url in ("https://user:pa#SECRET7@host:99999/", "https://SECRETC?@host/x?y"):
        with pytest.raises(click.BadParameter) as error:
            check_http_url(url, "--api-url")
        assert "SECRET" not in str(error.value.message), error.value.message
