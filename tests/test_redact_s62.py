"""Session 62: what `redact` was given is what it removes. A ``#`` line of a --secret file
is a secret, a given number goes in a JSON list too, a .env value keeps its escaped quote,
a UTF-16 --env-file or --secret file is read, the format's own times and model names
survive a short --secret or the user's name, and a POSIX class in --redact-pattern is
refused in words, not with Python's warning."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.loader import load_session
from exporter.pii_detectors import parse_pattern
from exporter.redact_cli import parse_env_text

HASH_PASSWORD = "#Tr0ub4dor&3xyz"
ENV_PASSWORD = 'Xy9"kLm2#Qz'
ACCOUNT = 84726193551
PIN_NUMBER = 9182736455
WIDE_PASSWORD = "Kq8vT2mZp4Lx9"
GHP = "ghp_Zq9Xw8Ve7Ut6Sr5Qp4On3Ml2Kj1Ih0GfEdCb"


def _entry(entry_id: str, parent: str | None, minute: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-11-30T10:{minute:02d}:00.000Z",
        **fields,
    }


def _user(entry_id: str, parent: str | None, minute: int, text: str) -> dict[str, Any]:
    message = {"role": "user", "content": text, "timestamp": 1764496800000 + minute}
    return _entry(entry_id, parent, minute, message=message)


def _assistant(
    entry_id: str, parent: str | None, minute: int, arguments: dict[str, Any]
) -> dict[str, Any]:
    call = {"type": "toolCall", "id": f"call-{entry_id}", "name": "api", "arguments": arguments}
    message = {
        "role": "assistant",
        "content": [call],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse",
        "timestamp": 1764496800000 + minute,
    }
    return _entry(entry_id, parent, minute, message=message)


def _write(path: Path, entries: list[dict[str, Any]]) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": "s62-redact",
        "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": "/tmp/project",
    }
    lines = [header, *entries]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def _said(path: Path, text: str) -> Path:
    """A session whose one prompt says ``text``."""
    return _write(path, [_user("u1", None, 1, text)])


def _redact(source: Path, copy: Path, *options: str) -> Result:
    args = ["redact", str(source), "-o", str(copy), "--no-env-secrets", *options]
    return CliRunner().invoke(cli, args)


# --- 1. a --secret file's "#" line is a secret, not a comment ------------------------------


def test_a_secret_file_line_starting_with_a_hash_is_a_secret(tmp_path: Path) -> None:
    """`--secret <(pass show db)` of a password starting with "#" left it in the copy
    without a word: such lines were skipped as comments, which neither --help nor the
    README said (hunt 62)."""
    source = _said(tmp_path / "s.jsonl", f"then type {HASH_PASSWORD} at the prompt")
    secrets = tmp_path / "secrets.txt"
    secrets.write_text(f"{HASH_PASSWORD}\n\n", encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--secret", str(secrets))
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert HASH_PASSWORD not in written and "Tr0ub4dor" not in written
    assert "[REDACTED:literal-secret:1]" in written
    help_text = CliRunner().invoke(cli, ["redact", "--help"]).output
    assert "a line starting with # too" in " ".join(help_text.split())


def test_a_short_line_of_a_secret_file_is_refused_saying_where(tmp_path: Path) -> None:
    """A line too short to be a secret is refused as any short value is, naming its line
    (not the value): a file of notes must not shred every "abc" of the session."""
    source = _said(tmp_path / "s.jsonl", "hello")
    secrets = tmp_path / "secrets.txt"
    secrets.write_text(f"{HASH_PASSWORD}\nabc\n", encoding="utf-8")
    result = _redact(source, tmp_path / "copy.jsonl", "--secret", str(secrets))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "need 4+ characters" in result.stderr
    assert f"1 value of 2 is shorter (line 2 of {secrets})" in result.stderr
    assert "abc" not in result.stderr and HASH_PASSWORD not in result.stderr
    assert not (tmp_path / "copy.jsonl").exists()


# --- 2. a given or password-named number inside a JSON list --------------------------------


def test_a_given_number_is_redacted_in_lists_and_as_a_whole_float(tmp_path: Path) -> None:
    """`--secret 84726193551` replaced ``"account": 84726193551`` but not the same number
    in ``[84726193551, 5]``, ``[[84726193551]]`` or as ``84726193551.0``, nor a password
    in ``"password": [9182736455]`` (hunt 62)."""
    arguments = {
        "account": ACCOUNT,
        "accounts": [ACCOUNT, 5],
        "pin": [4729],
        "password": [PIN_NUMBER],
        "nested": [[ACCOUNT]],
        "pw": float(ACCOUNT),
        "pair": ["password", PIN_NUMBER],
    }
    source = _write(
        tmp_path / "s.jsonl", [_user("u1", None, 1, "pay"), _assistant("a1", "u1", 2, arguments)]
    )
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--secret", str(ACCOUNT))
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert str(ACCOUNT) not in written and str(PIN_NUMBER) not in written
    redacted = load_session(copy).by_id["a1"].raw["message"]["content"][0]["arguments"]
    given = "[REDACTED:literal-secret:1]"
    assert redacted["account"] == given and redacted["pw"] == given
    assert redacted["accounts"] == [given, 5] and redacted["nested"] == [[given]]
    assert redacted["pin"] == [4729]  # a short number, not a secret: kept as a number
    assert re.fullmatch(r"\[REDACTED:[a-z-]+:1\]", redacted["password"][0])
    assert redacted["pair"][0] == "password" and redacted["pair"][1].startswith("[REDACTED:")


# --- 3. a .env value's escapes ----------------------------------------------------------------


def test_env_values_are_read_as_dotenv_reads_them() -> None:
    """A double-quoted value's escaped quote ended it (``Xy9\\``, too short to be taken):
    the real password went out. Single quotes are literal; `` #`` after a blank starts a
    comment of an unquoted value, a tab too."""
    text = (
        'DB_PASSWORD="Xy9\\"kLm2#Qz"  # the db\n'
        'MULTI_SECRET="a\\\\b\\nc\\td"\n'
        "RAW_TOKEN='Ab\\c9\"Zq7#Lm'\n"
        "export SESSION_SECRET=Qw3rTy9Zx8\t# rotate monthly\n"
        "PLAIN_PASS=pa#ss9Word\n"
        'OPEN_QUOTE="Lm4\\"Np8\n'
    )
    assert parse_env_text(text) == [  # an escaped value also as written (`cat .env`)
        ("DB_PASSWORD", 'Xy9\\"kLm2#Qz'),
        ("DB_PASSWORD", ENV_PASSWORD),
        ("MULTI_SECRET", "a\\\\b\\nc\\td"),
        ("MULTI_SECRET", "a\\b\nc\td"),
        ("RAW_TOKEN", 'Ab\\c9"Zq7#Lm'),
        ("SESSION_SECRET", "Qw3rTy9Zx8"),
        ("PLAIN_PASS", "pa#ss9Word"),
        ("OPEN_QUOTE", 'Lm4\\"Np8'),
        ("OPEN_QUOTE", 'Lm4"Np8'),
    ]


def test_an_env_file_password_with_an_escaped_quote_is_redacted(tmp_path: Path) -> None:
    source = _said(tmp_path / "s.jsonl", f"the db pass is {ENV_PASSWORD} now")
    env_file = tmp_path / "app.env"
    env_file.write_text('DB_PASSWORD="Xy9\\"kLm2#Qz"\n', encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--env-file", str(env_file))
    assert result.exit_code == 0, result.output
    written = load_session(copy).by_id["u1"].raw["message"]["content"]
    assert "kLm2#Qz" not in written and "[REDACTED:literal-secret:1]" in written


# --- 4. UTF-16 files ------------------------------------------------------------------------


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF16_LE, "utf-16-le"),
                                        (codecs.BOM_UTF16_BE, "utf-16-be")])  # fmt: skip
def test_utf16_env_and_secret_files_are_read(tmp_path: Path, bom: bytes, codec: str) -> None:
    """A .env or secrets file saved by Notepad or PowerShell (UTF-16 with its mark) was read
    as UTF-8: the --env-file's password leaked under "no secrets found", and the --secret
    file was refused with "values need 4+ characters" and no hint (hunt 62)."""
    source = _said(tmp_path / "s.jsonl", f"vault pass {WIDE_PASSWORD} here")
    env_file = tmp_path / "w.env"
    env_file.write_bytes(bom + f"VAULT_PASSWORD={WIDE_PASSWORD}\r\n".encode(codec))
    secrets = tmp_path / "sec16.txt"
    secrets.write_bytes(bom + f"{WIDE_PASSWORD}\r\n".encode(codec))
    for option, path in (("--env-file", env_file), ("--secret", secrets)):
        copy = tmp_path / f"copy{option}.jsonl"
        result = _redact(source, copy, option, str(path))
        assert result.exit_code == 0, result.output
        written = copy.read_text(encoding="utf-8")
        assert WIDE_PASSWORD not in written and "[REDACTED:literal-secret:1]" in written


def test_utf16_without_its_mark_is_refused_with_a_hint(tmp_path: Path) -> None:
    """Without a byte order mark every line read with NULs in it, matching nothing."""
    source = _said(tmp_path / "s.jsonl", f"vault pass {WIDE_PASSWORD} here")
    env_file = tmp_path / "w.env"
    env_file.write_bytes(f"VAULT_PASSWORD={WIDE_PASSWORD}\n".encode("utf-16-le"))
    result = _redact(source, tmp_path / "copy.jsonl", "--env-file", str(env_file))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "NUL characters (UTF-16 without a byte order mark?)" in result.stderr
    assert WIDE_PASSWORD not in result.stderr


# --- 5. the format's own values --------------------------------------------------------------


def _format_session(tmp_path: Path) -> Path:
    change = {
        "type": "model_change",
        "id": "m1",
        "parentId": None,
        "timestamp": "2026-11-30T10:00:30.000Z",
        "provider": "anthropic",
        "modelId": "claude-opus-4-1",
    }
    arguments = {"model": "claude-haiku", "since": "2026", "token": GHP}
    return _write(
        tmp_path / "s.jsonl",
        [
            change,
            _user("u1", "m1", 1, "my pin is 2026 and I am claude"),
            _user("u2", "u1", 3, "a later branch, earlier in the file"),
            _assistant("a1", "u1", 2, arguments),
        ],
    )


def _redact_format_session(tmp_path: Path, *options: str) -> tuple[list[Any], list[Any]]:
    """The session of `_format_session` and its copy, as records."""
    source = _format_session(tmp_path)
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, *options)
    assert result.exit_code == 0, result.output
    before = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    after = [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines()]
    loaded = load_session(copy)
    assert not loaded.diagnostics and loaded.children["u1"] == ["a1", "u2"]  # by time
    return before, after


def test_a_short_secret_leaves_the_entries_times_alone(tmp_path: Path) -> None:
    """`--secret 2026` made every ISO time "[REDACTED…]-11-30T…": the loader warned and
    Pi ordered the children otherwise (hunt 62). The times stay; the text and a tool call's
    argument holding the value are still redacted."""
    before, after = _redact_format_session(tmp_path, "--secret", "2026")
    assert [r["timestamp"] for r in after] == [r["timestamp"] for r in before]
    assert after[4]["message"]["timestamp"] == before[4]["message"]["timestamp"]
    assert after[1]["modelId"] == "claude-opus-4-1"
    assert after[4]["message"]["content"][0]["arguments"]["since"] == (
        "[REDACTED:literal-secret:1]"
    )
    assert after[2]["message"]["content"] == "my pin is [REDACTED:literal-secret:1] and I am claude"


def test_the_user_name_leaves_the_model_names_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOME=/home/claude USER=claude made every "claude-sonnet-4-5" "<user>-sonnet-4-5"
    (hunt 62). The format's model fields keep their values; the text, and a tool call's
    argument that happens to be called "model", are still scrubbed."""
    monkeypatch.setenv("HOME", "/home/claude")
    monkeypatch.setenv("USER", "claude")
    _, after = _redact_format_session(tmp_path)
    change = after[1]
    assert (change["provider"], change["modelId"]) == ("anthropic", "claude-opus-4-1")
    answer = after[4]["message"]
    assert answer["model"] == "claude-sonnet-4-5" and answer["api"] == "anthropic-messages"
    arguments = answer["content"][0]["arguments"]
    assert arguments["model"] == "<user>-haiku"  # not the format's: a tool's argument
    assert GHP not in json.dumps(after)
    assert after[2]["message"]["content"] == "my pin is 2026 and I am <user>"


