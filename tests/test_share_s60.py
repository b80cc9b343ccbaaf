"""`pi-session share` after the s60 bug hunt: real HTTP to the loopback fake GitHub.

A gist deleted on GitHub is forgotten (its refusal's way out works), requests' own failures
and redirects are exit 3 in our words, a gist GitHub made but answered oddly is recorded
(or said to be up), a damaged state file is no traceback, the gist description shows a
name's controls as signs, and a token from ``gh`` is its last token-like line.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.fakes.github import FakeGitHub
from tests.share_env import isolated_share_env

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURE = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
SAMPLER = FIXTURES / "fixtures" / "every-entry-type.jsonl"  # session id sampler-0001


@pytest.fixture
def fake() -> FakeGitHub:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An isolated environment: state dir, token, no gh, loopback without proxies."""
    monkeypatch.setattr("time.sleep", lambda seconds: None)  # retries' waits are said only
    return isolated_share_env(tmp_path, fake.token, monkeypatch)


def share(fake: FakeGitHub, *args: str, api: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["share", *args, "--api-url", api or fake.base_url])


def state_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_STATE_HOME"]) / "pi-session-export" / "gists.json"


def known_gists(env: dict[str, str]) -> set[str]:
    """Every gist id the share state names, as a session's gist or an earlier one."""
    if not state_file(env).exists():
        return set()
    data = json.loads(state_file(env).read_text("utf-8"))
    ids: set[str] = set()
    for sessions in data["gists"].values():
        for record in sessions.values():
            ids.add(record["gist_id"])
            ids.update(g["gist_id"] for g in record.get("earlier", []))
    return ids


def one_clear_error(result: Result, fake: FakeGitHub) -> str:
    """The one error line, checked to be ours: no traceback, no token, no requests words."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("pi-session: error")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.output and fake.token not in result.output
    return errors[0]


# --------------------------------------------------------------------------- #2 gone gists


def test_delete_of_a_gist_gone_on_github_forgets_it_so_the_refused_share_goes_on(
    fake: FakeGitHub, env: dict
) -> None:
    """share --no-thinking; the gist deleted on GitHub; a share without it was refused and
    named `share --delete A` as the way out, which said "not found" and forgot nothing:
    the share was refused again, for ever."""
    assert share(fake, str(FIXTURE), "--no-thinking").exit_code == 0
    (gone,) = fake.gists
    del fake.gists[gone]
    refused = share(fake, str(FIXTURE))
    assert refused.exit_code == 1 and f"share --delete {gone} forgets" in refused.stderr
    deleted = share(fake, "--delete", gone)
    assert deleted.exit_code == 2, deleted.output  # still a thing not found
    line = one_clear_error(deleted, fake)
    assert line.startswith(f"pi-session: error: gist {gone} was not found (")
    assert "already gone on GitHub: forgotten" in line
    assert gone not in known_gists(env)
    again = share(fake, str(FIXTURE))
    assert again.exit_code == 0, again.output
    assert [r.method for r in fake.requests[-1:]] == ["POST"]
    # a gist the state never named is not found, as before: nothing said of forgetting
    unknown = share(fake, "--delete", "0123456789abcdef0123")
    assert unknown.exit_code == 2 and "forgotten" not in unknown.stderr


def test_a_gist_found_gone_by_a_re_share_is_not_listed_as_still_up(
    fake: FakeGitHub, env: dict
) -> None:
    """A re-share that found its gist gone made a new one, and filed the dead one among the
    session's earlier gists: each later --public or --new share listed it as still up."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gone,) = fake.gists
    del fake.gists[gone]
    replaced = share(fake, str(FIXTURE))
    assert replaced.exit_code == 0 and "shared to before is gone" in replaced.stderr
    assert gone not in known_gists(env)
    (current,) = fake.gists
    public = share(fake, str(FIXTURE), "--public")
    assert public.exit_code == 0, public.output
    assert f"other gist is still up: {current} (secret)" in public.stderr
    assert gone not in public.stderr
    assert known_gists(env) == set(fake.gists)


