"""`pi-session search` and `stats` (review s60): whole ids, snippets' spaces, what of a tool's
``details`` is searched, extensions' names, and plain patterns across whitespace."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.search import Pattern, entry_texts
from tests.conftest import FIXTURES_DIR, Build

DATA = Path(__file__).parent / "data"
CLAUDE_CODE = DATA / "claude-code" / "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl"


def _run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


def _rows(*args: str) -> list[dict[str, Any]]:
    out = _run("search", *args, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def _session(write_session: Any, *entries: dict[str, Any]) -> Path:
    return write_session([Build.header("s60-search"), *entries])


def _call(entry_id: str, parent: str | None, name: str, args: dict[str, Any]) -> dict:
    line = Build.assistant(entry_id, parent, "calling", calls=[("tc-" + entry_id, name)])
    line["message"]["content"][1]["arguments"] = args
    return line


def _result(entry_id: str, parent: str, call: str, name: str, text: str, details: Any) -> dict:
    line = Build.tool_result(entry_id, parent, "tc-" + call, name)
    line["message"]["content"] = [{"type": "text", "text": text}]
    if details is not None:
        line["message"]["details"] = details
    return line


# --- 1. whole ids ---------------------------------------------------------------------------


def test_search_lists_claude_code_ids_whole_and_aligned() -> None:
    """A Claude Code uuid was cut to 16 characters ("00000000-0000-4…"): no entry of the
    page has that id."""
    ids = {entry.id for entry in load_session(CLAUDE_CODE).entries}
    out = _run("search", "the", str(CLAUDE_CODE), "--limit", "50").stdout
    lines = [line for line in out.splitlines() if line.startswith("  ") and ": " in line]
    assert len(lines) > 3
    shown = [line.split()[0] for line in lines]
    assert set(shown) <= ids and all(len(i) == 36 for i in shown)
    # the kind starts in one column
    assert len({line.index("  ", 2) for line in lines}) == 1


def test_search_keeps_pi_ids_as_they_were(write_session: Any) -> None:
    path = _session(write_session, Build.user("a1b2c3d4", None, "hello TEXTWORD"))
    out = _run("search", "textword", str(path)).stdout
    assert "\n  a1b2c3d4  user: hello [TEXTWORD]\n" in out


def _branch_ids(out: str) -> list[tuple[str, str]]:
    table = out.split("Branches (", 1)[1].split("\n\n", 1)[0].splitlines()[3:]
    return [tuple(row.lstrip("* ").split()[:2]) for row in table]  # type: ignore[misc]


def test_stats_tells_claude_code_branches_apart() -> None:
    """Both branches read "00000000-0" (``leaf_id[:10]``): the ids are shown whole when 10
    characters do not tell them apart."""
    session = load_session(CLAUDE_CODE)
    ids = {entry.id for entry in session.entries}
    rows = _branch_ids(_run("stats", str(CLAUDE_CODE)).stdout)
    assert len(rows) == 2
    leaves = [leaf for leaf, _ in rows]
    assert len(set(leaves)) == 2 and set(leaves) <= ids
    assert {fork for _, fork in rows} - {"root"} <= ids
    assert leaves[0] == session.leaf_id


def test_stats_keeps_pi_ids_as_they_were() -> None:
    path = FIXTURES_DIR / "pi-branched-4.jsonl"
    session = load_session(path)
    rows = _branch_ids(_run("stats", str(path)).stdout)
    assert len(rows) > 2
    for leaf, fork in rows:
        assert len(leaf) == 8 and leaf in session.by_id
        assert fork == "root" or (len(fork) == 8 and fork in session.by_id)


# --- 2. spaces at a match's edge ------------------------------------------------------------


def test_a_match_keeps_the_space_at_its_edge(write_session: Any) -> None:
    """ " TEXTWORD" showed "Answer with[TEXTWORD]" (--json: "Answer withTEXTWORD")."""
    path = _session(write_session, Build.assistant("a0000002", None, "Answer with  TEXTWORD"))
    for pattern, hit in ((" TEXTWORD", " TEXTWORD"), ("with ", "with ")):
        (row,) = _rows(pattern, str(path))
        assert row["snippet"] == "Answer with TEXTWORD", pattern
        assert row["snippet"][row["start"] : row["end"]] == hit
    out = _run("search", " TEXTWORD", str(path)).stdout
    assert "assistant: Answer with[ TEXTWORD]" in out


def test_a_regex_match_beside_a_space_is_said_with_one_space(write_session: Any) -> None:
    path = _session(write_session, Build.user("u1", None, "one  two\n\nthree"))
    (row,) = _rows("-E", r"\stwo\s", str(path))
    assert row["snippet"] == "one two three"
    assert row["snippet"][row["start"] : row["end"]] == " two "


# --- 3. a tool's details as the page shows them ---------------------------------------------


def test_a_truncation_the_page_says_in_words_is_not_searched_by_its_numbers() -> None:
    """details.truncation.totalBytes (a read cut for the model): the page says "the read
    tool truncated this file", and never 75229; search found two results by it."""
    path = FIXTURES_DIR / "pi-branched-4.jsonl"
    result = CliRunner().invoke(cli, ["search", "75229", str(path)])
    assert result.exit_code == 0 and result.stdout == ""
    assert "no matches" in result.stderr


