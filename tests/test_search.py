"""`pi-session search`: the sessions and entries that say something, on every branch."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.search import Pattern, entry_texts, search_file
from tests.conftest import FIXTURE_FILES


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions" / "--project--"
    folder.mkdir(parents=True)
    for path in FIXTURE_FILES:
        shutil.copy(path, folder / path.name)
    return folder.parent


def _search(*args: str):
    result = CliRunner().invoke(cli, ["search", *args])
    assert result.exit_code == 0, result.output
    return result


def test_every_entry_that_says_it_is_found_once_with_its_branch(sessions: Path) -> None:
    result = _search("dimgray", "--all", "--sessions-dir", str(sessions), "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    by_file: dict[str, list[dict]] = {}
    for row in rows:
        by_file.setdefault(Path(row["path"]).name, []).append(row)
    for path in FIXTURE_FILES:
        session = load_session(path)
        expected = [
            e.id for e in session.entries if any("dimgray" in t.lower() for t in entry_texts(e))
        ]
        found = by_file.get(path.name, [])
        assert [row["entry_id"] for row in found] == expected, path.name
        path_set = set(session.active_path)
        assert all(row["on_active_path"] == (row["entry_id"] in path_set) for row in found)
        for row in found:
            hit = row["snippet"][row["start"] : row["end"]]
            assert hit.lower() == "dimgray" and row["session"] == session.id
    assert len(rows) > 50 and any(not row["on_active_path"] for row in rows)
    # found where they are said (pi-branched-3): an edit's arguments, a read's output, a reply
    said = {row["entry_id"]: row["kind"] for row in by_file["pi-branched-3.jsonl"]}
    assert said["a4c17a5d"] == "assistant" and said["b748f686"] == "toolResult"
    assert said["2c87fc09"] == "assistant"


def test_an_edit_is_found_by_its_diff_as_on_the_page(sessions: Path) -> None:
    """An edit's result says "Successfully replaced text"; the page shows its diff (the
    result's ``details``) and its search finds the word there, while this search skipped
    it: 15 entries of pi-branched-1 for "dimGray" against the page's 30 (review 2026-12-02)."""
    only_in_diff = {"ff074fac", "3aa54557", "9eabec6b", "7612296c"}
    session = load_session(sessions / "--project--" / "pi-branched-1.jsonl")
    for entry_id in only_in_diff:
        entry = session.by_id[entry_id]
        assert entry.role == "toolResult" and "dimgray" in entry.details["diff"].lower()
        assert "dimgray" not in json.dumps(entry.message["content"]).lower()
    result = _search("dimGray", "--all", "--sessions-dir", str(sessions), "--json")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    found = {row["entry_id"] for row in rows if row["path"].endswith("pi-branched-1.jsonl")}
    assert only_in_diff <= found
    assert len(found) == 27  # every entry whose line says it (none only in a key)
    # but a key of the details is no match: "diff" found every edit by its key
    keyed = _search("diff", "--all", "--sessions-dir", str(sessions), "--json")
    snippets = [json.loads(line)["snippet"] for line in keyed.stdout.splitlines()]
    assert snippets and "diff" not in snippets


def test_the_raw_byte_check_never_skips_a_file_that_matches() -> None:
    """Words taken from each fixture, in other cases: whenever the full search finds one,
    the look at the raw bytes must not have ruled the file out."""
    for path in FIXTURE_FILES:
        data = path.read_bytes()
        session = load_session(path)
        words = {
            word.strip(".,:;()`'\"")
            for entry in session.entries[:200]
            for text in entry_texts(entry)
            for word in text.split()[:20]
        }
        texts = [text for entry in session.entries for text in entry_texts(entry)]
        for word in sorted(w for w in words if len(w) > 3)[:60]:
            for shown in (word, word.swapcase()):
                pattern = Pattern(shown)
                expression = pattern.compiled()
                if any(expression.search(text) for text in texts):  # what search_file asks
                    assert not pattern.cannot_be_in(data), (path.name, shown)


