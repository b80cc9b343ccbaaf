"""Review s47 (helper 156): Redis clients' ACL passwords, a config decoded from a JSON
string, numbers as sensitive Terraform values, the shell's `'"'"'` quote; and what is no
secret: Stripe's documentation stubs, prose about password rules, jq filters that print key
names, an `echo` of a command's words."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from exporter.detectors import scan
from exporter.secret_commands import reads_a_secret
from exporter.secret_heuristics import is_placeholder
from tests.test_detectors import _covered


def _found(text: str) -> list[tuple[str, str]]:
    return [(f.detector, text[f.start : f.end]) for f in scan(text)]


def _decoded_json(content: str) -> str:
    """A tool's JSON shown with its string's line breaks decoded (`"content": "a\nb"`)."""
    return json.dumps({"content": content}, indent=2).replace("\\n", "\n")


FOUND = [
    # 1: node-redis, ioredis, Jedis/Lettuce set a user's password
    ("client.aclSetUser('bob', ['on', '>Pa55word-x'])", "Pa55word-x"),
    ("await client.aclSetUser('bob', ['on', '~*', '+@all', '>Pa55word-x']);", "Pa55word-x"),
    ('jedis.aclSetUser("bob", "on", ">Pa55word-x", "~*")', "Pa55word-x"),
    ('jedis.aclSetUser("bob", ACLParams.aclParams().on().addPass("Pa55word-x"))', "Pa55word-x"),
    ('AclSetuserArgs.Builder.on().addPassword("Pa55word-x")', "Pa55word-x"),
    ("redis.acl('SETUSER', 'bob', 'on', '>Pa55word-x')", "Pa55word-x"),
    # 2: a config file's password line in a JSON string shown decoded
    (_decoded_json("host = db.internal\npassword = dragon\n"), "dragon"),
    (_decoded_json("host = db.internal\npassword = letmein\n"), "letmein"),
    # 4: `'"'"'` (and `'\''`) close, quote and reopen: the command holds a plain `'`
    ("psql -c 'ALTER USER bob PASSWORD '\"'\"'S3cret-pw!'\"'\"''", "S3cret-pw!"),
    ("psql -c 'ALTER USER bob PASSWORD '\\''S3cret-pw!'\\'''", "S3cret-pw!"),
    ("curl -u 'user:'\"'\"'pw-S3cret!x'\"'\"'' https://x", "pw-S3cret!x"),
    ("curl -u user:'pw-S3cret!x' https://x", "pw-S3cret!x"),
]


@pytest.mark.parametrize(("text", "secret"), FOUND)
def test_the_secret_is_covered_whole(text: str, secret: str) -> None:
    assert _covered(text, secret), _found(text)


@pytest.mark.parametrize("value", ["123456789012", "1234", "-4321.5", "98765432"])
@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("flag_first", [True, False])
def test_a_sensitive_number_goes(value: str, indent: int | None, flag_first: bool) -> None:
    """3: a PIN or an account number marked sensitive is the secret."""
    number = json.loads(value)
    pairs = [("sensitive", True), ("type", "number"), ("value", number)]
    output = dict(pairs if flag_first else pairs[::-1])
    text = json.dumps({"pin": output}, indent=indent)
    assert [found for _, found in _found(text)] == [value]


@pytest.mark.parametrize("value", [True, False, None, 12, "Hq7vLm2xPz9Rk4"])
def test_a_sensitive_scalar_that_tells_nothing_stays(value: object) -> None:
    """3: `true`/`false`/`null` (and a number of two digits) tell nothing; a string goes as
    before."""
    text = json.dumps({"flag": {"sensitive": True, "value": value}}, indent=2)
    expected = [value] if isinstance(value, str) else []
    assert [found for _, found in _found(text)] == expected


CLEAN = [
    # 1: no password set
    "client.aclSetUser('bob', ['on', '>' + pw])",
    "client.aclSetUser('bob', rules)",
    "client.aclSetUser(name, ['on', 'nopass'])",
    # 4: an ordinary `'"'"'` in a sentence
    "echo 'it'\"'\"'s fine'",
    # 5: Stripe keys in documentation
    'stripe.api_key = "sk_live_..."',
    "STRIPE_SECRET_KEY=sk_live_00000000000000000000000000",
    "STRIPE_KEY=sk_live_abc123...",
    "STRIPE_SECRET_KEY=sk_live_51Hxxxxxxxxxxxxxxxxxxxx",
    "STRIPE_SECRET_KEY=sk_live_your_key_here",
    "STRIPE_KEY=sk_live_XXXXXXXXXXXXXXXXXXXXXXXX",
    # 6: prose about password rules, flows and docs
    "the password C0mplexity! rule requires 12 characters",
    "see the password Reset-Flow.v2 docs",
    "see the password 'Reset-Flow.v2' docs",
    # 2: a JSON string of prose stays prose
    _decoded_json("the host = db.internal line\npassword = dragon is weak\n"),
]


@pytest.mark.parametrize("text", CLEAN)
def test_no_secret_is_found(text: str) -> None:
    assert scan(text) == [], _found(text)


@pytest.mark.parametrize(
    "text",
    [
        # real keys and passwords beside the new rules stay caught
        "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "sk_live_51HxYzABCdefGHIjklMNOpqrSTUvwxYZ0123456789abcdEFGhijKLMnop",
        "the password is Hunter2024",
        "use password Tr0ub.4dor&3 for the test",
        "try password Tr0ub.4dor&3 now",
    ],
)
def test_real_values_beside_the_new_rules_are_found(text: str) -> None:
    assert scan(text), text


@pytest.mark.parametrize(
    ("value", "placeholder"),
    [
        ("sk_live_...", True),
        ("sk_live_your_key_here", True),
        ("sk_test_51Hxxxxxxxxxxxxxxxxxxxx", True),
        ("sk_live_abc123...", True),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", False),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dcQ...", False),  # most of a real key
    ],
)
def test_stripe_documentation_stubs(value: str, placeholder: bool) -> None:
    assert is_placeholder(value) is placeholder


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        # 7: the names of the secret's fields, a count, a name
        ("aws secretsmanager get-secret-value --secret-id x | jq 'keys'", False),
        ("vault kv get -format=json secret/db | jq -r '.data.data | keys[]'", False),
        ("vault kv get -format=json secret/db | jq 'to_entries | map(.key)'", False),
        ("kubectl get secret x -o json | jq '.data | keys'", False),
        ("kubectl get secret x -o json | jq -r '.secrets | keys[]'", False),
        ("kubectl get secret x -o json | jq -r .metadata.name", False),
        # ... the values still are
        ("vault kv get -format=json secret/db | jq 'to_entries | map(.value)'", True),
        ("vault kv get -format=json secret/db | jq '.data | keys, .data'", True),
        ("aws secretsmanager get-secret-value --secret-id x | jq -r .SecretString", True),
        ("kubectl get secret x -o json | jq '.data.password'", True),
        ("kubectl get secret x -o json", True),
        ("kubectl get secret x -o json | jq keys; kubectl get secret y -o yaml", True),
        # 7: the words of a command, echoed
        ("echo ssh host 'terraform state pull'", False),
        ("echo bash -c 'terraform state pull'", False),
        ("ssh host 'terraform state pull'", True),
        ("sudo ssh host 'terraform state pull'", True),
        ("x; bash -c 'terraform state pull'", True),
    ],
)
def test_commands_that_print_a_secret(command: str, reads: bool) -> None:
    assert reads_a_secret(command) is reads


def _cpu(function: Callable[[str], object], argument: str) -> float:
    start = time.process_time()
    function(argument)
    return time.process_time() - start


@pytest.mark.parametrize(
    "unit",
    [
        "client.aclSetUser('bob', ['on', ",
        '.addPass("Pa55word") ',
        "'\"'\"'",
        "password C0mplexity! rule ",
        '{"sensitive": true, "value": 1234567},\n',
        '  "content": "a = b\npassword = dragon\n',
    ],
)
def test_the_new_rules_stay_linear(unit: str) -> None:
    small = _cpu(scan, unit * (25_000 // len(unit)))
    big = _cpu(scan, unit * (200_000 // len(unit)))
    assert big < 20 * small + 0.2, (small, big)


@pytest.mark.parametrize(
    "unit", ["ssh h '", "echo ssh h '", "kubectl get secret x -o json | jq keys | "]
)
def test_the_command_checks_stay_linear(unit: str) -> None:
    def seconds(n: int) -> float:
        return _cpu(reads_a_secret, unit * (n // len(unit)) + "terraform state pull")

    small, big = seconds(25_000), seconds(200_000)
    assert big < 20 * small + 0.1, (small, big)
