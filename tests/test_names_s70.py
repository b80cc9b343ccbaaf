"""Session 70: a user name that is also a word ("max", "will", "mark") still went out in
clear in phrasings that show a person: "Max requested changes", "reviewed by Max", "**Max**
said" (Markdown emphasis), "thanks max :)", "max said" and "MAX said"; and their siblings
"approved by Max", "Reviewed-by: Max", "Max (reviewer)", "— Max" and "Cheers,\\nMax"
signatures. They now go; the words stay words ("Max tokens", "max requested size", "set by
max()", "reviewed by max-width rules", "merged by June", "Min — Max")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.test_user_names_s69 import IDENTITY, _redacted  # the same identity and rules

# --- 1. the reported leaks ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/max/p", "Max requested changes", "<user> requested changes"),
        ("/home/max/p", "reviewed by Max", "reviewed by <user>"),
        ("/home/max/p", "**Max** said it is fine", "**<user>** said it is fine"),
        ("/home/max/p", "thanks max :)", "thanks <user> :)"),
        ("/home/max/p", "max said it is fine", "<user> said it is fine"),
        ("/home/max/p", "MAX said it is fine", "<user> said it is fine"),
    ],
)
def test_the_reported_phrasings_lose_the_name(cwd: str, text: str, expected: str) -> None:
    assert _redacted(cwd, text) == expected


# --- 2. their siblings ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        # what a reviewer does, and who did it
        ("/home/max/p", "Max left a comment; Max commented; Max requested review",
         "<user> left a comment; <user> commented; <user> requested review"),
        ("/home/max/p", "approved by Max, written by Max. Created by Max on 2026-12-07",
         "approved by <user>, written by <user>. Created by <user> on 2026-12-07"),
        ("/home/max/p", "approved by max. reviewed by max on Monday",
         "approved by <user>. reviewed by <user> on Monday"),
        ("/home/will/p", "merged by Will; signed off by Will",
         "merged by <user>; signed off by <user>"),
        # a commit's trailers, in any case
        ("/home/max/p", "Reviewed-by: Max\nCo-authored-by: max\nSigned-off-by: MAX",
         "Reviewed-by: <user>\nCo-authored-by: <user>\nSigned-off-by: <user>"),
        # a role in brackets
        ("/home/max/p", "Max (reviewer), max (me), Max (he/him)",
         "<user> (reviewer), <user> (me), <user> (he/him)"),
        # signatures
        ("/home/max/p", "— Max", "— <user>"),
        ("/home/max/p", "LGTM. — Max\nDone! -- Max", "LGTM. — <user>\nDone! -- <user>"),
        ("/home/max/p", "Cheers,\nMax", "Cheers,\n<user>"),
        ("/home/mark/p", "Best regards,\nMark.", "Best regards,\n<user>."),
        # emphasis around the name, its marks kept
        ("/home/max/p", "*Max* said so; _Max_ wants it; **Max** approved the change",
         "*<user>* said so; _<user>_ wants it; **<user>** approved the change"),
        ("/home/max/p", "thanks **Max**! Thanks, _Max_.", "thanks **<user>**! Thanks, _<user>_."),
        # lower case and capitals before what a person does
        ("/home/max/p", "max wants it; max asked for a refactor; MAX SAID NO",
         "<user> wants it; <user> asked for a refactor; <user> SAID NO"),
        ("/home/will/p", "will said it is fine", "<user> said it is fine"),
        # "said to be" (your call, session 70): "max said to be careful" is a person; the
        # passive needs "is" ("max is said to be 5", which stays: see below)
        ("/home/max/p", "max said to be careful", "<user> said to be careful"),
        # a smiley or an emoji ends a lower-case greeting or request
        ("/home/max/p", "thanks max :D; hi max 🙏; ask max :)",
         "thanks <user> :D; hi <user> 🙏; ask <user> :)"),
        # as before this session
        ("/home/max/p", "cc Max; Max wrote: ok", "cc <user>; <user> wrote: ok"),
    ],
)  # fmt: skip
def test_their_siblings_lose_the_name(cwd: str, text: str, expected: str) -> None:
    assert _redacted(cwd, text) == expected


# --- 3. the words stay words -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/will/p", "Thanks, Will do. Thanks, **Will** do"),
        ("/home/hope/p", "Thanks, Hope this helps"),
        ("/home/page/p", "the thanks page"),
        ("/home/june/p", "pinged June 3; merged by June; reviewed by June"),
        ("/home/may/p", "approved by May 3"),
        ("/home/bill/p", "the Bill's provisions"),
        ("/home/max/p", "ask max and min"),
        ("/home/max/p", "Max tokens; Math.max(a, b); MAX_RETRIES = 3"),
        ("/home/max/p", "max requested size; set by max(); the max reviewed value"),
        ("/home/max/p", "reviewed by max-width rules; written by Max-bot; computed by Max()"),
        ("/home/max/p", "sorted by Max; max requested changes; max commented out"),
        ("/home/max/p", "the Max said value; Max_ said; SET_Max said; x_max said"),
        ("/home/max/p", "max is said to be 5"),
        ("/home/max/p", "Min — Max\n- Max\n-- Max\nSELECT 1; -- Max"),
        ("/home/max/p", "— Max, on behalf of the team"),
        ("/home/max/p", "Select Min or Max.\nMax"),
        ("/home/max/p", "hey max:3000; hi max:port"),
        ("/home/max/p", "the Max (reviewer) value; set max (default 5)"),
        ("/home/mark/p", "mark approved the entries; Mark approved items"),
        ("/home/sue/p", "we will sue said company"),
        ("/home/will/p", "I will said nothing"),
        ("/home/will/p", "Thanks,\nWill do"),
        # a thing is not a person
        ("/home/python/p", "Python (owner); reviewed by Python; python said"),
        # code's plural nouns after a lower-case name, and what code does "by max" (review
        # of session 70: these went as people)
        ("/home/mark/p", "This mark tells the testing machinery; the random mark tells pytest"),
        ("/home/max/p", "limit max writes to 5; Per-connection max replies: 100"),
        ("/home/max/p", "max asks per minute; MAX WRITES PER SECOND"),
        ("/home/max/p", "the ValueError raised by max when the iterable is empty"),
        ("/home/max/p", "messages sent by max for each shard; issue fixed by max about x"),
        ("/home/mark/p", "the checkpoint created by mark on save"),
        ("/home/will/p", "Thanks,\n\nWill do"),
    ],
)
def test_the_words_stay(cwd: str, text: str) -> None:
    assert _redacted(cwd, text) == text


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/max/p", "Thanks,\r\nMax", "Thanks,\r\n<user>"),
        ("/home/max/p", "LGTM. — Max\r\n", "LGTM. — <user>\r\n"),
        ("/home/max/p", "Thanks,\n\nMax", "Thanks,\n\n<user>"),
    ],
)
def test_signatures_after_windows_line_ends_and_a_blank_line(
    cwd: str, text: str, expected: str
) -> None:
    assert _redacted(cwd, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Max" + " " * 64_000 + "x",  # a signature's end was looked for in every split
        "| Max " + " " * 64_000 + "|",
        "thanks" + " " * 64_000 + "x max",  # a greeting's comma, in every split
    ],
)
def test_long_runs_of_spaces_take_linear_time(text: str) -> None:
    """Quadratic before the review's fix: 12 s of CPU at 64,000 spaces; now ~0.03 s. The
    limit is CPU time, 100 times what it takes, so a busy machine cannot fail it."""
    from tests.conftest import cpu_time_limit

    with cpu_time_limit(3.0):
        assert _redacted("/home/max/p", text) == text  # (no person in any of them)


# --- 4. through the command ---------------------------------------------------------------


def test_redact_replaces_the_reported_phrasings(tmp_path: Path) -> None:
    """The reported session (user max): a review thread pasted into the prompt names him in
    each of the reported ways; the tool's output uses the word."""
    prompt = (
        "Max requested changes, reviewed by Max. **Max** said to split it.\n"
        "thanks max :)\nmax said ok; MAX said ok"
    )
    output = "max requested size: 5\nMath.max(a, b)\nMAX_RETRIES=3\nreviewed by max-width rules"
    records = [
        {"type": "session", "version": 3, "id": "s70-names", "cwd": "/home/max/site",
         "timestamp": "2026-12-07T10:00:00.000Z"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-12-07T10:01:00.000Z",
         "message": {"role": "user", "content": prompt, "timestamp": 1765015260000}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-12-07T10:02:00.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat x"}}],
             "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
             "stopReason": "toolUse", "timestamp": 1765015320000}},
        {"type": "message", "id": "t1", "parentId": "a1", "timestamp": "2026-12-07T10:03:00.000Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                     "content": [{"type": "text", "text": output}], "isError": False,
                     "timestamp": 1765015380000}},
    ]  # fmt: skip
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    args = ["redact", str(source), "-o", str(copy), "--no-env-secrets"]
    result = CliRunner().invoke(cli, args, env=IDENTITY)
    assert result.exit_code == 0, result.output
    out = {
        r.get("id"): r["message"]
        for r in map(json.loads, copy.read_text(encoding="utf-8").splitlines()[1:])
    }
    assert out["u1"]["content"] == (
        "<user> requested changes, reviewed by <user>. **<user>** said to split it.\n"
        "thanks <user> :)\n<user> said ok; <user> said ok"
    )
    assert out["t1"]["content"][0]["text"] == output
    assert "user names -> <user>: 6" in result.stderr  # the six in the prompt