def test_a_gist_this_token_may_not_delete_stays_remembered(fake: FakeGitHub, env: dict) -> None:
    """A 404 to the DELETE of a gist that reads fine (another account's, a token without
    the gist scope) is no gone gist: it is still up, so it stays in the state."""
    assert share(fake, str(FIXTURE)).exit_code == 0
    (gist_id,) = fake.gists
    fake.fail(404, method="DELETE")
    refused = share(fake, "--delete", gist_id)
    assert refused.exit_code == 3, refused.output
    assert "404 to deleting gist" in one_clear_error(refused, fake)
    assert gist_id in fake.gists and known_gists(env) == {gist_id}


# --------------------------------------------------------------------------- #3 transport


@pytest.mark.parametrize(
    ("status", "location"),
    [(301, "/gists"), (302, "/gists"), (307, "/gists"), (302, "ftp://127.0.0.1/x")],
)
def test_a_redirected_create_is_not_followed(
    fake: FakeGitHub, env: dict, status: int, location: str
) -> None:
    """requests turned a redirected POST into a GET, whose 404 was said as a missing gist
    scope; a loop or a redirect to ftp:// was exit 2 in requests' own words."""
    fake.fail(status, headers={"Location": location}, body="", times=100, method="POST")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    line = one_clear_error(result, fake)
    assert f"answered HTTP {status} (a redirect to {location}) to creating the gist" in line
    assert "Check your secret gists" in line and "gist scope" not in line
    assert fake.requests_to() == ["POST /gists"]
    assert not state_file(env).exists()


def test_a_create_answer_requests_cannot_decode_is_exit_3_with_the_check_warning(
    fake: FakeGitHub, env: dict
) -> None:
    """A 201 said to be gzip that is not: requests' ContentDecodingError went out raw, exit
    2; GitHub has the gist, so the line says to check the secret gists, as a 5xx does."""
    fake.fail(201, headers={"Content-Encoding": "gzip"}, body=b"notgzipdata", method="POST")
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    line = one_clear_error(result, fake)
    assert "an answer that could not be decoded" in line
    assert "GitHub may already have received it" in line and "Check your secret gists" in line
    assert "Received response" not in result.output and "Error -3" not in result.output
    assert fake.requests_to() == ["POST /gists"]  # not sent again


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        ({"status": 307, "headers": {"Location": "/gists/x"}, "body": "", "times": 1000},
         "redirected too many times"),
        ({"status": 200, "headers": {"Content-Encoding": "gzip"}, "body": b"xx"},
         "an answer that could not be decoded"),
    ],
)  # fmt: skip
def test_a_read_that_requests_cannot_finish_is_exit_3_in_our_words(
    fake: FakeGitHub, env: dict, failure: dict[str, Any], reason: str
) -> None:
    assert share(fake, str(FIXTURE)).exit_code == 0
    fake.fail(method="GET", **failure)
    result = share(fake, str(FIXTURE), "--no-thinking")
    assert result.exit_code == 3, result.output
    line = one_clear_error(result, fake)
    assert f"failed ({reason}); check your network and --api-url" in line
    assert "Exceeded" not in result.output and "Received response" not in result.output


# --------------------------------------------------------------------------- #4 odd 201s


def test_a_created_gist_whose_answer_is_cut_off_says_to_check_the_secret_gists(
    fake: FakeGitHub, env: dict
) -> None:
    """A 201 cut off in transit (no Content-Length, connection closed) was "a body that is
    not JSON": the gist was up, unrecorded, and sharing again made a second secret gist."""
    fake.answer_create_oddly(cut=True, location=False)
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    line = one_clear_error(result, fake)
    assert "GitHub created the gist (HTTP 201) but its answer could not be read" in line
    assert "sharing again makes another" in line and "check your secret gists" in line
    assert len(fake.gists) == 1


