"""Stop 58 (helper hunts: a dataset's user, a new user): one session in two files went up
twice and moved between its paths on every unchanged re-run; a lone surrogate made the whole
``sessions`` config unloadable; ``-o`` and ``--report`` overwrote a Claude Code transcript, a
Codex rollout or a Pi session without its header line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.formatting import surrogates_as_replacement_escapes
from tests.conftest import FIXTURES_DIR as FIXTURES
from tests.conftest import cpu_time_limit
from tests.fakes.hub import TOKEN, FakeHub, fake_hub_fixture
from tests.test_publish import Corpus, assert_consistent, hub_env, index_rows, publish

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name

DATA = Path(__file__).parent / "data"
SESSION_ID = "33333333-3333-4333-8333-333333333333"


def _line(value: dict[str, object]) -> str:
    return json.dumps(value, ensure_ascii=False) + "\n"


def _header(cwd: str) -> dict[str, object]:
    return {"type": "session", "version": 3, "id": SESSION_ID,
            "timestamp": "2026-03-03T10:00:00.000Z", "cwd": cwd}  # fmt: skip


def _prompt(entry_id: str, parent: str | None, text: str) -> dict[str, object]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-03-03T10:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1}}  # fmt: skip


def _two_copies(root: Path) -> Corpus:
    """One session in two project folders, the second gone on by a prompt."""
    name = f"2026-03-03T10-00-00-000Z_{SESSION_ID}.jsonl"
    old, new = root / encode_cwd("/home/bob/old"), root / encode_cwd("/home/bob/new")
    old.mkdir(parents=True)
    new.mkdir(parents=True)
    first = _prompt("m1", None, "first")
    (old / name).write_text(_line(_header("/home/bob/old")) + _line(first), encoding="utf-8")
    longer = _line(_header("/home/bob/new")) + _line(first) + _line(_prompt("m2", "m1", "next"))
    (new / name).write_text(longer, encoding="utf-8")
    return Corpus(root, [old / name, new / name], [])


def test_one_session_in_two_files_goes_up_once_and_stays(fake_hub: FakeHub, tmp_path: Path) -> None:
    corpus = _two_copies(tmp_path / "sessions")
    first = publish(fake_hub, corpus)
    assert first.exit_code == 0, first.output
    assert "is an earlier state of" in first.stderr
    rows = index_rows(fake_hub)
    assert [(r["id"], r["entries"], r["project"]) for r in rows] == [
        (SESSION_ID, 2, "~/new")  # the larger copy
    ]
    commits = len(fake_hub.commits)
    for _ in range(2):  # unchanged files: nothing to send, nothing moves
        again = publish(fake_hub, corpus)
        assert again.exit_code == 0, again.output
        assert "no commit" in again.stdout
    assert len(fake_hub.commits) == commits
    assert index_rows(fake_hub) == rows
    assert_consistent(fake_hub)


def test_a_lone_surrogate_goes_up_as_a_replacement_character(
    fake_hub: FakeHub, tmp_path: Path
) -> None:
    folder = tmp_path / "sessions" / encode_cwd("/home/bob/surr")
    folder.mkdir(parents=True)
    path = folder / f"2026-03-03T10-00-00-000Z_{SESSION_ID}.jsonl"
    raw = _line(_header("/home/bob/surr")) + _line(_prompt("m1", None, "cut mid-emoji X"))
    path.write_text(raw.replace("X", "\\ud83d and a pair \\ud83d\\ude00"), encoding="utf-8")
    before = path.read_bytes()
    done = publish(fake_hub, Corpus(tmp_path / "sessions", [path], []))
    assert done.exit_code == 0, done.output
    assert "1 half character (a lone surrogate" in done.stderr
    (published,) = [v for k, v in fake_hub.files("alice/sessions").items() if "sessions/" in k]
    text = published.decode("utf-8")
    assert "cut mid-emoji \\ufffd and a pair 😀" in text or (
        "cut mid-emoji \\ufffd and a pair \\ud83d\\ude00" in text
    )
    assert "\\ud83d and" not in text
    assert path.read_bytes() == before  # the local file keeps what it holds


def test_lone_surrogates_become_replacement_escapes_as_json_reads_them() -> None:
    cases = [  # JSON text as written with its surrogates unescaped
        ('"x\ud83d y"', ('"x\\ufffd y"', 1)),
        ('"\ud83d\ude00"', ('"\U0001f600"', 0)),  # two halves of a pair: one character
        ('"\\\\ud83d"', ('"\\\\ud83d"', 0)),  # an escaped backslash, then text
        ('"\ude00\ud83d"', ('"\\ufffd\\ufffd"', 2)),  # low before high: two halves
        ('"plain"', ('"plain"', 0)),
    ]
    for text, expected in cases:
        assert surrogates_as_replacement_escapes(text) == expected
        fixed = json.loads(expected[0])
        fixed.encode("utf-8")  # no half character is left to refuse


def _other_agents(tmp_path: Path) -> dict[str, Path]:
    claude = tmp_path / "claude.jsonl"
    claude.write_bytes(next((DATA / "claude-code").glob("*.jsonl")).read_bytes())
    codex = tmp_path / "codex.jsonl"
    codex.write_bytes(next((DATA / "codex").glob("*.jsonl")).read_bytes())
    headerless = tmp_path / "headerless.jsonl"
    lines = (FIXTURES / "every-entry-type.jsonl").read_text(encoding="utf-8").splitlines(True)
    headerless.write_text("".join(lines[1:]), encoding="utf-8")
    return {"a Claude Code transcript": claude, "a Codex session file": codex,
            "a Pi session file": headerless}  # fmt: skip


def test_o_and_report_never_overwrite_another_agents_session(tmp_path: Path) -> None:
    source = str(FIXTURES / "every-entry-type.jsonl")
    for kind, target in _other_agents(tmp_path).items():
        before = target.read_bytes()
        for args in (
            ["redact", source, "-o", str(target)],
            ["export", source, "-o", str(tmp_path / "e.html"), "--report", str(target)],
            ["share", source, "--dry-run", "--report", str(target)],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 1, (args, result.output)
            assert f"refusing to overwrite {target}, {kind}" in result.stderr, result.stderr
            assert target.read_bytes() == before
    notes = tmp_path / "notes.jsonl"  # JSON lines of something else are still a plain file
    notes.write_text('{"level": "info", "msg": "started"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["redact", source, "-o", str(notes)])
    assert result.exit_code == 0, result.output


def test_the_index_and_card_say_whose_sessions_they_are(fake_hub: FakeHub, tmp_path: Path) -> None:
    """A dataset of Claude Code and Codex sessions was titled "Pi coding-agent sessions",
    and no row said which agent wrote it."""
    claude = tmp_path / "claude.jsonl"
    claude.write_bytes(next((DATA / "claude-code").glob("*.jsonl")).read_bytes())
    codex = tmp_path / "codex.jsonl"
    codex.write_bytes(next((DATA / "codex").glob("*.jsonl")).read_bytes())
    pi = tmp_path / "pi.jsonl"
    pi.write_bytes((FIXTURES / "pi-branched-1.jsonl").read_bytes())
    args = ["--endpoint", fake_hub.url, "--token", TOKEN]
    result = CliRunner().invoke(cli, ["publish", "alice/work", str(claude), str(codex), *args])
    assert result.exit_code == 0, result.output
    card = fake_hub.files("alice/work")["README.md"].decode("utf-8")
    assert "\n# Coding-agent sessions: work\n" in card
    assert "Sessions of coding agents (Claude Code, Codex)" in card
    assert "cost (USD, as recorded, else from list prices)" in card
    rows = [json.loads(x) for x in fake_hub.files("alice/work")["index.jsonl"].splitlines()]
    assert sorted(r["agent"] for r in rows) == ["Claude Code", "Codex"]
    assert list(rows[0])[:2] == ["id", "agent"]
    result = CliRunner().invoke(cli, ["publish", "alice/mine", str(pi), *args])
    assert result.exit_code == 0, result.output
    card = fake_hub.files("alice/mine")["README.md"].decode("utf-8")
    assert "\n# Pi coding-agent sessions: mine\n" in card and "Sessions of the [Pi]" in card
    assert [
        json.loads(x)["agent"] for x in fake_hub.files("alice/mine")["index.jsonl"].splitlines()
    ] == ["Pi"]


def test_a_dataset_holding_both_copies_keeps_the_larger_where_it_was(
    fake_hub: FakeHub, tmp_path: Path, monkeypatch
) -> None:
    """0.2.40 published both files of one session (``NAME.jsonl``, the larger, and
    ``NAME-2.jsonl``): the next run moved the larger onto ``NAME-2.jsonl`` (sorted first),
    and --prune then deleted ``NAME.jsonl``, breaking its links (review)."""
    from exporter.publish import hub

    corpus = _two_copies(tmp_path / "sessions")
    kept = monkeypatch.context()
    with kept as patch:
        patch.setattr(hub, "one_per_session", lambda sources: (sources, [], []))  # as 0.2.40
        assert publish(fake_hub, corpus).exit_code == 0
    before = {r["path"]: r["entries"] for r in index_rows(fake_hub)}
    assert len(before) == 2
    larger = next(path for path, entries in before.items() if entries == 2)
    for _ in range(2):
        again = publish(fake_hub, corpus)
        assert again.exit_code == 0, again.output
        assert {r["path"]: r["entries"] for r in index_rows(fake_hub)}[larger] == 2
    pruned = publish(fake_hub, corpus, "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert [(r["path"], r["entries"]) for r in index_rows(fake_hub)] == [(larger, 2)]


def test_lone_surrogates_are_replaced_in_linear_time_after_a_run_of_backslashes() -> None:
    text = "\\" * 200_000 + "u001b \ud83d"  # a run, then a real half
    with cpu_time_limit(5):  # the escapes' parser this replaced was quadratic: a minute and more
        assert surrogates_as_replacement_escapes(text) == ("\\" * 200_000 + "u001b \\ufffd", 1)


def test_another_agents_session_with_a_long_first_line_is_not_overwritten(
    tmp_path: Path,
) -> None:
    """A transcript whose first line holds a pasted picture is longer than the first 64 KB
    a look read: it was overwritten as "nothing" (review)."""
    claude = tmp_path / "claude.jsonl"
    lines = next((DATA / "claude-code").glob("*.jsonl")).read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["padding"] = "A" * 200_000  # a picture's base64, say
    claude.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    before = claude.read_bytes()
    source = str(FIXTURES / "every-entry-type.jsonl")
    result = CliRunner().invoke(cli, ["redact", source, "-o", str(claude)])
    assert result.exit_code == 1 and "a Claude Code transcript" in result.stderr, result.output
    assert claude.read_bytes() == before
    log = tmp_path / "api.jsonl"  # a known type and an id, but no tree: not a session
    log.write_text('{"type": "message", "id": "msg_01", "role": "assistant"}\n', encoding="utf-8")
    assert CliRunner().invoke(cli, ["redact", source, "-o", str(log)]).exit_code == 0


def test_deny_reads_the_file_name_not_its_folder(fake_hub: FakeHub, tmp_path: Path) -> None:
    """--deny sessions, 2026 or path denied every session: the check read the dataset path
    (``sessions/2026-03/…``) and the record's key (review)."""
    corpus = _two_copies(tmp_path / "sessions")
    for pattern in ("sessions", "2026-03/", "path"):
        result = publish(fake_hub, corpus, "--deny", pattern, "--dry-run")
        assert result.exit_code == 0, (pattern, result.output)
        assert "denied" not in result.stderr, (pattern, result.stderr)
