"""`stats --all` and the site's index count a turn once, in the file it came from (review s63).

1. A fork (`pi --fork`: Pi's SessionManager.forkFrom copies the parent's entries under a new
   header naming the parent in ``parentSession``) took its parent's turns whenever its file
   was the newer one: the bill moved between projects with a ``touch``, and the site called
   the parent "a copy" of its fork.
2. A v1 session's backup and the same file after Pi migrated it in place (random 8-hex ids
   where the loader makes up ``L<line>`` ones) were counted twice.
3. Two unrelated Codex sessions whose first answers said the same with the same tokens were
   one session and its copy.
4. `stats --json` did not say how many turns had no usage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd, session_files
from exporter.site import build_site

pytest_plugins = ["tests.browser_util", "tests.test_site_s62"]  # (its `served` site, `page` tab)

PARENT_ID = "01a229f4-a346-7019-99dc-c72325edfccd"
FORK_ID = "01a24c8e-15e8-7295-89aa-351159db066e"


def _user(when: str, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "message", "timestamp": when, "message": {"role": "user", "content": content}}


def _answer(when: str, text: str, cost: float, *, usage: bool = True) -> dict[str, Any]:
    """An assistant entry as Pi writes it (without id: the caller gives it one, or not)."""
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    message |= {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-x"}
    if usage:
        parts = {"input": cost, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}
        message["usage"] = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 1}
        message["usage"] |= {"totalTokens": 116, "cost": parts}
    message |= {"stopReason": "stop", "timestamp": 1764000000000}
    return {"type": "message", "timestamp": when, "message": message}


def _chained(entries: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """``entries`` with Pi's ids and parent ids (one chain), as v3 files and Pi's migration
    of a v1 file (migrateV1ToV2) write them."""
    out, parent = [], None
    for entry, entry_id in zip(entries, ids, strict=True):
        out.append({**entry, "id": entry_id, "parentId": parent})
        parent = entry_id
    return out


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _conversation() -> list[dict[str, Any]]:
    """Three paid answers ($1, $2, $4) after three prompts."""
    return [
        _user("2026-11-30T00:57:10.000Z", "build the parser"),
        _answer("2026-11-30T00:57:20.000Z", "parser built", 1.0),
        _user("2026-11-30T01:00:00.000Z", "add tests"),
        _answer("2026-11-30T01:00:30.000Z", "tests added", 2.0),
        _user("2026-11-30T01:10:00.000Z", "fix the bug"),
        _answer("2026-11-30T01:10:40.000Z", "bug fixed", 4.0),
    ]


def _parent_and_fork(
    root: Path, *, fork_cwd: str = "/other/project", fork_made: str = "2026-12-06T18:11:49.865Z"
) -> tuple[Path, Path]:
    """A session of /home/dev/webapp and Pi's fork of it into ``fork_cwd`` (forkFrom: a new
    header naming the parent's path, then every entry of the parent as it was), which then
    got a name of its own."""
    entries = _chained(_conversation(), [f"e{n:07x}" for n in range(6)])
    header = {"type": "session", "version": 3, "id": PARENT_ID}
    header |= {"timestamp": "2026-11-30T00:57:08.167Z", "cwd": "/home/dev/webapp"}
    parent = _write(
        root / encode_cwd("/home/dev/webapp") / f"2026-11-30T00-57-08-167Z_{PARENT_ID}.jsonl",
        [header, *entries],
    )
    fork_header = {"type": "session", "version": 3, "id": FORK_ID, "timestamp": fork_made}
    fork_header |= {"cwd": fork_cwd, "parentSession": str(parent)}
    name = {"type": "session_info", "id": "f0000001", "parentId": entries[-1]["id"]}
    name |= {"timestamp": fork_made, "name": "forked work"}
    fork = _write(
        root / encode_cwd(fork_cwd) / f"2026-12-06T18-11-49-865Z_{FORK_ID}.jsonl",
        [fork_header, *entries, name],
    )
    return parent, fork


def _newest(first: Path, second: Path) -> None:
    """``first`` modified after ``second``: the order the listing reads them in."""
    os.utime(second, (1_900_000_000, 1_900_000_000))
    os.utime(first, (2_000_000_000, 2_000_000_000))


def _stats_all(root: Path, *more: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["stats", "--all", "--json", "--sessions-dir", str(root), *more]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _by_project(document: dict[str, Any]) -> dict[str, float]:
    return {row["project"]: row["cost"] for row in document["by_project"]}


# --- 1. a fork's copied turns are its parent's -----------------------------------------------


def test_a_forks_copied_turns_are_billed_to_its_parent_however_the_files_were_touched(
    tmp_path: Path,
) -> None:
    """The $7 moved to /other/project when the fork was the newer file, and back to
    /home/dev/webapp after a `touch` of the parent: discovery lists the newest first, and
    the first file read took every turn it holds."""
    root = tmp_path / "sessions"
    parent, fork = _parent_and_fork(root)
    for newer, older in ((fork, parent), (parent, fork)):
        _newest(newer, older)
        document = _stats_all(root)
        assert _by_project(document) == {"/home/dev/webapp": 7.0}, newer.name
        assert document["copies"] == 1 and document["repeated_turns"] == 3
        assert document["total"]["turns"] == 3 and document["total"]["cost"] == 7.0


def test_the_parent_a_fork_names_counts_first_even_when_made_later(tmp_path: Path) -> None:
    """The header's ``parentSession`` decides before the times do (a clock set back made
    the fork's header earlier than its parent's); Pi writes the path as `pi --fork` was
    given it, here relative to where Pi ran, the fork's project folder."""
    root = tmp_path / "sessions"
    work = tmp_path / "work"
    work.mkdir()
    parent, fork = _parent_and_fork(root, fork_cwd=str(work), fork_made="2020-01-01T00:00:00Z")
    lines = fork.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["parentSession"] = os.path.relpath(parent, work)
    fork.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    _newest(fork, parent)
    document = _stats_all(root)
    assert _by_project(document) == {"/home/dev/webapp": 7.0}
    assert document["copies"] == 1


