"""Session 63: a list of secrets under one name (``"passwords": ["X", "Y"]``) in text
(a file read, a command's output) is redacted item by item; the NAME=value rule looked only
right after the separator, where the list's ``[`` stood."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.redact import Scanner

FIRST = "Tr0ub4dor&3x"
SECOND = "Hunter2isbad9"
RANDOM = "q8Zr2LmN0pXv7TtY4kWe"


def _found(template: str) -> list[str]:
    """What the scanner finds in ``template`` with <1>, <2>, <R> filled in."""
    text = template.replace("<1>", FIRST).replace("<2>", SECOND).replace("<R>", RANDOM)
    return [text[hit.start : hit.end] for hit in Scanner().find(text)]


@pytest.mark.parametrize(
    ("template", "secrets"),
    [
        ('{"passwords": ["<1>", "<2>"]}', [FIRST, SECOND]),
        ("{'passwords': ['<1>', '<2>']}", [FIRST, SECOND]),  # Python
        ('{"password": ["<1>"]}', [FIRST]),
        ('config = {"api_keys": ["<R>"]}', [RANDOM]),
        ('{"access_tokens":[\n  "<R>"\n]}', [RANDOM]),
        ('{"passwords": ["don\'t-know", "<2>"]}', ["don't-know", SECOND]),  # a quote inside
        # an escaped quote inside an item does not shift the items after it (review s63)
        # (an item holding an escape is not judged: its text is not its value)
        ('{"passwords": ["Xy7\\"kLm9", "<2>", "<1>"]}', [SECOND, FIRST]),
        ("{'passwords': ['Ab9\\\\xQ2z', '<2>', '<1>']}", [SECOND, FIRST]),
        ('{"cookie_secrets": ["<R>"]}', [RANDOM]),  # a cookie's secrets, not cookie names
        ('{\\"secrets\\": [\\"<R>\\"]}', [RANDOM]),  # JSON inside a JSON string
    ],
)
def test_every_string_of_a_secret_list_is_found(template: str, secrets: list[str]) -> None:
    assert _found(template) == secrets


@pytest.mark.parametrize(
    "template",
    [
        '{"keys": ["name", "email"], "tokens": ["Hello", ","]}',  # words, not secrets
        # ids, UUIDs and cookie names under a bare `keys`, `tokens`, `cookies` (review s63)
        '{"keys": ["order_id_9x8", "user_id_0001"], "tokens": ["<R>"]}',
        '{"tokens": ["550e8400-e29b-41d4-a716-446655440000"]}',
        '{"cookies": ["_ga", "_ga_Q2W3E4R5T6"]}',
        '{"secure_cookies": ["__Host-session", "__Secure-next-auth.session-token"]}',
        '{"hotkeys": ["ctrl+shift+k"]}',
        '{"sort_keys": ["<R>"]}',  # a sort key's name, not a secret's
        '{"class": ["<R>"]}',  # "class" is no plural of a secret's name
        '{"passwords": [{"id": "<R>"}]}',  # objects: their own names decide
    ],
)
def test_lists_under_other_names_are_left_alone(template: str) -> None:
    assert _found(template) == []


def test_a_redacted_copy_keeps_no_listed_password(tmp_path: Path) -> None:
    """A config file read by the agent, holding a list of passwords, went into the copy
    as it was (hunt 62's "left alone")."""
    config = json.dumps({"db": {"passwords": [FIRST, SECOND]}, "user": "app"}, indent=2)
    header = {
        "type": "session",
        "version": 3,
        "id": "s63",
        "timestamp": "2026-12-06T10:00:00.000Z",
        "cwd": "/tmp/p",
    }
    result_message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": config}],
        "isError": False,
        "timestamp": 1764496800000,
    }
    entries = [
        header,
        {
            "type": "message",
            "id": "r1",
            "parentId": None,
            "timestamp": "2026-12-06T10:00:01.000Z",
            "message": result_message,
        },
    ]
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    result = CliRunner().invoke(cli, ["redact", str(source), "-o", str(copy), "--no-env-secrets"])
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert FIRST not in written and SECOND not in written
    text = json.loads(written.splitlines()[1])["message"]["content"][0]["text"]
    assert json.loads(text)["user"] == "app"  # the rest of the file is untouched
