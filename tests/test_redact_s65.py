"""Session 65: what `redact` takes for a user's name, a secret number, a secret in a file's
name or in a connection URL, what it writes of a line it did not change, how its summary
names where the secrets were, and the garbage collector during a big copy (hunt 65)."""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.loader import load_session
from exporter.policy import RedactionPolicy
from exporter.redact import RedactionReport, apply_policy, text_redactor
from tests.browser_util import PageServer

pytest_plugins = ["tests.browser_util"]

FIXTURES = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
EVERY_ENTRY_TYPE = FIXTURES / "fixtures" / "every-entry-type.jsonl"
BRANCHED_1 = FIXTURES / "fixtures" / "pi-branched-1.jsonl"
GHP = "ghp_" + "f7NhAOflflQGdQ8RbiFm2v5AL35VCtIzlrsN"
#: The machine's own identity in every run here, so the test machine's account plays no part
IDENTITY = {"HOME": "/home/tester", "USER": "tester", "LOGNAME": "tester"}


def _header(cwd: str = "/tmp/project", **fields: Any) -> dict[str, Any]:
    return {
        "type": "session",
        "version": 3,
        "id": "s65-redact",
        "timestamp": "2026-12-06T10:00:00.000Z",
        "cwd": cwd,
        **fields,
    }


def _entry(entry_id: str, parent: str | None, minute: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2026-12-06T10:{minute:02d}:00.000Z",
        **fields,
    }


def _user(entry_id: str, parent: str | None, minute: int, text: str) -> dict[str, Any]:
    message = {"role": "user", "content": text, "timestamp": 1765015200000 + minute}
    return _entry(entry_id, parent, minute, message=message)


def _answer(
    entry_id: str, parent: str | None, minute: int, text: str, **usage: Any
) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 3,
            "output": 120,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 123,
            "cost": {
                "input": 0.00003,
                "output": 0.0018,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": 0.00183,
            },
            **usage,
        },
        "stopReason": "stop",
        "timestamp": 1765015200000 + minute,
    }
    return _entry(entry_id, parent, minute, message=message)


def _lines(path: Path, records: list[dict[str, Any] | str], *, compact: bool = True) -> Path:
    """A session file as Pi writes one (compact lines), or as ``json.dumps`` does."""
    separators = (",", ":") if compact else (", ", ": ")
    text = "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False, separators=separators))
        + "\n"
        for r in records
    )
    path.write_text(text, encoding="utf-8")
    return path


def _redact(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["redact", *args], env={**IDENTITY, **(env or {})})


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- 1. a folder no one owns is no user's name ---------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "text"),
    [
        ("/Users/Shared/webapp", "Move the build output to the Shared folder."),
        ("C:\\Users\\Public\\webapp", "Document the Public API."),
        ("/home/projects/app", "All projects build; see /home/projects/app/README.md."),
        ("/home/src/app", "Edit src/x.py and src/y.py."),
        ("/home/workspace", "The workspace is clean."),
        ("/home/app", "The app starts."),
    ],
)
def test_a_folder_no_one_owns_is_no_users_name(tmp_path: Path, cwd: str, text: str) -> None:
    """A cwd in a shared or project folder took that folder's name for the user's: "the
    Shared folder" became "the <user> folder", ``src/x.py`` ``<user>/x.py``, and the cwd
    was shortened to ``~/webapp`` as if it were a home."""
    source = _lines(tmp_path / "s.jsonl", [_header(cwd), _user("u1", None, 1, text)])
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--no-env-secrets")
    assert result.exit_code == 0, result.output
    header, prompt = _records(copy)
    assert header["cwd"] == cwd
    assert prompt["message"]["content"] == text
    assert "user names" not in result.stderr and "home paths" not in result.stderr


