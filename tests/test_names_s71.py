"""Session 71: a user name that is also a word ("max") still went out in clear in phrasings
that show a person: "reviewed by **Max**", "Reviewed by: Max", "reviewed by MAX", "__Max__
said", an indented "  — Max" signature, "MAX (owner)" and the rarer commit trailers
("Mentored-by: Max", "Co-developed-by: Max", "Fixes-reported-by: Max"). They now go. And
"the **Max** said value" lost its word: a determiner before the emphasis makes it no one's,
as it did without the marks.

Two rules stated here: a trailer's name joined to more by a dash ("Co-authored-by: Max-bot")
is another account's and stays whole, as "ask Max-bot" and "written by Max-bot" do (it
became "<user>-bot", which called the bot the user's); and a capitalised word name alone at
a sentence's start ("Max. That is the limit", "Max: 10") stays, as the word does in code and
prose ("max()", "max_tokens", "the max value"): nothing there shows a person."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from tests.conftest import cpu_time_limit
from tests.test_user_names_s69 import IDENTITY, _redacted  # the same identity and rules

MAX = "/home/max/p"  # the session's cwd: its owner, "max", is the user

# --- 1. the reported leaks ------------------------------------------------------------------

REPORTED = [
    ("reviewed by **Max**", "reviewed by **<user>**"),
    ("Reviewed by: Max", "Reviewed by: <user>"),
    ("reviewed by MAX", "reviewed by <user>"),
    ("__Max__ said it is fine", "__<user>__ said it is fine"),
    ("LGTM\n  — Max", "LGTM\n  — <user>"),
    ("MAX (owner)", "<user> (owner)"),
    ("Mentored-by: Max", "Mentored-by: <user>"),
    ("Co-developed-by: Max", "Co-developed-by: <user>"),
    ("Approved-by: Max", "Approved-by: <user>"),
    ("Fixes-reported-by: Max", "Fixes-reported-by: <user>"),
]


@pytest.mark.parametrize(("text", "expected"), REPORTED)
def test_the_reported_phrasings_lose_the_name(text: str, expected: str) -> None:
    assert _redacted(MAX, text) == expected


# --- 2. their siblings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # emphasis after "by", either mark, either case, the marks kept
        ("approved by *Max*, written by _Max_. Created by __MAX__",
         "approved by *<user>*, written by _<user>_. Created by __<user>__"),
        ("REVIEWED BY MAX; merged by MAX.", "REVIEWED BY <user>; merged by <user>."),
        # "by" as a label, also in bold
        ("Reviewed by: **Max**\n**Reviewed by:** Max\n**Approved by**: MAX",
         "Reviewed by: **<user>**\n**Reviewed by:** <user>\n**Approved by**: <user>"),
        ("reviewed by: max.", "reviewed by: <user>."),
        # "__" opens emphasis before a name as "_" does
        ("__Max__ wants it; __MAX__ said no", "__<user>__ wants it; __<user>__ said no"),
        # indented signatures, a tab or up to eight blanks, either dash
        ("Done.\n\t— Max\n    – Max", "Done.\n\t— <user>\n    – <user>"),
        ("LGTM\r\n  — Max\r\n", "LGTM\r\n  — <user>\r\n"),
        # a role after the name in capitals
        ("MAX (reviewer), MAX (me)", "<user> (reviewer), <user> (me)"),
        # git's and the kernel's trailers, any case
        ("Noticed-by: Max\nHelped-by: max\nThanks-to: MAX\nCo-Developed-By: Max",
         "Noticed-by: <user>\nHelped-by: <user>\nThanks-to: <user>\nCo-Developed-By: <user>"),
        ("Original-patch-by: Max\nBased-on-patch-by: Max\nOriginally-by: Max",
         "Original-patch-by: <user>\nBased-on-patch-by: <user>\nOriginally-by: <user>"),
        ("Bisected-by: Max\nDebugged-by: Max\nAnalyzed-by: Max\nReported-and-tested-by: Max",
         "Bisected-by: <user>\nDebugged-by: <user>\nAnalyzed-by: <user>\n"
         "Reported-and-tested-by: <user>"),
        # any other trailer of who did it, alone on its line, as `git log` indents it
        ("    Reviewed-and-acked-by: Max <max@example.com>\n    Suggested-and-fixed-by: MAX",
         "    Reviewed-and-acked-by: <user> <<user>@example.com>\n"
         "    Suggested-and-fixed-by: <user>"),
    ],
)  # fmt: skip
def test_their_siblings_lose_the_name(text: str, expected: str) -> None:
    assert _redacted(MAX, text) == expected


# --- 3. the words stay words, and the rules stated above -------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # the over-redaction: a determiner before the emphasis
        "the **Max** said value",
        "the __Max__ said value; a *Max* said; my _Max_ wants; the **Max** (owner)",
        # more of a name before "_" or "__"
        "SET__Max said; x___Max said; SET_Max said",
        # a trailer's name joined to more by a dash is another account
        "Co-authored-by: Max-bot\nReviewed-by: max-bot <bot@example.com>",
        "Reviewed-and-tested-by: Max-bot",
        # a word at a sentence's start, in code and in prose
        "Max. That is the limit. Max: 10",
        "max(a, b); max_tokens = 5; the max value; Math.max(1, 2)",
        # what looks like "by" and a name but is code or a setting
        "reviewed by MAX_RETRIES; approved by MAX(); written by __Max__init; sorted by **Max**",
        "Sort-By: MAX\nGroup-by: Max\nX-Powered-By: MAX\nsort-by: max",
        "MAX (default 5); the MAX (owner) value",
        # a dash that is no signature's: after more text, or deeper than eight blanks
        "x  — Max\n         — Max",
    ],
)
def test_the_words_stay(text: str) -> None:
    assert _redacted(MAX, text) == text


def test_a_trailer_of_a_thing_alone_on_its_line_stays() -> None:
    """The line rule is for people only: "Built-by: Jenkins" names the CI server."""
    assert _redacted("/home/jenkins/p", "Built-by: Jenkins") == "Built-by: Jenkins"


# --- 4. linear time on hostile lines -------------------------------------------------------

HOSTILE_LENGTH = 200_000


def _filled(unit: str, head: str = "", tail: str = "") -> str:
    """``head``, ``unit`` repeated and ``tail``: a line of about HOSTILE_LENGTH characters."""
    return head + unit * ((HOSTILE_LENGTH - len(head) - len(tail)) // len(unit)) + tail


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        (_filled("reviewed by **Max "), True),  # emphasis after "by"
        (_filled("Max "), False),  # every "by" looked behind at, for each name
        (_filled("MAX "), False),
        (_filled("Reviewed by: MAX_"), False),  # "by:" and capitals
        (_filled("by __Max___ "), False),  # "_" emphasis after "by"
        (_filled("MAX ("), False),  # a role in capitals
        (_filled(" ", "MAX", "(owner)"), False),
        (_filled("_", "", "Max said"), False),  # "__" before a name
        (_filled("the **Max "), False),  # a determiner before emphasis
        (_filled("the **MAX** said "), False),
        (_filled("x __MAX__ said "), True),
        (_filled(" ", "", "— Max x"), False),  # indented signatures
        (_filled("\n  — Max x"), False),
        (_filled("Co-developed-by: Max-b "), False),  # the trailers
        (_filled("-a", "A", "-by: Max x"), False),
        (_filled("ed-", "Aa", " Max"), False),
        (_filled(" ", "Fixed-by:", "Max x"), False),
        (_filled(">", "Fixed-by: Max <", "x"), False),
        (_filled("<", "Fixed-by: Max ", ""), False),
        (_filled("Fixed-by: Max x\n"), False),
    ],
    ids=lambda value: value if isinstance(value, bool) else repr(value[:24]),
)
def test_hostile_lines_take_linear_time(text: str, changed: bool) -> None:
    """Each takes 0.07 to 0.25 s of CPU here (a quadratic rule would take minutes); the
    limit is CPU time, so a busy machine cannot fail it."""
    with cpu_time_limit(5.0):
        assert (_redacted(MAX, text) != text) is changed


# --- 5. through the command ---------------------------------------------------------------


def _session(folder: Path, texts: list[str]) -> Path:
    """A session of user max (cwd under /home/max) with one user message per text."""
    records: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "s71-names", "cwd": "/home/max/site",
         "timestamp": "2026-12-07T10:00:00.000Z"}
    ]  # fmt: skip
    parent = None
    for number, text in enumerate(texts):
        records.append(
            {"type": "message", "id": f"u{number}", "parentId": parent,
             "timestamp": "2026-12-07T10:01:00.000Z",
             "message": {"role": "user", "content": text, "timestamp": 1765015260000}}
        )  # fmt: skip
        parent = f"u{number}"
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _redacted_by_the_cli(tmp_path: Path, texts: list[str]) -> tuple[Result, list[str]]:
    """``redact`` of a session of ``texts`` (a message each), and each message's text after."""
    source = _session(tmp_path, texts)
    copy = tmp_path / "copy.jsonl"
    args = ["redact", str(source), "-o", str(copy), "--no-env-secrets"]
    result = CliRunner().invoke(cli, args, env=IDENTITY)
    assert result.exit_code == 0, result.output
    contents = [
        json.loads(line)["message"]["content"]
        for line in copy.read_text(encoding="utf-8").splitlines()[1:]
    ]
    return result, contents