def test_a_token_in_a_model_field_is_still_redacted(tmp_path: Path) -> None:
    """The format's fields are kept only as far as they are the format's: a token a detector
    finds there, or a --secret that is the whole value, still goes."""
    change = {
        "type": "model_change",
        "id": "m1",
        "parentId": None,
        "timestamp": f"not a time {GHP}",
        "provider": "acme-internal-llm",
        "modelId": GHP,
    }
    source = _write(tmp_path / "s.jsonl", [change])
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--secret", "acme-internal-llm")
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert GHP not in written and "acme-internal-llm" not in written
    record = json.loads(written.splitlines()[1])
    assert record["provider"] == "[REDACTED:literal-secret:1]"
    assert record["modelId"].startswith("[REDACTED:") and record["timestamp"].startswith("not a")


# --- 6. a POSIX class in --redact-pattern ------------------------------------------------------


def test_a_posix_class_in_a_pattern_is_refused_in_words(tmp_path: Path) -> None:
    """`--redact-pattern 'acct=ACCT-[[:digit:]]+'` printed Python's "FutureWarning: Possible
    nested set" with a source path, then ran a regex that matched nothing meant."""
    source = _said(tmp_path / "s.jsonl", "account ACCT-123456")
    spec = "acct=ACCT-[[:digit:]]+"
    result = _redact(source, tmp_path / "copy.jsonl", "--redact-pattern", spec)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "POSIX class" in result.stderr and "[A-Za-z]" in result.stderr
    assert "FutureWarning" not in result.output and not (tmp_path / "copy.jsonl").exists()
    with pytest.raises(ValueError, match=r"POSIX class"):
        parse_pattern(spec)
    with pytest.raises(ValueError, match=r"ambiguous \(possible set difference"):
        parse_pattern("dash=[a--z]x")


