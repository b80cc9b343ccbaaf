"""Review s48 (helper 161): short passwords said in prose ("the password is hunter2", which
the prose rule's eight characters let through), and numbers inside a sensitive Terraform
output's object or list value; and the prose about passwords that must stay."""

from __future__ import annotations

import json
import time

import pytest

from exporter.detectors import scan
from tests.test_detectors import _covered


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


SHORT_PROSE = [
    # the brief's examples
    ("the password is hunter2", "hunter2"),
    ("my password is: dr4gon!", "dr4gon!"),
    ("DB password = s3cr3t", "s3cr3t"),
    ("use password `abc123x`", "abc123x"),
    # the ways a sentence says it
    ("The password is hunter2.", "hunter2"),
    ("The password is hunter2, the user is admin", "hunter2"),
    ("the password for the DB is abc12x", "abc12x"),
    ("Password for root: dr4gn!", "dr4gn!"),
    ("the password is now s3cr3t", "s3cr3t"),
    ("the password is set to s3cr3t", "s3cr3t"),
    ("the db_password is s3cr3t!", "s3cr3t!"),
    ("The passphrase was 'p@ss!w'", "p@ss!w"),
    ('password was "ab#cdef"', "ab#cdef"),
    ("the password is **hunter2**", "hunter2"),
    ("the password is *hunter2*", "hunter2"),
    ("the password is (hunter2)", "hunter2"),
    ("the password is admin123", "admin123"),
    ("the passcode is 123456", "123456"),
    ("the password is `LetMeIn`", "LetMeIn"),
    ("ALTER USER bob WITH PASSWORD 'Abc12x'", "Abc12x"),
    ('{"text":"the password is hunter2\\nok"}', "hunter2"),
]


@pytest.mark.parametrize(("text", "secret"), SHORT_PROSE)
def test_a_short_password_in_prose_goes(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)


def test_both_passwords_of_a_sentence_go_under_the_prose_rule_name() -> None:
    text = "old password was hunter1, new password is hunter2"
    assert _found(text) == [("prose-secret", "hunter1"), ("prose-secret", "hunter2")]


PROSE_ABOUT_PASSWORDS = [
    # the brief's examples
    "the password is wrong",
    "the password is incorrect",
    "the password is required",
    "password is too short",
    "the password is set in .env",
    "the password is 8 characters",
    "password is PASSWORD_ENV",
    # words, with sentence punctuation
    "the password is wrong!",
    "The password is incorrect.",
    "the password is too-short!",
    "password is user-defined",
    "the password isn't valid",
    "the password is Sunshine",
    "the password is 'letmein'",
    'the password is "Required"',
    "password is `optional`",
    "the password is `None`",
    "the password is hashed with bcrypt",
    # names of where it is kept
    "the password is config.db.password",
    "the password is `dbPassword`",
    "the password is $DB_PASS",
    "the password is ${PW}",
    "the password is <redacted>",
    "the password is ~/.pgpass",
    "the password is in 1Password",
    "the password is user@example.com",
    "password is https://x.io/a",
    # what it is like: an encoding, an algorithm, a length, a date, a version, a rule
    "the password is base64-encoded",
    "the password is base64",
    "the password is UTF-8",
    "the password is SHA256",
    "the password is AES-256",
    "the password is HS256",
    "the password is 128-bit",
    "the password is 12chars long",
    "the password is 8+chars",
    "password is 90days old",
    "the password is 2024-01-01",
    "the password is v1.2.3",
    "the password is 2fa-protected",
    "the password is a-z0-9 only",
    "the password is 1234",
    "the password `C0mpl3x!` rule",
    "password `reset` flow",
    "/etc/passwd is world-readable",
    "if password is not None:",
    # escaped markup: the entity ends the sentence, not a password's symbol
    "printf(&quot;Password is correct.&quot;);",
    "<p>The password is wrong&hellip;</p>",
]


@pytest.mark.parametrize("text", PROSE_ABOUT_PASSWORDS)
def test_prose_about_a_password_stays(text: str) -> None:
    assert scan(text) == [], _found(text)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("PASSWORD_ENV", True), ("db_password2", True), ("dbPassword", True),
        ("config.db.password", True), ("DB_PASS_2", True),
        ("HUNTER2", False), ("hunter_2", False), ("admin123", False), ("LetMeIn", False),
        ("S3CR3T", False),
    ],
)  # fmt: skip
def test_a_variable_name_is_no_password(value: str, name: bool) -> None:
    from exporter.secret_heuristics import is_variable_name  # (new: imported here)

    assert is_variable_name(value) is name


@pytest.mark.parametrize(
    "text",
    [
        "password is " * 17_000,
        "password " + "'" * 200_000,
        "password for the a for the " * 7_500,
        "the password is " + "a1" * 100_000,
        "password is:" + " " * 200_000 + "x",
        "password`" * 22_000,
        'password "' * 20_000,
        "password is " + "1" * 4 + " " * 200_000,
        "passcode was **" * 13_000,
    ],
)
def test_dense_prose_stays_linear(text: str) -> None:
    started = time.process_time()
    scan(text)
    assert time.process_time() - started < 0.5


def _output(value: object, indent: int | None, flag_first: bool) -> str:
    pairs = [("sensitive", True), ("type", ["object", {"pin": "number"}]), ("value", value)]
    output = dict(pairs if flag_first else pairs[::-1])
    return json.dumps({"db": output}, indent=indent)


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("flag_first", [True, False])
def test_a_number_inside_a_sensitive_object_goes(indent: int | None, flag_first: bool) -> None:
    text = _output(
        {"pin": 123456, "host": "x", "port": 12, "on": True, "off": False, "none": None},
        indent,
        flag_first,
    )
    found = [secret for _, secret in _found(text)]
    assert found == ["123456"], found


@pytest.mark.parametrize("indent", [None, 2])
def test_numbers_inside_a_sensitive_list_go(indent: int | None) -> None:
    value = [1234, 7, -98765.25, {"account": 4000123412341234}, [True, 42]]
    text = json.dumps({"sensitive": True, "type": "tuple", "value": value}, indent=indent)
    found = [secret for _, secret in _found(text)]
    assert found == ["1234", "-98765.25", "4000123412341234"], found


@pytest.mark.parametrize(
    "text",
    [
        # not sensitive
        '{"db": {"sensitive": false, "value": {"pin": 123456}}}',
        # only flags, nulls and short numbers
        '{"db": {"sensitive": true, "value": {"on": true, "off": false, "x": null, "n": 12}}}',
        # the number is in the type, not the value
        '{"db": {"sensitive": true, "type": ["tuple", [1234]], "value": ["ab"]}}',
    ],
)
def test_no_number_of_a_sensitive_value_goes(text: str) -> None:
    assert scan(text) == [], _found(text)


def test_dense_sensitive_lists_stay_linear() -> None:
    text = '{"sensitive": true, "value": [' + "123456, " * 25_000 + "1]} "
    started = time.process_time()
    scan(text)
    assert time.process_time() - started < 0.5