def test_redact_replaces_the_reported_phrasings_and_keeps_the_words(tmp_path: Path) -> None:
    """The reported session, through ``redact``: each reported phrasing in a message of its
    own, then the over-redacted one and the words."""
    kept = ["the **Max** said value", "Co-authored-by: Max-bot", "Max. max(a); the max value"]
    result, contents = _redacted_by_the_cli(tmp_path, [text for text, _ in REPORTED] + kept)
    assert contents == [expected for _, expected in REPORTED] + kept
    assert f"user names -> <user>: {len(REPORTED)}" in result.stderr


# --- 6. the review: words the new phrasings took -------------------------------------------
#
# In capitals "MAX" is as often SQL's or a spreadsheet's function, and a "<done>-by:" line or
# "<done> by" may sort or limit by it: the new rules took those. The name in capitals now
# goes only where a person's name stands (a role on its own line, after "cc" or "by"; after
# the verbs only a person does; a trailer whose kind is a person's), "Completed-by: June" is
# a date as "merged by June" is, and an indented dash repeated on the next or previous line
# is a list's, not a signature.

KEPT_AFTER_REVIEW = [
    # 1. a function before a bracket, a role's word as its argument
    ("max", "SELECT MAX(owner), MAX(author) FROM commits"),
    ("max", "SELECT MAX (reviewer) FROM commits"),
    ("max", "=MAX(Owner)"),
    ("max", "x = MAX(lead) + MAX(PM)"),
    ("max", "SELECT COUNT(*), MAX (owner) FROM t; (MAX (owner))"),
    # 2. a "<done>-by:" line that sorts, limits or serves, and a month's date
    ("max", "Sorted-by: MAX\nOrdered-By: MAX\n  Grouped-by: MAX\nPartitioned-by: MAX"),
    ("max", "Indexed-by: MAX\nLimited-by: MAX\nCapped-by: MAX\nBounded-by: MAX"),
    ("max", "Powered-By: MAX\nControlled-by: MAX"),
    ("june", "Completed-by: June\nExpected-by: JUNE"),
    # 3. capitals after what code does "by"
    ("max", "errors raised by MAX when; rows created by MAX / 2; fixed by MAX. sent by MAX, MIN"),
    # 4. a list of dash items
    ("max", "Fields:\n  — Min\n  — Max\n  — Avg"),
    ("max", "Options:\n\t– Min\n\t– Max"),
    ("max", "Options:\r\n  – Min\r\n  – Max\r\n"),
]


