"""Stop 64 (helper hunt of `publish`): the index kept lone surrogates (Arrow, so `datasets`,
then refused the whole default config) and counts beyond int64 or below 0 (a column typed
float64, negative totals on the card); an auth header in AUTH_HEADER or BEARER went up in
clear; a user:pass@ in --endpoint or HF_ENDPOINT was sent instead of the token, and the
Hub's refusal blamed the token.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.publish.dataset_card import INDEX_FIELDS, render_card, render_index
from exporter.publish_cli import _publish_policy
from exporter.redact import sensitive_env_values
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture
from tests.test_publish import REPO_ID, Corpus, hub_env, index_rows, publish, small

__all__ = ["fake_hub_fixture", "hub_env", "small"]  # fixtures, by name

INT64_MAX = 2**63 - 1


def _write(root: Path, sid: str, lines: list[dict[str, Any]]) -> Path:
    """One Pi session file under ``root`` (its folder's name does not matter to --all)."""
    folder = root / "project"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-04-04T10-00-00-000Z_{sid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _session(sid: str, *, cwd: str = "/srv/a", **assistant: Any) -> list[dict[str, Any]]:
    """A header, a prompt and an answer whose fields ``assistant`` overrides."""
    stamp = "2026-04-04T10:00:00.000Z"
    answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "x",
        "provider": "p",
        "model": "m",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "cost": {}},
        "stopReason": "stop",
        "timestamp": 1775296803000,
        **assistant,
    }
    return [
        {"type": "session", "version": 3, "id": sid, "timestamp": stamp, "cwd": cwd},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": stamp,
         "message": {"role": "user", "content": "hi", "timestamp": 1775296802000}},
        {"type": "message", "id": "m2", "parentId": "m1", "timestamp": stamp, "message": answer},
    ]  # fmt: skip


def _surrogates(value: Any) -> list[str]:
    """The strings of ``value`` (in lists too) holding a lone surrogate."""
    if isinstance(value, str):
        return [value] if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else []
    if isinstance(value, list):
        return [s for item in value for s in _surrogates(item)]
    return []


# --- 1. lone surrogates in every string of the index -------------------------------------------


def test_no_field_of_the_index_keeps_half_a_character(fake_hub: FakeHub, tmp_path: Path) -> None:
    """A Latin-1 folder name read with surrogateescape ("/srv/caf\\udce9") and a provider
    and model holding halves went into index.jsonl as \\udce9 escapes, which Arrow refuses
    ("The surrogate pair in string is invalid"): `load_dataset` could not read the default
    config at all. Only the name was made readable."""
    root = tmp_path / "sessions"
    sid = "88888888-0000-0000-0000-000000000000"
    _write(root, sid, _session(sid, cwd="/srv/caf\udce9", provider="p\udce9", model="m\ud800"))
    result = publish(fake_hub, Corpus(root, [], []))
    assert result.exit_code == 0, result.output
    raw = fake_hub.files(REPO_ID)["index.jsonl"]
    (row,) = index_rows(fake_hub)
    assert [s for value in row.values() for s in _surrogates(value)] == []
    assert b"\\ud" not in raw.lower()  # no escaped half either
    assert row["project"] == "/srv/caf\ufffd"
    assert row["models"] == ["p\ufffd/m\ufffd"]


def test_rows_published_before_are_written_readable_too() -> None:
    """A row an earlier version published (read back from the dataset's index) holds the
    halves and the out-of-range counts still: the next index written has neither."""
    row = {name: 0 for name, kind in INDEX_FIELDS.items() if kind is int}
    row |= {"id": "s\udce9", "project": "/srv/caf\udce9", "models": ["p\udce9/m"], "cost": 0.0}
    row |= {"name": "n", "path": "sessions/2026-04/a.jsonl", "sha256": "0" * 64}
    row |= {"input_tokens": -5, "output_tokens": 10**30}
    (line,) = render_index([row]).decode("utf-8").splitlines()
    written = json.loads(line)
    assert [s for value in written.values() for s in _surrogates(value)] == []
    assert written["id"] == "s\ufffd" and written["models"] == ["p\ufffd/m"]
    assert (written["input_tokens"], written["output_tokens"]) == (0, INT64_MAX)


# --- 2. counts within 0..int64 -------------------------------------------------------------------


def test_counts_beyond_int64_or_below_zero_reach_no_row(fake_hub: FakeHub, tmp_path: Path) -> None:
    """`"input": 1e30` gave input_tokens 10^30 (datasets then typed the column float64 for
    every row) and `"input": -5` a negative count in the index and the card's totals. Since
    stop 65 a token count that is no whole number from 0 to 2**53 is read as none where
    usage is read (exporter/usage.py, tests/test_loader_s65.py): no row reaches the clamp."""
    root = tmp_path / "sessions"
    huge, negative = "44444441-0000-0000-0000-000000000000", "44444442-0000-0000-0000-000000000000"
    usage = {"output": 5, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.1}}
    _write(root, huge, _session(huge, usage={**usage, "input": 1e30}))
    _write(root, negative, _session(negative, usage={**usage, "input": -5, "output": -7}))
    result = publish(fake_hub, Corpus(root, [], []))
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in index_rows(fake_hub)}
    assert rows[huge]["input_tokens"] == 0
    assert (rows[negative]["input_tokens"], rows[negative]["output_tokens"]) == (0, 0)
    for row in rows.values():  # every count a whole number a int64 column holds
        for name, kind in INDEX_FIELDS.items():
            if kind is int:
                assert type(row[name]) is int and 0 <= row[name] <= INT64_MAX, (name, row)
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    assert "| input / output tokens | 0 / 5 |" in card