def test_a_real_users_home_is_still_hidden(tmp_path: Path) -> None:
    """The users of CI runners and of people keep their homes hidden and names replaced."""
    records = [
        _header("/home/carolyn/webapp"),
        _user("u1", None, 1, "carolyn wrote /home/carolyn/webapp/x.py"),
    ]
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(_lines(tmp_path / "s.jsonl", records)), "-o", str(copy))
    assert result.exit_code == 0, result.output
    header, prompt = _records(copy)
    assert header["cwd"] == "~/webapp"
    assert prompt["message"]["content"] == "<user> wrote ~/webapp/x.py"
    runner = [_header("/home/runner/work/app/app"), _user("u1", None, 1, "at /home/runner/x")]
    copy = tmp_path / "runner.jsonl"
    result = _redact(str(_lines(tmp_path / "r.jsonl", runner)), "-o", str(copy))
    assert result.exit_code == 0, result.output
    header, prompt = _records(copy)
    assert header["cwd"] == "~/work/app/app" and prompt["message"]["content"] == "at ~/x"


def test_the_prompts_redactor_takes_no_project_folder_for_a_user() -> None:
    """``text_redactor`` (the agent's prompt beside the session) read the cwd the same way."""
    policy = RedactionPolicy(env_secrets=False, home="/home/tester", user="tester")
    redact = text_redactor(policy, RedactionReport(), cwd="/home/src/app", environ={})
    assert redact("Edit src/x.py in /home/src/app", ("systemPrompt",)) == (
        "Edit src/x.py in /home/src/app"
    )


# --- 2. a given number leaves Pi's own numbers alone ----------------------------------------


def test_a_given_number_leaves_the_formats_numbers_alone(tmp_path: Path) -> None:
    """``--secret 1000`` made ``"cacheRead": 1000`` (and a message's time, a compaction's
    tokensBefore, an exit code) strings; a tool's argument of that value is still one."""
    call = {"type": "toolCall", "id": "c1", "name": "api", "arguments": {"account": 1000}}
    answer = _answer("a1", "u1", 2, "calling", cacheRead=1000, totalTokens=1000)
    answer["message"]["content"].append(call)
    answer["message"]["timestamp"] = 1000
    bash = _entry("b1", "a1", 3, message={"role": "bashExecution", "command": "exit 1000",
                                          "output": "", "exitCode": 1000, "cancelled": False,
                                          "truncated": False, "timestamp": 1000})  # fmt: skip
    compaction = {"type": "compaction", "id": "k1", "parentId": "b1",
                  "timestamp": "2026-12-06T10:04:00.000Z", "summary": "s",
                  "firstKeptEntryId": "a1", "tokensBefore": 1000}  # fmt: skip
    records = [_header(), _user("u1", None, 1, "go"), answer, bash, compaction]
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(_lines(tmp_path / "s.jsonl", records)), "-o", str(copy), "--secret",
                     "1000", "--no-env-secrets")  # fmt: skip
    assert result.exit_code == 0, result.output
    by_id = {r.get("id"): r for r in _records(copy)}
    message = by_id["a1"]["message"]
    assert message["usage"]["cacheRead"] == 1000 and message["usage"]["totalTokens"] == 1000
    assert message["timestamp"] == 1000 and by_id["k1"]["tokensBefore"] == 1000
    assert by_id["b1"]["message"]["exitCode"] == 1000
    assert message["content"][1]["arguments"]["account"] == "[REDACTED:literal-secret:1]"
    assert by_id["b1"]["message"]["command"] == "exit [REDACTED:literal-secret:1]"


def test_pis_page_of_a_copy_made_with_a_number_secret_shows_no_nan(
    tmp_path: Path, pi_home: Path, node: str, pw_browser: Any, page_server: PageServer
) -> None:
    """Pi's own page of such a copy summed a string into its token counts: "RNaNM"."""
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(EVERY_ENTRY_TYPE), "-o", str(copy), "--secret", "1000",
                     "--no-env-secrets")  # fmt: skip
    assert result.exit_code == 0, result.output
    (tmp_path / "pi-home").mkdir()
    exported = subprocess.run(
        [str(pi_home / "node_modules" / ".bin" / "pi"), "--export", str(copy), "pi.html"],
        cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path / "pi-home"),
                           "PATH": str(Path(node).parent)},
        capture_output=True, text=True, encoding="utf-8", timeout=120, check=False,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr[-2000:]
    url = page_server.publish("s65-pi.html", (tmp_path / "pi.html").read_text(encoding="utf-8"))
    page = pw_browser.new_page()
    try:
        page.goto(url)
        page.wait_for_selector("text=Tokens:")
        shown = page.inner_text("body")
    finally:
        page.close()
    assert "Tokens:" in shown and "NaN" not in shown