@pytest.mark.parametrize(
    ("user", "text"), KEPT_AFTER_REVIEW, ids=[f"kept{n}" for n in range(len(KEPT_AFTER_REVIEW))]
)
def test_what_the_review_found_stays_as_written(user: str, text: str) -> None:
    assert _redacted(f"/home/{user}/p", text) == text


STILL_GOING = [
    # 1. a role in capitals where a person's name stands
    ("max", "MAX (owner)", "<user> (owner)"),
    ("max", "LGTM\n  MAX (owner)\n  - MAX (reviewer)\n* MAX (lead)",
     "LGTM\n  <user> (owner)\n  - <user> (reviewer)\n* <user> (lead)"),
    ("max", "cc MAX (owner); reviewed by MAX (lead)",
     "cc <user> (owner); reviewed by <user> (lead)"),
    ("max", "MAX (reviewer), MAX (me); Max (owner)",
     "<user> (reviewer), <user> (me); <user> (owner)"),
    # 2. a trailer whose kind names a person, in capitals; the capitalised name in any other
    ("max", "Suggested-and-fixed-by: MAX\nCo-reviewed-by: MAX\nVerified-by: Max",
     "Suggested-and-fixed-by: <user>\nCo-reviewed-by: <user>\nVerified-by: <user>"),
    ("max", "Signed-off-by:\tMAX\nThanks-to: max <m@x.org>\nAcked-By: MAX",
     "Signed-off-by:\t<user>\nThanks-to: <user> <m@x.org>\nAcked-By: <user>"),
    ("june", "Reviewed-by: June\nReviewed-by: JUNE", "Reviewed-by: <user>\nReviewed-by: <user>"),
    # 3. capitals after what a person does, and in emphasis after any "by"
    ("max", "reviewed by MAX; approved by MAX. signed off by MAX, assigned by MAX",
     "reviewed by <user>; approved by <user>. signed off by <user>, assigned by <user>"),
    ("max", "merged by MAX. committed by MAX; raised by **MAX**; created by __MAX__",
     "merged by <user>. committed by <user>; raised by **<user>**; created by __<user>__"),
    # 4. a signature: an indented dash not repeated; another dash is another signature
    ("max", "LGTM\n  — Max", "LGTM\n  — <user>"),
    ("max", "Fine.\n  — Max\n\nNext:\n  — Min", "Fine.\n  — <user>\n\nNext:\n  — Min"),
    ("max", "Done.\n\t— Max\n    – Max", "Done.\n\t— <user>\n    – <user>"),
    ("max", "LGTM — nice work.\n  — Max", "LGTM — nice work.\n  — <user>"),
    ("max", "Fine.\n  — Max\n— Min\n    — Avg", "Fine.\n  — <user>\n— Min\n    — Avg"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("user", "text", "expected"), STILL_GOING, ids=[f"goes{n}" for n in range(len(STILL_GOING))]
)
def test_the_reported_phrasings_still_go(user: str, text: str, expected: str) -> None:
    assert _redacted(f"/home/{user}/p", text) == expected


@pytest.mark.parametrize(
    ("text", "changed"),
    [
        (_filled("x MAX (owner) "), False),  # a role's places looked behind at
        (_filled("MAX (owner), "), True),
        (_filled("\n\t– Max"), False),  # a list's items: each line's neighbours
        (_filled("  — Max\n  — Min\n"), False),
        (_filled("a-", "Aa-", "reviewed-by: MAX"), True),  # a trailer's kind, in capitals
        (_filled("a", "A", "ed-by: MAX"), False),
        (_filled("raised by MAX "), False),  # capitals after "by"
        (_filled("MAX: "), False),  # a colon before each name, no trailer's kind
    ],
    ids=lambda value: value if isinstance(value, bool) else repr(value[:24]),
)
def test_the_reviewed_rules_take_linear_time(text: str, changed: bool) -> None:
    with cpu_time_limit(5.0):
        assert (_redacted(MAX, text) != text) is changed


def test_redact_keeps_the_query_and_the_list(tmp_path: Path) -> None:
    """Through ``redact``: the SQL, the sort trailer and the list stay; the role on its own
    line goes."""
    kept = ["SELECT MAX(owner), MAX(author) FROM commits", "Sorted-by: MAX",
            "Fields:\n  — Min\n  — Max\n  — Avg", "rows created by MAX / 2"]  # fmt: skip
    result, contents = _redacted_by_the_cli(tmp_path, [*kept, "MAX (owner)"])
    assert contents == [*kept, "<user> (owner)"]
    assert "user names -> <user>: 1" in result.stderr