def test_details_are_searched_where_the_page_shows_them(write_session: Any) -> None:
    """A bash truncation is a note (its counts are not searched, the full output's path
    is); an edit's diff is shown; another tool's details are shown as JSON."""
    truncated = {"truncated": True, "totalBytes": 918273, "totalLines": 4455}
    path = _session(
        write_session,
        _call("a1", None, "bash", {"command": "make"}),
        _result(
            "r1", "a1", "a1", "bash", "built",
            {"truncation": truncated, "fullOutputPath": "/tmp/pi-bash-FULLPATHWORD.log"},
        ),
        _call("a2", "r1", "read", {"path": "x.py"}),
        _result("r2", "a2", "a2", "read", "x = 1", {"truncation": {"totalBytes": 918274}}),
        _call("a3", "r2", "mytool", {"q": "z"}),
        _result("r3", "a3", "a3", "mytool", "ok", {"truncation": {"totalBytes": 918275}}),
        _call("a4", "r3", "edit", {"path": "x.py", "oldText": "a", "newText": "b"}),
        _result("r4", "a4", "a4", "edit", "Successfully replaced", {"diff": "+ DIFFWORD"}),
        _result("r5", "r4", "gone", "read", "x", {"truncation": {"totalBytes": 918276}}),
    )  # fmt: skip
    found = {pattern: [r["entry_id"] for r in _rows(pattern, str(path))] for pattern in (
        "918273", "4455", "918274", "918275", "918276", "FULLPATHWORD", "DIFFWORD")}  # fmt: skip
    assert found == {
        "918273": [],  # bash: "output truncated by Pi (full output: ...)"
        "4455": [],
        "918274": [],  # read: "the read tool truncated this file for the model"
        "918275": ["r3"],  # shown in the result's JSON
        "918276": ["r5"],  # no call found: every detail shown
        "FULLPATHWORD": ["r1"],
        "DIFFWORD": ["r4"],
    }


@pytest.mark.parametrize("name", ["pi-branched-1.jsonl", "pi-branched-4.jsonl"])
def test_the_details_left_out_are_those_the_tool_view_says_itself(name: str) -> None:
    """Each result's details the search leaves out are keys its view on the page reads
    (``read_details``) and says otherwise; a diff and a path it shows stay searched."""
    from exporter.render.tools import build_tool_view
    from exporter.search import _call_of, _details_shown

    session = load_session(FIXTURES_DIR / name)
    left_out_any = False
    for entry in session.entries:
        if getattr(entry, "role", None) != "toolResult" or not entry.details:
            continue
        call = _call_of(session, entry.id)
        kept = _details_shown(entry.message.get("details"), call)
        left_out = set(entry.details) - set(kept)
        read = build_tool_view(call, entry).read_details if call else set()
        assert left_out == read - {"diff", "fullOutputPath"}, entry.id
        left_out_any |= bool(left_out)
    assert left_out_any or name == "pi-branched-1.jsonl"