# --- 3. the default copy name ---------------------------------------------------------------


def test_the_default_copy_name_leaves_out_a_token_of_the_sessions_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``redact debug-ghp_….jsonl`` wrote ``debug-ghp_….redacted.jsonl``: the token it had
    just removed from the copy's text stood in its name."""
    monkeypatch.chdir(tmp_path)
    source = _lines(tmp_path / f"debug-{GHP}.jsonl", [_header(), _user("u1", None, 1, "hi")])
    result = _redact(str(source), "--no-env-secrets")
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in tmp_path.iterdir() if p != source)
    assert written == ["debug-REDACTED-github-token.redacted.jsonl"]
    assert result.stdout.strip() == "debug-REDACTED-github-token.redacted.jsonl"
    assert "file name holds a secret" in result.stderr
    assert GHP not in result.output and "ghp_" not in result.stderr


# --- 4. the password of a connection URL ----------------------------------------------------


def test_an_env_files_url_password_is_a_secret_wherever_it_appears(tmp_path: Path) -> None:
    """``DATABASE_URL=postgres://app:Pg_S3cret_77@db/app`` was judged by its name and whole
    value: the password the agent showed bare stayed in the copy. A default that repeats
    the user's name (``postgres:postgres``) is no secret and shreds no word."""
    env_file = tmp_path / ".env"
    env_file.write_text(
        "DATABASE_URL=postgres://app:Pg_S3cret_77@db:5432/app\n"
        "REDIS_URL=redis://:R3disPassw0rd@cache:6379/0\n"
        "TEST_DB=postgres://postgres:postgres@localhost/test\n",
        encoding="utf-8",
    )
    text = "Values seen in logs: Pg_S3cret_77 | R3disPassw0rd | postgres is up"
    source = _lines(tmp_path / "s.jsonl", [_header(), _user("u1", None, 1, text)])
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--env-file", str(env_file),
                     "--no-env-secrets")  # fmt: skip
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert "Pg_S3cret_77" not in written and "R3disPassw0rd" not in written
    assert "postgres is up" in written


def test_a_url_password_in_the_environment_is_a_secret(tmp_path: Path) -> None:
    """The process's environment is read the same way (whatever the variable's name)."""
    text = "Values seen in logs: p@ss!W0rd#9 | p%40ss%21W0rd%239"
    source = _lines(tmp_path / "s.jsonl", [_header(), _user("u1", None, 1, text)])
    copy = tmp_path / "copy.jsonl"
    env = {"MY_SERVICE": "mysql://app:p%40ss%21W0rd%239@db:3306/app"}
    result = _redact(str(source), "-o", str(copy), env=env)
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert "W0rd" not in written and "[REDACTED:env-secret:" in written


# --- 5. a line with nothing to redact is written as it was ----------------------------------


def test_lines_with_nothing_to_redact_are_kept_byte_for_byte(tmp_path: Path) -> None:
    """Pi's ``0.00003`` came back as ``3e-05``: 68 of 69 lines of pi-branched-1 differed
    from the file only in how Python writes numbers."""
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(BRANCHED_1), "-o", str(copy), "--keep-hidden", "--no-env-secrets")
    assert result.exit_code == 0, result.output
    source = BRANCHED_1.read_bytes().split(b"\n")
    written = copy.read_bytes().split(b"\n")
    assert len(written) == len(source)
    same_value_other_bytes = [
        number
        for number, (before, after) in enumerate(zip(source, written, strict=True), 1)
        if before != after and json.loads(before) == json.loads(after)
    ]
    assert same_value_other_bytes == []
    assert b"e-05" not in copy.read_bytes()


