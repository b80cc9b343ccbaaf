"""Stop 48, helper 164: `publish --deny REGEX|FILE` keeps out every session whose published
text (after redaction) a pattern matches: a customer's name, an internal host, a private
project (pi-share-hf's `collect --deny`). The matched text is never said; a denied session
the dataset already holds stays unless --prune; the patterns checked are recorded (as
marks) so that a session published before a pattern was added is checked again, not taken
for unchanged. Every run is the real command in a process of its own against the loopback
fake Hub over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from exporter.discover import encode_cwd
from tests.fakes.hub import TOKEN, FakeHub
from tests.test_cli_consistency import FIXTURE, PI_NAME, PROJECT, Home, Result, _error, _home

REPO = "alice/deny"
#: the session texts: each a user message appended at the leaf of a copy of FIXTURE
TEXTS = {
    "acme": "draft the Acme Corp renewal for customer-4821",
    "shout": "ACME CORP asked again",
    "plain": "refactor the parser",
}


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _session(home: Home, name: str, text: str, n: int) -> Path:
    """A copy of FIXTURE with an id of its own and ``text`` as a last user message (entry
    ``deny-<name>``), in the project's folder; written with ``\\u`` escapes and ``\\n``
    as JSON writes them (json.dumps' default)."""
    lines = FIXTURE.read_bytes().splitlines()
    header = json.loads(lines[0])
    header["id"] = f"0000000{n}-aaaa-4bbb-8ccc-{n:012d}"
    last = json.loads(lines[-1])["id"]
    entry = {
        "type": "message",
        "id": f"deny-{name}",
        "parentId": last,
        "timestamp": "2026-11-30T01:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1800000000000 + n},
    }
    folder = home.sessions / encode_cwd(PROJECT)
    path = folder / f"2026-11-30T01-00-0{n}-000Z_{header['id']}.jsonl"
    path.write_bytes(
        b"\n".join([json.dumps(header).encode(), *lines[1:], json.dumps(entry).encode()]) + b"\n"
    )
    return path


@pytest.fixture
def home(tmp_path: Path) -> Home:
    """The fixture's session (PI_NAME) and the three of TEXTS, in one project."""
    made = _home(tmp_path)
    for n, (name, text) in enumerate(TEXTS.items(), 1):
        _session(made, name, text, n)
    return made


def _name(home: Home, which: str) -> str:
    """The file name of the session of TEXTS[which]."""
    n = list(TEXTS).index(which) + 1
    return next((home.sessions / encode_cwd(PROJECT)).glob(f"*_0000000{n}-*.jsonl")).name


def _publish(home: Home, fake: FakeHub, *extra: str) -> Result:
    hub = ["--endpoint", fake.url, "--token", TOKEN, "-j", "1", "--yes"]
    return home.run("publish", REPO, "--all", *hub, *extra)


def _sent(fake: FakeHub) -> list[str]:
    """The session files' names the dataset holds."""
    return sorted(p.rsplit("/", 1)[-1] for p in fake.files(REPO) if p.startswith("sessions/"))


def _denied_lines(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("pi-session: denied: ")]


def test_a_regex_keeps_out_the_sessions_it_matches(home: Home, fake_hub: FakeHub) -> None:
    """Case-sensitive: 'Acme\\s+Corp' denies only the session that writes it so; said with
    the file, the pattern and the entry, never the text matched; counted in the summary."""
    result = _publish(home, fake_hub, "--deny", r"Acme\s+Corp", "-j", "2")
    assert result.code == 0, result.stderr
    acme = _name(home, "acme")
    assert _sent(fake_hub) == sorted([PI_NAME, _name(home, "shout"), _name(home, "plain")])
    assert _denied_lines(result) == [
        f"pi-session: denied: {acme}: --deny pattern 'Acme\\s+Corp' matches "
        "(first in entry deny-acme); not published"
    ]
    assert "3 added, 0 updated, 0 removed, 0 unchanged, 0 failed, 1 denied" in result.stdout
    output = result.stdout + result.stderr
    assert "Acme Corp" not in output and "customer-4821" not in output and "renewal" not in output
    assert b"customer-4821" not in fake_hub.received_bytes()  # nothing of it went up


def test_case_insensitive_only_when_the_pattern_says_so(home: Home, fake_hub: FakeHub) -> None:
    """'acme corp' matches neither session (case-sensitive); '(?i)acme corp' both."""
    result = _publish(home, fake_hub, "--deny", "acme corp", "--dry-run")
    assert result.code == 0, result.stderr
    assert _denied_lines(result) == [] and "would be 4 added" in result.stdout
    assert "0 denied" in result.stdout
    result = _publish(home, fake_hub, "--deny", "(?i)acme corp")
    assert result.code == 0, result.stderr
    assert _sent(fake_hub) == sorted([PI_NAME, _name(home, "plain")])
    said = "\n".join(_denied_lines(result))
    assert _name(home, "acme") in said and _name(home, "shout") in said
    assert "2 denied" in result.stdout


def test_a_list_file_with_comments(home: Home, fake_hub: FakeHub) -> None:
    """One pattern per line (a BOM left out); blank lines and '#' lines are not patterns
    (the comment '#|parser', read as a regex, would deny the plain session). A pattern from
    a file is named by its number and line, not repeated."""
    patterns = home.base / "deny.txt"
    patterns.write_text(
        "\ufeff# customers we may not name\n"
        "internal\\.example\\.com\n"
        "\n"
        "#|parser\n"
        "customer-\\d{4}\n",
        encoding="utf-8",
    )
    result = _publish(home, fake_hub, "--deny", str(patterns))
    assert result.code == 0, result.stderr
    assert _sent(fake_hub) == sorted([PI_NAME, _name(home, "shout"), _name(home, "plain")])
    assert _denied_lines(result) == [
        f"pi-session: denied: {_name(home, 'acme')}: --deny pattern 2 of {patterns} "
        "(line 5) matches (first in entry deny-acme); not published"
    ]
    assert "customer-4821" not in result.stdout + result.stderr


def test_an_invalid_pattern_is_a_usage_error_before_any_request(
    home: Home, fake_hub: FakeHub
) -> None:
    """Exit 1 naming the pattern (typed, or by file and line), before the Hub is asked
    anything or a session read; so is one that matches everything (an empty match)."""
    listed = home.base / "deny.txt"
    listed.write_text("# fine\nAcme\n(unclosed\n", encoding="utf-8")
    cases = {
        "foo(": "--deny 'foo(': not a valid regular expression: missing ), unterminated "
        "subpattern at position 3; nothing sent",
        str(listed): f"--deny {listed}:3: not a valid regular expression: missing ), "
        "unterminated subpattern at position 0; nothing sent",
        "x*": "--deny 'x*': the pattern matches an empty string, so it would deny every "
        "session; nothing sent",
        # (it read as this folder: "a folder, not a file of patterns")
        "": "--deny '': the pattern matches an empty string, so it would deny every "
        "session; nothing sent",
    }
    for value, message in cases.items():
        result = _publish(home, fake_hub, "--deny", "ok", "--deny", value)
        assert result.code == 1, result.stderr
        assert _error(result) == message
        assert "redact:" not in result.stderr and result.stdout == ""
    assert fake_hub.requests == []


def test_a_list_that_is_missing_or_empty_is_refused(home: Home, fake_hub: FakeHub) -> None:
    """A list path that names no file (a cron job's relative path, a typo) was read as a
    regex that matched nothing, so the sessions it listed went up; a folder became the
    regex "/tmp"; a list of comments only denied nothing. Each is exit 1 now, nothing sent.
    A pattern that merely ends like a file name, written as a regex, is still a pattern."""
    comments = home.base / "only-comments.txt"
    comments.write_text("# all commented out\n\n", encoding="utf-8")
    cases = {
        "missing-deny.txt": "no such file",
        "./lists/deny": "no such file",
        str(home.base): "a folder, not a file of patterns",
        str(comments): "the file lists no pattern",
    }
    for value, said in cases.items():
        result = _publish(home, fake_hub, "--deny", value)
        assert result.code == 1, (value, result.stderr)
        assert said in _error(result) and result.stdout == "", (value, result.stderr)
    assert fake_hub.requests == []
    result = _publish(home, fake_hub, "--deny", r"notes\.txt", "--dry-run")
    assert result.code == 0, result.stderr


def test_a_match_only_inside_a_redacted_secret_does_not_deny(home: Home, fake_hub: FakeHub) -> None:
    """The pattern is matched against what would be published: a token the redaction
    replaces is gone, so a pattern for it finds nothing and the session goes up."""
    token = "ghp_" + "Zq8" * 12
    path = _session(home, "secret", f"use {token} for the push", 4)
    result = _publish(home, fake_hub, "--deny", r"ghp_[A-Za-z0-9]{36}")
    assert result.code == 0, result.stderr
    assert _denied_lines(result) == [] and "0 denied" in result.stdout
    assert path.name in _sent(fake_hub)
    assert "redact: 1 secret in 1 session (github-token 1" in result.stderr
    assert token.encode() not in fake_hub.received_bytes()


def test_a_match_across_a_json_escape_is_found(home: Home, fake_hub: FakeHub) -> None:
    """The file has the message as JSON text ("line\\nProject Falcon \\u00e9t\\u00e9"):
    patterns are matched against the decoded strings, so a newline, a line start with
    (?m) and an accented word written as \\u escapes all match."""
    path = _session(home, "escaped", "status:\nProject Falcon \u00e9t\u00e9 plan", 4)
    raw = path.read_text(encoding="utf-8")
    assert "status:\\nProject Falcon \\u00e9t\\u00e9" in raw  # as the JSON text spells it
    for pattern in ("status:\\nProject", "(?m)^Project Falcon", "Falcon \u00e9t\u00e9"):
        result = _publish(home, fake_hub, "--deny", pattern, "--dry-run")
        assert result.code == 0, (pattern, result.stderr)
        lines = _denied_lines(result)
        assert len(lines) == 1 and path.name in lines[0], (pattern, result.stderr)
        assert "(first in entry deny-escaped)" in lines[0]
        assert "Falcon" not in result.stdout + result.stderr.replace(pattern, "")


def test_a_published_session_denied_later_stays_until_prune(home: Home, fake_hub: FakeHub) -> None:
    """Published first without --deny; a run with a pattern that matches it checks it again
    (it is not "unchanged": the patterns a copy was checked against are recorded, as marks),
    says its copy stays, and --prune deletes it. The others are checked once: the next run
    with the same pattern (or none) has nothing to do."""
    acme = _name(home, "acme")
    first = _publish(home, fake_hub)
    assert first.code == 0, first.stderr
    assert acme in _sent(fake_hub) and "4 added" in first.stdout

    kept = _publish(home, fake_hub, "--deny", "Acme Corp")
    assert kept.code == 0, kept.stderr
    [line] = _denied_lines(kept)
    assert line.startswith(f"pi-session: denied: {acme}: --deny pattern 'Acme Corp' matches")
    assert line.endswith(f"; its published copy sessions/2026-11/{acme} stays (--prune deletes it)")
    assert acme in _sent(fake_hub)  # not deleted without --prune
    assert "0 added, 0 updated, 0 removed, 3 unchanged, 0 failed, 1 denied" in kept.stdout
    manifest = json.loads(fake_hub.files(REPO)["manifest.json"])
    marks = {tuple(e.get("deny", ())) for p, e in manifest["sessions"].items() if acme not in p}
    assert len(marks) == 1 and len(next(iter(marks))) == 1  # one mark per checked pattern
    assert "Acme" not in json.dumps(manifest)

    again = _publish(home, fake_hub, "--deny", "Acme Corp")  # the others: checked already
    assert again.code == 0 and "nothing changed, no commit" in again.stdout, again.stdout
    assert "redact: 1 secret" not in again.stderr and len(_denied_lines(again)) == 1
    plain = _publish(home, fake_hub)  # fewer patterns: nothing new to check
    assert plain.code == 0 and "nothing changed, no commit" in plain.stdout, plain.stdout

    pruned = _publish(home, fake_hub, "--deny", "Acme Corp", "--prune")
    assert pruned.code == 0, pruned.stderr
    [line] = _denied_lines(pruned)
    assert line.endswith(f"; --prune deletes its published copy sessions/2026-11/{acme}")
    assert acme not in _sent(fake_hub) and len(_sent(fake_hub)) == 3
    assert "0 added, 0 updated, 1 removed, 3 unchanged, 0 failed, 1 denied" in pruned.stdout
    assert "customer-4821" not in pruned.stdout + pruned.stderr


def test_a_dry_run_lists_denied_sessions(home: Home, fake_hub: FakeHub) -> None:
    """The plan has a "deny" row for each; nothing is sent; with --prune the published copy
    is a "remove" row as well."""
    acme = _name(home, "acme")
    result = _publish(home, fake_hub, "--deny", "Acme Corp", "--dry-run")
    assert result.code == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["deny", f"sessions/2026-11/{acme}"] in rows, result.stdout
    assert "would be 3 added, 0 updated, 0 removed, 0 unchanged, 0 failed, 1 denied" in (
        result.stdout
    )
    assert len(_denied_lines(result)) == 1
    assert fake_hub.routes("POST", r"/commit/") == []
    assert _publish(home, fake_hub).code == 0  # published, then planned with --prune
    commits = len(fake_hub.commits)
    result = _publish(home, fake_hub, "--deny", "Acme Corp", "--dry-run", "--prune")
    assert result.code == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["deny", f"sessions/2026-11/{acme}"] in rows, result.stdout
    assert any(r[:2] == ["remove", f"sessions/2026-11/{acme}"] for r in rows), result.stdout
    assert len(fake_hub.commits) == commits and acme in _sent(fake_hub)


def test_every_session_denied_is_exit_2(home: Home, fake_hub: FakeHub) -> None:
    """A run that would put out nothing is a mistake a cron job must see (as --skip's):
    exit 2, each session said, no dataset created."""
    result = _publish(home, fake_hub, "--deny", "(?i)webapp")  # every header's cwd
    assert result.code == 2, result.stderr
    assert len(_denied_lines(result)) == 4
    assert "(first in the header)" in result.stderr
    assert (
        _error(result) == "--deny keeps out every session that could be read (4); nothing was sent"
    )
    assert fake_hub.routes("POST", r"/commit/|/repos/create") == []
    assert (("dataset", REPO)) not in fake_hub.repos


def test_the_site_keeps_a_denied_sessions_page_while_its_copy_stays(
    home: Home, fake_hub: FakeHub
) -> None:
    """A dataset with an html/ site: the page of a denied session stays as long as its
    published copy does (the site is of the dataset's sessions), and goes with --prune."""
    acme = _name(home, "acme").removesuffix(".jsonl")

    def pages() -> list[str]:
        return [p for p in fake_hub.files(REPO) if p.startswith("html/") and acme in p]

    assert _publish(home, fake_hub, "--html").code == 0
    assert len(pages()) == 1
    kept = _publish(home, fake_hub, "--deny", "Acme Corp")
    assert kept.code == 0 and len(_denied_lines(kept)) == 1, kept.stderr
    assert len(pages()) == 1 and f"{acme}.jsonl" in _sent(fake_hub)
    pruned = _publish(home, fake_hub, "--deny", "Acme Corp", "--prune")
    assert pruned.code == 0, pruned.stderr
    assert pages() == [] and f"{acme}.jsonl" not in _sent(fake_hub)