@pytest.mark.parametrize(
    "odd",
    [{"cut": True}, {"body": {"message": "Created"}}, {"body": [1, 2]}, {"body": "ok"}],
)
def test_a_created_gist_answered_oddly_is_recorded_from_its_location(
    fake: FakeGitHub, env: dict, odd: dict[str, Any]
) -> None:
    """With the 201's Location header (GitHub's ``{api}/gists/ID``) the gist is known: it
    is read back and recorded, and sharing again updates it instead of making another."""
    fake.answer_create_oddly(**odd)
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 0, result.output
    (gist_id,) = fake.gists
    assert f"GitHub created gist {gist_id}, but its answer could not be read" in result.stderr
    assert f"Gist: {fake.base_url}/gist-html/{gist_id}" in result.stdout  # as read back
    assert known_gists(env) == {gist_id}
    again = share(fake, str(FIXTURE), "--no-thinking")
    assert again.exit_code == 0, again.output
    assert len(fake.gists) == 1 and fake.requests[-1].method == "PATCH"


def test_a_created_gist_answered_without_its_address_gets_one_built_from_its_id(
    fake: FakeGitHub, env: dict
) -> None:
    """A 201 without html_url printed empty "Gist:" and "View:" lines."""
    fake.answer_create_oddly(drop=("html_url",))
    ghes = share(fake, str(FIXTURE), api=fake.ghes_url)
    assert ghes.exit_code == 0, ghes.output
    (gist_id,) = fake.gists
    page = f"{fake.base_url}/gist/{gist_id}"  # GitHub Enterprise Server's gist page
    assert f"Gist: {page}\nView: {page}\n" in ghes.stdout
    fake.answer_create_oddly(drop=("html_url",))
    other = share(fake, str(FIXTURE), "--new")  # an API at a host's root: its API address
    assert other.exit_code == 0, other.output
    (newer,) = set(fake.gists) - {gist_id}
    assert f"Gist: {fake.base_url}/gists/{newer}\n" in other.stdout
    assert "Gist: \n" not in ghes.stdout + other.stdout


# --------------------------------------------------------------------------- #5 damaged state


@pytest.mark.parametrize(
    "record",
    [
        {"gist_id": "abc", "removed": [None]},
        {"gist_id": "abc", "excluded": [1, 2], "removed": [None]},
        {"gist_id": "abc", "cuts": [["no_thinking"], None, 3]},
        {"gist_id": "abc", "earlier": [{"gist_id": "def", "removed": [None], "cuts": [{}]}]},
        {"gist_id": "abc", "excluded": [1, 2], "given_salt": 5, "given": "x", "public": "no"},
        {"gist_id": "abc", "earlier": [3, None, {"gist_id": ""}, {"gist_id": "d", "public": 1}]},
    ],
)
@pytest.mark.parametrize("extra", [[], ["--public"], ["--new"]])
def test_a_damaged_record_is_read_without_a_traceback(
    fake: FakeGitHub, env: dict, record: dict[str, Any], extra: list[str]
) -> None:
    """``"removed": [null]`` in gists.json ended in a TypeError traceback (the refusal named
    the removal with terminal_text(None)); so did the hunt's ``"excluded": [1, 2]`` record,
    which held that ``removed`` too. Values no version writes are left out on reading. (The
    fields a record has written since 0.2.25 are there: without them the share reads the
    gist to tell what it left out, and gist abc is on no server.)"""
    state_file(env).parent.mkdir(parents=True)
    host = fake.base_url.split("//")[1]
    since_025 = {"given_salt": "0" * 32, "given": [], "redacted": True, "cuts": []}
    earlier = [{**since_025, **e} if isinstance(e, dict) else e for e in record.get("earlier", [])]
    record = {**since_025, **record, **({"earlier": earlier} if "earlier" in record else {})}
    state = {"version": 1, "gists": {host: {"sampler-0001": record}}}
    state_file(env).write_text(json.dumps(state), encoding="utf-8")
    result = share(fake, str(SAMPLER), *extra)
    assert "Traceback" not in result.output
    if record["given_salt"] == 5:  # what it replaced is unreadable: refused, saying why
        assert result.exit_code == 1, result.output
        assert "could not be read to tell (it is gone on GitHub)" in result.stderr
    else:
        assert result.exit_code == 0, result.output