def _expect(locator: Any) -> Any:
    from playwright.sync_api import expect

    return expect(locator)


@pytest.mark.browser
def test_the_site_marks_the_fork_a_copy_of_its_parent_not_the_parent_of_its_fork(
    tmp_path: Path, served: tuple[Path, str], page: Any
) -> None:
    """The index read the files newest first, as listed: with the fork the newer file, the
    parent's row said "copy of forked work, counted there" and /other/project had its $7."""
    root = tmp_path / "sessions"
    parent, fork = _parent_and_fork(root)
    _newest(fork, parent)
    site, base = served
    report = build_site(session_files(root), site, jobs=1, progress=False)
    assert not report.failed, report.failed
    page.goto(f"{base}/index.html")
    rows = page.locator("#session-table tbody tr")
    _expect(rows).to_have_count(2)
    forked = rows.filter(has_text="forked work")
    _expect(forked.locator(".copy")).to_have_text("copy of build the parser, counted there")
    _expect(forked.locator(".copy a")).to_have_text("build the parser")
    original = rows.filter(has_not_text="forked work")
    _expect(original).to_have_count(1)
    _expect(original.locator(".copy")).to_have_count(0)
    projects = page.locator("table.projects tbody tr")
    _expect(projects.filter(has_text="webapp")).to_contain_text("$7.00")
    _expect(projects.filter(has_text="/other/project")).not_to_contain_text("$7.00")


# --- 2. a v1 session's backup and its migrated file ------------------------------------------


def _v1_session(session_id: str, answers: list[dict[str, Any]] | None = None) -> list[dict]:
    """A v1 file as Pi wrote it before ids: a header without a version, entries without ids."""
    header = {"type": "session", "id": session_id, "timestamp": "2026-11-30T00:57:08.167Z"}
    header |= {"cwd": "/home/dev/old", "provider": "anthropic", "modelId": "claude-x"}
    return [header, *(answers if answers is not None else _conversation())]


