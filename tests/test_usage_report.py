"""`stats --all`: usage and cost over many sessions, per model, project and day."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.inspect_cli import stats_document
from exporter.loader import load_session
from tests.conftest import FIXTURE_FILES


def _run(*args: str) -> Any:
    result = CliRunner().invoke(cli, ["stats", "--all", *args])
    assert result.exit_code == 0, result.output
    return result


def _assistant(entry_id: str, parent: str | None, when: str, model: str, cost: float) -> dict:
    parts = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}
    usage = {"input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 1, "totalTokens": 116,
             "cost": parts}  # fmt: skip
    message = {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
               "provider": "p", "model": model, "usage": usage, "stopReason": "stop"}  # fmt: skip
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when,
            "message": message}  # fmt: skip


def _session(folder: Path, cwd: str, name: str, turns: list[tuple[str, str, float]]) -> Path:
    """A session in Pi's folder for ``cwd``: a prompt, then one assistant turn per item
    (time, model, cost), the last two as siblings (a fork: both branches were paid for)."""
    project = folder / encode_cwd(cwd)
    project.mkdir(parents=True, exist_ok=True)
    lines: list[dict] = [
        {"type": "session", "version": 3, "id": name, "timestamp": turns[0][0], "cwd": cwd},
        {"type": "message", "id": f"{name}-u", "parentId": None, "timestamp": turns[0][0],
         "message": {"role": "user", "content": "go"}},
    ]  # fmt: skip
    parent = f"{name}-u"
    for number, (when, model, cost) in enumerate(turns):
        entry_id = f"{name}-a{number}"
        lines.append(_assistant(entry_id, parent, when, model, cost))
        if number < len(turns) - 2:
            parent = entry_id
    path = project / f"2026-11-01T00-00-00-000Z_{name}.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def two_projects(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    _session(root, "/work/alpha", "s1", [
        ("2026-11-01T12:00:00.000Z", "model-a", 1.0),
        ("2026-11-20T12:00:00.000Z", "model-a", 2.0),
        ("2026-11-20T12:05:00.000Z", "model-b", 4.0),
    ])  # fmt: skip
    _session(root, "/work/beta", "s2", [
        ("2026-11-02T12:00:00.000Z", "model-b", 8.0),
        ("2026-11-21T12:00:00.000Z", "model-b", 16.0),
    ])  # fmt: skip
    return root


def test_every_branch_model_project_and_day_is_counted(two_projects: Path) -> None:
    document = json.loads(_run("--json", "--sessions-dir", str(two_projects)).stdout)
    assert document["sessions_read"] == 2 and document["failed"] == []
    assert document["total"]["cost"] == 31.0 and document["total"]["turns"] == 5
    costs = {row["model"]: (row["cost"], row["sessions"]) for row in document["by_model"]}
    assert costs == {"p/model-b": (28.0, 2), "p/model-a": (3.0, 1)}
    assert [row["model"] for row in document["by_model"]] == ["p/model-b", "p/model-a"]
    projects = {row["project"]: row["cost"] for row in document["by_project"]}
    assert projects == {"/work/alpha": 7.0, "/work/beta": 24.0}
    days = [(row["day"], row["cost"]) for row in document["by_day"]]
    assert days == [("2026-11-01", 1.0), ("2026-11-02", 8.0), ("2026-11-20", 6.0),
                    ("2026-11-21", 16.0)]  # fmt: skip


def test_since_counts_only_later_turns_and_cwd_one_project(two_projects: Path) -> None:
    document = json.loads(
        _run("--json", "--sessions-dir", str(two_projects), "--since", "2026-11-10").stdout
    )
    assert document["total"]["cost"] == 22.0 and document["total"]["turns"] == 3
    assert {row["day"] for row in document["by_day"]} == {"2026-11-20", "2026-11-21"}
    alpha = json.loads(
        _run("--json", "--sessions-dir", str(two_projects), "--cwd", "/work/alpha").stdout
    )
    assert alpha["total"]["cost"] == 7.0 and alpha["cwd"] == "/work/alpha"
    assert [row["project"] for row in alpha["by_project"]] == ["/work/alpha"]


def test_the_tables_name_the_scope_and_end_in_totals(two_projects: Path) -> None:
    text = _run("--sessions-dir", str(two_projects), "--since", "2026-11-10").stdout
    assert text.startswith("Usage of 2 sessions (all projects, turns since 2026-11-10")
    for title in ("By model", "By project", "By day (local time)"):
        assert f"\n{title}\n" in text
    totals = [line for line in text.splitlines() if line.startswith("total ")]
    assert len(totals) == 3 and all(line.endswith("$22.00") for line in totals)


def test_the_report_agrees_with_each_session_s_stats(tmp_path: Path) -> None:
    """The fixtures (v1 and v3, forks, compactions, damage) summed one by one with
    `stats --json` give the report's totals, and each table adds up to them."""
    root = tmp_path / "sessions" / "--project--"
    root.mkdir(parents=True)
    for path in FIXTURE_FILES:
        shutil.copy(path, root / path.name)
    one = json.loads(_run("--json", "--sessions-dir", str(root.parent), "-j", "1").stdout)
    two = json.loads(_run("--json", "--sessions-dir", str(root.parent), "-j", "2").stdout)
    assert one == two
    each = [stats_document(load_session(path))["usage"]["all"] for path in FIXTURE_FILES]
    assert one["sessions_read"] == len(FIXTURE_FILES)
    for key in ("turns", "input", "output", "cache_read", "cache_write"):
        assert one["total"][key] == sum(e[key] for e in each), key
        for table in ("by_model", "by_project", "by_day"):
            assert sum(row[key] for row in one[table]) == one["total"][key], (table, key)
    assert math.isclose(one["total"]["cost"], sum(e["cost"] for e in each), abs_tol=1e-5)
    for path in FIXTURE_FILES:  # read-only
        assert (root / path.name).read_bytes() == path.read_bytes()