# --- the review of these fixes ----------------------------------------------------------------


def test_model_fields_still_lose_homes_user_names_and_given_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving the format's fields alone let a home path in a local model's name, a user
    name in a provider's and an AWS account given as --secret in a Bedrock model's ARN go
    out (reviews 62): only a user name that is a model family's is kept there."""
    monkeypatch.setenv("HOME", "/home/alice")
    monkeypatch.setenv("USER", "alice")
    change = {"type": "model_change", "id": "m1", "parentId": None,
              "timestamp": "2026-01-02T03:04:05.000Z", "provider": "alice-corp",
              "modelId": "/home/alice/models/llama.gguf"}  # fmt: skip
    answer = _user("u1", "m1", 2, "hi")
    answer["message"] = {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                         "api": "openai-responses", "provider": "openai",
                         "model": "arn:aws:bedrock:us-east-1:123456789012:profile/ab",
                         "responseModel": 84726193551, "timestamp": 1}  # fmt: skip
    source = _write(tmp_path / "s.jsonl", [change, answer])
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--secret", "123456789012", "--secret", "84726193551")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines()]
    assert records[1]["provider"] == "<user>-corp"
    assert records[1]["modelId"] == "~/models/llama.gguf"
    model = records[2]["message"]["model"]  # a given secret goes wherever it is
    assert model == "arn:aws:bedrock:us-east-1:[REDACTED:literal-secret:1]:profile/ab"
    assert records[2]["message"]["responseModel"] == "[REDACTED:literal-secret:2]"


