"""Session 68: the user's name is replaced whatever its case. For user ``hugo`` (a cwd in
/home/hugo) "Thanks Hugo, done" and "HUGO" went out in clear from ``redact``, ``publish``
and ``share``: only the spelling of the account was matched. A name that is also an
everyday or code word ("max", "mark", "will") still goes only where it names someone, now
in any case there, and after a greeting ("Thanks Max"); elsewhere the word stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.policy import RedactionPolicy
from exporter.redact import RedactionReport, text_redactor

#: The machine's own identity in every run here: the names come from the session's cwd
IDENTITY = {"HOME": "/home/tester", "USER": "tester", "LOGNAME": "tester"}
STAMP = 1765015200000


def _entry(
    entry_id: str, parent: str | None, minute: int, message: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-12-07T10:{minute:02d}:00.000Z",
        "message": {**message, "timestamp": STAMP + minute},
    }


def _session(path: Path, cwd: str, prompt: str, output: str = "ok", answer: str = "ok") -> Path:
    """A session with ``prompt`` from the user, a bash call whose output is ``output`` and
    an answer saying ``answer``."""
    call = {"type": "toolCall", "id": "call-1", "name": "bash", "arguments": {"command": "id"}}
    records = [
        {"type": "session", "version": 3, "id": "s68-names", "cwd": cwd,
         "timestamp": "2026-12-07T10:00:00.000Z"},
        _entry("u1", None, 1, {"role": "user", "content": prompt}),
        _entry("a1", "u1", 2, {"role": "assistant", "content": [call],
                               "api": "anthropic-messages", "provider": "anthropic",
                               "model": "claude-sonnet-4-5", "stopReason": "toolUse"}),
        _entry("t1", "a1", 3, {"role": "toolResult", "toolCallId": "call-1", "toolName": "bash",
                               "content": [{"type": "text", "text": output}], "isError": False}),
        _entry("a2", "t1", 4, {"role": "assistant", "content": [{"type": "text", "text": answer}],
                               "api": "anthropic-messages", "provider": "anthropic",
                               "model": "claude-sonnet-4-5", "stopReason": "stop"}),
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _redact(source: Path, copy: Path, *options: str) -> Result:
    args = ["redact", str(source), "-o", str(copy), "--no-env-secrets", *options]
    return CliRunner().invoke(cli, args, env=IDENTITY)


def _texts(copy: Path) -> tuple[str, str, str]:
    """The prompt, the tool's output and the answer of a copy of :func:`_session`."""
    records = [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines()]
    by_id = {r.get("id"): r["message"] for r in records[1:]}
    return (
        by_id["u1"]["content"],
        by_id["t1"]["content"][0]["text"],
        by_id["a2"]["content"][0]["text"],
    )


def _redacted(cwd: str, text: str) -> str:
    """``text`` redacted for the session of ``cwd`` (the way the agent's prompt beside a
    session is: the same rules as its entries)."""
    policy = RedactionPolicy(env_secrets=False)
    redact = text_redactor(policy, RedactionReport(), cwd=cwd, environ=IDENTITY)
    return redact(text, ("systemPrompt",))


# --- 1. a person's name in any case ---------------------------------------------------------


def test_the_user_s_name_goes_in_any_case_from_prompt_tool_output_and_answer(
    tmp_path: Path,
) -> None:
    """The reported case: user hugo's name stayed in clear wherever it was capitalised."""
    source = _session(
        tmp_path / "s.jsonl",
        "/home/hugo/site",
        "Thanks Hugo, done. HUGO'S notes are in Hugo’s folder",
        output="uid=1000(hugo) gid=1000(hugo)\nHUGO\nAuthor: Hugo Lefevre",
        answer="Sure, Hugo! I updated hugo's config.",
    )
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy)
    assert result.exit_code == 0, result.output
    prompt, output, answer = _texts(copy)
    assert prompt == "Thanks <user>, done. <user>'S notes are in <user>’s folder"
    assert output == "uid=1000(<user>) gid=1000(<user>)\n<user>\nAuthor: <user> Lefevre"
    assert answer == "Sure, <user>! I updated <user>'s config."
    assert "hugo" not in copy.read_text(encoding="utf-8").lower()
    assert "user names -> <user>" in result.stderr


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/hugo/site", "HUGO", "<user>"),
        ("/home/hugo/site", "Thanks Hugo, done", "Thanks <user>, done"),
        ("/home/hugo/site", "hUgO and hugo", "<user> and <user>"),
        # the account spelled with a capital (macOS): its lower-case form goes too
        ("/Users/Hugo/site", "ssh hugo@mac; Hugo's Mac", "ssh <user>@mac; <user>'s Mac"),
        # a home written in another case (macOS's folders are not case-sensitive)
        ("/Users/hugo/site", "open /Users/Hugo/site/x.md", "open /Users/<user>/site/x.md"),
        # a word joined to others stays whole, as in lower case: an identifier, not the name
        ("/home/hugo/site", "HUGO_ENV=prod hugoify Hugobot", "HUGO_ENV=prod hugoify Hugobot"),
    ],
)
def test_a_person_s_name_is_replaced_whatever_its_case(cwd: str, text: str, expected: str) -> None:
    assert _redacted(cwd, text) == expected