def test_an_unreadable_file_is_a_warning_and_the_rest_is_counted(two_projects: Path) -> None:
    bad = next(two_projects.iterdir()) / "2026-11-05T00-00-00-000Z_bad.jsonl"
    bad.write_bytes(b"\x00\x01 not json at all\n")
    result = _run("--json", "--sessions-dir", str(two_projects))
    document = json.loads(result.stdout)
    assert document["sessions_read"] == 2 and document["total"]["cost"] == 31.0
    assert [Path(f["path"]).name for f in document["failed"]] == [bad.name]
    assert "warning" in result.stderr and bad.name in result.stderr


@pytest.mark.parametrize(
    "args, code, said",
    [
        (["stats", "--all", "some-session"], 1, "SESSION and --cwd/--all both choose"),
        (["stats", "--since", "7d"], 1, "add --all or --cwd DIR"),
        (["stats", "--all", "--since", "yesterday-ish"], 1, "--since"),
    ],
)
def test_wrong_combinations_are_clear_errors(
    two_projects: Path, args: list[str], code: int, said: str
) -> None:
    result = CliRunner().invoke(cli, [*args, "--sessions-dir", str(two_projects)])
    assert result.exit_code == code and said in result.output, result.output
    assert "Traceback" not in result.output


def test_no_sessions_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(tmp_path)])
    assert result.exit_code == 2 and "no Pi sessions" in result.output


def test_a_session_that_cannot_be_read_is_named_once(tmp_path: Path, fixtures_dir: Path) -> None:
    """The warning "p/blank.jsonl: p/blank.jsonl: file is empty, ..." named the file twice
    (review 2026-12-02): the loader's message already starts with it."""
    project = tmp_path / "--p--"
    project.mkdir()
    (project / "blank.jsonl").write_bytes(b"")
    (project / "sampler.jsonl").write_bytes((fixtures_dir / "every-entry-type.jsonl").read_bytes())
    result = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.stderr.splitlines() if "blank.jsonl" in line)
    assert warning.count("blank.jsonl") == 1 and warning.endswith("; left out"), warning
    doc = CliRunner().invoke(cli, ["stats", "--all", "--sessions-dir", str(tmp_path), "--json"])
    (failed,) = json.loads(doc.stdout)["failed"]
    assert failed["error"] == "file is empty, not a Pi session", failed


def test_a_copy_of_a_session_is_counted_once(two_projects: Path) -> None:
    """A session copied to a second folder (a backup, another checkout of the project), or
    a copy taken before it grew, doubled what `stats --all` said was spent."""
    alpha = next((two_projects / encode_cwd("/work/alpha")).glob("*.jsonl"))
    backup = two_projects / encode_cwd("/work/alpha-backup")
    backup.mkdir()
    shutil.copyfile(alpha, backup / alpha.name)  # the same file
    lines = alpha.read_text(encoding="utf-8").splitlines()
    shutil.copyfile(alpha, backup / "older.jsonl")
    (backup / "older.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    document = json.loads(_run("--sessions-dir", str(two_projects), "--json").output)
    assert document["total"]["cost"] == pytest.approx(31.0)  # 1 + 2 + 4 + 8 + 16
    assert document["total"]["turns"] == 5
    assert document["repeated_turns"] == 3 + 2
    # (the shorter copy adds nothing when read after the file, everything when read first)
    assert document["copies"] in (1, 2)
    text = _run("--sessions-dir", str(two_projects)).output
    assert (
        "of another file not counted again; 5 turns found in more than one file counted once"
        in (text)
    )  # (it said "1 copy of one counted": a reader asked one what)
    # a different session with the same entry ids is not a copy: its own times and usage
    other = two_projects / encode_cwd("/work/gamma")
    _session(two_projects, "/work/gamma", "s1", [
        ("2026-11-03T12:00:00.000Z", "model-a", 32.0),
        ("2026-11-04T12:00:00.000Z", "model-a", 64.0),
    ])  # fmt: skip
    assert other.is_dir()
    document = json.loads(_run("--sessions-dir", str(two_projects), "--json").output)
    assert document["total"]["cost"] == pytest.approx(31.0 + 96.0)
