"""`pi-session share` after the s65 bug hunt: real HTTP to the loopback fake GitHub.

A proxy that cannot be reached is not "GitHub may already have received it" (nothing was
sent), a server echoing the token in a created gist's id, address or Location has it
printed and kept nowhere, the 1 MiB truncation warning is judged per file, going back to
the secret gist after a --public share finds it unchanged, and a delete whose answer was
lost is said as done.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.fakes.github import FakeGitHub, closed_port_url
from tests.share_env import isolated_share_env, share

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
SAMPLER = FIXTURES / "fixtures" / "every-entry-type.jsonl"
LARGE = FIXTURES / "fixtures" / "pi-large-session.jsonl"

#: A token a server can echo where a gist id goes (ids are letters and digits).
ECHOED_TOKEN = "Zq8TokenSecretValue1234567890abcdef"
MIB = 1024 * 1024


@pytest.fixture
def fake() -> FakeGitHub:
    with FakeGitHub(tokens=(ECHOED_TOKEN,)) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: state dir, token, no gh, loopback without proxies."""
    monkeypatch.setattr("time.sleep", lambda seconds: None)  # retries' waits are said only
    return isolated_share_env(tmp_path, fake.token, monkeypatch)


def state_text(env: dict[str, str]) -> str:
    path = Path(env["XDG_STATE_HOME"]) / "pi-session-export" / "gists.json"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def known_gists(env: dict[str, str]) -> set[str]:
    """Every gist id the share state names, as a session's gist or an earlier one."""
    text = state_text(env)
    if not text:
        return set()
    ids: set[str] = set()
    for sessions in json.loads(text)["gists"].values():
        for record in sessions.values():
            ids.add(record["gist_id"])
            ids.update(g["gist_id"] for g in record.get("earlier", []))
    return ids