def _migrated(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What Pi writes over a v1 file when it opens it (migrateV1ToV2, then v3): the header's
    version, each entry a random 8-hex id and its predecessor as parent."""
    header, *entries = lines
    ids = ["3f9a01c2", "b7e24d90", "0c5d8e13", "e41f7a66", "9a2b3c4d", "5e6f7a8b"]
    return [{**header, "version": 3}, *_chained(entries, ids[: len(entries)])]


def test_a_v1_sessions_backup_and_the_file_pi_migrated_count_each_turn_once(
    tmp_path: Path,
) -> None:
    """906 turns and $60.66 for pi-large-session's 453 turns and $30.33: the backup's turns
    were known by the loader's ``L<line>`` ids, the migrated file's by Pi's random ones."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/dev/old")
    backup = _write(folder / "backup.jsonl", _v1_session("v1-session"))
    live = _write(folder / "live.jsonl", _migrated(_v1_session("v1-session")))
    for newer, older in ((live, backup), (backup, live)):
        _newest(newer, older)
        document = _stats_all(root)
        assert document["total"]["turns"] == 3 and document["total"]["cost"] == 7.0
        assert document["repeated_turns"] == 3 and document["copies"] == 1
    site = tmp_path / "site"
    assert not build_site(session_files(root), site, jobs=1, progress=False).failed
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.count('<span class="badge">copy</span> of') == 1


def test_answers_alike_in_time_and_usage_but_not_in_words_are_two_turns(tmp_path: Path) -> None:
    """The key of an id-less turn is its time stamps, usage and words: another v1 session
    whose answer on the same line came at the same millisecond with the same usage, but
    said something else, is not a copy (its ``L<line>`` id, time and usage matched); nor
    are two sessions' answers with ids of their own matched by their words."""
    root = tmp_path / "sessions"
    folder = root / encode_cwd("/home/dev/old")
    _write(folder / "one.jsonl", _v1_session("v1-one"))
    other = [{**entry} for entry in _conversation()]
    other[1] = _answer("2026-11-30T00:57:20.000Z", "a different answer", 1.0)
    _write(folder / "two.jsonl", _v1_session("v1-two", other))
    document = _stats_all(root)
    assert document["total"]["turns"] == 6 - 2  # the answers alike in every way: one each
    assert document["total"]["cost"] == 7.0 + 1.0
    assert document["repeated_turns"] == 2 and document["copies"] == 0
    # the same in v3 files, each answer with an id of its own: nothing repeated
    for name, session_id in (("three", "v3-three"), ("four", "v3-four")):
        header = {"type": "session", "version": 3, "id": session_id, "cwd": "/home/dev/new"}
        header["timestamp"] = "2026-11-30T00:57:08.167Z"
        ids = [f"{name[:2]}{n:06x}" for n in range(6)]
        _write(
            root / encode_cwd("/home/dev/new") / f"{name}.jsonl",
            [header, *_chained(_conversation(), ids)],
        )
    document = _stats_all(root)
    assert _by_project(document)["/home/dev/new"] == 14.0


# --- 3. Codex sessions are matched to their parent only --------------------------------------


def _rollout(root: Path, session_id: str, day: str, cwd: str, **meta: Any) -> Path:
    """A Codex rollout: its header, then "hi" answered in the same words and tokens as any
    other session's first answer (the same system prompt, the same greeting)."""

    def line(time: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"{day}T{time}.000Z", "type": kind, "payload": payload}

    counts = {"input_tokens": 4200, "cached_input_tokens": 0, "output_tokens": 14}
    counts |= {"reasoning_output_tokens": 0, "total_tokens": 4214}
    info = {"total_token_usage": counts, "last_token_usage": counts}
    header = {"id": session_id, "timestamp": f"{day}T09:00:00.000Z", "cwd": cwd}
    header |= {"originator": "codex_cli_rs", "cli_version": "0.77.0", **meta}
    lines = [
        line("09:00:00", "session_meta", header),
        line("09:00:01", "response_item", _said("user", "input_text", "hi")),
        line("09:00:02", "turn_context", {"cwd": cwd, "model": "gpt-5.1-codex"}),
        line("09:00:05", "response_item", _said("assistant", "output_text", "Hi! What now?")),
        line("09:00:05", "event_msg", {"type": "token_count", "info": info}),
    ]
    folder = root.joinpath(*day.split("-"))
    return _write(folder / f"rollout-{day}T09-00-00-{session_id}.jsonl", lines)


def _said(role: str, kind: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_unrelated_codex_sessions_that_answer_alike_are_not_copies(tmp_path: Path) -> None:
    """Every Codex turn was known by its place, usage and words, whatever its session: the
    older of two sessions (other ids, projects and days) was "a copy" of the newer, its day
    and project gone from the tables."""
    root = tmp_path / "codex"
    _rollout(root, "019b0000-0000-7000-8000-00000000000a", "2025-12-01", "/home/dev/alpha")
    _rollout(root, "019b0000-0000-7000-8000-00000000000b", "2025-12-09", "/home/dev/beta")
    document = _stats_all(root)
    assert document["total"]["turns"] == 2
    assert document["copies"] == 0 and document["repeated_turns"] == 0
    assert set(_by_project(document)) == {"/home/dev/alpha", "/home/dev/beta"}
    assert len(document["by_day"]) == 2
    site = tmp_path / "site"
    assert not build_site(session_files(root), site, jobs=1, progress=False).failed
    assert 'class="copy"' not in (site / "index.html").read_text(encoding="utf-8")


def test_a_codex_fork_of_a_fork_repeats_its_parents_turns_once(tmp_path: Path) -> None:
    """A Codex fork copies its parent's lines (its header among them) under new time
    stamps: a fork's turns are matched against its parent's, and a fork of it against the
    fork's, wherever each came from."""
    root = tmp_path / "codex"
    first = "019b0000-0000-7000-8000-0000000000a1"
    second = "019b0000-0000-7000-8000-0000000000a2"
    third = "019b0000-0000-7000-8000-0000000000a3"
    parent = _rollout(root, first, "2025-12-01", "/home/dev/alpha")
    copied = [json.loads(line) for line in parent.read_text(encoding="utf-8").splitlines()]
    for session_id, parent_id, day in (
        (second, first, "2025-12-02"),
        (third, second, "2025-12-03"),
    ):
        fork = _rollout(root, session_id, day, "/home/dev/beta", forked_from_id=parent_id)
        lines = [json.loads(line) for line in fork.read_text(encoding="utf-8").splitlines()]
        restamped = [{**line, "timestamp": f"{day}T08:59:59.000Z"} for line in copied]
        _write(fork, [lines[0], *restamped])  # the parent's lines, no turn of its own
        copied = [lines[0], *restamped]
    document = _stats_all(root)
    assert document["total"]["turns"] == 1
    assert document["copies"] == 2 and document["repeated_turns"] == 2
    assert _by_project(document) == {"/home/dev/alpha": document["total"]["cost"]}


# --- 4. turns without usage in --json -----------------------------------------------------------


def test_stats_json_says_how_many_turns_had_no_usage(tmp_path: Path) -> None:
    """An answer without ``usage`` (a failed request) counts as a turn of zero tokens; the
    tables and the page say so, `--json` did not."""
    entries = _conversation()
    entries[3] = _answer("2026-11-30T01:00:30.000Z", "", 0.0, usage=False)
    header = {"type": "session", "version": 3, "id": "no-usage", "cwd": "/home/dev/x"}
    header["timestamp"] = "2026-11-30T00:57:08.167Z"
    root = tmp_path / "sessions"
    ids = [f"n{n:07x}" for n in range(6)]
    path = _write(root / encode_cwd("/home/dev/x") / "s.jsonl", [header, *_chained(entries, ids)])
    result = CliRunner().invoke(cli, ["stats", "--json", str(path)])
    assert result.exit_code == 0, result.output
    usage = json.loads(result.stdout)["usage"]
    assert usage["all"]["turns"] == 3 and usage["all"]["turns_without_usage"] == 1
    assert usage["by_model"][0]["turns_without_usage"] == 1
    document = _stats_all(root)
    assert document["total"]["turns_without_usage"] == 1
    assert sum(row["turns_without_usage"] for row in document["by_day"]) == 1


def test_a_v1_session_and_its_redacted_copy_count_each_turn_once(tmp_path: Path) -> None:
    """A v1 turn was known only by its times, usage and words once v1 files got the
    migrated file's key, and `redact` changes the words (a home path, a signature): every
    turn of a v1 session and of its redacted copy was billed twice (review s63)."""
    shared = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).parents[2] / "shared")
    project = tmp_path / "sessions" / "--p--"
    project.mkdir(parents=True)
    original = project / "a.jsonl"
    original.write_bytes((shared / "fixtures" / "pi-v1-before-compaction.jsonl").read_bytes())
    copy = project / "a.redacted.jsonl"
    done = CliRunner().invoke(cli, ["redact", str(original), "-o", str(copy)])
    assert done.exit_code == 0, done.output
    both = _stats_all(tmp_path / "sessions")
    copy.unlink()
    alone = _stats_all(tmp_path / "sessions")
    assert both["total"]["turns"] == alone["total"]["turns"] > 400
    assert both["total"]["cost"] == alone["total"]["cost"]
    assert both["copies"] == 1