def test_a_provider_named_after_the_user_loses_the_name_in_any_case(tmp_path: Path) -> None:
    """A model's and provider's names keep a model family's name only (see s62)."""
    source = _session(tmp_path / "s.jsonl", "/home/hugo/site", "hi")
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    records[2]["message"]["provider"] = "Hugo-Labs"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    assert _redact(source, copy).exit_code == 0
    assert json.loads(copy.read_text(encoding="utf-8").splitlines()[2])["message"] == {
        **records[2]["message"],
        "provider": "<user>-Labs",
    }


# --- 2. a name that is also a word: only where it names someone -----------------------------


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/max/p", "Thanks Max, merged. hi MAX", "Thanks <user>, merged. hi <user>"),
        ("/home/max/p", "Good morning, Max. Dear Max", "Good morning, <user>. Dear <user>"),
        ("/home/max/p", "sudo -u Max ls; uid=501(Max); chown Max:MAX f",
         "sudo -u <user> ls; uid=501(<user>); chown <user>:<user> f"),
        ("/home/max/p", "-rw-r--r-- 1 Max staff 12 a", "-rw-r--r-- 1 <user> staff 12 a"),
        ("/home/mark/p", "Thank you Mark! MARK@host", "Thank you <user>! <user>@host"),
    ],
)  # fmt: skip
def test_a_word_name_goes_in_any_case_where_it_names_someone(
    cwd: str, text: str, expected: str
) -> None:
    assert _redacted(cwd, text) == expected


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/max/p", "Set max tokens; y = Math.max(a, b); MAX_RETRIES = 3; INT_MAX"),
        ("/home/max/p", "Max tokens reached. SELECT MAX(id) FROM t; Math.Max(a, b)"),
        ("/home/max/p", "the MAX value; Max. 5 retries; thanks, max is 5"),
        ("/home/mark/p", "mark this done. Mark this done. Markdown and MARKDOWN; bookmark"),
        ("/home/mark/p", "git commit --mark; Mark as read"),
        ("/home/will/p", "Thanks, will do. Will you check? I WILL"),
        ("/home/june/p", "Released in June; see the June release"),
        ("/home/python/p", "Thanks. Python 3.12 and PYTHONPATH"),
        # a user named after a model family: other cases name the assistant (see s62)
        ("/home/claude/p", "Claude Code wrote CLAUDE.md"),
    ],
)
def test_a_word_or_a_model_family_stays_where_it_is_the_word(cwd: str, text: str) -> None:
    assert _redacted(cwd, text) == text


def test_the_generic_and_no_ones_names_stay_in_any_case() -> None:
    """An account that names no one, or a folder that is no one's home, is no name."""
    assert _redacted("/home/ubuntu/p", "Ubuntu 24.04 on UBUNTU") == "Ubuntu 24.04 on UBUNTU"
    assert _redacted("/home/Shared/p", "the Shared folder, SHARED") == "the Shared folder, SHARED"


@pytest.mark.parametrize(
    ("cwd", "text", "expected"),
    [
        ("/home/İsmail/webapp", "Hi, I am İsmail (İSMAIL)", "Hi, I am <user> (<user>)"),
        ("/home/İsmail/webapp", "ismail and ISMAIL", "<user> and <user>"),
        ("/home/sam/webapp", "Sam said: deploy with AWS SAM", "<user> said: deploy with AWS SAM"),
        ("/home/ann/webapp", "ask ann about an ANN index", "ask <user> about an ANN index"),
        ("/home/nat/webapp", "Nat set up the NAT gateway", "<user> set up the NAT gateway"),
    ],
)
def test_a_name_special_casing_changes_or_an_acronym_can_spell(
    cwd: str, text: str, expected: str
) -> None:
    """Review of this change: "İsmail".lower() gains a combining dot, so the name was found
    nowhere, not even as spelled (it had been before); and a short name in capitals is as
    likely an acronym (AWS SAM, an ANN index, a NAT gateway), which went out as <user>."""
    assert _redacted(cwd, text) == expected


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/home/dom/webapp", "Query the DOM; the virtual DOM diff; Dom is fine"),
        ("/home/jan/webapp", "released in Jan 2026; Mon Jan  5 10:00; -rw-r--r-- 1 x y 0 Jan 5 a"),
        ("/home/oct/webapp", "Oct 3 and OCT"),
    ],
)
def test_month_names_and_the_dom_stay_for_users_so_named(cwd: str, text: str) -> None:
    """Users "jan" and "dom": a date's month and the DOM are words (review), so these names
    go only where they name someone, as "max" does."""
    assert _redacted(cwd, text) == text