DATA = Path(__file__).parent / "data"
CONVERTED = [
    *sorted((DATA / "claude-code").glob("*.jsonl")),
    *sorted((DATA / "codex").glob("*.jsonl")),
]
_PHRASE = re.compile(r"[ !#-.0-\[\]-~]{6,}")  # what the byte check may rule on


@pytest.mark.parametrize("path", [*FIXTURE_FILES, *CONVERTED], ids=lambda p: p.name)
def test_no_phrase_a_search_finds_is_ruled_out_by_the_bytes(path: Path) -> None:
    """Phrases as the search reads them (spaces, colons, any case): a folder search skipped
    a file whose bytes lacked one, and so missed what a search of the file finds: every
    "Thinking level: high" (the page's words, not the JSON's), and in Claude Code and Codex
    transcripts the texts their conversion writes ("Command exited with code 1", diffs)."""
    data = path.read_bytes()
    texts = [text for entry in load_session(path).entries for text in entry_texts(entry)]
    phrases = sorted({m.group().strip()[:40] for text in texts for m in _PHRASE.finditer(text)})
    phrases = [p for p in phrases if len(p) >= 6][:: max(1, len(phrases) // 400)]
    assert phrases
    ruled_out = [p for p in phrases if Pattern(p.swapcase()).cannot_be_in(data)]
    assert ruled_out == []


def test_a_folder_search_finds_what_a_search_of_the_file_finds(tmp_path: Path) -> None:
    """The bug hunt's cases (2026-12-05), through the command: a Pi thinking-level change
    and a Codex command's exit, searched in their folders."""
    pi = tmp_path / "pi" / "--project--"
    pi.mkdir(parents=True)
    shutil.copy(next(p for p in FIXTURE_FILES if p.name == "every-entry-type.jsonl"), pi)
    found = _search("thinking level: high", "--all", "--sessions-dir", str(pi.parent), "--json")
    assert [json.loads(line)["kind"] for line in found.stdout.splitlines()] == [
        "thinking_level_change"
    ]
    codex = tmp_path / "codex" / "2025" / "12" / "28"
    codex.mkdir(parents=True)
    for path in (DATA / "codex").glob("*.jsonl"):
        shutil.copy(path, codex)
    found = _search("exited with code", "--all", "--sessions-dir", str(tmp_path / "codex"))
    assert "exited with code" in found.stdout.lower(), found.output


def test_unicode_case_folds_are_not_ruled_out_by_the_byte_check(tmp_path: Path) -> None:
    """``re.IGNORECASE`` matches "k" with the Kelvin sign and "s" with the long s: their
    bytes are no ASCII letter, so the raw-byte check must not skip such a file."""
    lines = [
        {"type": "session", "version": 3, "id": "u", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "the \u212aelvin and \u017fun"}},
    ]  # fmt: skip
    path = tmp_path / "u.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    for word in ("kelvin", "sun"):
        assert [m["entry_id"] for m in search_file(path, Pattern(word))["matches"]] == ["a"]
    assert search_file(path, Pattern("kelvin", case_sensitive=True)) == {"skipped": True}


def test_a_session_saved_as_utf16_is_searched_not_skipped(tmp_path: Path) -> None:
    """The loader reads a UTF-16 copy of a session; the raw-byte check looked for the
    word's UTF-8 bytes in it and skipped the file unread."""
    source = FIXTURE_FILES[0]
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(source.read_text(encoding="utf-8").encode("utf-16"))
    word = next(w for w in ("hello", "the", "a") if search_file(source, Pattern(w)).get("matches"))
    found = search_file(wide, Pattern(word))
    assert "skipped" not in found, found
    plain = search_file(source, Pattern(word))["matches"]
    assert [m["entry_id"] for m in found["matches"]] == [m["entry_id"] for m in plain]
    assert plain


def test_regex_case_and_no_match(sessions: Path) -> None:
    base = ["--all", "--sessions-dir", str(sessions), "--json"]
    regex = _search("dim[A-Z]ray", "--regex", *base)
    exact = _search("dimGray", "--case-sensitive", *base)
    assert regex.stdout == exact.stdout and regex.stdout
    none = _search("DIMGRAY", "--case-sensitive", *base)
    assert none.stdout == "" and "no matches" in none.stderr
    bad = CliRunner().invoke(cli, ["search", "dim[", "--regex", *base])
    assert bad.exit_code == 1 and "--regex" in bad.output and "Traceback" not in bad.output


def test_the_text_listing_names_the_session_and_marks_the_match(sessions: Path) -> None:
    text = _search("dimgray", "--all", "--sessions-dir", str(sessions), "--limit", "50").stdout
    assert "(01a229f4-a6b0-7596-9ba4-063c975d8071, 38 entries)" in text  # pi-branched-3
    assert "[dimGray]" in text and "(other branch):" in text
    short = _search("dimgray", "--all", "--sessions-dir", str(sessions), "--limit", "1")
    assert "… and 26 more (--limit 27)" in short.stdout
    assert short.stderr == "pi-session: 165 entries in 4 sessions\n"
    one = _search("Refactor auth module", "--all", "--sessions-dir", str(sessions))
    assert one.stderr == "pi-session: 1 entry in 1 session\n"  # not "1 entries in 1 sessions"


def test_controls_in_a_match_reach_no_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "s" / "--x--"
    folder.mkdir(parents=True)
    lines = [
        {"type": "session", "version": 3, "id": "c", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "x \x1b]0;pwned\x07 needle \x1b[2J"}},
    ]  # fmt: skip
    (folder / "c.jsonl").write_text("\n".join(map(json.dumps, lines)), encoding="utf-8")
    result = _search("needle", "--all", "--sessions-dir", str(tmp_path / "s"))
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "[needle]" in result.stdout