def test_a_changed_line_writes_numbers_as_pi_does(tmp_path: Path) -> None:
    """A line the redaction changed is written out again: its numbers as JavaScript writes
    them, so a page or a diff of the copy shows the file's ``0.00003``."""
    answer = _answer("a1", "u1", 2, f"token {GHP}")
    source = _lines(tmp_path / "s.jsonl", [_header(), _user("u1", None, 1, "hi"), answer])
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--no-env-secrets")
    assert result.exit_code == 0, result.output
    line = copy.read_text(encoding="utf-8").splitlines()[2]
    assert GHP not in line and "[REDACTED:github-token:1]" in line
    assert '"input":0.00003,' in line and "e-05" not in line


def test_a_line_that_names_a_key_twice_is_never_copied_as_it_was(tmp_path: Path) -> None:
    """The loader (like Pi) reads the last of two equal keys: the first value was never
    scanned, and the line's own bytes would carry it out."""
    hidden = json.dumps({"role": "user", "content": f"my token {GHP}", "timestamp": 1})
    shown = json.dumps({"role": "user", "content": "hello", "timestamp": 1})
    line = (
        (
            '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-12-06T10:01:00.000Z",'
            f'"message":{hidden},"message":{shown}}}'
        )
        .replace(": ", ":")
        .replace(", ", ",")
    )
    source = _lines(tmp_path / "s.jsonl", [_header(), line])
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--no-env-secrets")
    assert result.exit_code == 0, result.output
    written = copy.read_text(encoding="utf-8")
    assert GHP not in written and "my token" not in written
    assert _records(copy)[1]["message"]["content"] == "hello"


def test_a_spaced_line_is_written_compact_as_pi_writes(tmp_path: Path) -> None:
    """A file written by ``json.dumps`` (``", "``) gets Pi's compact lines, as before."""
    records = [_header(), _user("u1", None, 1, 'hi, there: a " quote, 0.5')]
    source = _lines(tmp_path / "s.jsonl", records, compact=False)
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--no-env-secrets")
    assert result.exit_code == 0, result.output
    expected = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    assert copy.read_text(encoding="utf-8") == expected