def test_a_record_from_before_0_2_25_whose_gist_is_gone_is_refused(
    fake: FakeGitHub, env: dict
) -> None:
    """A record that does not say what its share left out is judged by its gist; one that
    cannot be read is refused, saying why, not taken for "nothing was left out"."""
    state_file(env).parent.mkdir(parents=True)
    host = fake.base_url.split("//")[1]
    state = {"version": 1, "gists": {host: {"sampler-0001": {"gist_id": "abc"}}}}
    state_file(env).write_text(json.dumps(state), encoding="utf-8")
    result = share(fake, str(SAMPLER))
    assert "Traceback" not in result.output
    assert result.exit_code == 1, result.output
    assert "could not be read to tell (it is gone on GitHub)" in result.stderr, result.stderr


# --------------------------------------------------------------------------- #6 description


def test_the_gist_description_shows_a_name_s_controls_as_signs(
    fake: FakeGitHub, env: dict, tmp_path: Path
) -> None:
    """The description (GitHub's gist list, what a terminal shows of it) kept a session
    name's escape sequences and bidi overrides raw: ``\\u202egnp.exe`` reads as exe.png."""
    lines = []
    for line in SAMPLER.read_text("utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "session_info":
            entry["name"] = "Deploy \u202egnp.exe\u202c \x1b[31mred\x1b[0m\nsecond"
        lines.append(json.dumps(entry, ensure_ascii=False))
    session = tmp_path / "named.jsonl"
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = share(fake, str(session))
    assert result.exit_code == 0, result.output
    (post,) = [r for r in fake.requests if r.method == "POST"]
    description = post.json["description"]
    shown = "Deploy \u27e8U+202E\u27e9gnp.exe\u27e8U+202C\u27e9 \u241b[31mred\u241b[0m second"
    assert description.startswith(f"Pi session: {shown} ("), description
    assert not any(ch in description for ch in "\x1b\u202e\u202c\n")


# --------------------------------------------------------------------------- #7 gh tokens


def write_gh(env: dict[str, str], script: str) -> None:
    gh = Path(env["PATH"]) / "gh"
    gh.write_text(f"#!/bin/sh\n{script}\n", encoding="utf-8")
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)


def test_a_token_from_gh_after_a_notice_line_is_used(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gh printed a line before the token (a notice), and the share failed "the GitHub token
    contains spaces or control characters (a pasted newline?)"."""
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    write_gh(env, f'echo "warning: a new release of gh is available"\necho {fake.token}\necho')
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 0, result.output
    assert fake.requests[-1].header("Authorization") == f"Bearer {fake.token}"
    assert fake.token not in result.output


def test_a_gh_that_hangs_is_said_to_have_timed_out(
    fake: FakeGitHub, env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung `gh auth token` ended in "no GitHub token found" alone, after 10 s of
    silence: the warning says gh timed out, and the usual message follows."""
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    monkeypatch.setattr("exporter.publish.github_auth.GH_TIMEOUT", 0.5, raising=False)
    write_gh(env, f"exec /bin/sleep 30; echo {fake.token}")  # (exec: the sleep is stopped)
    result = share(fake, str(FIXTURE))
    assert result.exit_code == 3, result.output
    lines = result.stderr.splitlines()
    host = fake.base_url.removeprefix("http://")
    assert lines[0] == (
        f"pi-session: warning: `gh auth token --hostname {host}` timed out (no answer "
        "within 0.5 s); stopped"
    ), result.stderr
    assert lines[1].startswith(f"pi-session: error: no GitHub token found for {host}")
    assert fake.token not in result.output and fake.requests == []


def test_a_gist_page_built_from_an_api_address_keeps_no_query_or_user() -> None:
    """An address built for a gist a non-GitHub API named without one kept `--api-url`'s
    query (where a token may be) with the path after it (the review of this stop)."""
    from exporter.publish.gist import GistClient

    for api_url in (
        "https://example.com/custom?access_token=SECRET#frag",
        "https://u:SECRET@example.com/custom/",
    ):
        page = GistClient(token="t0k", api_url=api_url)._gist_page("abc")
        assert page == "https://example.com/custom/gists/abc"