def test_since_and_unreadable_files(sessions: Path) -> None:
    bad = sessions / "--project--" / "broken.jsonl"
    bad.write_bytes(b"\x80\xfe not a session \x00\n")  # no byte order mark: not UTF-16
    result = _search("session", "--all", "--sessions-dir", str(sessions), "--json")
    assert "broken.jsonl" in result.stderr and "warning" in result.stderr
    skipped = _search("dimgray", "--all", "--sessions-dir", str(sessions), "--json")
    assert "broken.jsonl" not in skipped.stderr  # its bytes cannot match: never parsed
    # --since leaving every session out said "no matches", as if they had been searched
    later = CliRunner().invoke(
        cli,
        ["search", "dimgray", "--all", "--sessions-dir", str(sessions), "--since", "2099-01-01"],
    )
    assert later.exit_code == 2 and later.stdout == ""
    count = len(FIXTURE_FILES) + 1  # with broken.jsonl
    said = (
        f"no Pi sessions for any project under {sessions} active since 2099-01-01 00:00; "
        f"{count} sessions there are older"
    )
    assert said in later.stderr, later.stderr
    some = _search("session", *map(str, FIXTURE_FILES), "--since", "2026-01-01")
    assert some.stdout
    assert "sessions not active since 2026-01-01 00:00" in some.stderr.splitlines()[-1]