def error_line(result: Result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("pi-session: error")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output
    return errors[0]


# --------------------------------------------------------------------------- #2 proxies


def _through_proxy(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    """Every request to the loopback API goes through ``proxy`` (no NO_PROXY for it)."""
    for name in ("NO_PROXY", "no_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("HTTPS_PROXY", proxy)


def test_a_proxy_that_cannot_be_reached_is_retried_and_said_without_its_password(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unreachable HTTPS_PROXY was "creating the gist failed (connection refused) after
    GitHub may already have received it; not retrying": nothing had been sent."""
    port = closed_port_url().rsplit(":", 1)[1]
    _through_proxy(monkeypatch, f"http://bob:proxypass99@127.0.0.1:{port}")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    line = error_line(result)
    assert f"the proxy 127.0.0.1:{port} could not be reached" in line
    assert "after 3 tries" in line and "check the proxy setting" in line
    assert "may already have received" not in result.output
    assert "try 1/3" in result.stderr  # retried, as a refused connection is
    assert "proxypass99" not in result.output and "bob" not in result.output
    assert fake.requests == [] and known_gists(env) == set()


@pytest.mark.parametrize(
    ("proxy", "said"),
    [
        ("http://bob:proxypass99@[::1", "the proxy's address is not a usable URL"),
        ("socks5://bob:proxypass99@127.0.0.1:1", "PySocks"),
    ],
)
def test_a_proxy_that_cannot_be_used_is_said_as_nothing_sent(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch, proxy: str, said: str
) -> None:
    """A malformed proxy address was "the request could not be completed", a SOCKS proxy
    without PySocks "redirected to an address that is not http(s)", both "after GitHub may
    already have received it"."""
    if proxy.startswith("socks") and importlib.util.find_spec("socks") is not None:
        pytest.skip("PySocks is installed: the SOCKS proxy is used")
    _through_proxy(monkeypatch, proxy)
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    line = error_line(result)
    assert "nothing was sent to GitHub" in line and said in line
    assert "may already have received" not in line and "redirected" not in line
    assert "proxypass99" not in result.output and "bob" not in result.output
    assert fake.requests == []


class _ProxyAsking407:
    """A loopback proxy that answers every request (CONNECT or a plain one) with 407."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://carol:proxypass77@127.0.0.1:{self.sock.getsockname()[1]}"
        self.seen: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with client:
                self.seen.append(client.recv(65536))
                client.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: "
                    b"Basic realm=x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )


@pytest.mark.parametrize("api_url", ["https://api.github.com", "http://localhost:9/api/v3"])
def test_a_proxy_asking_for_a_password_is_said_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_url: str
) -> None:
    """A 407 to CONNECT was retried three times ("GitHub request failed ..."), though it
    comes again; through an http:// --api-url (no tunnel) it was "GitHub API error on gist
    create: HTTP 407", the proxy unnamed."""
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    proxy = _ProxyAsking407()
    token = "ghp_" + "T" * 36
    isolated_share_env(tmp_path, token, monkeypatch)
    _through_proxy(monkeypatch, proxy.url)
    args = ["share", str(FIXTURE), "--api-url", api_url, "--token", token]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output
    line = error_line(result)
    assert f"the proxy 127.0.0.1:{proxy.url.rsplit(':', 1)[1]}" in line
    assert "407" in line and "may already have received" not in line
    assert len(proxy.seen) == 1 and "try 1/3" not in result.stderr  # not retried
    assert "proxypass77" not in result.output and "carol" not in result.output
    assert token not in result.output


# --------------------------------------------------------------------------- #3 echoed token


def _gist_answer(gist_id: str, html_url: str) -> dict[str, Any]:
    page = "<p>x</p>"
    files = {"session.html": {"filename": "session.html", "size": 8, "content": page}}
    return {"id": gist_id, "html_url": html_url, "public": False, "files": files}


@pytest.mark.parametrize(
    ("where", "exit_code"),
    [("html_url", 0), ("id", 3), ("location", 3)],
)
def test_a_created_gist_answered_with_the_token_never_prints_or_keeps_it(
    fake: FakeGitHub, env: dict, where: str, exit_code: int
) -> None:
    """A 201 whose address, id or Location held the token (a server echoing it, not
    GitHub) had it printed in the Gist and View lines and the --delete hint, and kept in
    the share state as the gist's id."""
    plain_id = "a" * 32
    if where == "html_url":
        answer = _gist_answer(plain_id, f"{fake.base_url}/{ECHOED_TOKEN}")
        fake.fail(201, body=answer, method="POST")
    elif where == "id":
        fake.fail(201, body=_gist_answer(ECHOED_TOKEN, f"{fake.base_url}/x"), method="POST")
    else:
        location = {"Location": f"{fake.base_url}/gists/{ECHOED_TOKEN}"}
        fake.fail(201, body="not json", headers=location, method="POST")
    result = share(fake, str(SAMPLER))
    assert result.exit_code == exit_code, result.output
    assert ECHOED_TOKEN[:8] not in result.output
    assert ECHOED_TOKEN[:8] not in state_text(env)
    if where == "html_url":  # the gist is known by its id: an address built from it
        assert f"Gist: {fake.base_url}/gists/{plain_id}\n" in result.stdout
        assert known_gists(env) == {plain_id}
    else:
        assert "check your secret gists" in error_line(result).lower()
        assert known_gists(env) == set()
    assert [r.method for r in fake.requests] == ["POST"]  # nothing read by the token's id


def test_an_update_answered_with_the_token_in_its_address_never_prints_it(
    fake: FakeGitHub, env: dict
) -> None:
    assert share(fake, str(SAMPLER)).exit_code == 0
    (gist_id,) = fake.gists
    fake.fail(200, body=_gist_answer(gist_id, f"{fake.base_url}/{ECHOED_TOKEN}"), method="PATCH")
    result = share(fake, str(SAMPLER), "--no-thinking")
    assert result.exit_code == 0, result.output
    assert "gist updated (secret)" in result.stderr
    assert ECHOED_TOKEN[:8] not in result.output and ECHOED_TOKEN[:8] not in state_text(env)
    assert known_gists(env) == {gist_id}


# --------------------------------------------------------------------------- #4 sizes


def _dry_run(tmp_path: Path, *args: str) -> tuple[Result, dict[str, int]]:
    result = CliRunner().invoke(cli, ["share", str(LARGE), "--dry-run", *args])
    assert result.exit_code == 0, result.output
    written = {p.suffix: p.stat().st_size for p in tmp_path.glob("pi-session-share-*")}
    return result, written


def test_the_truncation_warning_is_not_given_when_no_file_is_over_1_mib(
    tmp_path: Path, env: dict
) -> None:
    """Three files of 0.9, 0.6 and 0.3 MiB were warned of as "the export is 1.8 MiB;
    GitHub truncates gist files over 1 MiB": GitHub's limit is per file."""
    result, sizes = _dry_run(tmp_path, "--no-tool-output", "--with-jsonl", "--with-markdown")
    assert sorted(sizes) == [".html", ".jsonl", ".md"]
    assert sum(sizes.values()) > MIB and max(sizes.values()) < MIB  # what the test is about
    assert "truncates" not in result.stderr and "warning" not in result.stderr


def test_the_truncation_warning_names_the_file_over_1_mib(tmp_path: Path, env: dict) -> None:
    result, sizes = _dry_run(tmp_path, "--with-jsonl")
    assert sizes[".html"] > MIB > sizes[".jsonl"]  # the page is over, the copy is not
    warning = [line for line in result.stderr.splitlines() if "truncates" in line]
    assert len(warning) == 1, result.stderr
    assert f", of which session.html is {sizes['.html'] / MIB:.1f} MiB;" in warning[0]
    assert "session.jsonl" not in warning[0]


# --------------------------------------------------------------------------- #5 back to secret


def test_going_back_to_the_secret_gist_after_a_public_share_finds_it_unchanged(
    fake: FakeGitHub, env: dict
) -> None:
    """The earlier gist's record kept no digest of what it held: the share back to it sent
    the same files again (a new revision, said as "gist updated")."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (secret_id,) = fake.gists
    assert share(fake, str(FIXTURE), "--public").exit_code == 0
    fake.clear_requests()
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert "gist unchanged (secret)" in result.stderr
    assert "revision history" not in result.stderr
    assert fake.requests_to() == [f"GET /gists/{secret_id}"]
    assert f"/{secret_id}\n" in result.stdout


# --------------------------------------------------------------------------- #6 lost answer


class _LosesADeleteAnswer(FakeGitHub):
    """Deletes the gist on the first DELETE, then closes the connection unanswered."""

    lost = 1

    def _handle(self, h: Any) -> None:
        if h.command == "DELETE" and self.lost:
            self.lost -= 1
            self.gists.pop(h.path.rsplit("/", 1)[-1], None)
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        super()._handle(h)


def test_a_delete_whose_answer_was_lost_is_said_as_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its retry got 404, and the run ended "was not found ... it was already gone on
    GitHub", exit 2, though it had deleted the gist itself."""
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    with _LosesADeleteAnswer(tokens=(ECHOED_TOKEN,)) as lossy:
        env = isolated_share_env(tmp_path, lossy.token, monkeypatch)
        assert share(lossy, str(SAMPLER)).exit_code == 0
        (gist_id,) = lossy.gists
        result = share(lossy, "--delete", gist_id)
    assert result.exit_code == 0, result.output
    assert f"Deleted gist {gist_id}" in result.stdout
    assert "not found" not in result.output and "already gone" not in result.output
    assert known_gists(env) == set()


def test_a_retried_delete_refused_while_the_gist_is_still_there_is_not_said_as_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lost answer is no reason to believe a 404 while a read still finds the gist (a
    token that may not delete it: GitHub's 404)."""
    monkeypatch.setattr("time.sleep", lambda seconds: None)
    reader = "ReadOnlyToken0123456789abcdefXYZ"
    with FakeGitHub(tokens=(ECHOED_TOKEN, reader), no_scope_tokens=(reader,)) as server:
        isolated_share_env(tmp_path, server.token, monkeypatch)
        assert share(server, str(SAMPLER)).exit_code == 0
        (gist_id,) = server.gists
        server.drop_connection(method="DELETE")
        result = share(server, "--delete", gist_id, "--token", reader)
        assert gist_id in server.gists
    assert result.exit_code == 3, result.output
    assert "Deleted gist" not in result.output
    assert f"GitHub answered 404 to deleting gist {gist_id}" in error_line(result)