# --- 4. an extension's name ---------------------------------------------------------------


def test_an_extensions_name_is_searched_as_the_page_shows_it(write_session: Any) -> None:
    """The page shows "[myext] (extension data)" and "[note]: ..."; the names found nothing."""
    path = _session(
        write_session,
        Build.user("u1", None, "hi"),
        Build.entry("custom", "x1", "u1", 4, customType="myext", data={"state": "s"}),
        Build.entry(
            "custom_message", "m1", "x1", 5, customType="note", content="shown", display=True
        ),
    )
    assert [(r["entry_id"], r["kind"]) for r in _rows("myext", str(path))] == [("x1", "custom")]
    assert [(r["entry_id"], r["kind"]) for r in _rows("NOTE", str(path))] == [
        ("m1", "custom_message")
    ]


# --- 5. plain patterns across whitespace ----------------------------------------------------


def test_a_space_in_a_plain_pattern_matches_a_line_break(write_session: Any) -> None:
    """The snippet said "output second line" but "output second" found nothing."""
    path = _session(
        write_session,
        _call("a1", None, "bash", {"command": "run"}),
        _result("r1", "a1", "a1", "bash", "RESULTWORD output\n\tsecond line", None),
    )
    (row,) = _rows("output second", str(path))
    assert row["entry_id"] == "r1" and row["snippet"][row["start"] : row["end"]] == "output second"
    # a folder's search too: the raw bytes ("output\\n\\tsecond") do not rule the file out
    folder = path.parent / "sessions" / "--p--"
    folder.mkdir(parents=True)
    (folder / path.name).write_bytes(path.read_bytes())
    rows = _rows("output  second", "--all", "--sessions-dir", str(folder.parent))
    assert [r["entry_id"] for r in rows] == ["r1"]
    data = path.read_bytes()
    assert not Pattern("Output Second").cannot_be_in(data)
    assert Pattern("output third").cannot_be_in(data)  # still ruled out by the bytes


def test_a_regex_anchors_at_each_line(write_session: Any) -> None:
    path = _session(write_session, Build.user("u1", None, "first line\nsecond line"))
    assert [r["entry_id"] for r in _rows("-E", "^second", str(path))] == ["u1"]
    assert [r["entry_id"] for r in _rows("-E", "line$", str(path))] == ["u1"]
    assert _rows("-E", r"\Asecond", str(path)) == []


def test_the_byte_check_never_rules_out_a_phrase_across_whitespace() -> None:
    """Pairs of words with a line break between them, said with a space: each is found in
    its file, and the raw byte check (the JSON holds "\\n") never rules the file out."""
    path = FIXTURES_DIR / "pi-branched-1.jsonl"
    data = path.read_bytes()
    pairs = re.compile(r"[A-Za-z]{3,} *\n[ \t]*[A-Za-z]{3,}")
    texts = [text for entry in load_session(path).entries for text in entry_texts(entry)]
    phrases = sorted({" ".join(m.group().split()) for t in texts for m in pairs.finditer(t)})
    assert len(phrases) > 10
    for phrase in phrases[:: max(1, len(phrases) // 100)]:
        assert any(Pattern(phrase).compiled().search(text) for text in texts), phrase
        assert not Pattern(phrase).cannot_be_in(data), phrase


@pytest.mark.parametrize(
    ("text", "span"),
    [(" foo", (0, 4)), ("x\n\n\t foo", (1, 8)), ("xfoo", None), ("a  foo foo", (1, 6))],
)
def test_a_pattern_that_starts_with_a_space_matches_from_the_blanks_start(
    text: str, span: tuple[int, int] | None
) -> None:
    """A leading space matches a whole run of blanks (tried inside the run too, it read a
    long run again from each of its places: the review of this stop)."""
    found = Pattern(" foo").compiled().search(text)
    assert (found.span() if found else None) == span