def test_numbers_are_written_as_javascript_writes_them(node: str) -> None:
    """:func:`js_number` against node's own ``JSON.stringify`` over the ranges where Python
    writes otherwise (exponents, whole floats) and random ones."""
    picker = random.Random(65)
    values = [3e-05, 1e-7, 1e-6, 1.5e-7, 1e21, 1e20, 5.0, 1.5e16, 100.0, -0.0, -2.5e-8,
              5e-324, 1.7976931348623157e308, 0.1, 123456780000000.0, 0.000001234]  # fmt: skip
    values += [picker.uniform(-1, 1) * 10 ** picker.randint(-12, 25) for _ in range(400)]
    values += [float(picker.randint(1, 10**6)) for _ in range(50)]
    from exporter.jsonl_out import js_number  # (here: it is new, and the others run without)

    script = "for (const x of JSON.parse(process.argv[1])) console.log(JSON.stringify(x))"
    argument = "[" + ",".join(map(repr, values)) + "]"
    done = subprocess.run(
        [node, "-e", script, argument], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines() == [js_number(v) for v in values]


# --- 6. where the summary says the secrets are ----------------------------------------------


def test_a_secret_only_in_the_file_name_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's footer names the file, so its name is redacted and counted: the summary
    said "1 secret in 1 entry" of a session whose entries held none."""
    monkeypatch.chdir(tmp_path)
    source = _lines(tmp_path / f"debug-{GHP}.jsonl", [_header(), _user("u1", None, 1, "hi")])
    result = CliRunner().invoke(
        cli, ["export", "--redact", str(source), "-o", "page.html", "--no-env-secrets"],
        env=IDENTITY,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "redact: 1 secret in the file name (github-token 1)" in result.stderr


def test_the_header_is_said_apart_from_the_entries(tmp_path: Path) -> None:
    """A secret in the header was counted as one more entry ("2 entries" of one)."""
    other = "ghp_" + "Zq9Xw8Ve7Ut6Sr5Qp4On3Ml2Kj1Ih0GfEdCb"
    records = [
        _header(parentSession=f"/tmp/fork-{other}.jsonl"),
        _user("u1", None, 1, f"use {GHP}"),
        _answer("a1", "u1", 2, f"ok {GHP}"),
    ]
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(_lines(tmp_path / "s.jsonl", records)), "-o", str(copy),
                     "--no-env-secrets")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "redact: 3 secrets in 2 entries and the header (github-token 3)" in result.stderr


# --- 7. the cyclic garbage collector during a big copy --------------------------------------


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations the cyclic GC collects while the test runs."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)


def test_the_copy_is_made_without_the_cyclic_gc(tmp_path: Path, collections: list[int]) -> None:
    """The copy is millions of new objects without a cycle: the GC's full passes over the
    session and the copy made 200,000 entries take 17 times as long as 20,000 (hunt 65).
    Redaction now runs with it paused, as the loader reads."""
    records: list[dict[str, Any] | str] = [_header()]
    parent = None
    for number in range(1500):
        entry_id = f"e{number:05d}"
        make = _user if number % 2 == 0 else _answer
        records.append(make(entry_id, parent, number % 60, f"step {number} of the plan"))
        parent = entry_id
    session = load_session(_lines(tmp_path / "s.jsonl", records))
    assert gc.isenabled()
    collections.clear()
    copy, report = apply_policy(session, RedactionPolicy(env_secrets=False), environ=IDENTITY)
    # (one collection may come as it is turned on again: it takes what the pause left)
    assert len(collections) <= 1 and gc.isenabled()
    assert len(copy.entries) == 1500 and report.total == 0


def test_a_plain_word_as_a_url_password_stays_a_word(tmp_path: Path) -> None:
    """Every variable's URL password is a given secret, removed wherever it stands: a plain
    word (``postgres://app:docker@db``, ``redis://u:local@cache``) took "docker" and "local"
    out of every sentence (review 2026-12-07)."""
    text = "Run docker compose up with the local config"
    source = _lines(tmp_path / "s.jsonl", [_header(), _user("u1", None, 1, text)])
    copy = tmp_path / "copy.jsonl"
    env = {"DATABASE_URL": "postgres://app:docker@db/app", "REDIS_URL": "redis://u:local@cache"}
    result = _redact(str(source), "-o", str(copy), env=env)
    assert result.exit_code == 0, result.output
    assert text in copy.read_text(encoding="utf-8")


def test_a_number_first_kept_entry_id_moves_with_an_exclude(tmp_path: Path) -> None:
    """Number ids are ids since stop 65; a compaction's ``firstKeptEntryId`` naming an entry
    --exclude left out was moved only when it was a string, so Pi kept nothing before it."""

    def entry(entry_id: int, role: str) -> dict[str, Any]:
        text = [{"type": "text", "text": f"{role} {entry_id}"}]
        return {"type": "message", "id": entry_id, "parentId": entry_id - 1 or None,
                "timestamp": f"2025-06-01T10:00:0{entry_id}.000Z",
                "message": {"role": role, "content": text, "timestamp": entry_id}}  # fmt: skip

    compaction = {"type": "compaction", "id": 4, "parentId": 3, "summary": "sum",
                  "timestamp": "2025-06-01T10:00:04.000Z", "firstKeptEntryId": 2,
                  "tokensBefore": 100}  # fmt: skip
    lines = [_header(), entry(1, "user"), entry(2, "assistant"), entry(3, "user"), compaction]
    source = _lines(tmp_path / "s.jsonl", lines)
    copy = tmp_path / "copy.jsonl"
    result = _redact(str(source), "-o", str(copy), "--exclude", "2")
    assert result.exit_code == 0, result.output
    written = [json.loads(line) for line in copy.read_text(encoding="utf-8").splitlines()]
    (kept,) = [line for line in written if line.get("type") == "compaction"]
    assert kept["firstKeptEntryId"] == 3
