"""Session 69: a user name that is also a word ("max", "will", "mark", "june") now goes
where the sentence shows a person: before what a person does ("Max said", "Max approved the
change"), after "ask"/"tell"/"ping"/"cc" ("ask Max", "ask max about it"), ending a greeting in
lower case ("thanks max") and as a person's possessive ("Max's laptop"); these went out in
clear. And "Thanks, Will do" (user "will") is no longer "Thanks, <user> do": after a
greeting, a name that is a verb or a modal followed by a verb or an object is that word.
The words stay words ("Max tokens", "Math.max", "I will ask", "Mark this done", "June
2026"). Section 4, from the review: that verb rule had kept "Hi Will I need help" and "Thanks
Mark I'll merge it" in clear (it now needs the comma), "the thanks page" lost its page (user
"page"), "pinged June 3" its month, "the Bill's provisions" its Bill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.policy import RedactionPolicy
from exporter.redact import RedactionReport, text_redactor

#: The machine's own identity in every run here: the names come from the session's cwd
IDENTITY = {"HOME": "/home/tester", "USER": "tester", "LOGNAME": "tester"}


def _redacted(cwd: str, text: str) -> str:
    """``text`` redacted for the session of ``cwd`` (as the agent's prompt is: the same
    rules as the entries)."""
    policy = RedactionPolicy(env_secrets=False)
    redact = text_redactor(policy, RedactionReport(), cwd=cwd, environ=IDENTITY)
    return redact(text, ("systemPrompt",))


# --- 1. where the sentence shows a person, the name goes ---------------------------------


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/max/p", "Max approved the change", "<user> approved the change"),
        ("/home/max/p", "Max said it is fine. Max wants it",
         "<user> said it is fine. <user> wants it"),
        ("/home/max/p", '"Max wrote this" and Max asked about it',
         '"<user> wrote this" and <user> asked about it'),
        ("/home/max/p", "ask Max about it; tell Max; cc: Max",
         "ask <user> about it; tell <user>; cc: <user>"),
        ("/home/max/p", "ask max about it, ping max", "ask <user> about it, ping <user>"),
        ("/home/max/p", "thanks max", "thanks <user>"),
        ("/home/max/p", "thanks max, merged. thank you max!",
         "thanks <user>, merged. thank you <user>!"),
        ("/home/max/p", "hi max; thanks max for the fix", "hi <user>; thanks <user> for the fix"),
        ("/home/max/p", "Max's laptop and Max’s branch", "<user>'s laptop and <user>’s branch"),
        ("/home/will/p", "Will said fine; ask Will to review",
         "<user> said fine; ask <user> to review"),
        ("/home/will/p", "Thanks, Will. Hi Will! Will do.", "Thanks, <user>. Hi <user>! Will do."),
        ("/home/will/p", "Will's branch; thanks will!", "<user>'s branch; thanks <user>!"),
        ("/home/mark/p", "Mark said ok; Mark approved it", "<user> said ok; <user> approved it"),
        ("/home/mark/p", "Mark's review; thanks, mark.", "<user>'s review; thanks, <user>."),
        ("/home/june/p", "June approved the change; ask June",
         "<user> approved the change; ask <user>"),
        ("/home/june/p", "thanks june", "thanks <user>"),
        ("/home/dom/p", "Dom said the DOM is fine", "<user> said the DOM is fine"),
    ],
)  # fmt: skip
def test_a_word_name_goes_where_the_sentence_shows_a_person(
    cwd: str, text: str, expected: str
) -> None:
    assert _redacted(cwd, text) == expected


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/max/p", "ping @max, @Max and @MAX", "ping @<user>, @<user> and @<user>"),
        ("/home/mark/p", "cc @mark", "cc @<user>"),
    ],
)
def test_a_handle_of_the_name_goes_in_any_case(cwd: str, text: str, expected: str) -> None:
    """Already so before this session (``@`` before the whole name): pinned beside the rest."""
    assert _redacted(cwd, text) == expected


# --- 2. where it is the word, it stays ------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/will/p", "Thanks, Will do"),
        ("/home/will/p", "THANKS, WILL DO. Thanks, Will be done"),
        ("/home/will/p", "I will ask; the will to live; Will you check? thanks, will do"),
        ("/home/max/p", "Max tokens; y = Math.max(a, b); MAX_RETRIES = 3; max(a, b)"),
        ("/home/max/p", "Max approved amount is 5; the Max said value; Math.Max said; $Max said"),
        ("/home/max/p", "thanks, max is 5; lo, hi, max; ask max tokens"),
        ("/home/max/p", "on max's value; ask Max-bot; ping max.local; cc max.c"),
        ("/home/mark/p", "Mark this done. Mark approved items as done; Mark approved for release"),
        ("/home/mark/p", "Thanks, Mark it done. thanks, mark it done; Mark as read"),
        ("/home/june/p", "June 2026; June's release"),
        ("/home/jan/p", "Jan 5; Jan's numbers"),
        ("/home/hope/p", "Thanks, Hope this helps. Thanks, Hope you're well"),
        # a name that is a thing: the thing says, wants and is told
        ("/home/python/p", "Python says SyntaxError; tell Python to use UTF-8; Python's GIL"),
        ("/home/docker/p", "Docker wants root"),
    ],
)
def test_a_word_name_stays_where_it_is_the_word(cwd: str, text: str) -> None:
    assert _redacted(cwd, text) == text


# --- 3. through the command ---------------------------------------------------------------


def test_redact_replaces_the_word_name_where_it_names_the_user_only(tmp_path: Path) -> None:
    """The reported session: user max's prompt and answer name him; the tool's output uses
    the word."""
    prompt = "thanks max! Max approved the change; ask Max about Max's laptop"
    output = "Max tokens: 5\nMath.max(a, b)\nMAX_RETRIES=3"
    answer = "Done. Max said it is fine"
    records = [
        {"type": "session", "version": 3, "id": "s69-names", "cwd": "/home/max/site",
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
        {"type": "message", "id": "a2", "parentId": "t1", "timestamp": "2026-12-07T10:04:00.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": answer}],
                     "api": "anthropic-messages", "provider": "anthropic",
                     "model": "claude-sonnet-4-5", "stopReason": "stop",
                     "timestamp": 1765015440000}},
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
        "thanks <user>! <user> approved the change; ask <user> about <user>'s laptop"
    )
    assert out["t1"]["content"][0]["text"] == output
    assert out["a2"]["content"][0]["text"] == "Done. <user> said it is fine"
    assert "user names -> <user>" in result.stderr


# --- 4. review of session 69: what the first rules missed or took too far -------------------


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/will/p", "Hi Will I need help with the build",
         "Hi <user> I need help with the build"),
        ("/home/will/p", "Thanks Will this works", "Thanks <user> this works"),
        ("/home/mark/p", "Thanks Mark I'll merge it", "Thanks <user> I'll merge it"),
        ("/home/mark/p", "THANKS MARK I OWE YOU", "THANKS <user> I OWE YOU"),
        ("/home/sue/p", "Hi Sue we shipped it", "Hi <user> we shipped it"),
        ("/home/nick/p", "Thanks Nick that fixed it", "Thanks <user> that fixed it"),
        ("/home/jack/p", "Hey Jack you're right", "Hey <user> you're right"),
        ("/home/don/p", "Thanks Don it works", "Thanks <user> it works"),
        ("/home/may/p", "Hi May I need help", "Hi <user> I need help"),
        # after the comma a pronoun starts a clause, unless the name is a modal or "hope"
        ("/home/sue/p", "Thanks, Sue we shipped it", "Thanks, <user> we shipped it"),
        ("/home/jack/p", "Hi, Jack you're right", "Hi, <user> you're right"),
        ("/home/mark/p", "Thanks, Mark I'll merge it", "Thanks, <user> I'll merge it"),
    ],
)  # fmt: skip
def test_a_verb_name_after_a_greeting_goes_unless_a_comma_makes_it_the_verb(
    cwd: str, text: str, expected: str
) -> None:
    """Before session 69 these went; its rule for "Thanks, Will do" kept them (a clause's
    first word, "I", "we", "that", counted as the verb's object, with or without a comma)."""
    assert _redacted(cwd, text) == expected


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/will/p", "Thanks, Will do. Thanks, Will I need help? Thanks, Will you check?"),
        ("/home/may/p", "Thanks, May I ask"),
        ("/home/mark/p", "Thanks, Mark it done; Thanks, Mark all as read"),
        ("/home/hope/p", "Thanks, Hope this helps. Thanks, Hope to hear from you"),
    ],
)
def test_after_a_greeting_and_a_comma_the_verb_name_is_still_the_verb(cwd: str, text: str) -> None:
    assert _redacted(cwd, text) == text


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/page/p", "After submit, redirect to the thanks page."),
        ("/home/page/p", "Add a hello page. The goodbye page; the thanks page, the hello page!"),
        ("/home/server/p", "Start the hello server."),
        ("/home/bot/p", "Write a hello bot."),
        ("/home/agent/p", "Run the hello agent."),
        ("/home/main/p", "cd hello; go run hello main."),
        ("/home/python/p", "print hello python."),
        ("/home/rust/p", "a hello rust!"),
    ],
)
def test_a_thing_name_after_a_lower_case_greeting_stays(cwd: str, text: str) -> None:
    """A page, a server or a bot is no one greeted: "the thanks page" is a page."""
    assert _redacted(cwd, text) == text


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/june/p", "We pinged June 3 and asked June 12 whether it shipped"),
        ("/home/jan/p", "As told Jan 5, cc Jan 2026 report"),
        ("/home/mar/p", "asked Mar 3"),
        ("/home/may/p", "ping May 2 about it"),
        ("/home/max/p", "ask max and min of each column; ping max and min"),
        ("/home/bill/p", "The Bill's second reading; the Bill's provisions"),
        ("/home/max/p", "set the Max's value"),
        ("/home/will/p", "the Will's executor"),
        ("/home/mark/p", "a Mark's Gospel quote"),
    ],
)
def test_dates_word_pairs_and_determined_possessives_stay(cwd: str, text: str) -> None:
    """A month after "asked" with a day is a date; "max and min" a pair of words; "the
    Bill's" a thing's."""
    assert _redacted(cwd, text) == text


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/june/p", "ask June about it; June approved the change",
         "ask <user> about it; <user> approved the change"),
        ("/home/max/p", "ask Max 2 questions", "ask <user> 2 questions"),
        ("/home/max/p", "Max asked for a refactor", "<user> asked for a refactor"),
        ("/home/max/p", "Max suggested we split it", "<user> suggested we split it"),
        ("/home/max/p", "Max wanted to keep it", "<user> wanted to keep it"),
        ("/home/max/p", "Max agreed to ship", "<user> agreed to ship"),
        ("/home/max/p", "Sara asks Max to check", "Sara asks <user> to check"),
        ("/home/max/p", "pinging Max; Sara pings max about it; she tells Max",
         "pinging <user>; Sara pings <user> about it; she tells <user>"),
        ("/home/max/p", "I think that Max said so. Is this Max's laptop?",
         "I think that <user> said so. Is this <user>'s laptop?"),
    ],
)  # fmt: skip
def test_more_of_what_a_person_does_names_them(cwd: str, text: str, expected: str) -> None:
    """ "asked for", "wanted to", "suggested we" and "asks"/"pings"/"tells"/"pinging" show a
    person as "asked the", "ask" and "ping" did; "that" and "this" before the name are a
    conjunction or a pronoun there, not a determiner."""
    assert _redacted(cwd, text) == expected
