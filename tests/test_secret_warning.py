"""`export` without `--redact` wrote an AWS key, a GitHub token and a private key into the
page (and its embedded JSONL) and said nothing: a page one attachment away from leaking
them. It now warns, counting what `--redact` would replace, never printing the values."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from exporter.secret_warning import likely_secrets
from tests.browser_util import FIXTURE_NAMES, fixture_path

AWS = "AKIA" + "Q3EGRBNCXZLV4WTY"
GITHUB = "ghp_" + "Zk9Qm2Xp7Lr4Tv8Wn3Yb6Hc1Jd5Fg0SeAa4K"


def _pem() -> str:
    body = base64.b64encode(random.Random(7).randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"])


def _session(tmp_path: Path, user_text: str, output: str) -> Path:
    """A user message and a bash call whose output holds ``output``."""
    stamp = "2025-01-01T00:00:0{}Z"
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cat k"}}
    records = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": stamp.format(0), "cwd": "/w"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": stamp.format(1),
         "message": {"role": "user", "content": user_text}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": stamp.format(2),
         "message": {"role": "assistant", "content": [call], "provider": "p", "model": "m",
                     "stopReason": "toolUse"}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": stamp.format(3),
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                     "content": [{"type": "text", "text": output}]}},
    ]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _export(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "exporter", "export", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )


def test_an_unredacted_page_with_credentials_is_warned_about(tmp_path: Path) -> None:
    session = _session(tmp_path, f"use {AWS} 的密钥 and {GITHUB}", f"key:\n{_pem()}\n")
    for out in ("p.html", "p.md"):
        done = _export(str(session), "-o", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        warned = [line for line in done.stderr.splitlines() if "in clear" in line]
        assert len(warned) == 1, done.stderr
        line = warned[0]
        assert line.startswith("pi-session: warning: the page holds 3 credentials")
        for name in ("aws-access-key-id", "github-token", "private-key"):
            assert name in line, line
        assert "--redact" in line
        assert AWS not in done.stderr and GITHUB not in done.stderr and "MII" not in line
        assert AWS in (tmp_path / out).read_text(encoding="utf-8")  # the page as asked
    redacted = _export(str(session), "-o", "r.html", "--redact", cwd=tmp_path)
    assert redacted.returncode == 0 and "in clear" not in redacted.stderr


def test_pages_without_credentials_say_nothing(tmp_path: Path) -> None:
    """No false alarm on the real sessions or the demo (the README's first command)."""
    for name in FIXTURE_NAMES:
        done = _export(str(fixture_path(name)), "-o", "x.html", cwd=tmp_path)
        assert done.returncode == 0 and "in clear" not in done.stderr, (name, done.stderr)
    demo = _export("--demo", "-o", "demo.html", cwd=tmp_path)
    assert demo.returncode == 0 and "warning" not in demo.stderr, demo.stderr


@pytest.mark.parametrize("as_bytes", [False, True])
def test_counts_are_the_detectors_and_distinct(as_bytes: bool) -> None:
    """What --redact replaces, each value once, wherever multi-byte text sits around it;
    a candidate the detectors reject (a key id in a longer word) is not counted."""
    text = f"é€😀 {AWS} again {AWS} 中文 {GITHUB}\nsee XAKIA{AWS[4:]}ZZ " + "x" * 300
    found, more = likely_secrets(text.encode("utf-8") if as_bytes else text)
    assert dict(found) == {"aws-access-key-id": 1, "github-token": 1} and not more


def test_many_candidates_stay_cheap() -> None:
    """Judging is capped: 50,000 key ids are counted as 'at least' the first 2,000's."""
    text = " ".join(f"AKIA{n:016d}" for n in range(50_000))
    found, more = likely_secrets(text)
    assert more and sum(found.values()) <= 2_000


@pytest.mark.parametrize(
    "text",
    [
        "xoxo-gossip-girl-season-2 is on tonight",  # a Slack prefix, then words
        "xoxp-not-a-token-2",
        "pip install scikit-learn; task-sk-learn-classification-model-v2",
        "hf_transformers_pipeline_loader and npm_config_registry_url_default_value_here_x",
    ],
)
def test_words_that_start_like_a_token_are_no_credential(text: str) -> None:
    """The warning counts what --redact replaces: a Slack prefix before words was a
    'slack-token' to both (its check only asked for a digit somewhere)."""
    assert likely_secrets(text) == ({}, False)


def test_a_credential_in_a_tools_parameter_is_warned_about(tmp_path: Path) -> None:
    """The warning read the prompt and the tools' descriptions only: a token in a
    parameter's description (shown on the Tools card) went out in clear, unsaid."""
    session = _session(tmp_path, "hello", "done")
    context = tmp_path / "context.json"
    tool = {"name": "deploy", "description": "Deploy it.",
            "parameters": {"type": "object", "properties": {
                "token": {"type": "string", "description": f"defaults to {GITHUB}"}}}}  # fmt: skip
    context.write_text(json.dumps({"systemPrompt": "Be brief.", "tools": [tool]}), "utf-8")
    done = _export(str(session), "-o", "p.html", "--agent-context", str(context), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "holds 1 credential of a known format in clear (github-token)" in done.stderr
