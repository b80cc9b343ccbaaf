"""Redaction and share policy: planted secrets all vanish, policies cut what they say, the copy
is still a valid Pi session (checked by Pi itself), and nothing touches the input."""

from __future__ import annotations

import base64
import contextlib
import copy
import html
import io
import json
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import exporter.detectors as detectors_module
from exporter.cli import cli
from exporter.entries import MessageEntry
from exporter.jsonl_out import dumps_line, session_to_jsonl
from exporter.loader import load_session, parse_session_bytes
from exporter.redact import RedactionPolicy, apply_policy
from exporter.redact_cli import policy_from_options, policy_options
from exporter.render import render_session
from exporter.session import Session
from tests.conftest import FIXTURES_DIR, run_node
from tests.secret_corpus import FIELDS, KINDS, plant_corpus, rand

R = random.Random(11)
GHP = "ghp_" + rand(R, 36)
GHP2 = "ghp_" + rand(R, 36)
ENV_VALUE = rand(R, 32)
BRANCHED = [FIXTURES_DIR / f"pi-branched-{i}.jsonl" for i in (1, 2, 3, 4)]
SAMPLER = FIXTURES_DIR / "every-entry-type.jsonl"
NO_ENV: dict[str, str] = {}


def run(session: Session, **policy: Any) -> tuple[Session, Any]:
    policy.setdefault("env_secrets", False)
    return apply_policy(session, RedactionPolicy(**policy), environ=NO_ENV)


def msg(role: str, content: Any, i: int, parent: int | None, **extra: Any) -> dict[str, Any]:
    message = {"role": role, "content": content, "timestamp": 0, **extra}
    parent_id = None if parent is None else f"m{parent}"
    stamp = f"2025-01-01T00:00:{i:02d}Z"
    return {"type": "message", "message": message, "id": f"m{i}", "parentId": parent_id,
            "timestamp": stamp}  # fmt: skip


def header(cwd: str = "/home/alice/proj") -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2025-01-01T00:00:00Z",
        "cwd": cwd,
    }


def entries_text(session: Session) -> str:
    return session_to_jsonl(session)


# --- the planted-secret corpus ----------------------------------------------------------------


@pytest.fixture(scope="session")
def carriers(request: pytest.FixtureRequest) -> list[list[dict[str, Any]]]:
    """Sessions written by Pi's SessionManager (gen-sessions.mjs); Pi-written fixtures locally
    when node/Pi are missing (CI fails instead, see conftest.unavailable)."""
    try:
        files = request.getfixturevalue("generated_sessions").files[:8]
    except pytest.skip.Exception:
        files = BRANCHED[:3]
    return [[json.loads(x) for x in f.read_text("utf-8").splitlines() if x.strip()] for f in files]


def test_planted_secrets_all_disappear(
    carriers: list[list[dict[str, Any]]], tmp_path: Path
) -> None:
    corpus = plant_corpus(copy.deepcopy(carriers), 264, seed=20250601)
    assert len(corpus.planted) >= 200 and len({p.kind for p in corpus.planted}) == len(KINDS) >= 15
    assert {p.field for p in corpus.planted} == set(FIELDS)
    policy = RedactionPolicy(secrets=corpus.literal_secrets())
    environ = {"HOME": "/home/dev", "USER": "dev", **corpus.env()}
    leaks, found = [], 0
    for index, records in enumerate(corpus.carriers):
        path = tmp_path / f"carrier{index}.jsonl"
        path.write_text("".join(dumps_line(r) + "\n" for r in records), "utf-8")
        redacted, report = apply_policy(load_session(path), policy, environ=environ)
        found += report.total
        outputs = {
            "jsonl": session_to_jsonl(redacted),
            "report": "\n".join(json.dumps(r) for r in report.records()) + report.summary_line(),
            "html": render_session(redacted),
        }
        for planted in (p for p in corpus.planted if p.carrier == index):
            for secret in planted.secrets:
                leaks += [
                    (planted.kind, planted.field, k) for k, v in outputs.items() if secret in v
                ]
    assert leaks == []
    assert found >= len(corpus.planted)


# --- policies ---------------------------------------------------------------------------------


def test_input_session_and_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(SAMPLER.read_bytes())
    stat = path.stat()
    session = load_session(path)
    before, raws = session_to_jsonl(session), copy.deepcopy([e.raw for e in session.entries])
    run(session, drop_hidden=True, no_thinking=True, no_tool_output=True, no_images=True)
    assert session_to_jsonl(session) == before and [e.raw for e in session.entries] == raws
    assert path.read_bytes() == SAMPLER.read_bytes() and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_no_thinking_no_tool_output_no_images() -> None:
    session = load_session(SAMPLER)
    out, report = run(session, no_thinking=True, no_tool_output=True, no_images=True)
    text = entries_text(out)
    assert '"type":"thinking"' not in text and '"type":"image"' not in text
    assert "Let me think" not in text and "def f0" not in text and "FAIL 1" not in text
    assert (
        '"diff"' not in text
        and "[tool output left out (--no-tool-output): 16 lines, 183 characters]" in text
    )
    assert "[image left out (--no-images): image/png]" in text
    assert '"toolCall"' in text and '"command":"make test"' in text  # calls are kept
    assert report.actions["images_omitted"] == 1 and report.actions["tool_outputs_omitted"] >= 9


def test_the_conversation_only_leaves_out_tool_calls_and_results() -> None:
    """--no-tool-output kept each call's arguments: a write's whole file went out in the
    shared page (peer review). --no-tool-calls leaves the calls, their results and `!`
    commands out, and each message says what it called."""
    session = load_session(SAMPLER)
    calls = sum(
        1
        for e in session.entries
        if isinstance(e, MessageEntry) and isinstance(e.message.get("content"), list)
        for b in e.message["content"]
        if isinstance(b, dict) and b.get("type") == "toolCall"
    )
    out, report = run(session, no_tool_calls=True)
    text = entries_text(out)
    assert '"toolCall"' not in text and '"make test"' not in text and "def f0" not in text
    assert not any(e.role in ("toolResult", "bashExecution") for e in out.entries
                   if isinstance(e, MessageEntry))  # fmt: skip
    assert report.actions["tool_calls_omitted"] == calls > 0
    notes = re.findall(r"\[(\d+) tool calls? left out \(--no-tool-calls\): ([^\]]+)\]", text)
    assert sum(int(n) for n, _ in notes) == calls and "bash" in " ".join(t for _, t in notes)
    assert 'class="tool ' not in render_session(out)  # the page shows no tool box
    assert "[tool output omitted" not in text  # nothing half-left


def test_drop_hidden_and_signatures(write_session: Callable[..., Path]) -> None:
    think = {"type": "thinking", "thinking": "hm", "thinkingSignature": "EqQBCkgIARAB"}
    call = {"type": "toolCall", "id": "c", "name": "ls", "arguments": {}, "thoughtSignature": "x"}
    records = [
        header(),
        msg("user", "hi", 1, None),
        {"type": "custom", "customType": "state", "data": {}, "id": "c2", "parentId": "m1"},
        msg("assistant", [think, call], 3, None),
        {"type": "custom_message", "customType": "x", "content": "hidden", "display": False,
         "id": "c4", "parentId": "m3"},
        msg("custom", "also hidden", 5, None, display=False, customType="y"),
        msg("user", "bye", 6, None),
    ]  # fmt: skip
    records[3]["parentId"], records[5]["parentId"], records[6]["parentId"] = "c2", "c4", "m5"
    session = load_session(write_session(records))
    out, report = run(session, drop_hidden=True)
    assert [e.id for e in out.entries] == ["m1", "m3", "m6"]
    assert [e.parent_id for e in out.entries] == [None, "m1", "m3"]  # nearest kept ancestor
    assert "Signature" not in entries_text(out) and report.actions["signatures_dropped"] == 2
    kept, _ = run(session, drop_hidden=False)
    assert len(kept.entries) == 6 and "thinkingSignature" in entries_text(kept)


@pytest.mark.parametrize("path", [*BRANCHED, SAMPLER], ids=lambda p: p.name)
@pytest.mark.parametrize("flags", [{"active_branch_only": True}, {"drop_hidden": True},
                                   {"active_branch_only": True, "drop_hidden": True},
                                   {"no_tool_calls": True}])  # fmt: skip
def test_tree_stays_valid_after_dropping(path: Path, flags: dict[str, bool]) -> None:
    session = load_session(path)
    out, report = run(session, **flags)
    ids = [e.raw["id"] for e in out.entries]
    assert set(ids) <= {e.raw["id"] for e in session.entries} and len(set(ids)) == len(ids)
    assert all(e.raw["parentId"] is None or e.raw["parentId"] in ids for e in out.entries)
    assert report.actions.get("entries_dropped", 0) == len(session.entries) - len(ids)
    expected = session.leaf_id
    while expected is not None and expected not in ids:
        expected = session.parent_of(expected)
    moved = (
        [i for i in ids if i not in session.active_path] if flags.get("active_branch_only") else []
    )
    if moved:  # labels and the session name set on another branch, chained after the leaf
        assert ids[-len(moved) :] == moved and out.path_to(moved[-1])[-len(moved) - 1] == expected
        assert {session.by_id[i].type for i in moved} <= {"label", "session_info"}
        expected = moved[-1]
    assert out.leaf_id == expected and out.entries[-1].id == expected  # Pi opens the last line
    if flags.get("active_branch_only"):
        assert not out.fork_ids and out.name == session.name
        assert out.labels == {t: n for t, n in session.labels.items() if t in ids}
    for entry in out.entries:  # a kept compaction still points at a kept entry on its path
        if entry.type == "compaction" and entry.raw.get("firstKeptEntryId") in session.by_id:
            assert entry.raw["firstKeptEntryId"] in out.path_to(entry.id)


def test_compaction_first_kept_moves_to_next_kept_entry(write_session: Callable[..., Path]) -> None:
    hidden = {"type": "custom_message", "customType": "x", "content": "h", "display": False,
              "id": "h2", "parentId": "m1"}  # fmt: skip
    compaction = {"type": "compaction", "summary": "s", "firstKeptEntryId": "h2",
                  "tokensBefore": 1, "id": "k4", "parentId": "m3"}  # fmt: skip
    records = [header(), msg("user", "a", 1, None), hidden, msg("user", "b", 3, None), compaction]
    records[3]["parentId"] = "h2"
    out, _ = run(load_session(write_session(records)), drop_hidden=True)
    assert out.by_id["k4"].raw["firstKeptEntryId"] == "m3"
    assert out.by_id["m3"].parent_id == "m1"