def test_a_short_hash_line_of_a_secret_file_is_passed_over(tmp_path: Path) -> None:
    """Every line of a --secret file is a secret, "#" lines too; a "#" line too short to be
    one (a bare "#" a file used as a comment) is passed over, not refused (review 62)."""
    source = _said(tmp_path / "s.jsonl", f"then type {HASH_PASSWORD} at the prompt")
    secrets = tmp_path / "secrets.txt"
    secrets.write_text(f"#\n##\n{HASH_PASSWORD}\n", encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--secret", str(secrets))
    assert result.exit_code == 0, result.output
    assert HASH_PASSWORD not in copy.read_text(encoding="utf-8")


def test_an_env_value_with_escapes_is_caught_as_written_too(tmp_path: Path) -> None:
    """`SERVICE_SECRET="Q7w9\\tZk3Lp8Xv2R"`: only the decoded value (a real tab) was a
    secret, and the text as `cat .env` shows it went out (review 62)."""
    written = "Q7w9\\tZk3Lp8Xv2R"
    source = _said(tmp_path / "s.jsonl", f"the env says {written} there")
    env_file = tmp_path / "app.env"
    env_file.write_text(f'SERVICE_SECRET="{written}"\n', encoding="utf-8")
    copy = tmp_path / "copy.jsonl"
    result = _redact(source, copy, "--env-file", str(env_file))
    assert result.exit_code == 0, result.output
    assert written not in copy.read_text(encoding="utf-8").replace("\\\\", "\\")