def test_since_is_said_as_the_moment_it_stands_for(sessions: Path) -> None:
    """`search --since 1d` said "not active since 1d", in words of its own; the moment is
    said, as `list --since` says it, then the value as given."""
    every = ["--all", "--sessions-dir", str(sessions)]
    moment = r"\d{4}-\d\d-\d\d \d\d:\d\d \(1d\)"
    none = CliRunner().invoke(cli, ["search", "dimgray", *every, "--since", "1d"])
    assert none.exit_code == 2 and none.stdout == "", none.output
    count = len(FIXTURE_FILES)
    assert re.fullmatch(
        rf"pi-session: error: no Pi sessions for any project under {re.escape(str(sessions))} "
        rf"active since {moment}; {count} sessions there are older\n",
        none.stderr,
    ), none.stderr
    # sessions named: none of them is active since then
    named = CliRunner().invoke(cli, ["search", "dimgray", str(FIXTURE_FILES[0]), "--since", "1d"])
    assert named.exit_code == 2
    assert re.fullmatch(
        rf"pi-session: error: the session named is not active since {moment}\n", named.stderr
    ), named.stderr
    # some sessions left out: the summary line says how many, and since when
    kept = sessions / "--project--" / "now.jsonl"
    branched = next(path for path in FIXTURE_FILES if path.name == "pi-branched-1.jsonl")
    text = branched.read_text(encoding="utf-8")
    kept.write_text(re.sub(r'"timestamp":"2\d{3}-', '"timestamp":"2999-', text), encoding="utf-8")
    some = _search("dimgray", *every, "--since", "1d")
    assert re.search(
        rf"; left out {count} sessions not active since {moment}$", some.stderr.splitlines()[-1]
    ), some.stderr
    assert "since 1d" not in some.stderr


def test_sessions_named_on_the_command_line_are_the_ones_searched(
    sessions: Path, tmp_path: Path
) -> None:
    """`search PATTERN FILE` said "Got unexpected extra argument": only a folder's sessions
    could be searched. Files, ids and id prefixes now name the sessions, each once."""
    one = FIXTURE_FILES[1]
    named = sessions / "--elsewhere--" / "2025-01-01T00-00-00-000Z_0badc0de-1234.jsonl"
    named.parent.mkdir()
    shutil.copy(FIXTURE_FILES[3], named)  # found by the id in its name
    result = _search("dimgray", str(one), str(one), "0badc0de", "--sessions-dir", str(sessions),
                     "--json")  # fmt: skip
    got = [json.loads(line) for line in result.stdout.splitlines()]
    by_path: dict[Path, list[str]] = {}
    for row in got:
        by_path.setdefault(Path(row["path"]), []).append(row["entry_id"])
    expected = [m["entry_id"] for m in search_file(one, Pattern("dimgray"))["matches"]]
    assert by_path[one.resolve()] == expected  # once, though named twice
    assert by_path[named.resolve()] == [
        m["entry_id"] for m in search_file(named, Pattern("dimgray"))["matches"]
    ]
    assert set(by_path) == {one.resolve(), named.resolve()}  # nothing else searched
    garbage = tmp_path / "garbage.jsonl"  # named, it is read: said unreadable, whatever the
    garbage.write_bytes(b"\x80\x81 not a session\n")  # pattern (it was "no matches", exit 0)
    for pattern in (["dimgray"], ["-E", "dim.?gray"]):
        failed = CliRunner().invoke(cli, ["search", *pattern, str(garbage)])
        assert failed.exit_code == 2 and "no session could be searched" in failed.stderr
    for args, said in (
        ([str(one), "--all"], "SESSION and --cwd/--all both choose the sessions"),
        ([str(tmp_path / "gone.jsonl")], "no session file or session id matches"),
        (["-"], "not - (stdin)"),
    ):
        failed = CliRunner().invoke(cli, ["search", "dimgray", *args])
        assert failed.exit_code != 0 and said in failed.stderr, failed.output


def test_a_thinking_level_change_is_found_by_what_the_page_says_not_its_json() -> None:
    """Its raw JSON was searched (ids, parent id, time, type name): "Thinking level: low"
    found nothing and a parent's id found the child."""
    lines = [
        {"type": "session", "version": 3, "id": "t", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/x"},
        {"type": "thinking_level_change", "id": "th1", "parentId": None,
         "timestamp": "2025-01-01T00:00:01Z", "thinkingLevel": "low"},
    ]  # fmt: skip
    session = load_session_lines(lines)
    (entry,) = session.entries
    assert list(entry_texts(entry)) == ["Thinking level: low"]


def load_session_lines(lines: list[dict]):
    from exporter.loader import parse_session_bytes

    return parse_session_bytes("".join(json.dumps(x) + "\n" for x in lines).encode("utf-8"))