def test_copies_of_overflowing_and_deeply_nested_json_stay_valid(
    write_session: Callable[..., Path], tmp_path: Path
) -> None:
    """``1e400`` reads as infinity, which ``json.dumps`` wrote as ``Infinity`` (not JSON: Pi
    and our loader then dropped that line and orphaned its children); arrays nested 900+
    deep loaded but made ``json.dumps`` raise RecursionError (a traceback in ``redact``)."""
    records = [header(), msg("user", "a", 1, None), msg("assistant", "b", 2, 1),
               msg("user", "c", 3, 2)]  # fmt: skip
    records[2]["message"]["usage"] = {"input": 1e400, "output": 1}
    records[3]["message"]["details"] = "DEEP"
    lines = [json.dumps(r, allow_nan=True).replace("Infinity", "1e400") for r in records]
    lines[3] = lines[3].replace('"DEEP"', "[" * 900 + '"bottom"' + "]" * 900)
    path = tmp_path / "overflow.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path)
    assert len(session.entries) == 3 and not session.damaged
    out, _ = run(session, redact=False)
    text = session_to_jsonl(out)
    assert "Infinity" not in text and '"input":1e999' in text

    def refuse(constant: str) -> None:
        raise AssertionError(f"not JSON: {constant}")

    for line in text.splitlines():
        json.loads(line, parse_constant=refuse)
    again = parse_session_bytes(text.encode("utf-8"))
    assert len(again.entries) == 3 and not again.damaged
    # (an infinite token count is none, and said so: tests/test_loader_s65.py)
    assert [d.kind for d in again.diagnostics] == ["bad-usage"]


def test_upload_token_is_hidden_but_leaves_the_key_alone(
    write_session: Callable[..., Path],
) -> None:
    """The token an upload authenticates with is redacted like a --secret; it stays out of
    the policy key, or a rotated token would make publish re-upload every session."""
    token = "0123456789abcdef0123456789abcdef01234567"
    session = load_session(write_session([header(), msg("user", f"use {token}", 1, None)]))
    base = RedactionPolicy(home="/h", user="u", env_secrets=False)
    with_token = RedactionPolicy(home="/h", user="u", env_secrets=False, auth_tokens=(token,))
    out, report = apply_policy(session, with_token, environ=NO_ENV)
    assert token not in entries_text(out) and report.counts == {"auth-token": 1}
    assert with_token.key(NO_ENV) == base.key(NO_ENV)


def test_no_redact_changes_no_string(write_session: Callable[..., Path]) -> None:
    records = [header("/home/alice/p"), msg("user", f"token {GHP} in /home/alice/p", 1, None)]
    session = load_session(write_session(records))
    out, report = run(session, redact=False, home="/home/alice", user="alice")
    assert entries_text(out) == entries_text(session) and report.total == 0
    assert report.summary_line().startswith("redact: secret scan off")


# --- secrets, numbering, report ---------------------------------------------------------------


def test_stable_numbering_and_report_without_secrets(
    write_session: Callable[..., Path], tmp_path: Path
) -> None:
    records = [header(), msg("user", f"a {GHP} b {GHP2}", 1, None),
               msg("assistant", [{"type": "text", "text": f"again {GHP}"}], 2, 1)]  # fmt: skip
    out, report = run(load_session(write_session(records)))
    text = entries_text(out)
    assert GHP not in text and GHP2 not in text
    assert "a [REDACTED:github-token:1] b [REDACTED:github-token:2]" in text
    assert "again [REDACTED:github-token:1]" in text
    assert report.counts == {"github-token": 3} and report.per_entry() == {
        "m1": {"github-token": 2},
        "m2": {"github-token": 1},
    }
    assert [h.json_path for h in report.hits] == ["$.message.content", "$.message.content",
                                                  "$.message.content[0].text"]  # fmt: skip
    report.write_jsonl(tmp_path / "r.jsonl")
    written = (tmp_path / "r.jsonl").read_text("utf-8")
    lines = [json.loads(x) for x in written.splitlines()]
    assert lines[0]["type"] == "summary" and lines[0]["counts"] == {"github-token": 3}
    assert len(lines) == 4 and all(line["type"] == "hit" for line in lines[1:])
    for shown in (written, report.summary_line(), repr(report)):
        assert GHP not in shown and GHP2 not in shown
    expected = "redact: 3 secrets in 2 entries (github-token 3); home paths -> ~: 1"
    assert report.summary_line() == expected


def test_redacting_twice_finds_nothing_new(write_session: Callable[..., Path]) -> None:
    records = [header(), msg("user", f"export GITHUB_TOKEN={GHP}\npassword: s3cr3t.Value", 1, None)]
    once, first = run(load_session(write_session(records)))
    twice, second = run(once)
    assert first.total == 2 and second.total == 0
    assert entries_text(once) == entries_text(twice)


def test_a_found_secret_is_removed_wherever_it_comes_back(
    write_session: Callable[..., Path],
) -> None:
    """A value is known as a secret by what names it (`DB_PASSWORD=…`); agents then repeat
    it bare: later in the same string, in another entry, on another branch. Those copies
    leaked (review 2026-12-01)."""
    password, key = "Pg7fQx2LmZ9kWt4R", "q3Lk9Zp2Xw7Rt5Yb1Nc8Vd4Mf6Hg0Js2"
    chosen = ("s3cr3t-pa55", "ProdDbPass", "correct-horse-battery-staple")
    records = [
        header(),
        msg(
            "user",
            f"cat .env\nDB_PASSWORD={password}\nMAPS_API_KEY={key}\nusing {password}",
            1,
            None,
        ),
        msg("assistant", [{"type": "text", "text": f"I'll use the maps key `{key}`."}], 2, 1),
        msg("user", f"psql says: Password for user app: {password}", 3, 2),
        msg("user", f"on another branch: window.KEY || '{key}'", 4, 1),  # a fork at m1
        msg("user", "a short value is not searched for: hunter2, and words never are", 5, 3),
        msg("user", "cat .env.prod\nADMIN_PASSWORD=correct-horse-battery-staple", 6, 5),
        msg("user", "SMTP_PASSWORD=ProdDbPass DB_PASSWORD=s3cr3t-pa55", 7, 6),
        msg("assistant", [{"type": "text", "text": f"Wired: {', '.join(chosen)}."}], 8, 7),
    ]
    redacted, report = run(load_session(write_session(records)))
    text = entries_text(redacted)
    assert password not in text and key not in text
    assert [value for value in chosen if value in text] == []
    # one placeholder per value, wherever it is; the report counts every copy
    assert text.count("[REDACTED:secret-assignment:1]") == 3
    assert text.count("[REDACTED:secret-assignment:2]") == 3
    assert all(text.count(f"[REDACTED:secret-assignment:{n}]") == 2 for n in (3, 4, 5))
    assert report.counts == {"secret-assignment": 12}
    assert "a short value is not searched for: hunter2, and words never are" in text
    again, second = run(redacted)
    assert second.total == 0 and entries_text(again) == text


def test_a_false_positive_word_is_not_searched_for_elsewhere() -> None:
    from exporter.redact import _worth_repeating

    assert _worth_repeating("Pg7fQx2LmZ9kWt4R") and _worth_repeating("Tr0ub4dor&3x")
    # passwords people choose (leak review 2026-12-01: these went out where repeated)
    for chosen in ("s3cr3t-pa55", "correct-horse-battery-staple", "ProdDbPass"):
        assert _worth_repeating(chosen), chosen
    assert not _worth_repeating("hunter2")  # too short to search for without a name
    assert _worth_repeating("Pg7fQx2L")  # from 8 characters (MIN_REPEATED) on
    # what a context detector might take in error is not multiplied across the session
    for code in ("Optional[str]", "(required)", "${DB_PASSWORD}", "get_password",
                 "settings.API_KEY", "getPassword()", "development", "Production", "12345678",
                 "changeme", "xxxxxxxxxx"):  # fmt: skip
        assert not _worth_repeating(code), code


