"""GistClient, token resolution, share state and viewer links, over real HTTP to a loopback fake."""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import stat
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from exporter.publish.errors import (
    AuthError,
    NetworkError,
    NotFoundError,
    NoTokenError,
    PublishError,
    RateLimitError,
    TooLargeError,
    ValidationError,
)
from exporter.publish.gist import (
    DEFAULT_API_URL,
    Gist,
    GistClient,
    gists_page,
    github_host,
    resolve_github_token,
)
from exporter.publish.gist_share import (
    GIST_MAX_BYTES,
    check_size,
    files_size,
    ignored_env_viewer,
    is_pi_format_viewer,
    share_files,
    viewer_link,
)
from exporter.publish.share_state import ShareState
from tests.fakes.github import (  # noqa: F401  (fixture import)
    NO_USER_AGENT_BODY,
    FakeGitHub,
    closed_port_url,
    fake_github_fixture,
)

TOKEN = "ghp_fake_test_token_0123456789"
HTML = "<!doctype html><title>Pi session</title><p>héllo ✓</p>"


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep any proxy settings away from 127.0.0.1 traffic."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


class SleepRecorder:
    """Injected ``sleep``: records waits instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def client(fake_github: FakeGitHub, sleeps: SleepRecorder) -> GistClient:
    return GistClient(fake_github.base_url, TOKEN, sleep=sleeps, timeout=5)


def assert_no_token(err: BaseException, token: str = TOKEN) -> None:
    assert token not in str(err)
    assert token not in repr(err)
    assert "\n" not in str(err)


# --------------------------------------------------------------------------- happy paths


def test_create_sends_the_documented_request(client: GistClient, fake_github: FakeGitHub) -> None:
    gist = client.create({"session.html": HTML}, "Pi session 2026-11-30")

    req = fake_github.last
    assert (req.method, req.path) == ("POST", "/gists")
    assert req.header("Accept") == "application/vnd.github+json"
    assert req.header("X-GitHub-Api-Version") == "2022-11-28"
    assert re.fullmatch(r"pi-session-export/\S+", req.header("User-Agent") or "")
    assert req.header("Authorization") == f"Bearer {TOKEN}"
    assert (req.header("Content-Type") or "").startswith("application/json")
    assert req.json["public"] is False
    assert req.json["description"] == "Pi session 2026-11-30"
    assert list(req.json["files"]) == ["session.html"]
    assert req.json["files"]["session.html"]["content"] == HTML

    assert re.fullmatch(r"[0-9a-f]{32}", gist.id)
    assert gist.html_url == f"{fake_github.base_url}/gist-html/{gist.id}"
    info = gist.files["session.html"]
    assert info["size"] == len(HTML.encode("utf-8"))
    assert info["truncated"] is False
    assert requests.get(info["raw_url"], timeout=5).content.decode("utf-8") == HTML
    assert fake_github.gists[gist.id]["public"] is False


def test_create_public_only_when_asked(client: GistClient, fake_github: FakeGitHub) -> None:
    gist = client.create({"session.html": HTML}, "d", public=True)
    assert fake_github.last.json["public"] is True
    assert gist.public is True


def test_update_patches_same_gist(client: GistClient, fake_github: FakeGitHub) -> None:
    first = client.create({"session.html": HTML}, "v1")
    second = client.update(first.id, {"session.html": "<p>v2</p>"}, "v2")

    req = fake_github.last
    assert (req.method, req.path) == ("PATCH", f"/gists/{first.id}")
    assert req.header("Authorization") == f"Bearer {TOKEN}"
    assert "public" not in req.json
    assert req.json == {"files": {"session.html": {"content": "<p>v2</p>"}}, "description": "v2"}
    assert second.id == first.id and second.html_url == first.html_url
    assert fake_github.content(first.id) == "<p>v2</p>"
    assert len(fake_github.gists[first.id]["history"]) == 2


def test_get_reports_truncation_of_big_files(client: GistClient) -> None:
    big = "x" * (1024 * 1024 + 10)
    gist = client.get(client.create({"session.html": big}, "big").id)
    assert gist.files["session.html"]["truncated"] is True
    assert gist.files["session.html"]["size"] == len(big)


def test_delete(client: GistClient, fake_github: FakeGitHub) -> None:
    gist = client.create({"session.html": HTML}, "d")
    assert client.delete(gist.id) is None
    assert (fake_github.last.method, fake_github.last.path) == ("DELETE", f"/gists/{gist.id}")
    assert gist.id not in fake_github.gists
    with pytest.raises(NotFoundError) as err:
        client.delete(gist.id)
    assert gist.id in str(err.value)
    # GitHub's 404 may mean "not yours to delete": the way out is GitHub's site, not --new
    assert "404 to deleting gist" in str(err.value) and "on GitHub's site" in str(err.value)
    assert "--new" not in str(err.value)


def test_get_of_a_gist_that_is_gone_is_not_found_exit_2(client: GistClient) -> None:
    """A gist GitHub no longer has was "Gist … was not found", exit 3 (a remote failure): a
    thing that cannot be found is exit 2, and the message is lower-case like the others."""
    gist = client.create({"session.html": HTML}, "d")
    client.delete(gist.id)
    with pytest.raises(NotFoundError) as err:
        client.get(gist.id)
    assert err.value.exit_code == 2 and err.value.status == 404
    assert str(err.value) == (
        f"gist {gist.id} was not found (deleted, or not visible to this token)"
    )
    assert_no_token(err.value)


def test_update_unknown_gist_is_not_found(client: GistClient) -> None:
    with pytest.raises(NotFoundError) as err:
        client.update("0" * 32, {"session.html": HTML}, "d")
    assert err.value.exit_code == 3
    assert err.value.status == 404
    assert "404 to updating gist" in str(err.value) and "--new" in str(err.value)


def test_enterprise_prefix(fake_github: FakeGitHub, sleeps: SleepRecorder) -> None:
    client = GistClient(fake_github.ghes_url + "/", TOKEN, sleep=sleeps)
    gist = client.create({"session.html": HTML}, "ghes")
    assert fake_github.last.path == "/api/v3/gists"
    client.update(gist.id, {"session.html": "<p>2</p>"}, "ghes")
    assert fake_github.last.path == f"/api/v3/gists/{gist.id}"
    assert viewer_link(gist, fake_github.ghes_url) == gist.html_url


# --------------------------------------------------------------------------- share_files


def test_share_files_creates_then_updates(
    client: GistClient, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    state = ShareState(tmp_path / "gists.json")
    gist1, action1 = share_files(client, state, "sess-1", {"session.html": HTML}, "one")
    gist2, action2 = share_files(client, state, "sess-1", {"session.html": "<p>2</p>"}, "two")
    assert (action1, action2) == ("created", "updated")
    assert gist2.id == gist1.id
    assert state.get(client.api_url, "sess-1") == gist1.id
    # an update reads the gist first (which files an earlier share left), then PATCHes once
    assert fake_github.requests_to() == [
        "POST /gists",
        f"GET /gists/{gist1.id}",
        f"PATCH /gists/{gist1.id}",
    ]

    gist3, action3 = share_files(client, state, "sess-1", {"session.html": HTML}, "x", new=True)
    assert action3 == "created" and gist3.id != gist1.id
    assert state.get(client.api_url, "sess-1") == gist3.id


def test_two_shares_at_once_keep_both_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each share rewrote gists.json from what it had read: when two finished together
    (two Pi windows, a script), one session's record was lost, so its next share made a
    new gist and the old secret one stayed up with no note anywhere."""
    import threading
    import time

    path = tmp_path / "gists.json"
    save = ShareState._save

    def slow_save(self: ShareState, gists: dict) -> None:  # a slow disk: both have read
        time.sleep(0.3)
        save(self, gists)

    monkeypatch.setattr(ShareState, "_save", slow_save)
    threads = [
        threading.Thread(target=ShareState(path).remember, args=("https://h/api", f"s{i}", f"g{i}"))
        for i in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    state = ShareState(path)
    assert [state.get("https://h/api", f"s{i}") for i in range(3)] == ["g0", "g1", "g2"]


def test_two_shares_of_one_session_at_once_make_one_gist(
    fake_github: FakeGitHub, sleeps: SleepRecorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both read "no gist yet" and both created one: two secret gists of the same session,
    one of them remembered nowhere. The second share now waits for the first, then finds
    its gist (and, the page being the same, leaves it unchanged)."""
    import threading
    import time

    create = GistClient.create
    other_waits = threading.Event()

    def slow_create(self: GistClient, *args: object, **kwargs: object) -> Gist:
        # an upload takes a while: the other share starts meanwhile (until it waits, not
        # a fixed 0.3 s: on a busy machine the other thread had not got there yet)
        other_waits.wait(timeout=20)
        return create(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(GistClient, "create", slow_create)
    results: list[tuple[Gist, str]] = []
    waits: list[bool] = []

    def waiting() -> None:
        waits.append(True)
        other_waits.set()

    def share() -> None:
        client = GistClient(fake_github.base_url, TOKEN, sleep=sleeps, timeout=5)
        state = ShareState(tmp_path / "gists.json")
        with state.locked(on_wait=waiting):
            results.append(share_files(client, state, "sess-1", {"session.html": HTML}, "d"))

    threads = [threading.Thread(target=share) for _ in range(2)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    assert sorted(action for _, action in results) == ["created", "unchanged"]
    assert len({gist.id for gist, _ in results}) == 1 and waits == [True]
    assert fake_github.requests_to().count("POST /gists") == 1


def test_share_files_falls_back_to_create_when_gist_is_gone(
    client: GistClient, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    state = ShareState(tmp_path / "gists.json")
    stale = "f" * 32
    state.remember(client.api_url, "sess-1", stale)

    gist, action = share_files(client, state, "sess-1", {"session.html": HTML}, "again")

    assert action == "replaced"  # the CLI says the old link no longer works
    assert gist.id != stale
    assert fake_github.requests_to() == [f"GET /gists/{stale}", "POST /gists"]
    assert state.get(client.api_url, "sess-1") == gist.id


def test_share_files_public_change_creates_new_gist(
    client: GistClient, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    state = ShareState(tmp_path / "gists.json")
    secret, _ = share_files(client, state, "s", {"session.html": HTML}, "d")
    public, action = share_files(client, state, "s", {"session.html": HTML}, "d", public=True)
    assert action == "created" and public.id != secret.id and public.public
    assert fake_github.requests_to() == ["POST /gists", "POST /gists"]


# --------------------------------------------------------------------------- auth errors


def test_bad_token_is_401_auth_error(fake_github: FakeGitHub, sleeps: SleepRecorder) -> None:
    wrong = "ghp_wrong_token_ABCDEFGHIJ"
    client = GistClient(fake_github.base_url, wrong, sleep=sleeps)
    with pytest.raises(AuthError) as err:
        client.create({"session.html": HTML}, "d")
    assert str(err.value).startswith("GitHub rejected the token (401)")
    assert "Bad credentials" in str(err.value)
    assert err.value.exit_code == 3
    assert_no_token(err.value, wrong)
    assert wrong not in repr(client)
    assert sleeps.calls == []


def test_404_on_create_means_missing_gist_scope(sleeps: SleepRecorder) -> None:
    noscope = "ghp_no_gist_scope_ZYXWVUT"
    with FakeGitHub(tokens=[noscope], no_scope_tokens=[noscope]) as fake:
        client = GistClient(fake.base_url, noscope, sleep=sleeps)
        with pytest.raises(AuthError) as err:
            client.create({"session.html": HTML}, "d")
    assert "token cannot create gists (missing gist scope?)" in str(err.value)
    assert err.value.status == 404
    assert_no_token(err.value, noscope)


def test_403_without_rate_limit_is_permission_error(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.fail(403, body={"message": "Resource not accessible by personal access token"})
    with pytest.raises(AuthError) as err:
        client.create({"session.html": HTML}, "d")
    assert "(403)" in str(err.value)
    assert "Resource not accessible" in str(err.value)
    assert "permission" in str(err.value)
    assert not isinstance(err.value, RateLimitError)
    assert sleeps.calls == []
    assert len(fake_github.requests) == 1


@pytest.mark.parametrize("operation", ["create", "update"])
def test_a_saml_sso_403_says_sso_and_gives_the_authorization_url(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder, operation: str
) -> None:
    """A 403 from an organization's SAML single sign-on enforcement was "the token lacks
    permission (classic tokens need the gist scope...)": a new token was made for nothing.
    It is said as SSO, with the authorization address GitHub's X-GitHub-SSO header gives."""
    gist = client.create({"session.html": HTML}, "d") if operation == "update" else None
    url = "https://github.com/orgs/acme/sso?authorization_request=AB12CD34EF56GH78"
    fake_github.saml_enforced(url=url)
    before = len(fake_github.requests)
    with pytest.raises(AuthError) as err:
        if gist is None:
            client.create({"session.html": HTML}, "d")
        else:
            client.update(gist.id, {"session.html": HTML + "x"}, "d")
    text = str(err.value)
    assert f"GitHub refused to {operation} the gist (HTTP 403)" in text
    assert "SAML single sign-on" in text and f"open {url} " in text
    assert "scope" not in text and "lacks permission" not in text
    assert err.value.status == 403 and not isinstance(err.value, RateLimitError)
    assert sleeps.calls == [] and len(fake_github.requests) == before + 1  # not retried
    assert_no_token(err.value)


@pytest.mark.parametrize(
    "url",
    [
        None,  # header "required" without url=
        "javascript:alert(1)",
        "https://github.com/orgs/acme/sso?x=1\x1b]8;;evil\x07",
        "https://github.com/orgs/acme/sso?" + "a" * 600,
        "https://github.com/orgs/acme/sso?t=" + TOKEN,  # an address holding the token
    ],
)
def test_a_saml_sso_403_with_an_unusable_url_says_where_to_authorize(
    client: GistClient, fake_github: FakeGitHub, url: str | None
) -> None:
    """The address is the server's text: shown only when it is one plain https URL (no
    controls, not overlong); else the message says where on GitHub to authorize the token,
    and never shows the token."""
    if url is None:
        fake_github.saml_enforced()
        fake_github.failures[-1].headers["X-GitHub-SSO"] = "required"
    else:
        fake_github.saml_enforced(url=url)
    with pytest.raises(AuthError) as err:
        client.create({"session.html": HTML}, "d")
    text = str(err.value)
    assert "SAML single sign-on" in text and "scope" not in text
    if url is None or "javascript" in url or "\x1b" in url or len(url) > 500:
        assert "Configure SSO" in text and "http" not in text
    assert not any(ch in text for ch in "\x1b\x07")
    assert_no_token(err.value)


@pytest.mark.parametrize(
    ("body", "ctype", "shown"),
    [
        (
            "<html><head><title>Access denied \x1b]0;x\x07by &amp; proxy</title>"
            f"<script>var t='{TOKEN}';</script></head><body>" + "blocked " * 200,
            "text/html",
            "Access denied ]0;x by & proxy",
        ),
        (
            f"Forbidden:\nyour single sign-on session\u202e expired ({TOKEN})\n",
            "text/plain",
            "Forbidden: your single sign-on session expired (***)",
        ),
        (
            "<html><body><h1>Blocked</h1><p>by policy</p></body></html>",
            "text/html",
            "Blocked by policy",
        ),
    ],
)
def test_a_403_page_that_is_not_json_is_quoted_not_guessed(
    client: GistClient, fake_github: FakeGitHub, body: str, ctype: str, shown: str
) -> None:
    """Review s45 #5: a 403 that is not GitHub's JSON (a proxy's page, single sign-on) was
    reported as "the token lacks permission (...gist scope...)", and what the server said
    was dropped. Its words are said instead: one short line, no controls, no token."""
    fake_github.fail(403, body=body, headers={"Content-Type": ctype})
    with pytest.raises(AuthError) as err:
        client.create({"session.html": HTML}, "d")
    text = str(err.value)
    assert f'(HTTP 403, a page, not GitHub\'s JSON): "{shown}"' in text
    assert "scope" not in text and "permission" not in text
    assert "proxy, firewall or sign-on page" in text
    assert len(text) < 400 and not any(ch in text for ch in "\x1b\x07\u202e")
    assert_no_token(err.value)
    fake_github.fail(403, body="", headers={"Content-Type": "text/html"})
    with pytest.raises(AuthError, match=r"HTTP 403, an empty answer\); a proxy"):
        client.create({"session.html": HTML}, "d")


# --------------------------------------------------------------------------- rate limits


def test_short_primary_rate_limit_is_retried_once(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.rate_limit(reset_in=30, status=403)
    gist = client.create({"session.html": HTML}, "d")
    assert gist.id in fake_github.gists
    assert fake_github.requests_to() == ["POST /gists", "POST /gists"]
    assert len(sleeps.calls) == 1
    assert 0 < sleeps.calls[0] <= 60


def test_rate_limit_retry_happens_only_once(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.rate_limit(reset_in=10, status=429, times=5)
    with pytest.raises(RateLimitError):
        client.create({"session.html": HTML}, "d")
    assert len(fake_github.requests) == 2
    assert len(sleeps.calls) == 1


def test_long_rate_limit_raises_with_local_retry_time(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.rate_limit(reset_in=3600)
    with pytest.raises(RateLimitError) as err:
        client.create({"session.html": HTML}, "d")
    exc = err.value
    assert sleeps.calls == []
    assert len(fake_github.requests) == 1
    assert exc.wait_seconds is not None and 3500 < exc.wait_seconds <= 3602
    assert exc.retry_at is not None and exc.retry_at.tzinfo is not None
    assert exc.retry_at.strftime("%H:%M:%S") in str(exc)
    assert "min" in str(exc) and "rate limit" in str(exc)
    assert exc.exit_code == 3
    assert_no_token(exc)


def test_retry_after_header_is_honoured(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.secondary_rate_limit(retry_after=5)
    client.create({"session.html": HTML}, "d")
    assert sleeps.calls == [5.0]
    assert len(fake_github.requests) == 2


def test_long_retry_after_raises(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    fake_github.secondary_rate_limit(retry_after=120, status=403)
    with pytest.raises(RateLimitError) as err:
        client.create({"session.html": HTML}, "d")
    assert err.value.wait_seconds == 120
    assert "2 min" in str(err.value)
    assert sleeps.calls == []


@pytest.mark.parametrize("status", [403, 429])
def test_a_wait_of_exactly_60_s_is_sat_out_once(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder, status: int
) -> None:
    """Issue 5: retry once automatically when the wait is <= 60 s; 60 is still inside."""
    fake_github.secondary_rate_limit(retry_after=60, status=status)
    gist = client.create({"session.html": HTML}, "d")
    assert sleeps.calls == [60.0]
    assert fake_github.requests_to() == ["POST /gists", "POST /gists"]
    assert list(fake_github.gists) == [gist.id]


@pytest.mark.parametrize("status", [403, 429])
def test_a_wait_of_61_s_is_an_error_without_sleeping(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder, status: int
) -> None:
    """One second over the 60 s limit: no automatic wait, a RateLimitError saying when."""
    fake_github.secondary_rate_limit(retry_after=61, status=status)
    with pytest.raises(RateLimitError) as err:
        client.create({"session.html": HTML}, "d")
    assert err.value.wait_seconds == 61
    assert sleeps.calls == []
    assert fake_github.requests_to() == ["POST /gists"]
    assert fake_github.gists == {}
    assert_no_token(err.value)


def test_rate_limit_time_uses_injected_clock(fake_github: FakeGitHub) -> None:
    """The moment said is the client's clock plus the wait, and the wait is counted from
    the answer's Date (the fake's real time), not from that clock (test_share_s74)."""
    now = datetime(2026, 11, 30, 12, 0, 0, tzinfo=timezone.utc).timestamp()
    client = GistClient(fake_github.base_url, TOKEN, sleep=lambda s: None, clock=lambda: now)
    sent = time.time()
    fake_github.fail(
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(sent) + 7200)},
        body={"message": "API rate limit exceeded for user ID 1."},
    )
    with pytest.raises(RateLimitError) as err:
        client.create({"session.html": HTML}, "d")
    assert err.value.retry_at is not None
    waited = err.value.retry_at.timestamp() - now
    assert 7197 <= waited <= 7203, waited
    assert err.value.retry_at.astimezone().strftime("%H:%M") in str(err.value)


# --------------------------------------------------------------------------- validation


def test_422_reports_githubs_validation_message(
    client: GistClient, fake_github: FakeGitHub
) -> None:
    with pytest.raises(ValidationError) as err:
        client.create({"session.html": ""}, "empty")
    text = str(err.value)
    assert "(422): Validation Failed" in text and "missing_field" in text
    assert err.value.exit_code == 3
    assert fake_github.gists == {}


def test_422_uses_error_messages_when_present(client: GistClient, fake_github: FakeGitHub) -> None:
    fake_github.fail(
        422,
        body={
            "message": "Validation Failed",
            "errors": [{"resource": "Gist", "code": "custom", "message": "contents are too big"}],
        },
    )
    with pytest.raises(ValidationError, match="contents are too big"):
        client.create({"session.html": HTML}, "d")


# --------------------------------------------------------------------------- network


def test_5xx_is_retried_with_backoff(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    gist = client.create({"session.html": HTML}, "d")
    fake_github.fail(500, times=2)
    client.update(gist.id, {"session.html": HTML + "v2"})
    assert fake_github.requests_to() == ["POST /gists"] + [f"PATCH /gists/{gist.id}"] * 3
    assert sleeps.calls == [1.0, 2.0]


def test_5xx_every_time_is_network_error(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    gist = client.create({"session.html": HTML}, "d")
    fake_github.fail(500, times=3)
    with pytest.raises(NetworkError) as err:
        client.update(gist.id, {"session.html": HTML})
    assert "HTTP 500" in str(err.value) and "3 times" in str(err.value)
    assert err.value.status == 500 and err.value.exit_code == 3
    assert len(fake_github.requests) == 4
    assert sleeps.calls == [1.0, 2.0]
    assert_no_token(err.value)


@pytest.mark.parametrize("failure", ["502", "drop", "hang"])
def test_create_is_never_sent_twice(
    fake_github: FakeGitHub, sleeps: SleepRecorder, failure: str
) -> None:
    """GitHub may have created the gist before the 502, the dropped connection or the timeout:
    retrying the POST could leave a second secret copy of the session behind."""
    client = GistClient(fake_github.base_url, TOKEN, sleep=sleeps, timeout=0.3)
    if failure == "502":
        fake_github.fail(502)
    elif failure == "drop":
        fake_github.drop_connection(method="POST")
    else:
        fake_github.hang(1.0, method="POST")
    with pytest.raises(NetworkError) as err:
        client.create({"session.html": HTML}, "d")
    # where to look is the host in use, not always gist.github.com; an API at a host's root
    # has no known gists page, and none is made up (it said https://127.0.0.1:PORT/gist/)
    host = github_host(fake_github.base_url)
    assert "not retrying" in str(err.value)
    assert f"Check your secret gists (on {host}) before sharing again" in str(err.value)
    assert "gist.github.com" not in str(err.value) and "/gist/" not in str(err.value)
    assert fake_github.requests_to() == ["POST /gists"] and sleeps.calls == []
    assert_no_token(err.value)


@pytest.mark.parametrize(
    ("api_url", "page"),
    [
        ("https://api.github.com", "https://gist.github.com/"),
        ("https://api.github.com/", "https://gist.github.com/"),
        ("https://ghe.example.com/api/v3", "https://ghe.example.com/gist/"),
        # the scheme given is kept: an http intranet or test host has no https
        ("http://ghe.example.com:8080/api/v3/", "http://ghe.example.com:8080/gist/"),
        ("https://HOST.example.com/github/api/v3", "https://host.example.com/github/gist/"),
        ("https://x:ghp_S3cretS3cret@ghe.example.com/api/v3", "https://ghe.example.com/gist/"),
        ("http://[::1]:8080/api/v3", "http://[::1]:8080/gist/"),
        ("http://127.0.0.1:8080", None),  # not GHES's shape: unknown
        ("https://api.acme.ghe.com", None),
    ],
)
def test_gists_page_is_only_said_where_it_is_known(api_url: str, page: str | None) -> None:
    assert gists_page(api_url) == page


def test_a_failed_create_on_ghes_names_its_gists_page(
    fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    """A GHES API root (``…/api/v3``) gives the host's own gists page, with the scheme
    given (the fake is plain http): it was always https."""
    client = GistClient(fake_github.ghes_url, TOKEN, sleep=sleeps)
    fake_github.fail(502)
    with pytest.raises(NetworkError) as err:
        client.create({"session.html": HTML}, "d")
    page = fake_github.ghes_url.removesuffix("/api/v3") + "/gist/"
    assert page.startswith("http://") and f"gists on {page} before" in str(err.value)
    assert_no_token(err.value)


@pytest.mark.parametrize(("max_tries", "waits"), [(2, [1.0]), (1, [])], ids=["2", "1"])
def test_max_tries_is_respected(
    fake_github: FakeGitHub, sleeps: SleepRecorder, max_tries: int, waits: list[float]
) -> None:
    """``max_tries`` bounds the 5xx retries of an update. (A POST is never retried on a 5xx,
    so the old version of this test, on create, passed whatever ``max_tries`` was.)"""
    gist = GistClient(fake_github.base_url, TOKEN, sleep=sleeps).create({"session.html": HTML}, "d")
    fake_github.clear_requests()
    client = GistClient(fake_github.base_url, TOKEN, sleep=sleeps, max_tries=max_tries)
    fake_github.fail(500, times=5, method="PATCH")
    with pytest.raises(NetworkError) as err:
        client.update(gist.id, {"session.html": HTML + "v2"})
    times = "time" if max_tries == 1 else "times"
    assert f"HTTP 500 {max_tries} {times} in a row" in str(err.value)
    assert fake_github.requests_to() == [f"PATCH /gists/{gist.id}"] * max_tries
    assert sleeps.calls == waits
    assert fake_github.content(gist.id) == HTML  # no PATCH got through


def test_connection_refused_is_network_error(sleeps: SleepRecorder) -> None:
    client = GistClient(closed_port_url(), TOKEN, sleep=sleeps, timeout=2)
    with pytest.raises(NetworkError) as err:
        client.create({"session.html": HTML}, "d")
    assert "connection refused" in str(err.value)
    assert "3 tries" in str(err.value)
    assert sleeps.calls == [1.0, 2.0]
    assert_no_token(err.value)


def test_dropped_connection_is_retried(
    client: GistClient, fake_github: FakeGitHub, sleeps: SleepRecorder
) -> None:
    gist = client.create({"session.html": HTML}, "d")
    fake_github.drop_connection(times=1, method="PATCH")
    client.update(gist.id, {"session.html": HTML + "v2"})
    assert len(fake_github.requests) == 3
    assert sleeps.calls == [1.0]


def test_timeouts_become_network_error(fake_github: FakeGitHub, sleeps: SleepRecorder) -> None:
    client = GistClient(fake_github.base_url, TOKEN, sleep=sleeps, timeout=0.2, max_tries=2)
    gist = client.create({"session.html": HTML}, "d")
    fake_github.hang(1.0, times=2)
    with pytest.raises(NetworkError) as err:
        client.get(gist.id)
    assert "no answer within 0.2 s" in str(err.value)
    assert sleeps.calls == [1.0]


def test_token_never_leaks_into_errors_or_logs(
    fake_github: FakeGitHub, sleeps: SleepRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = GistClient(fake_github.base_url, TOKEN, sleep=sleeps)
    errors: list[PublishError] = []
    # A hostile server echoing the token back must not get it printed either.
    fake_github.fail(400, body={"message": f"token {TOKEN} is odd"})
    fake_github.fail(500)
    fake_github.fail(403, body={"message": f"nope {TOKEN}"})
    fake_github.fail(422, body={"message": "Validation Failed", "errors": [f"bad {TOKEN}"]})
    fake_github.rate_limit(reset_in=5000)
    for _ in range(5):
        with pytest.raises(PublishError) as err:
            client.create({"session.html": HTML}, "d")
        errors.append(err.value)
    with pytest.raises(NotFoundError) as nf:
        client.update("nope", {"session.html": HTML})
    errors.append(nf.value)
    for exc in errors:
        assert_no_token(exc)
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(client)


# --------------------------------------------------------------------------- tokens


def write_fake_gh(directory: Path, body: str) -> Path:
    """Put an executable ``gh`` shell script in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "gh"
    script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def test_explicit_token_wins() -> None:
    env = {"GH_TOKEN": "env1", "GITHUB_TOKEN": "env2"}
    assert resolve_github_token("  explicit  ", env=env) == "explicit"


def test_gh_token_before_github_token() -> None:
    assert resolve_github_token(None, env={"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}) == "a"
    assert resolve_github_token(None, env={"GH_TOKEN": " ", "GITHUB_TOKEN": "b"}) == "b"


def test_github_com_ignores_enterprise_vars() -> None:
    env = {"GH_ENTERPRISE_TOKEN": "ent", "GITHUB_TOKEN": "dotcom"}
    assert resolve_github_token(None, "https://api.github.com", env=env) == "dotcom"


def test_enterprise_vars_come_first_for_ghes() -> None:
    api = "https://ghe.example.com/api/v3"
    env = {
        "GH_TOKEN": "gh",
        "GITHUB_TOKEN": "github",
        "GH_ENTERPRISE_TOKEN": "ent1",
        "GITHUB_ENTERPRISE_TOKEN": "ent2",
    }
    assert resolve_github_token(None, api, env=env) == "ent1"
    del env["GH_ENTERPRISE_TOKEN"]
    assert resolve_github_token(None, api, env=env) == "ent2"
    del env["GITHUB_ENTERPRISE_TOKEN"]
    # github.com's tokens never go to another host (gh reads them for github.com only)
    with pytest.raises(NoTokenError, match="GH_ENTERPRISE_TOKEN"):
        resolve_github_token(None, api, env=env, gh_binary="/nonexistent/gh")


def test_gh_auth_token_is_asked_with_hostname(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    argfile = tmp_path / "args.txt"
    write_fake_gh(bindir, f'echo "$@" > "{argfile}"\necho gho_from_gh_cli')
    env = {"PATH": str(bindir), "HOME": str(tmp_path)}

    assert resolve_github_token(None, "https://api.github.com", env=env) == "gho_from_gh_cli"
    assert argfile.read_text(encoding="utf-8").split() == [
        "auth",
        "token",
        "--hostname",
        "github.com",
    ]
    assert resolve_github_token(None, "https://ghe.example.com/api/v3", env=env)
    assert argfile.read_text(encoding="utf-8").split()[-1] == "ghe.example.com"


def test_env_var_beats_gh(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    write_fake_gh(bindir, "echo gho_from_gh_cli")
    env = {"PATH": str(bindir), "GITHUB_TOKEN": "from_env"}
    assert resolve_github_token(None, env=env) == "from_env"


@pytest.mark.parametrize(
    "script",
    [
        "echo 'not logged in' >&2; exit 1",  # gh logged out
        "echo",  # empty output
        "exec sleep 5",  # hung gh (killed by the timeout)
    ],
)
def test_gh_failures_mean_no_token(tmp_path: Path, script: str) -> None:
    bindir = tmp_path / "bin"
    write_fake_gh(bindir, script)
    with pytest.raises(NoTokenError):
        resolve_github_token(None, env={"PATH": str(bindir)}, gh_timeout=0.5)


def test_no_token_message_explains_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(NoTokenError) as err:
        resolve_github_token(None, env={"PATH": str(tmp_path)})
    text = str(err.value)
    assert "\n" not in text
    assert "gist" in text and "Gists: read and write" in text
    assert "GH_TOKEN" in text and "gh auth login" in text
    assert err.value.exit_code == 3

    with pytest.raises(NoTokenError) as ent:
        resolve_github_token(None, "https://ghe.example.com/api/v3", env={})
    assert "GH_ENTERPRISE_TOKEN" in str(ent.value)
    assert "--hostname ghe.example.com" in str(ent.value)


def test_no_token_says_which_token_variable_was_seen_and_why_unused() -> None:
    """Review s45 #5: GH_TOKEN set with another --api-url said just "no GitHub token found",
    as if it had not been seen. It is said to be github.com's (never its value)."""
    api = "https://ghe.example.com/api/v3"
    env = {"GH_TOKEN": "ghp_dotcom_secret_1", "GITHUB_TOKEN": " "}
    with pytest.raises(NoTokenError) as err:
        resolve_github_token(None, api, env=env, gh_binary="/nonexistent/gh")
    text = str(err.value)
    assert "GH_TOKEN is set, but it is used only for github.com" in text
    assert "not sent to ghe.example.com" in text and "GITHUB_TOKEN" not in text
    assert "set GH_ENTERPRISE_TOKEN, pass --token" in text
    assert "--hostname ghe.example.com" in text and "ghp_dotcom_secret_1" not in text
    env = {"GH_ENTERPRISE_TOKEN": "ent_secret_2", "GITHUB_ENTERPRISE_TOKEN": "ent_secret_3"}
    with pytest.raises(NoTokenError) as dotcom:
        resolve_github_token(None, env=env, gh_binary="/nonexistent/gh")
    text = str(dotcom.value)
    seen = "GH_ENTERPRISE_TOKEN and GITHUB_ENTERPRISE_TOKEN are set, but they are used only"
    assert f"{seen} for a GitHub Enterprise Server --api-url" in text
    assert "ent_secret" not in text and err.value.exit_code == 3


def test_github_host() -> None:
    assert github_host("https://api.github.com") == "github.com"
    assert github_host("https://ghe.example.com/api/v3") == "ghe.example.com"
    assert github_host("https://api.acme.ghe.com") == "acme.ghe.com"
    assert github_host("http://127.0.0.1:8080") == "127.0.0.1:8080"


def test_client_requires_a_token() -> None:
    with pytest.raises(NoTokenError):
        GistClient("https://api.github.com", "")


# --------------------------------------------------------------------------- state


def test_state_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "state" / "gists.json"
    state = ShareState(path)
    assert state.get("https://api.github.com", "s1") is None
    state.remember("https://api.github.com", "s1", "abc")
    state.remember("https://ghe.example.com/api/v3", "s1", "def")
    state.remember("https://api.github.com", "sessión-ü", "ghi")

    again = ShareState(path)
    assert again.get("https://api.github.com/", "s1") == "abc"
    assert again.get("https://ghe.example.com/api/v3", "s1") == "def"
    assert again.get("https://api.github.com", "sessión-ü") == "ghi"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == 1
    assert "sessión-ü" in path.read_text(encoding="utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    left = sorted(p.name for p in path.parent.iterdir())
    assert left == ["gists.json", "gists.json.lock"]  # no temp files left; the (empty) lock

    assert again.forget("https://api.github.com", "s1") is True
    assert again.forget("https://api.github.com", "s1") is False
    assert again.get("https://api.github.com", "s1") is None
    assert again.get("https://ghe.example.com/api/v3", "s1") == "def"


def test_state_never_holds_a_token_from_the_api_url(tmp_path: Path) -> None:
    """The state was keyed by the URL's whole host part: ``--api-url
    https://x:TOKEN@ghe.example.com`` wrote the token into gists.json."""
    path = tmp_path / "gists.json"
    ShareState(path).remember("https://x:ghp_S3cretS3cret@ghe.example.com/api/v3", "s1", "abc")
    assert "ghp_S3cretS3cret" not in path.read_text(encoding="utf-8")
    assert ShareState(path).get("https://ghe.example.com/api/v3", "s1") == "abc"


@pytest.mark.parametrize("content", ["{not json", "[]", '{"gists": 3}', "\udcff"])
def test_corrupt_state_is_treated_as_empty(tmp_path: Path, content: str) -> None:
    path = tmp_path / "gists.json"
    path.write_bytes(content.encode("utf-8", errors="surrogateescape"))
    state = ShareState(path)
    assert state.get("https://api.github.com", "s1") is None
    assert state.corrupt is True
    state.remember("https://api.github.com", "s1", "abc")
    assert ShareState(path).get("https://api.github.com", "s1") == "abc"
    # the unreadable file is kept: only it knew the other sessions' gists
    kept = path.with_name("gists.json.corrupt")
    assert kept.read_bytes() == content.encode("utf-8", errors="surrogateescape")
    path.write_bytes(b"{broken again")  # a second one does not replace the first
    ShareState(path).remember("https://api.github.com", "s2", "def")
    assert kept.read_bytes() == content.encode("utf-8", errors="surrogateescape")
    assert [p.read_bytes() for p in tmp_path.glob("gists.json.corrupt-*")] == [b"{broken again"]


def test_default_state_path_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert ShareState().path == tmp_path / "xdg" / "pi-session-export" / "gists.json"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".local" / "state" / "pi-session-export" / "gists.json"
    assert ShareState().path == expected


# --------------------------------------------------------------------------- viewer links


GIST = Gist(
    id="0123456789abcdef0123456789abcdef",
    html_url="https://gist.github.com/0123456789abcdef0123456789abcdef",
    files={"session.html": {"raw_url": "https://r/x", "size": 10, "truncated": False}},
)


def test_viewer_link_default_is_gisthost() -> None:
    assert viewer_link(GIST, env={}) == f"https://gisthost.github.io/?{GIST.id}/session.html"


def test_viewer_link_template_wins() -> None:
    env = {"PI_SHARE_VIEWER_URL": "https://pi.dev/session/"}
    link = viewer_link(GIST, template="https://v.example/?{id}/{file}", env=env)
    assert link == f"https://v.example/?{GIST.id}/session.html"
    ghes = viewer_link(GIST, "https://ghe.example.com/api/v3", "https://v/{id}", env=env)
    assert ghes == f"https://v/{GIST.id}"


GISTHOST_LINK = f"https://gisthost.github.io/?{GIST.id}/session.html"


@pytest.mark.parametrize(
    "pi_viewer",
    ["https://pi.dev/session/", "https://me.github.io/viewer/#old", "https://pi.dev/s/#{id}"],
)
def test_a_pi_format_pi_share_viewer_url_is_not_the_view_link(pi_viewer: str) -> None:
    """Review s45 #1: PI_SHARE_VIEWER_URL as Pi's users have it (pi.dev, or any base URL
    that gets ``#ID``) names a viewer of Pi's own exports, which needs Pi's session-data
    block: the link it made could not show our page. It is left out, and said why."""
    env = {"PI_SHARE_VIEWER_URL": pi_viewer}
    assert viewer_link(GIST, env=env) == GISTHOST_LINK
    assert ignored_env_viewer(DEFAULT_API_URL, None, env) == pi_viewer
    assert is_pi_format_viewer(pi_viewer)
    # a --viewer-url wins (and is not "ignored"), as does Enterprise's own page
    assert ignored_env_viewer(DEFAULT_API_URL, "https://v/?{id}", env) == ""
    assert ignored_env_viewer("https://ghe.example.com/api/v3", None, env) == ""


def test_html_viewers_keep_working_from_the_variable_and_as_a_base_url() -> None:
    """An HTML viewer's template in PI_SHARE_VIEWER_URL is used (it got ``#ID`` appended to
    the template before); gisthost-style viewers given as a base URL get ``?ID/FILE``, the
    form they read, not Pi's ``#ID``."""
    env = {"PI_SHARE_VIEWER_URL": "https://v.example/?{id}/{file}"}
    assert viewer_link(GIST, env=env) == f"https://v.example/?{GIST.id}/session.html"
    assert ignored_env_viewer(DEFAULT_API_URL, None, env) == ""
    for base in ("https://gisthost.github.io/", "https://gisthost.github.io/#x"):
        assert viewer_link(GIST, env={"PI_SHARE_VIEWER_URL": base}) == GISTHOST_LINK
        assert viewer_link(GIST, template=base, env={}) == GISTHOST_LINK
        assert not is_pi_format_viewer(base)
    preview = viewer_link(GIST, template="https://gistpreview.github.io/", env={})
    assert preview == f"https://gistpreview.github.io/?{GIST.id}/session.html"
    # an explicit base URL of another viewer is still honoured (the CLI warns about it)
    mine = viewer_link(GIST, template="https://me.github.io/viewer/", env={})
    assert mine == f"https://me.github.io/viewer/#{GIST.id}"
    assert not is_pi_format_viewer("https://shittycodingagent.ai/session/?{id}")


def test_viewer_link_enterprise_uses_html_url() -> None:
    env = {"PI_SHARE_VIEWER_URL": "https://pi.dev/session/"}
    assert viewer_link(GIST, "https://ghe.example.com/api/v3", env=env) == GIST.html_url


# --------------------------------------------------------------------------- sizes


def test_check_size() -> None:
    assert check_size(500_000, force=False) is None
    warning = check_size(3 * 1024 * 1024, force=False)
    assert warning and "3.0 MiB" in warning and "raw_url" in warning
    with pytest.raises(TooLargeError) as err:
        check_size(GIST_MAX_BYTES + 1, force=False)
    text = str(err.value)
    assert err.value.exit_code == 2
    for hint in ("--no-tool-output", "--active-branch-only", "Hugging Face", "--force"):
        assert hint in text
    assert check_size(GIST_MAX_BYTES + 1, force=True)


def test_files_size_counts_utf8_bytes() -> None:
    assert files_size({"a": "é", "b": "ab"}) == 4


# --------------------------------------------------------------------------- the fake itself


def test_fake_requires_bearer_for_writes(fake_github: FakeGitHub) -> None:
    url = f"{fake_github.base_url}/gists"
    body = {"files": {"session.html": {"content": "x"}}}
    assert requests.post(url, json=body, timeout=5).status_code == 401
    bad = requests.post(url, json=body, headers={"Authorization": "Bearer nope"}, timeout=5)
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    ok = requests.post(url, json=body, headers={"Authorization": f"token {TOKEN}"}, timeout=5)
    assert ok.status_code == 201
    assert ok.headers["Location"] == f"{url}/{ok.json()['id']}"
    assert ok.headers["x-ratelimit-remaining"].isdigit()
    assert ok.headers["Content-Type"] == "application/json; charset=utf-8"


def send_raw(
    method: str, url: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, str, str]:
    """One request through http.client, which (unlike requests/urllib3) adds no User-Agent;
    returns (status, Content-Type, body)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=5)
    try:
        connection.request(method, parts.path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, answer.getheader("Content-Type") or "", answer.read().decode()
    finally:
        connection.close()


@pytest.mark.parametrize("method", ["POST", "PATCH", "GET", "DELETE"])
@pytest.mark.parametrize("user_agent", [None, ""])
def test_fake_refuses_a_request_without_user_agent(
    fake_github: FakeGitHub, method: str, user_agent: str | None
) -> None:
    """GitHub answers 403 (an HTML page, not JSON) to an API call with no User-Agent, before
    it looks at the token (publish-apis.md §1.1): a client path that lost it must fail."""
    gist = GistClient(fake_github.base_url, TOKEN).create({"session.html": HTML}, "d")
    path = "/gists" + ("" if method == "POST" else f"/{gist.id}")
    body = json.dumps({"files": {"session.html": {"content": "changed"}}}).encode()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if user_agent is not None:
        headers["User-Agent"] = user_agent
    for root in (fake_github.base_url, fake_github.ghes_url):
        status, ctype, text = send_raw(method, root + path, headers, body)
        assert (status, ctype, text) == (403, "text/html", NO_USER_AGENT_BODY)
        assert "make sure your request has a User-Agent header" in text
    assert list(fake_github.gists) == [gist.id]
    assert fake_github.content(gist.id) == HTML  # nothing was created, changed or deleted
    headers["User-Agent"] = "curl/8.5.0"  # the same call with one goes through
    assert send_raw(method, fake_github.base_url + path, headers, body)[0] in (200, 201, 204)


def test_every_client_call_sends_the_user_agent(
    client: GistClient, fake_github: FakeGitHub
) -> None:
    """GitHub rejects any call without a User-Agent: create, get, update and delete all
    send ``pi-session-export/<version>`` (only create was checked before)."""
    gist = client.create({"session.html": HTML}, "d")
    client.get(gist.id)
    client.update(gist.id, {"session.html": HTML + "v2"})
    client.delete(gist.id)
    assert fake_github.requests_to() == [
        "POST /gists",
        f"GET /gists/{gist.id}",
        f"PATCH /gists/{gist.id}",
        f"DELETE /gists/{gist.id}",
    ]
    agents = {r.header("User-Agent") or "" for r in fake_github.requests}
    assert len(agents) == 1 and re.fullmatch(r"pi-session-export/\S+", agents.pop())


def test_fake_patch_rules(fake_github: FakeGitHub) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    base = fake_github.base_url
    created = requests.post(
        f"{base}/gists",
        json={"files": {"a.html": {"content": "1"}, "b.txt": {"content": "2"}}},
        headers=auth,
        timeout=5,
    ).json()
    url = f"{base}/gists/{created['id']}"
    assert requests.patch(url, json={}, headers=auth, timeout=5).status_code == 422
    patched = requests.patch(
        url,
        json={"public": True, "files": {"a.html": {"filename": "c.html"}, "b.txt": None}},
        headers=auth,
        timeout=5,
    ).json()
    assert set(patched["files"]) == {"c.html"}
    assert patched["public"] is False
    assert requests.get(url, timeout=5).json()["files"]["c.html"]["content"] == "1"
    assert requests.delete(url, headers=auth, timeout=5).status_code == 204
    assert requests.get(url, timeout=5).status_code == 404


def test_fake_502_above_body_limit() -> None:
    with FakeGitHub(max_body_bytes=1000) as fake:
        client = GistClient(fake.base_url, TOKEN, sleep=lambda s: None, max_tries=1)
        with pytest.raises(NetworkError, match="HTTP 502"):
            client.create({"session.html": "x" * 2000}, "big")


def test_fake_is_loopback_only(fake_github: FakeGitHub) -> None:
    assert fake_github.base_url.startswith("http://127.0.0.1:")
    assert os.environ.get("NO_PROXY") == "127.0.0.1,localhost"


def test_deleting_a_gist_forgets_only_records_that_still_name_it(tmp_path: Path) -> None:
    """`share --delete` listed the gist's sessions, then forgot each by session id: a share
    that had meanwhile replaced one of them with a new gist lost that new record."""
    api = "https://api.github.com"
    state = ShareState(tmp_path / "gists.json")
    state.remember(api, "s1", "g1")
    state.remember(api, "s2", "g1")
    state.remember(api, "s3", "g3")
    state.remember(api, "s1", "g2")  # a share of s1 made a new gist before the delete
    assert state.forget_gist(api, "g1") == 1
    assert [state.get(api, s) for s in ("s1", "s2", "s3")] == ["g2", None, "g3"]
    assert state.forget_gist(api, "g1") == 0


@pytest.mark.parametrize(
    ("gist_id", "html_url"),
    [
        ({"x": 1}, "https://gist.github.com/abc"),
        (5, "https://gist.github.com/abc"),
        ("ab/../cd", "https://gist.github.com/abc"),
        ("abc123", "https://gist.github.com/\x1b]0;pwned\x07"),
        ("abc123", "javascript:alert(1)"),
        ("abc123", 5),
    ],
)
def test_an_answer_whose_id_or_address_is_no_gist_s_is_refused(
    gist_id: object, html_url: object
) -> None:
    """The id and address are printed, kept and offered back (`share --delete ID`): a
    hostile or broken API's `{"x": 1}` id was suggested as `--delete {'x': 1}`, and an
    address holding a terminal escape reached the terminal (bug hunt 2026-12-05)."""
    from exporter.publish.errors import PublishError
    from exporter.publish.gist_answers import Gist

    with pytest.raises(PublishError, match="unexpected answer"):
        Gist.from_json({"id": gist_id, "html_url": html_url, "files": {}})
    good = Gist.from_json({"id": "abc123", "html_url": "https://gist.github.com/abc123"})
    assert (good.id, good.html_url) == ("abc123", "https://gist.github.com/abc123")
    assert Gist.from_json({"id": "abc123"}).html_url == ""  # none given: none printed