def test_the_cards_totals_count_no_row_below_zero() -> None:
    """A row an earlier version published with a negative count took it off the total."""
    rows = [{"input_tokens": -100, "output_tokens": 3}, {"input_tokens": 7, "output_tokens": 4}]
    card = render_card(REPO_ID, rows, {}, _publish_policy({})).decode("utf-8")
    assert "| input / output tokens | 7 / 7 |" in card


# --- 3. an auth header in the environment ------------------------------------------------------

_RNG = random.Random(64)
_CREDENTIAL = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(28)) + "=="
_BEARER = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(40))


@pytest.mark.parametrize(
    ("name", "value", "credential"),
    [
        ("AUTH_HEADER", f"Basic {_CREDENTIAL}", _CREDENTIAL),
        ("BEARER", f"Bearer {_BEARER}", _BEARER),
        ("HTTP_AUTHORIZATION_HEADER", f"bearer {_BEARER}", _BEARER),
        ("EXTRA_HEADER", f"Authorization: Bearer {_BEARER}", _BEARER),
        ("AUTHORIZATION", f"Basic {_CREDENTIAL}", _CREDENTIAL),  # found before: now both
        ("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer {_BEARER}", _BEARER),
    ],
)
def test_an_auth_headers_value_and_its_credential_are_sensitive(
    name: str, value: str, credential: str
) -> None:
    assert sensitive_env_values([(name, value)]) == [value, credential]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AUTHOR", f"Basic {_CREDENTIAL}"),  # another word than auth
        ("GIT_AUTHOR_NAME", "Token Smithsonian"),
        ("OAUTH_CLIENT_ID", f"Basic {_CREDENTIAL}"),  # a public id's name
        ("AUTH_HEADER", "Bearer ${GITHUB_TOKEN}"),  # a placeholder
        ("AUTH_HEADER", "Basic credentials"),  # a word
        ("AUTH_TYPE", "Basic"),  # the scheme alone
        ("AUTH_HEADER_NAME", "Authorization"),
        ("EXTRA_HEADER", f"X-Trace: Bearer {_BEARER}"),  # another header
        # no credential, judged as a token's value is (review, stop 64: each was replaced
        # wherever the session said it, an address in a URL, a date in a sentence)
        ("AUTH_HEADER", "Bearer 127.0.0.1:8080"),
        ("AUTH_HEADER", "Token 2024-01-01"),
        ("AUTH_HEADER", "Bearer ${{ secrets.TOKEN }}"),
        ("AUTH_HEADER", "Bearer ${{secrets.TOKEN}}"),
        ("AUTH_HEADER", "Bearer http://x.y/z"),
        ("AUTH_REALM", 'Basic realm="Restricted"'),
    ],
)
def test_names_and_values_that_only_look_like_an_auth_header_are_not(name: str, value: str) -> None:
    assert sensitive_env_values([(name, value)]) == []


def test_an_auth_header_in_the_environment_is_not_uploaded(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README: publish removes the shell's sensitive variables. AUTH_HEADER="Basic …"
    (a value with a space, under a name whose last word is no secret's) went up in clear,
    and so did its credential alone (as `curl -u` or a decoded header shows it)."""
    root = tmp_path / "sessions"
    sid = "77777777-0000-0000-0000-000000000000"
    lines = _session(sid)
    lines[1]["message"]["content"] = f"header: Basic {_CREDENTIAL}\nalone: {_CREDENTIAL}"
    _write(root, sid, lines)
    monkeypatch.setenv("AUTH_HEADER", f"Basic {_CREDENTIAL}")
    result = publish(fake_hub, Corpus(root, [], []))
    assert result.exit_code == 0, result.output
    assert _CREDENTIAL.encode() not in fake_hub.received_bytes()
    assert _CREDENTIAL not in result.output
    (path,) = [p for p in fake_hub.files(REPO_ID) if p.startswith("sessions/")]
    published = fake_hub.files(REPO_ID)[path].decode("utf-8")
    assert published.count("[REDACTED:env-secret:") == 2, published


# --- 4. credentials in the endpoint ------------------------------------------------------------


@pytest.mark.parametrize("where", ["--endpoint", "HF_ENDPOINT"])
def test_credentials_in_the_endpoint_are_a_usage_error(
    fake_hub: FakeHub, small: Corpus, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The client sent the URL's user:pass instead of the token, and the Hub's 401 was said
    as "rejected the token (invalid or expired)"; now refused before any request, with the
    password never printed."""
    password = "Pr0xyS3cretPw"
    endpoint = fake_hub.url.replace("http://", f"http://proxyuser:{password}@")
    if where == "HF_ENDPOINT":  # the variable alone: no --endpoint on the command line
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        args = ["publish", REPO_ID, "--all", "--sessions-dir", str(small.root), "-j", "1"]
        result = CliRunner().invoke(cli, [*args, "--token", TOKEN], catch_exceptions=False)
    else:  # typed after the fake's own: the last one given is the one used
        result = publish(fake_hub, small, "--endpoint", endpoint)
    assert result.exit_code == 1, result.output
    error = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(error) == 1, result.stderr
    assert f"{where} '***@127.0.0.1:" in error[0]
    assert "holds a user name or password" in error[0]
    assert password not in result.output and "proxyuser" not in result.output
    assert "token (invalid or expired)" not in result.output
    assert fake_hub.requests == []  # nothing sent, with those or the token