def test_tokens_known_by_their_shape_need_no_second_pass(
    write_session: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every found value became a literal of a second pass over every string: 16,000 distinct
    GitHub tokens took 124 s instead of 1.2 s (delta review 2026-12-01). A token format finds
    every copy of its tokens itself; only values known by their context are repeated."""
    import exporter.redact

    passes: list[int] = []
    real = exporter.redact._redact_pass

    def counted(*args: Any, **kwargs: Any) -> Any:
        passes.append(len(args[3]))
        return real(*args, **kwargs)

    monkeypatch.setattr(exporter.redact, "_redact_pass", counted)
    tokens = ["ghp_" + rand(R, 36) for _ in range(50)]
    records = [header(), *(msg("user", f"use {t} then {t}", i, i - 1 if i else None)
                           for i, t in enumerate(tokens))]  # fmt: skip
    out, report = run(load_session(write_session(records)))
    assert passes == [0] and report.counts == {"github-token": 100}
    assert not any(t in entries_text(out) for t in tokens)
    passes.clear()
    records.append(msg("user", "DB_PASSWORD=Pg7fQx2LmZ9kWt4R, again: Pg7fQx2LmZ9kWt4R", 50, 49))
    run(load_session(write_session(records)))
    assert passes == [0, 1]  # one value known by its name: searched for once more


def test_json_in_strings_and_structured_fields(write_session: Callable[..., Path]) -> None:
    args = json.dumps({"command": f"export GITHUB_TOKEN={GHP}", "env": {"api_key": "k3y123456789"}})
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": args}
    data = {"apiKey": "Zq81x0LmNop", "user": {"password": "hunter2!"}, "key": "ArrowUp"}
    custom = {"type": "custom", "customType": "s", "data": data, "id": "c2", "parentId": "m1"}
    records = [header(), msg("assistant", [call], 1, None), custom]
    out, report = run(load_session(write_session(records)))
    new_args = json.loads(out.by_id["m1"].raw["message"]["content"][0]["arguments"])
    assert new_args == {"command": "export GITHUB_TOKEN=[REDACTED:github-token:1]",
                        "env": {"api_key": "[REDACTED:secret-assignment:1]"}}  # fmt: skip
    assert out.by_id["c2"].raw["data"] == {
        "apiKey": "[REDACTED:secret-assignment:2]",
        "user": {"password": "[REDACTED:secret-assignment:3]"},
        "key": "ArrowUp",
    }
    assert "$.data.user.password" in {h.json_path for h in report.hits}


# Realistic leaks an adversarial review found (each survived before): secrets as separate
# command-line arguments, glued names, hex/UUID tokens, headers and env lists in tool arguments,
# passphrases with spaces, a secret in the session name.
REVIEW_SECRETS = {
    "mysql": "S3cretPassw0rd-my",
    "curl": "S3cretPassw0rd-cu",
    "docker": "S3cretPassw0rd-dk",
    "flag": "S3cretPassw0rd-fl",
    "pg": "S3cretPassw0rd-pg",
    "consul": "3f6c2a9e-8b1d-4c7a-9e2f-5d4b1a0c7e93",
    "basic": "YWRtaW46UzNjcmV0UGFzc3cwcmQ=",
    "ghtoken": "0123456789abcdef0123456789abcdef01234567",
    "k8s": "S3cretPassw0rd-k8",
    "phrase": "correct horse battery staple",
    "pw": "Tr0ub4dor&3x",
    "title": "S3cretPassw0rd-ti",
}


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("vault kv get -field=password secret/db", True), ("vault read -field=value x", True),
        ("op read op://Private/db/password", True),
        ("gcloud secrets versions access latest --secret=db-password", True),
        ("kubectl get secret db -o jsonpath='{.data.password}' | base64 -d", True),
        ("aws ssm get-parameter --name /prod/db --with-decryption", True),
        ("security find-generic-password -s api -w", True), ("pass show work/db", True),
        ("gh auth token", True), ("cd /srv && sops -d secrets.enc.yaml", True),
        ("vault status", False), ("kubectl get secrets", False), ("gh auth status", False),
        ("pytest -k 'pass show'", False), ("echo password", False), ("op --version", False),
        # a review: these printed a bare secret that no detector can know
        ("echo $MY_SERVICE_TOKEN", True), ('echo "${OPENAI_API_KEY}"', True),
        ("printenv OPENAI_API_KEY", True), ("printf '%s\\n' \"$DB_PASSWORD\"", True),
        ("echo -n $AWS_SECRET_ACCESS_KEY; ls", True), ("heroku auth:token", True),
        ("lpass show --password work/db", True), ("secret-tool lookup service api", True),
        ("aws ecr get-login-password --region eu-west-1", True),
        ("echo $HOME", False), ("echo $MAX_TOKENS", False), ("echo $API_KEY is set", False),
        ("printenv", False), ("echo $GITHUB_TOKEN | gh auth login --with-token", False),
        # flags before `get` or `secret`, the `k` alias; Terraform's one bare output
        ("kubectl -n prod get secret db -o jsonpath='{.data.password}' | base64 -d", True),
        ("kubectl --context prod get secret db -o yaml", True),
        ("kubectl get --namespace=prod secret db -o yaml", True),
        ("k get secret db -o yaml", True), ("kubectl -n prod get pods -o json", False),
        ("terraform output -raw db_password", True),
        ("terraform -chdir=infra output -raw api_token", True),
        ("terraform output -raw bucket_name", False), ("terraform output -json", False),
        ("k get -n prod secret db -o jsonpath='{.data.pw}' | base64 -d", True),
        ("oc get -n prod secret db -o yaml", True), ("kubectl -n prod get -o yaml secret db", True),
        ("terraform output -json db_password", True), ("tofu output -raw admin_pwd", True),
        ("terraform output -raw kms_key_arn", False), ("terraform output db_password", True),
        ("terraform output", False),
        ("terraform output -raw \"db_password\"", True), ("terraform output -raw=true db_pw", True),
    ],
)  # fmt: skip
def test_commands_that_read_a_secret(command: str, reads: bool) -> None:
    from exporter.secret_commands import reads_a_secret

    assert reads_a_secret(command) is reads


def test_the_output_of_a_secret_manager_is_redacted_and_not_repeated(
    write_session: Callable[..., Path],
) -> None:
    """`vault kv get -field=password` prints the bare password: nothing in the output says
    what it is, the command does (leak review F7)."""
    vault, op = "Vf3kQ9zL2mX7pR4t", "Op8nW2cV5bT1yU6h"
    call = {"type": "toolCall", "id": "c1", "name": "bash",
            "arguments": {"command": "vault kv get -field=password secret/db"}}  # fmt: skip
    listing = {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}}
    bang = {"type": "message", "id": "b1", "parentId": "m5", "timestamp": "2025-01-01T00:00:09Z",
            "message": {"role": "bashExecution", "command": "op read op://Private/db/pw",
                        "output": op + "\n", "exitCode": 0, "timestamp": 0}}  # fmt: skip
    records = [
        header(),
        msg("assistant", [call, listing], 1, None),
        msg(
            "toolResult",
            [{"type": "text", "text": vault + "\n"}],
            2,
            1,
            toolCallId="c1",
            toolName="bash",
            isError=False,
        ),
        msg(
            "toolResult",
            [{"type": "text", "text": "notes.txt\nsrc\n"}],
            3,
            2,
            toolCallId="c2",
            toolName="bash",
            isError=False,
        ),
        msg("assistant", [{"type": "text", "text": f"Connected with {vault}."}], 4, 3),
        msg("user", "thanks", 5, 4),
        bang,
    ]
    out, report = run(load_session(write_session(records)))
    text = entries_text(out)
    assert vault not in text and op not in text
    assert text.count("[REDACTED:secret-command-output:1]") == 2  # the output, the repeat
    assert out.by_id["m3"].raw["message"]["content"][0]["text"] == "notes.txt\nsrc\n"
    assert out.by_id["b1"].raw["message"]["output"] == "[REDACTED:secret-command-output:2]\n"
    assert report.counts["secret-command-output"] == 3


def test_a_page_made_from_a_redacted_copy_says_what_was_done(
    write_session: Callable[..., Path],
) -> None:
    """`[REDACTED:github-token:1]` read like the session's own text: a shared page says it
    is a redacted copy, and what was replaced and left out (peer review 2026-12-01)."""
    records = [header(), msg("user", f"my token {GHP}", 1, None), msg("user", "ok", 2, 1)]
    session = load_session(write_session(records))
    copy, _ = run(session, no_thinking=True)
    page = render_session(copy)
    note = re.search(r'<div class="redaction"><dt>Redaction</dt><dd>(.*?)</dd>', page)
    assert note is not None
    assert html.unescape(note.group(1)) == (
        "1 secret replaced by [REDACTED:…] (github-token 1); home paths → ~: 1"
    )
    assert 'class="redaction"' not in render_session(session)  # the session as it is
    # only trimmed (--active-branch-only, --no-tool-output...): not called a redaction, as
    # its stderr line was not ("redact: secret scan off" alarmed; review 2026-12-02)
    thought = msg("assistant", [{"type": "thinking", "thinking": "hmm"}], 3, 2)
    thinking = load_session(write_session([*records, thought]))
    unscanned, report = run(thinking, redact=False, no_thinking=True)
    assert report.summary_line() == "left out: thinking blocks dropped: 1 (no secret scan)"
    page = render_session(unscanned)
    assert "<dt>Left out</dt><dd>thinking blocks dropped: 1 (not scanned for secrets)<" in page


def test_review_leaks_are_redacted(write_session: Callable[..., Path]) -> None:
    s = REVIEW_SECRETS
    command = (
        f"mysql -u root -p{s['mysql']} -h db && curl -u admin:{s['curl']} https://ci.example.com"
        f" && docker login -u bob -p {s['docker']} reg.example.com && ./deploy --password "
        f"{s['flag']} && PGPASSWORD={s['pg']} psql && export CONSUL_HTTP_TOKEN={s['consul']}"
    )
    args = {
        "command": command,
        "headers": {"Authorization": f"Basic {s['basic']}"},
        "headerList": [["Authorization", f"token {s['ghtoken']}"], ["Accept", "text/html"]],
        "env": [{"name": "DB_PASSWORD", "value": s["k8s"]}, {"name": "PORT", "value": "8080"}],
        "user": {"password": s["pw"], "hint": "must be 8+ chars"},
        "required": ["password", "email"],
    }
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": args}
    named = {"type": "session_info", "name": f"curl -u admin:{s['title']} https://x.example.com",
             "id": "n1", "parentId": "m1", "timestamp": "2025-01-01T00:00:02Z"}  # fmt: skip
    records = [header(), msg("assistant", [call], 1, None), named]
    out, report = run(load_session(write_session(records)), keep_paths=True)
    text = entries_text(out)
    in_json = {k: v for k, v in s.items() if k != "phrase"}  # passphrases: only in env files
    assert [name for name, secret in in_json.items() if secret in text] == []
    kept = out.by_id["m1"].raw["message"]["content"][0]["arguments"]
    assert kept["env"][1] == {"name": "PORT", "value": "8080"}  # only the secret goes
    assert kept["headerList"][1] == ["Accept", "text/html"]
    assert kept["user"]["hint"] == "must be 8+ chars"  # messages are not passwords
    assert kept["required"] == ["password", "email"]  # nor a schema's list of fields
    assert {"cli-secret", "secret-assignment"} <= set(report.counts)


def _tag_text(text: str) -> str:
    """``text`` as invisible Unicode tag characters (shown decoded on the page)."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)


# (name, how the session writes the token, the token the page shows)
def _written_as_a_reader_decodes_them() -> list[tuple[str, str, str]]:
    tokens = ["ghp_" + rand(R, 36) for _ in range(9)] + ["sk_live_" + rand(R, 24)]
    return [
        ("markdown escape", tokens[0].replace("_", "\\_"), tokens[0]),
        ("escaped stripe key", tokens[9].replace("_", "\\_"), tokens[9]),
        ("decimal reference", "&#103;" + tokens[1][1:], tokens[1]),
        ("hex reference", "&#x67;" + tokens[2][1:], tokens[2]),
        ("named reference", tokens[3].replace("_", "&lowbar;"), tokens[3]),
        ("percent in an address", f"https://example.com/cb?code=%67{tokens[4][1:]}", tokens[4]),
        ("tag characters", _tag_text(f"token {tokens[5]}"), tokens[5]),
        ("zero-width space", tokens[6][:10] + "\u200b" + tokens[6][10:], tokens[6]),
        ("soft hyphen", tokens[7][:12] + "\u00ad" + tokens[7][12:], tokens[7]),
        ("word joiner", tokens[8][:6] + "\u2060" + tokens[8][6:], tokens[8]),
    ]


def test_a_token_written_as_the_page_decodes_it_is_redacted(
    write_session: Callable[..., Path],
) -> None:
    """The page shows Markdown escapes, character references, a link's percent-encoding and
    tag text decoded, and zero-width characters not at all: a token written so is whole on
    the page though no detector matched the text as written (leak review, 2026-12-01)."""
    cases = _written_as_a_reader_decodes_them()
    records = [header()]
    for number, (_, written, _) in enumerate(cases, start=1):
        text = [{"type": "text", "text": f"here you go {written} thanks"}]
        records.append(msg("assistant", text, number, number - 1 if number > 1 else None))
    out, _ = run(load_session(write_session(records)), keep_paths=True)
    page = render_session(out)
    visible = html.unescape(re.sub(r"<[^>]+>", "", page))
    stored = [out.by_id[f"m{n}"].raw["message"]["content"][0]["text"] for n in range(1, 11)]
    assert [name for name, _, token in cases if token in visible] == []
    assert [
        name for (name, written, _), text in zip(cases, stored, strict=True) if written in text
    ] == []
    assert all("[REDACTED:" in text and text.endswith(" thanks") for text in stored), stored
    assert page.count("[REDACTED:") >= len(cases)
    assert "here you go" in visible and "thanks" in visible  # only the token goes


def test_env_file_and_environment_names_the_review_found(in_tmp: Path) -> None:
    env = (
        f"PGPASSWORD={REVIEW_SECRETS['pg']}\nCONSUL_HTTP_TOKEN={REVIEW_SECRETS['consul']}\n"
        f'DB_PASSWORD="{REVIEW_SECRETS["phrase"]}"\nNODE_ENV=production\nPORT=3000\n'
    )
    (in_tmp / "my.env").write_text(env, "utf-8")
    seen: dict[str, Any] = {}

    @click.command()
    @policy_options(redact_default=True)
    def export(**options: Any) -> None:
        seen.update(options)

    assert CliRunner().invoke(export, ["--env-file", "my.env"]).exit_code == 0
    wanted = {REVIEW_SECRETS[k] for k in ("pg", "consul", "phrase")}
    assert set(policy_from_options(**seen).secrets) == wanted


def test_images_are_not_scanned_but_their_metadata_is(write_session: Callable[..., Path]) -> None:
    # a PNG's bytes whose base64 happens to match a key id
    looks_like_key = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" + "AKIA0123456789ABCDEF/+abc="
    image = {"type": "image", "data": looks_like_key, "mimeType": f"image/png; {GHP}"}
    text_data = {"type": "image", "data": f"not base64 {GHP2}", "mimeType": "image/png"}
    out, report = run(
        load_session(write_session([header(), msg("user", [image, text_data], 1, None)]))
    )
    content = out.by_id["m1"].raw["message"]["content"]
    assert content[0]["data"] == looks_like_key and GHP not in content[0]["mimeType"]
    assert GHP2 not in content[1]["data"] and report.total == 2


def test_attached_documents_are_scanned_as_the_text_they_encode(
    write_session: Callable[..., Path],
) -> None:
    """A v1 prompt's attached .env went out as base64, unscanned (only its extractedText was
    redacted); text under a non-image mimeType was skipped for looking like base64; bytes that
    are not text cannot be scanned and are left out."""
    env = f"STRIPE_SECRET_KEY=sk_live_{rand(R, 24)}\nDB_PASSWORD=Summer2024!x\nTOKEN={GHP}\n"
    attachments = [
        {"type": "document", "fileName": ".env", "mimeType": "text/plain",
         "content": base64.b64encode(env.encode()).decode(), "extractedText": env},
        {"type": "document", "fileName": "a.pdf", "mimeType": "application/pdf",
         "content": base64.b64encode(b"%PDF-1.4\xff\xfe binary").decode()},
        {"type": "document", "fileName": "notes.txt", "mimeType": "text/plain",
         "content": base64.b64encode(b"nothing secret here").decode()},
    ]  # fmt: skip
    text_as_image = {"type": "image", "mimeType": "text/plain", "data": "PGPASSWORD=Tr0ub4dor3xYZ"}
    records = [header(), msg("user", [text_as_image], 1, None, attachments=attachments)]
    out, report = run(load_session(write_session(records)))
    message = out.by_id["m1"].raw["message"]
    env_copy = base64.b64decode(message["attachments"][0]["content"]).decode()
    for secret in ("sk_live_", "Summer2024!x", GHP):
        assert secret not in env_copy and secret not in message["attachments"][0]["extractedText"]
    assert "[REDACTED:" in env_copy and env_copy.startswith("STRIPE_SECRET_KEY=")
    assert message["attachments"][1]["content"] == ""  # a PDF: not scannable, left out
    assert report.actions.get("attachments_omitted") == 1
    assert message["attachments"][2] == attachments[2]  # clean text stays byte for byte
    assert "Tr0ub4dor3xYZ" not in message["content"][0]["data"]
    unredacted, _ = run(load_session(write_session(records)), redact=False, keep_paths=True)
    assert unredacted.by_id["m1"].raw["message"]["attachments"] == attachments


def test_env_secrets_on_and_off(
    write_session: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_DEPLOY_TOKEN", ENV_VALUE)
    monkeypatch.setenv("PWD", "/home/alice/proj")  # a sensitive-looking name with a non-secret
    session = load_session(write_session([header(), msg("user", f"got {ENV_VALUE} ok", 1, None)]))
    out, report = apply_policy(session, RedactionPolicy(keep_paths=True))
    assert ENV_VALUE not in entries_text(out) and report.counts == {"env-secret": 1}
    assert "/home/alice/proj" in entries_text(out)
    out, report = apply_policy(session, RedactionPolicy(keep_paths=True, env_secrets=False))
    assert ENV_VALUE in entries_text(out) and report.total == 0


def test_home_and_user_become_placeholders(write_session: Callable[..., Path]) -> None:
    text = "cd /Users/bob/x; ls /home/alice/proj /home/alice2; bob and alice; the dev server"
    records = [header("/home/alice/proj"), msg("user", text, 1, None)]
    session = load_session(write_session(records))
    out, report = run(session, home="/Users/bob", user="bob")
    assert out.by_id["m1"].raw["message"]["content"] == (
        "cd ~/x; ls ~/proj /home/<user>; <user> and <user>; the dev server"
    )  # (/home/alice2 is not alice's home, but another user's: its name goes too)
    assert out.header.cwd == "~/proj" and report.actions == {"home_paths": 3, "user_names": 3}
    generic, _ = run(
        load_session(write_session([header("/home/dev/p"), msg("user", "dev x", 1, None)]))
    )
    assert generic.header.cwd == "~/p" and "dev x" in entries_text(generic)
    kept, _ = run(session, home="/Users/bob", user="bob", keep_paths=True)
    assert entries_text(kept) == entries_text(session)


OTHER_HOMES = [  # (text, what it becomes) with HOME=/root and the cwd elsewhere
    ("ls /home/carol/notes.txt", "ls /home/<user>/notes.txt"),
    ("open /Users/carol/Documents/a.pdf", "open /Users/<user>/Documents/a.pdf"),
    ("dir C:\\Users\\Carol\\Desktop", "dir C:\\Users\\<user>\\Desktop"),
    ('{"path": "C:\\\\Users\\\\carol\\\\x"}', '{"path": "C:\\\\Users\\\\<user>\\\\x"}'),
    ("file:///home/carol/report.html", "file:///home/<user>/report.html"),
    (
        "/var/home/carol/x and /mnt/c/Users/carol.smith/y",
        "/var/home/<user>/x and /mnt/c/Users/<user>/y",
    ),
    ("HOME=/home/dave: cd /home/dave.", "HOME=/home/<user>: cd /home/<user>."),
]
OTHER_HOMES_KEPT = [
    # service, CI and shared accounts; placeholders; URLs' paths; longer folder names
    "/home/runner/work/app /home/ubuntu/.ssh /home/linuxbrew/.linuxbrew /Users/Shared/x",
    "/home/username/proj /home/<user>/x /home/$USER/x /home/*/x /Users/you/src",
    "see /homework/ and https://x/home/abc and https://github.com/Users/bob and /api/home/eve",
    "GET /users/42 HTTP/1.1",
]


@pytest.mark.parametrize(("text", "shared"), OTHER_HOMES)
def test_another_user_s_home_keeps_no_name(
    write_session: Callable[..., Path], text: str, shared: str
) -> None:
    """`/home/carol/…` of someone other than the session's owner kept the name (HOME was
    /root, the cwd /srv/app): it is personal data too. It becomes `/home/<user>/…`, counted
    with the user names."""
    records = [header("/srv/app"), msg("user", text, 1, None)]
    out, report = run(load_session(write_session(records)), home="/root", user="root")
    assert out.by_id["m1"].raw["message"]["content"] == shared
    assert report.actions == {"user_names": shared.count("<user>")}
    kept, _ = run(load_session(write_session(records)), home="/root", keep_paths=True)
    assert kept.by_id["m1"].raw["message"]["content"] == text


@pytest.mark.parametrize("text", OTHER_HOMES_KEPT)
def test_shared_homes_urls_and_placeholders_stay(
    write_session: Callable[..., Path], text: str
) -> None:
    records = [header("/srv/app"), msg("user", text, 1, None)]
    out, report = run(load_session(write_session(records)), home="/root", user="root")
    assert out.by_id["m1"].raw["message"]["content"] == text
    assert "user_names" not in report.actions


@pytest.mark.parametrize("home", ["/var/home/alice", "/mnt/c/Users/Alice.Smith"])
def test_the_session_owner_s_home_on_fedora_atomic_and_wsl(
    write_session: Callable[..., Path], home: str
) -> None:
    """Shared from an account whose home is elsewhere, these kept the recorder's user name
    in the header and in every path (review 2026-12-01)."""
    text = f"cat {home}/proj/README.md"
    records = [header(f"{home}/proj"), msg("user", text, 1, None)]
    out, _ = run(load_session(write_session(records)), home="/home/someone", user="someone")
    assert out.header.cwd == "~/proj"
    assert out.by_id["m1"].raw["message"]["content"] == "cat ~/proj/README.md"


@pytest.mark.parametrize(
    ("user", "text", "expected"),
    [
        ("max", "y = max(a, b); Math.max(1, 2); ls /home/max/x; ssh max@host; user: max",
         "y = max(a, b); Math.max(1, 2); ls /home/<user>/x; ssh <user>@host; user: <user>"),
        ("will", "I will mark it; author: will; will@example.com",
         "I will mark it; author: <user>; <user>@example.com"),
        ("Mark", "git commit --mark; Mark@host", "git commit --mark; <user>@host"),
        ("max", "git@github.com:max/repo.git; uid=1000(max); sudo -u max x; chown max:max f",
         "git@github.com:<user>/repo.git; uid=1000(<user>); sudo -u <user> x; "
         "chown <user>:<user> f"),
        ("max", "-rw-r--r-- 1 max max 12 a\nLOGNAME=max; Committer: max; width:max-content",
         "-rw-r--r-- 1 <user> <user> 12 a\nLOGNAME=<user>; Committer: <user>; width:max-content"),
        ("data", "ls /data/models /home/data/x C:\\Users\\data\\y",
         "ls /data/models /home/<user>/x C:\\Users\\<user>\\y"),
        # code that names the word is left alone (a review: print(data) became print(<user>))
        ("data", "print(data); if (data) {; s3://bucket:data/x; uid=1000(data)",
         "print(data); if (data) {; s3://bucket:data/x; uid=1000(<user>)"),
        ("python", "python -u main.py; pip install -U python-dotenv; sudo -u python x",
         "python -u main.py; pip install -U python-dotenv; sudo -u <user> x"),
        ("max", "git show HEAD:max/x.py; sort -u max.txt",
         "git show HEAD:max/x.py; sort -u max.txt"),
        # dev containers' and services' accounts (a review: .vscode/ became .<user>/)
        ("vscode", "Created .vscode/launch.json; github.com/microsoft/vscode; ls /home/vscode/a",
         "Created .vscode/launch.json; github.com/microsoft/vscode; ls /home/<user>/a"),
        ("postgres", "psql -U postgres; postgres://app@db/x; sudo -u postgres psql",
         "psql -U postgres; postgres://app@db/x; sudo -u <user> psql"),
    ],
)  # fmt: skip
def test_a_user_name_that_is_a_word_is_replaced_only_where_it_names_someone(
    write_session: Callable[..., Path], user: str, text: str, expected: str
) -> None:
    """With USER=max, "Math.max(1, 2)" became "Math.<user>(1, 2)"; "will" and "mark" broke
    prose the same way."""
    records = [header("/srv/p"), msg("user", text, 1, None)]
    out, _ = run(load_session(write_session(records)), home="/nonexistent", user=user)
    assert out.by_id["m1"].raw["message"]["content"] == expected


def test_a_token_in_an_id_field_and_the_warnings_that_quote_it_are_redacted(
    write_session: Callable[..., Path],
) -> None:
    """Id fields were copied verbatim and the loader's warnings (which quote ids) went onto
    the shared page as they were; placeholders are stable, so links between entries hold."""
    label = {"type": "label", "id": "l1", "parentId": "m2", "timestamp": "2025-01-01T00:00:09Z",
             "targetId": GHP, "label": "x"}  # fmt: skip
    records = [header(), msg("user", "hi", 1, None), msg("assistant", "ok", 2, 1)]
    records[2]["id"] = f"id-{GHP2}"
    records.append({**msg("user", "again", 3, None), "parentId": f"id-{GHP2}"})
    records.append({**msg("user", "lost", 4, None), "parentId": f"gone-{GHP}"})  # an orphan
    session = load_session(write_session([*records, label]))
    assert any(GHP in d.message for d in session.diagnostics)  # the orphan's warning
    out, _ = run(session)
    text = entries_text(out) + "".join(d.message for d in out.diagnostics)
    assert GHP not in text and GHP2 not in text
    child = out.by_id[next(i for i in out.by_id if out.by_id[i].raw.get("message", {}).get(
        "content") == "again")]  # fmt: skip
    assert out.parent_of(child.id) in out.by_id  # still linked to its (renamed) parent


def test_bad_input_shapes(write_session: Callable[..., Path]) -> None:
    deep: Any = {"leaf": f"token={GHP}"}
    for _ in range(400):
        deep = {"d": deep}
    result = {"toolCallId": "c", "toolName": "x", "isError": False, "details": deep}
    huge = "a" * 10_000_000 + f" {GHP}"
    records = [header(), msg("toolResult", [{"type": "text", "text": huge}], 1, None, **result),
               msg("user", "lone \ud800 surrogate " + GHP2, 2, 1)]  # fmt: skip
    session = load_session(write_session(records))
    start = time.process_time()
    out, report = run(session)
    assert time.process_time() - start < 3.0
    text = entries_text(out)
    assert GHP not in text and GHP2 not in text and report.total == 3
    assert "\\ud800" in text
    assert max(len(h.json_path) for h in report.hits) > 800  # 400 levels deep


def test_damaged_lines_are_redacted(write_session: Callable[..., Path]) -> None:
    path = write_session([header(), msg("user", "hi", 1, None), f'{{"broken": "{GHP}'])
    out, _ = run(load_session(path))
    assert len(out.damaged) == 1 and GHP not in out.damaged[0].text


def test_secrets_in_damaged_lines_are_found_through_json_escapes(
    write_session: Callable[..., Path],
) -> None:
    """A damaged line is kept as the file has it, escapes and all: the scanner then saw
    "postgres:\\/\\/admin:…" and "\\u0067hp_…", matched nothing, and a shared page
    showed the secrets (review of 21722aa). Lines that parse and lines cut short alike."""
    password = "Q7vLp2xZr9Kw" + rand(R, 8)
    escaped_url = f"postgres:\\/\\/admin:{password}@db.internal:5432\\/prod"
    escaped_token = "\\u0067" + GHP[1:]
    path = write_session(
        [
            header(),
            msg("user", "hi", 1, None),
            f'{{"ref":"x1","db":"{escaped_url}"}}',  # JSON, but no entry (no type, no id)
            f'["{escaped_token}"]',  # JSON, not an object
            f'{{"cut": "{escaped_token}", "db": "{escaped_url}',  # cut short
        ]
    )
    session = load_session(path)
    assert any("\\/\\/admin:" in d.text for d in session.damaged)  # as written
    out, _ = run(session)
    texts = " ".join(d.text for d in out.damaged)
    assert len(out.damaged) == 3
    assert password not in texts and GHP[1:] not in texts, texts


def test_a_literal_secret_with_quotes_or_a_newline_is_found_in_damaged_lines(
    write_session: Callable[..., Path],
) -> None:
    """A damaged line that parses was scanned as its value written out again, where a
    literal secret holding a quote, a backslash or a newline reads escaped: it reached a
    redacted page (review of this stop's fix). It is now redacted value by value."""
    secret = 'pa"ss\\wo\nrd-' + rand(R, 10)
    array = json.dumps(["before", secret, {"password": "hunter2hunter2x"}])
    no_type = json.dumps({"note": f"the key is {secret} here"})
    cut = json.dumps({"cut": secret})[:-3]
    path = write_session([header(), msg("user", "hi", 1, None), array, no_type, cut])
    out, _ = run(load_session(path), secrets=(secret,))
    texts = "\n".join(d.text for d in out.damaged)
    escaped = json.dumps(secret)[1:-1]
    assert len(out.damaged) == 3
    assert secret not in texts and escaped not in texts and "wo\\nrd" not in texts, texts
    assert "hunter2hunter2x" not in texts  # a sensitive field's value, as in an entry


def test_a_redacted_copy_still_says_a_parent_is_on_a_damaged_line(
    write_session: Callable[..., Path],
) -> None:
    cut = json.dumps({"type": "message", "id": "a2", "parentId": "u1",
                      "message": {"role": "user", "content": "lost"}})[:-6]  # fmt: skip
    child = {"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2025-01-01T00:00:09Z",
             "message": {"role": "user", "content": "after"}}  # fmt: skip
    path = write_session([header(), msg("user", "hi", 1, None), cut, json.dumps(child)])
    out, _ = run(load_session(path))
    assert out.parents_on_damaged_lines == {"a2": 3}


def test_policy_key_is_stable_and_secret_free(monkeypatch: pytest.MonkeyPatch) -> None:
    base = RedactionPolicy(secrets=("hunter2hunter",), home="/h", user="u")
    key = base.key(NO_ENV)
    assert key == RedactionPolicy(secrets=("hunter2hunter",), home="/h", user="u").key(NO_ENV)
    assert "hunter2" not in key and len(key) == 64
    variants = [RedactionPolicy(**{**base.__dict__, flag: not getattr(base, flag)}) for flag in
                ("redact", "active_branch_only", "no_thinking", "no_tool_output", "no_images",
                 "drop_hidden", "keep_paths", "env_secrets")]  # fmt: skip
    variants += [RedactionPolicy(secrets=("other-secret",), home="/h", user="u")]
    assert len({v.key(NO_ENV) for v in variants} | {key}) == len(variants) + 1
    assert base.key({"ACME_API_TOKEN": ENV_VALUE}) != key  # env secrets count...
    off = RedactionPolicy(env_secrets=False, home="/h", user="u")
    assert off.key({"ACME_API_TOKEN": ENV_VALUE}) == off.key(NO_ENV)  # ...only when used
    plain = RedactionPolicy(redact=False).key(NO_ENV)
    monkeypatch.setattr(detectors_module, "DETECTOR_VERSION", "next")
    assert base.key(NO_ENV) != key
    # new detectors change no page of an export without redaction: its site keeps them
    assert RedactionPolicy(redact=False).key(NO_ENV) == plain


def test_a_resolved_policy_keeps_the_environment_it_was_resolved_in() -> None:
    """Publishing's workers come from a forkserver whose environment is the one it started
    with: they redacted a variable the caller had since removed, while the key (computed in
    the caller) said it was gone. The policy they get now carries the values."""
    environ = {"ACME_DEPLOY_TOKEN": ENV_VALUE, "HOME": "/home/ann", "USER": "ann"}
    policy = RedactionPolicy()
    fixed = policy.resolved(environ)
    assert fixed.key(NO_ENV) == policy.key(environ)  # the same key: nothing re-published
    assert (ENV_VALUE, "env-secret") in fixed.literal_secrets(NO_ENV)
    assert fixed.identity(NO_ENV) == (["/home/ann"], ["ann"])
    assert RedactionPolicy(env_secrets=False).resolved(environ).literal_secrets(NO_ENV) == []
    explicit = RedactionPolicy(home="/h", user="u").resolved(environ)
    assert explicit.identity(NO_ENV) == (["/h"], ["u"])


def test_given_secrets_that_overlap_are_named_as_given(write_session, build) -> None:
    """Two given values overlapping in the text are replaced as one span, and that span was
    what the report named: no run is ever given it, so an identical re-share or re-publish
    was refused (re-review 2026-12-01). Each given value inside is named instead."""
    first, second = "Xk29fLq7Wm3nRt8Z", "Wm3nRt8Zq5Lp2"
    path = write_session([build.header(), build.user("u1", None, "use Xk29fLq7Wm3nRt8Zq5Lp2")])
    policy = RedactionPolicy(secrets=(first, second), home="/h", user="u")
    redacted, report = apply_policy(load_session(path), policy, environ=NO_ENV)
    assert report.given_values == {first, second} == policy.given_values(NO_ENV)
    assert first not in session_to_jsonl(redacted) and "q5Lp2" not in session_to_jsonl(redacted)


# --- Pi's own SessionManager accepts the redacted copy ----------------------------------------

PI_OPEN = """
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const [pkg, scratch, ...files] = process.argv.slice(1);
const { SessionManager } = await import(pathToFileURL(pkg).href);
for (const file of files) {
  const dir = mkdtempSync(join(scratch, "pi-redacted-"));
  const copy = join(dir, "s.jsonl");
  copyFileSync(file, copy);
  const sm = SessionManager.open(copy, join(dir, "sessions"));
  const entries = sm.getEntries();
  const ids = new Set(entries.map((e) => e.id));
  console.log(JSON.stringify({
    header: sm.getHeader()?.id ?? null, entries: entries.length, leaf: sm.getLeafId() ?? null,
    dangling: entries.filter((e) => e.parentId !== null && !ids.has(e.parentId)).length,
    rewritten: !readFileSync(copy).equals(readFileSync(file)),
    labels: Object.fromEntries(
      entries.filter((e) => sm.getLabel(e.id)).map((e) => [e.id, sm.getLabel(e.id)])),
    name: sm.getSessionName() ?? null,
  }));
}
"""


@pytest.mark.pi
def test_pi_session_manager_opens_the_redacted_copy(pi_pkg: Path, tmp_path: Path) -> None:
    cases = [
        (BRANCHED[3], None, {"active_branch_only": True, "drop_hidden": True, "no_thinking": True}),
        (BRANCHED[0], None, {"drop_hidden": True, "no_tool_output": True, "no_images": True}),
        (BRANCHED[1], None, {"drop_hidden": True, "no_tool_calls": True}),
        (BRANCHED[1], None, {"exclude": (_assistant_with_calls(load_session(BRANCHED[1])).id,)}),
        (SAMPLER, None, {"drop_hidden": True}),
        (SAMPLER, "e23", {"drop_hidden": True}),  # a leaf that is not the last line
        (FIXTURES_DIR / "pi-large-session.jsonl", None, {}),
        (FIXTURES_DIR / "pi-v1-before-compaction.jsonl", None, {"active_branch_only": True}),
        # its label and name were set on the branch the user left: Pi still sees both
        (FIXTURES_DIR / "every-entry-type.jsonl", None, {"active_branch_only": True}),
    ]
    files, expected = [], []
    for number, (path, leaf, flags) in enumerate(cases):
        out, _ = run(load_session(path, leaf_id=leaf), **flags)
        assert leaf is None or out.leaf_id == leaf
        target = tmp_path / f"out{number}.jsonl"
        target.write_text(session_to_jsonl(out), "utf-8")
        files.append(str(target))
        source = load_session(path)
        labels = dict(out.labels)  # a dropped entry's label moved to a kept ancestor
        assert set(labels) <= set(out.by_id)
        assert set(labels.values()) <= set(source.labels.values())
        expected.append({"header": out.id, "entries": len(out.entries), "leaf": out.leaf_id,
                         "dangling": 0, "rewritten": False, "labels": labels,
                         "name": source.name})  # fmt: skip
    # Pi's copies go under tmp_path, which pytest cleans (the system temp folder kept them)
    output = run_node(["--input-type=module", "-e", PI_OPEN, str(pi_pkg), str(tmp_path), *files])
    assert [json.loads(line) for line in output.splitlines()] == expected


# --- the CLI ----------------------------------------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ACME_DEPLOY_TOKEN", ENV_VALUE)
    return tmp_path


def test_cli_redact_writes_a_copy_and_a_report(in_tmp: Path) -> None:
    source = in_tmp / "in.jsonl"
    planted = f"Let me think {GHP} {ENV_VALUE} hunter2hunter"
    source.write_text(SAMPLER.read_text("utf-8").replace("Let me think", planted), "utf-8")
    (in_tmp / "secrets.txt").write_text("# one per line\nhunter2hunter\n", "utf-8")
    stat = source.stat()
    args = ["redact", str(source), "--secret", "secrets.txt", "--report", "rep.jsonl"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    written = (in_tmp / "in.redacted.jsonl").read_text("utf-8")
    assert GHP not in written and ENV_VALUE not in written and "hunter2hunter" not in written
    assert "[REDACTED:literal-secret:1]" in written and "[REDACTED:env-secret:1]" in written
    assert load_session(in_tmp / "in.redacted.jsonl").leaf_id == "e25"
    assert '"customType":"state"' not in written  # hidden dropped by default
    assert result.stdout.strip() == "in.redacted.jsonl"
    summary = [x for x in result.stderr.splitlines() if x.startswith("pi-session: redact: ")]
    assert summary and summary[0].startswith("pi-session: redact: 3 secrets in 1 entry ")
    assert GHP not in result.stderr and GHP not in (in_tmp / "rep.jsonl").read_text("utf-8")
    assert source.stat().st_mtime_ns == stat.st_mtime_ns and "Let me think" in source.read_text()
    stdout = CliRunner().invoke(cli, ["redact", str(source), "-o", "-", "--keep-hidden",
                                      "--no-env-secrets", "--no-redact"])  # fmt: skip
    assert (
        stdout.exit_code == 0
        and ENV_VALUE in stdout.stdout
        and '"customType":"state"' in stdout.stdout
    )


def test_cli_errors_are_one_line(in_tmp: Path) -> None:
    (in_tmp / "bad.jsonl").write_text("not json\n", "utf-8")
    result = CliRunner().invoke(cli, ["redact", "bad.jsonl"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    (in_tmp / "s.jsonl").write_bytes(SAMPLER.read_bytes())
    result = CliRunner().invoke(cli, ["redact", "s.jsonl", "-o", "s.jsonl"])
    assert result.exit_code == 1 and "refusing" in result.stderr
    assert (in_tmp / "s.jsonl").read_bytes() == SAMPLER.read_bytes()
    result = CliRunner().invoke(cli, ["redact", "s.jsonl", "--secret", "ab"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    # which of the values is too short, said without echoing it (it is a secret)
    result = CliRunner().invoke(cli, ["redact", "s.jsonl", "--secret", "abc", "--secret", "long1"])
    assert "need 4+ characters (a shorter one would cut into ordinary words): 1 value of 2 is " in (
        result.stderr
    )
    assert "abc" not in result.stderr


def test_help_and_readme_say_that_o_never_replaces_a_session(in_tmp: Path) -> None:
    """A review: the README's ``redact SESSION -o clean.jsonl`` failed on its second run
    ("refusing to overwrite clean.jsonl, a Pi session file"), and nothing said why."""
    (in_tmp / "s.jsonl").write_bytes(SAMPLER.read_bytes())
    first = CliRunner().invoke(cli, ["redact", "s.jsonl", "-o", "clean.jsonl"])
    again = CliRunner().invoke(cli, ["redact", "s.jsonl", "-o", "clean.jsonl"])
    assert first.exit_code == 0 and again.exit_code == 1, again.output
    assert "a Pi session file (a copy made earlier is one too): remove it first" in again.stderr
    wide = in_tmp / "wide.jsonl"  # a UTF-16 copy is a session file too (a review)
    wide.write_bytes(SAMPLER.read_text("utf-8").encode("utf-16"))
    before = wide.read_bytes()
    onto = CliRunner().invoke(cli, ["redact", "s.jsonl", "-o", "wide.jsonl"])
    assert onto.exit_code == 1 and "a Pi session file" in onto.stderr
    assert wide.read_bytes() == before
    shown = " ".join(CliRunner().invoke(cli, ["redact", "--help"]).stdout.split())
    assert "which a re-run replaces" in shown
    assert "A session file you name (Pi's, Claude Code's, Codex's) is never replaced" in shown
    assert "remove it first" in shown
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text("utf-8").split())
    assert "never replaces a session file you named (Pi's, with or without its header" in readme
    assert "remove `clean.jsonl` first" in readme


def test_the_printed_path_is_the_file_written(in_tmp: Path) -> None:
    """A review: click.echo drops escape codes when stdout is no terminal, so ``$(pi-session
    redact …)`` got ``escred.redacted.jsonl``, a file that did not exist."""
    source = in_tmp / "esc\x1b[31mred.jsonl"
    source.write_bytes(SAMPLER.read_bytes())
    result = CliRunner().invoke(cli, ["redact", str(source)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "esc\x1b[31mred.redacted.jsonl\n"
    assert (in_tmp / result.stdout[:-1]).is_file()


def test_a_printed_path_shows_its_controls_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a terminal the escape code would act (colour, retitle, clear): it is shown."""
    from exporter.redact_cli import echo_path

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    echo_path(Path("esc\x1b[31mred.html"))
    assert screen.getvalue() == "esc\u241b[31mred.html\n"


def test_a_secret_file_may_be_a_pipe(in_tmp: Path) -> None:
    """A review: ``--secret <(printf 'hunter2hunter2\\n')`` (a ``/dev/fd/N`` pipe) was refused
    with a false "no such file": ``is_file()`` is False for pipes. It is read, once."""
    source = in_tmp / "in.jsonl"
    source.write_text(SAMPLER.read_text("utf-8").replace("Let me think", "hunter2hunter2"), "utf-8")
    fifo = in_tmp / "secrets.fifo"
    os.mkfifo(fifo)
    writes = 0

    def feed() -> None:  # what the shell does for <(...): write once, then close
        nonlocal writes
        with contextlib.suppress(BrokenPipeError), open(fifo, "w", encoding="utf-8") as pipe:
            pipe.write("hunter2hunter2\n")
            writes += 1

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    args = ["redact", str(source), "-o", "-", "--no-env-secrets", "--secret", str(fifo)]
    result = CliRunner().invoke(cli, args)
    if writer.is_alive():  # the command never opened the pipe: let the writer go
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
    writer.join()
    assert result.exit_code == 0, result.output
    assert writes == 1 and not writer.is_alive()
    assert "hunter2hunter2" not in result.stdout
    assert "[REDACTED:literal-secret:1]" in result.stdout
    folder = CliRunner().invoke(cli, ["redact", str(source), "-o", "-", "--secret", str(in_tmp)])
    assert folder.exit_code == 1 and "is a folder" in folder.stderr
    # named bare, as `--secret keys`: it was the literal secret "keys", its files never read
    (in_tmp / "keys").mkdir()
    (in_tmp / "keys" / "api.txt").write_text("hunter2hunter2\n", encoding="utf-8")
    bare = CliRunner().invoke(cli, ["redact", str(source), "-o", "-", "--secret", "keys"])
    assert bare.exit_code == 1 and "--secret: keys is a folder" in bare.stderr, bare.output
    # a usage error like click's own for --env-file: the option names nothing usable
    missing = CliRunner().invoke(cli, ["redact", str(source), "--secret", "./no-such.txt"])
    assert missing.exit_code == 1 and "--secret: no such file" in missing.stderr


def test_a_secret_number_in_the_json_is_redacted() -> None:
    """``{"password": 84726193551}`` in a tool call's arguments or a result's details went
    out as it was: only strings were scanned (bug hunt 2026-12-05). A number under a
    password's or key's name, or given as a secret, is redacted; other numbers stay."""
    arguments = {
        "password": 84726193551,
        "api_key": 31415926535,
        "port": 5432,
        "key": 42,
        "count": 777777777,
        "enabled": True,
    }
    call = {"type": "toolCall", "id": "c1", "name": "db", "arguments": arguments}
    result = msg("toolResult", [{"type": "text", "text": "ok"}], 3, 2, toolCallId="c1")
    result["message"]["details"] = {"db_password": 84726193551, "rows": 12}
    lines = [header(), msg("user", "connect", 1, None), msg("assistant", [call], 2, 1), result]
    data = "".join(json.dumps(line) + "\n" for line in lines)
    redacted, report = run(parse_session_bytes(data.encode()), secrets=("777777777",))
    text = entries_text(redacted)
    for secret in ("84726193551", "31415926535", "777777777"):
        assert secret not in text, secret
    args = redacted.by_id["m2"].tool_calls[0]["arguments"]
    assert args["port"] == 5432 and args["key"] == 42 and args["enabled"] is True
    assert args["password"].startswith("[REDACTED:") and args["count"].startswith("[REDACTED:")
    assert redacted.by_id["m3"].details["rows"] == 12
    assert report.total == 4
    # not redacting: the numbers are as they were
    kept, _ = run(parse_session_bytes(data.encode()), redact=False)
    assert kept.by_id["m2"].tool_calls[0]["arguments"] == arguments
    # a number of 5,000 digits under a key's name is no secret, and str() of it raises
    huge = data.replace('"rows": 12', '"token": ' + "9" * 5000).encode()
    redacted, _ = run(parse_session_bytes(huge))
    assert redacted.by_id["m3"].details["token"] == 10**5000 - 1


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_secret_file_saved_with_a_byte_order_mark_loses_no_secret(
    in_tmp: Path, newline: str
) -> None:
    """A list of secrets or a .env file saved by a Windows editor starts with a UTF-8 BOM:
    its first value was read as "\ufeffvalue" and went out in clear (bug hunt 2026-12-05)."""
    first, second = "Qz7vK2mW9pLx4R", "Zr8bN3cT6yHq1J"
    source = in_tmp / "in.jsonl"
    text = SAMPLER.read_text("utf-8").replace("Let me think", f"{first} and {second}")
    source.write_text(text, "utf-8")
    bom = "\ufeff"
    (in_tmp / "list.txt").write_text(f"{bom}{first}{newline}{second}{newline}", "utf-8")
    env = f'{bom}DB_PASSWORD={first}{newline}API_TOKEN="{second}"{newline}'
    (in_tmp / "my.env").write_text(env, "utf-8", newline="")
    for option, path in (("--secret", "list.txt"), ("--env-file", "my.env")):
        args = ["redact", str(source), "-o", "-", "--no-env-secrets", option, str(in_tmp / path)]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert first not in result.stdout and second not in result.stdout, option


def test_a_terminal_is_no_secret_file(in_tmp: Path) -> None:
    """With devices taken as secret files, ``--secret /dev/tty`` waited for input without a
    prompt; a terminal is now refused."""
    main, terminal = os.openpty()
    try:
        args = ["redact", str(SAMPLER), "-o", "-", "--secret", os.ttyname(terminal)]
        result = CliRunner().invoke(cli, args)
    finally:
        os.close(main)
        os.close(terminal)
    assert result.exit_code == 2 and "is a terminal" in result.stderr, result.output


@pytest.mark.parametrize(
    ("command", "extra", "kept"),
    [
        ("redact", ["-o", "same.jsonl", "--report", "same.jsonl"], None),  # two outputs, one file
        ("redact", ["-o", "my.env", "--env-file", "my.env"], "my.env"),
        ("redact", ["-o", "list.txt", "--secret", "list.txt"], "list.txt"),
        ("redact", ["--report", "my.env", "--env-file", "my.env"], "my.env"),
        ("export", ["-o", "my.env", "--env-file", "my.env", "--redact"], "my.env"),
        ("redact", ["-o", "r.jsonl", "--report", "/nonexistent-folder/r.jsonl"], None),
        ("redact", ["-o", "r.jsonl", "--report", "-"], None),
        ("share", ["--dry-run", "--report", "my.env", "--env-file", "my.env"], "my.env"),
        ("publish", ["--dry-run", "--report", "my.env", "--env-file", "my.env"], "my.env"),
    ],
)
def test_outputs_never_overwrite_inputs_or_each_other(
    in_tmp: Path, command: str, extra: list[str], kept: str | None
) -> None:
    """Checked before anything is written: no output file is left behind by a refused run."""
    (in_tmp / "s.jsonl").write_bytes(SAMPLER.read_bytes())
    (in_tmp / "my.env").write_text(f"ACME_TOKEN={ENV_VALUE}\n", "utf-8")
    (in_tmp / "list.txt").write_text("hunter2hunter\n", "utf-8")
    before = {p.name: p.read_bytes() for p in in_tmp.iterdir()}
    session = ["user/traces", "s.jsonl"] if command == "publish" else ["s.jsonl"]
    result = CliRunner().invoke(cli, [command, *session, *extra])
    assert result.exit_code in (1, 2), result.output
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert {p.name: p.read_bytes() for p in in_tmp.iterdir()} == before
    if kept:
        assert (in_tmp / kept).read_bytes() == before[kept]


def test_policy_options_and_env_file(in_tmp: Path) -> None:
    (in_tmp / ".env").write_text(f"export ACME_TOKEN='{ENV_VALUE}'\nDEBUG=1\nKEY=xxx\n", "utf-8")
    seen: dict[str, Any] = {}

    @click.command()
    @policy_options(redact_default=False)
    def export(**options: Any) -> None:
        seen.update(options)

    assert CliRunner().invoke(export, ["--env-file", ".env", "--no-images"]).exit_code == 0
    policy = policy_from_options(**seen, unrelated="ignored")
    # an --env-file asks for its values to be removed: redaction is on though off by default
    assert policy == RedactionPolicy(redact=True, no_images=True, secrets=(ENV_VALUE,))
    assert policy_from_options() == RedactionPolicy()
    assert os.environ["ACME_DEPLOY_TOKEN"] == ENV_VALUE


def test_cli_says_when_damaged_lines_are_not_copied(in_tmp: Path) -> None:
    lines = SAMPLER.read_text("utf-8").splitlines()
    (in_tmp / "s.jsonl").write_text(
        "\n".join([*lines[:3], '{"type":"message","id":"bad', *lines[3:]]) + "\n", "utf-8"
    )
    result = CliRunner().invoke(cli, ["redact", "s.jsonl"])
    assert result.exit_code == 0, result.output
    assert "1 damaged line not copied" in result.stderr
    assert load_session(in_tmp / "s.redacted.jsonl").damaged == []


def test_redacted_copy_keeps_the_loaders_cycle_repair(in_tmp: Path) -> None:
    """Pi hangs walking a parentId cycle; the loader cuts it, and the copy must be cut the
    same way (an orphan's dangling parentId is left as it was)."""
    records = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/"},
        *[
            {"type": "message", "id": eid, "parentId": parent,
             "timestamp": f"2025-01-01T00:00:0{n}Z", "message": {"role": "user", "content": eid}}
            for n, (eid, parent) in enumerate([("a", "c"), ("b", "a"), ("c", "b"), ("d", "d"),
                                               ("e", "zz")], 1)
        ],
    ]  # fmt: skip
    (in_tmp / "s.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    result = CliRunner().invoke(cli, ["redact", "s.jsonl", "-o", "out.jsonl", "--keep-hidden"])
    assert result.exit_code == 0, result.output
    written = [json.loads(x) for x in (in_tmp / "out.jsonl").read_text("utf-8").splitlines()]
    parents = {r["id"]: r.get("parentId") for r in written if r["type"] != "session"}
    assert parents == {"a": None, "b": "a", "c": "b", "d": None, "e": "zz"}
    for start in parents:  # every walk ends: at a root or at a parent the file lacks
        seen, node = set(), start
        while node in parents and node not in seen:
            seen.add(node)
            node = parents[node]
        assert node is None or node not in parents, f"cycle from {start}"
    copy, original = load_session(in_tmp / "out.jsonl"), load_session(in_tmp / "s.jsonl")
    assert copy.active_path == original.active_path


def test_the_fallback_encoder_writes_what_json_dumps_would() -> None:
    """The iterative encoder behind ``dumps_line``: the same text as ``json.dumps`` where
    that works, and nesting far past the recursion limit where it does not."""
    from exporter.jsonl_out import _encode_iteratively

    values = [{"a": [1, -0.0, 1e16, 2.5, True, None, "é\\u2028\"", {}, []], "ü": {"k": [[]]}},
              [], {}, "x", 3, False]  # fmt: skip
    for value in values:
        assert _encode_iteratively(value) == json.dumps(value, ensure_ascii=False,
                                                        separators=(",", ":"))  # fmt: skip
    deep: Any = 0
    for _ in range(5000):
        deep = {"k": [deep]}
    text = dumps_line(deep)
    assert text == '{"k":[' * 5000 + "0" + "]}" * 5000


def test_redact_never_drops_its_copy_among_pis_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a project's session folder, the default <name>.redacted.jsonl was a second
    session with the same id (in Pi's resume list, id prefixes ambiguous); -o still works."""
    folder = tmp_path / "sessions" / "--p--"
    folder.mkdir(parents=True)
    source = folder / "2025-01-01T00-00-00-000Z_a.jsonl"
    source.write_bytes((FIXTURES_DIR / "every-entry-type.jsonl").read_bytes())
    monkeypatch.chdir(folder)
    args = ["redact", source.name, "--sessions-dir", str(tmp_path / "sessions")]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 1 and "second session file" in refused.output
    assert sorted(p.name for p in folder.iterdir()) == [source.name]
    elsewhere = tmp_path / "copy.jsonl"
    assert CliRunner().invoke(cli, [*args, "-o", str(elsewhere)]).exit_code == 0
    assert elsewhere.exists()


def test_a_given_secret_inside_the_format_s_own_words_leaves_them_alone(tmp_path: Path) -> None:
    """Keys and fixed values of Pi's format were redacted like text: `--secret arent` made
    every `parentId` a `p[REDACTED…]Id` (the copy lost its tree), `--secret user` gave user
    messages a redacted role, `--secret session` the header's type (Pi then saw no header);
    and a damaged line that is JSON met a KeyError when a secret was "line" (fuzzing
    2026-12-01)."""
    lines = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "the user parent line: arent-sage"}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "assistant", "stopReason": "stop",
                     "content": [{"type": "text", "text": "ok"}]}},
    ]  # fmt: skip
    source = tmp_path / "s.jsonl"
    source.write_text("\n".join(map(json.dumps, lines)) + "\n[]\n", encoding="utf-8")
    secrets = [
        arg
        for word in ("arent", "user", "sage", "line", "stop", "session")
        for arg in ("--secret", word)
    ]
    out = tmp_path / "copy.jsonl"
    done = CliRunner().invoke(cli, ["redact", str(source), "-o", str(out), *secrets])
    assert done.exit_code == 0, done.output
    copied = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [set(c) for c in copied] == [set(line) for line in lines]  # every key as written
    assert copied[1]["message"]["role"] == "user" and copied[2]["parentId"] == "a"
    assert copied[2]["message"]["stopReason"] == "stop"
    assert copied[0] == {**lines[0], "cwd": copied[0]["cwd"]}  # still the header
    said = copied[1]["message"]["content"]
    assert all(word not in said for word in ("arent", "user", "sage", "line")), said
    page = tmp_path / "page.html"
    shown = CliRunner().invoke(cli, ["export", str(source), "-o", str(page), "--redact", *secrets])
    assert shown.exit_code == 0 and "Traceback" not in shown.output, shown.output


def test_a_token_in_the_file_name_is_not_in_the_page_footer(tmp_path: Path) -> None:
    """The page's footer names the file it was exported from; a copy saved under a name
    holding a token must not carry it into a shared page."""
    token = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi"
    path = tmp_path / f"debug-{token}.jsonl"
    path.write_bytes((FIXTURES_DIR / "every-entry-type.jsonl").read_bytes())
    session = load_session(path)
    assert token in render_session(session)  # the footer shows the name
    redacted, report = apply_policy(session, RedactionPolicy(), environ={})
    assert redacted.path is not None and token not in redacted.path
    assert "debug-[REDACTED:github-token:" in redacted.path
    assert token not in render_session(redacted)
    assert report.counts["github-token"] == 1
    assert session.path == str(path)  # the input is untouched


def _assistant_with_calls(session: Session) -> MessageEntry:
    """An assistant message on the active path, halfway, that made tool calls."""
    path = session.active_path
    for entry_id in path[len(path) // 2 :]:
        entry = session.by_id[entry_id]
        if not isinstance(entry, MessageEntry) or entry.role != "assistant":
            continue
        content = entry.message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "toolCall" for b in content
        ):
            return entry
    raise AssertionError("no assistant message with tool calls on the path")


def test_exclude_leaves_out_an_entry_and_its_tool_results() -> None:
    """--exclude ID (peer review: per-message rejection): the entry, the results of the
    calls it made and the labels on them go; its children move up to its parent, the tree
    stays whole and the page says so."""
    session = load_session(BRANCHED[1])
    entry = _assistant_with_calls(session)
    results = {e.id for e in session.entries if (ref := session.call_for_result(e.id))
               and ref.entry_id == entry.id}  # fmt: skip
    assert results
    out, report = run(session, exclude=(entry.id,))
    gone = {entry.id} | results
    assert not gone & set(out.by_id)
    assert set(out.by_id) == set(session.by_id) - gone - {  # and only the labels on them
        e.id for e in session.entries if e.type == "label" and e.raw.get("targetId") in gone
    }
    ids = {e.raw["id"] for e in out.entries}
    assert all(e.raw["parentId"] is None or e.raw["parentId"] in ids for e in out.entries)
    for child in session.children.get(entry.id, ()):
        if child in out.by_id:
            assert out.parent_of(child) == session.parent_of(entry.id)
    assert report.actions["entries_excluded"] == len(session.entries) - len(out.entries)
    assert "entries_dropped" not in report.actions
    page = render_session(out)
    assert f'data-entry-id="{entry.id}"' not in page
    assert "entries excluded (--exclude)" in page


def test_exclude_with_a_slash_leaves_out_the_whole_subtree() -> None:
    session = load_session(BRANCHED[1])
    path = session.active_path
    cut = next(i for i in path[len(path) // 3 :] if session.by_id[i].type == "message")
    below = set(session.walk(cut))
    out, report = run(session, exclude=(f"{cut}/",))
    assert not below & set(out.by_id) and len(below) > 10
    assert out.leaf_id == session.parent_of(cut) or out.leaf_id not in path  # a new leaf
    assert report.actions["entries_excluded"] >= len(below)


def test_exclude_on_the_command_line(tmp_path: Path) -> None:
    """An unknown id is an error before anything is written (a typo would share what it
    was meant to leave out); `#id` as copied from a page link works; --all refuses it."""
    source = BRANCHED[1]
    session = load_session(source)
    entry = _assistant_with_calls(session)
    out = tmp_path / "copy.jsonl"
    typo = CliRunner().invoke(cli, ["redact", str(source), "-o", str(out), "--exclude", "zz99"])
    assert typo.exit_code == 1 and "--exclude: no entry zz99 in this session" in typo.stderr
    assert not out.exists()
    done = CliRunner().invoke(cli, ["redact", str(source), "-o", str(out), "--exclude",
                                    f"#{entry.id}"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert f'"id":"{entry.id}"' not in out.read_text(encoding="utf-8")
    page = tmp_path / "p.html"
    exported = CliRunner().invoke(cli, ["export", str(source), "-o", str(page), "--exclude",
                                        entry.id])  # fmt: skip
    assert exported.exit_code == 0, exported.output
    assert f'data-entry-id="{entry.id}"' not in page.read_text(encoding="utf-8")
    root = session.roots[0]  # everything: a clear error, not an empty page (review 2026-12-02)
    empty = CliRunner().invoke(cli, ["export", str(source), "-o", str(tmp_path / "e.html"),
                                     "--exclude", f"{root}/"])  # fmt: skip
    assert empty.exit_code == 1 and "--exclude leaves no entry" in empty.stderr
    assert not (tmp_path / "e.html").exists()
    site = CliRunner().invoke(cli, ["export", "--all", "-o", str(tmp_path / "s"), "--exclude",
                                    entry.id])  # fmt: skip
    assert site.exit_code == 1 and "--exclude" in site.stderr


@pytest.mark.parametrize(
    "secret",
    [
        'pa"ss-' + rand(R, 10),
        "C:\\keys\\" + rand(R, 12),
        "é-" + rand(R, 12),
        "a&b<c-" + rand(R, 12),
    ],
)
def test_a_given_secret_is_found_where_a_tool_printed_it_json_escaped(
    write_session: Callable[..., Path], secret: str
) -> None:
    """A tool that prints JSON (``cat config.json``, ``kubectl get -o json``) shows a
    ``--secret`` holding a quote or a backslash as ``\\"`` and ``\\\\``, and Python's
    ``json.dumps`` writes ``\\u00e9``: the value as given never matched that text, and it
    reached the page (secret review)."""
    escaped = json.dumps({"p": secret})
    printed = [
        json.dumps({"password": secret}),
        json.dumps({"p": secret}, ensure_ascii=False),
        # Go (docker inspect) writes & < > as \u0026 \u003c \u003e; .NET upper-case hex
        escaped.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"),
        escaped.replace("\\u00e9", "\\u00E9"),
        json.dumps({"nested": json.dumps({"p": secret})}),  # JSON inside a JSON string
    ]
    result = msg("toolResult", [{"type": "text", "text": "\n".join(printed)}], 2, 1,
                 toolCallId="c1", toolName="bash", isError=False)  # fmt: skip
    path = write_session([header(), msg("user", "show me", 1, None), result])
    out, _ = run(load_session(path), secrets=(secret,))
    text = entries_text(out)
    core = secret.split("-")[-1] if "-" in secret else secret.split("\\")[-1]
    assert core not in text, text


def _token_as_entry_id(folder: Path) -> Path:
    """A session whose entry id is a token, and whose orphan names it in its parent id."""
    lines = [
        header(),
        {**msg("user", f"use {GHP}", 1, None), "id": GHP},
        {**msg("assistant", [{"type": "text", "text": "ok"}], 2, None), "parentId": GHP},
        {**msg("user", "orphan", 3, None), "parentId": f"nope-{GHP}"},
    ]
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["redact", "s.jsonl", "-o", "out.jsonl", "--report", "rep.jsonl"],
        ["export", "s.jsonl", "-o", "out.html", "--redact", "--report", "rep.jsonl"],
        ["export", "s.jsonl", "-o", "out.md", "--redact", "--report", "rep.jsonl"],
    ],
)
def test_a_token_in_an_entry_id_stays_out_of_the_report_and_the_warnings(
    in_tmp: Path, args: list[str]
) -> None:
    """The copy had the id redacted, but ``--report`` named the entry by its raw id and the
    loader's warning ("parent 'nope-ghp_…' of entry 'm3' does not exist") quoted it on
    stderr, which a CI log keeps (secret review)."""
    _token_as_entry_id(in_tmp)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = (in_tmp / "rep.jsonl").read_text("utf-8")
    assert GHP not in report and '"entry_id": "[REDACTED:github-token:1]"' in report
    assert "does not exist" in result.stderr and GHP not in result.stderr, result.stderr
    assert GHP not in result.stdout
    assert GHP not in (in_tmp / args[3]).read_text("utf-8")
