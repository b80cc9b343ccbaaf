"""`pi-session publish` (bug hunt 68): copies of one session in two project folders keep
their own dataset paths when a run selects one project; a session whose turns' costs add up
past the largest float never writes ``Infinity`` into index.jsonl; and the old path of a
file whose name holds a secret given since is no longer listed (index, card, manifest).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.discover import encode_cwd
from exporter.publish.dataset_card import render_card, render_index
from exporter.publish.hub_state import RemoteState
from exporter.redact import RedactionPolicy
from tests.fakes.hub import TOKEN, FakeHub, isolate_hub

REPO_ID = "alice/s68"
FORK_ONE, FORK_TWO = "/home/dev/fork1", "/home/dev/fork2"
FORK_NAME = "2025-06-01T10-00-00-000Z_fork-0001.jsonl"


@pytest.fixture(autouse=True)
def hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_hub(monkeypatch, tmp_path)


@pytest.fixture
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as fake:
        yield fake


def _publish(fake: FakeHub, root: Path, *selection: str) -> Result:
    args = ["publish", REPO_ID, *selection, "--sessions-dir", str(root)]
    args += ["--endpoint", fake.url, "--token", TOKEN, "-j", "1"]
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _strict_json(text: str) -> Any:
    """JSON as the standard reads it: no Infinity, -Infinity or NaN."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _rows(fake: FakeHub) -> list[dict[str, Any]]:
    index = fake.files(REPO_ID)["index.jsonl"].decode("utf-8")
    return [_strict_json(line) for line in index.splitlines()]


def _said(text: str, last_id: str) -> bytes:
    """A user message on the leaf ``last_id``, as a JSONL line."""
    entry = {
        "type": "message",
        "id": "said-" + text.replace(" ", "-"),
        "parentId": last_id,
        "timestamp": "2025-06-01T11:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 0},
    }
    return json.dumps(entry).encode("utf-8") + b"\n"


def _went_on(path: Path, text: str) -> None:
    last = json.loads(path.read_bytes().splitlines()[-1])["id"]
    with open(path, "ab") as handle:
        handle.write(_said(text, last))


@pytest.fixture
def forks(tmp_path: Path, fixtures_dir: Path) -> tuple[Path, Path, Path]:
    """One session copied into two project folders (the same bytes, header too), each copy
    gone on with a message of its own: ``(sessions root, copy ONE, copy TWO)``."""
    root = tmp_path / "sessions"
    copies = []
    for project, text in ((FORK_ONE, "branch ONE"), (FORK_TWO, "branch TWO")):
        folder = root / encode_cwd(project)
        folder.mkdir(parents=True)
        copy = folder / FORK_NAME
        copy.write_bytes((fixtures_dir / "every-entry-type.jsonl").read_bytes())
        _went_on(copy, text)
        copies.append(copy)
    return root, copies[0], copies[1]


def _holding(fake: FakeHub, text: bytes) -> list[str]:
    files = fake.files(REPO_ID)
    return sorted(p for p, data in files.items() if p.startswith("sessions/") and text in data)


@pytest.mark.parametrize("selection", ["cwd", "session-argument"])
def test_one_projects_run_updates_its_own_copy_not_the_others(
    fake_hub: FakeHub, forks: tuple[Path, Path, Path], selection: str
) -> None:
    """Both copies went up (``NAME.jsonl`` = ONE, ``NAME-2.jsonl`` = TWO). A run selecting only
    TWO's project (a per-project cron job) wrote TWO over ONE's path, known by the session id
    alone: both files held TWO, "0 added, 1 updated", and the next --all put ONE back."""
    root, _, two = forks
    first = _publish(fake_hub, root, "--all")
    assert first.exit_code == 0, first.output
    plain = f"sessions/2025-06/{FORK_NAME}"
    second = plain.replace(".jsonl", "-2.jsonl")
    assert _holding(fake_hub, b"branch ONE") == [plain]
    assert _holding(fake_hub, b"branch TWO") == [second]
    one_published = fake_hub.files(REPO_ID)[plain]
    picked = ["--cwd", FORK_TWO] if selection == "cwd" else [str(two)]

    unchanged = _publish(fake_hub, root, *picked)
    assert unchanged.exit_code == 0, unchanged.output
    assert "0 added, 0 updated, 0 removed, 1 unchanged" in unchanged.output, unchanged.output
    assert _holding(fake_hub, b"branch ONE") == [plain]

    _went_on(two, "TWO went on")  # a later state: its copy is updated where it went up
    grown = _publish(fake_hub, root, *picked)
    assert grown.exit_code == 0, grown.output
    assert "0 added, 1 updated, 0 removed" in grown.output, grown.output
    assert fake_hub.files(REPO_ID)[plain] == one_published  # the other copy, untouched
    assert _holding(fake_hub, b"TWO went on") == [second]
    rows = {row["path"]: row for row in _rows(fake_hub)}
    assert set(rows) == {plain, second}
    assert rows[plain]["sha256"] != rows[second]["sha256"]

    again = _publish(fake_hub, root, "--all")  # and --all finds both where they are
    assert again.exit_code == 0, again.output
    assert "0 added, 0 updated, 0 removed, 2 unchanged" in again.output, again.output


def _turn(entry_id: str, parent: str, total: float) -> bytes:
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": total}
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": cost}  # fmt: skip
    message = {"role": "assistant", "content": [{"type": "text", "text": "x"}], "api": "a",
               "provider": "anthropic", "model": "m", "usage": usage, "stopReason": "stop",
               "timestamp": 0}  # fmt: skip
    entry = {"type": "message", "id": entry_id, "parentId": parent,
             "timestamp": "2025-06-01T11:01:00.000Z", "message": message}  # fmt: skip
    return json.dumps(entry).encode("utf-8") + b"\n"


def test_costs_adding_up_past_the_largest_float_write_no_infinity(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """Two turns of ``"total": 1e308`` add up to inf: index.jsonl held ``Infinity`` (no
    JSON: `datasets` and every strict reader refuse the file) and the card said "inf"."""
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/p")
    folder.mkdir(parents=True)
    path = folder / "2025-06-01T10-00-00-000Z_costbig-0001.jsonl"
    body = (fixtures_dir / "every-entry-type.jsonl").read_bytes()
    path.write_bytes(body + _turn("big1", "e25", 1e308) + _turn("big2", "big1", 1e308))
    result = _publish(fake_hub, tmp_path / "sessions", "--all")
    assert result.exit_code == 0, result.output
    (row,) = _rows(fake_hub)  # (strict JSON: no Infinity)
    assert 0 <= row["cost"] < 1  # the sum counted as 0, or each absurd turn's cost
    card = fake_hub.files(REPO_ID)["README.md"].decode("utf-8")
    (cost_line,) = [line for line in card.splitlines() if line.startswith("| cost (USD")]
    assert re.fullmatch(r"\| cost \(USD, as recorded\) \| 0\.\d\d \|", cost_line), cost_line
    # said: the sum counted as 0 (or, where the loader bounds each turn's cost, each turn's)
    said = [line for line in result.output.splitlines() if path.name in line]
    assert any("cost" in line and "counted as" in line for line in said), result.output


def test_index_and_card_never_hold_a_non_finite_cost() -> None:
    """A row of an index an earlier version wrote (``"cost": Infinity``, which Python's
    json reads) is cleaned and said; two finite costs whose sum overflows show no "inf"."""
    remote = RemoteState()
    remote.load_index(b'{"id": "a", "path": "sessions/2025-06/a.jsonl", "cost": Infinity}\n')
    assert remote.rows["sessions/2025-06/a.jsonl"]["cost"] == 0.0
    assert any("wrong type" in problem for problem in remote.problems), remote.problems
    written = render_index([{"id": "b", "path": "sessions/2025-06/b.jsonl", "cost": float("inf")}])
    assert _strict_json(written.decode("utf-8"))["cost"] == 0.0
    rows = [{"id": n, "path": f"sessions/2025-06/{n}.jsonl", "cost": 1e308} for n in "xy"]
    card = render_card(REPO_ID, rows, {}, RedactionPolicy()).decode("utf-8")
    (cost_line,) = [line for line in card.splitlines() if line.startswith("| cost (USD")]
    assert "inf" not in cost_line.lower() and "n/a" in cost_line, cost_line


def test_a_path_left_for_a_new_secret_is_no_longer_listed(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path
) -> None:
    """A file published as ``…_acmecorpx-migration.jsonl`` goes up again without the name
    once ``--secret acmecorpx`` is given; the old file stays until --prune, but the index
    kept its row: the secret in clear in a file the run told to redact it wrote, and the
    session counted twice (two rows, one id, one sha256)."""
    folder = tmp_path / "sessions" / encode_cwd("/home/dev/p")
    folder.mkdir(parents=True)
    name = "2025-06-01T10-00-00-000Z_acmecorpx-migration.jsonl"
    (folder / name).write_bytes((fixtures_dir / "every-entry-type.jsonl").read_bytes())
    root = tmp_path / "sessions"
    assert _publish(fake_hub, root, "--all").exit_code == 0
    old = f"sessions/2025-06/{name}"
    assert old in fake_hub.files(REPO_ID)

    moved = _publish(fake_hub, root, "--all", "--secret", "acmecorpx")
    assert moved.exit_code == 0, moved.output
    files = fake_hub.files(REPO_ID)
    assert old in files  # kept without --prune, as said
    for meta in ("index.jsonl", "manifest.json", "README.md"):
        assert b"acmecorpx" not in files[meta], meta
    (row,) = _rows(fake_hub)
    assert "REDACTED" in row["path"] and row["path"] in files
    card = files["README.md"].decode("utf-8")
    assert "| sessions | 1 |" in card, card
    manifest = json.loads(files["manifest.json"])["sessions"]
    assert list(manifest) == [row["path"]]

    again = _publish(fake_hub, root, "--all", "--secret", "acmecorpx")
    assert again.exit_code == 0, again.output
    assert "1 unchanged" in again.output and "nothing changed" in again.output, again.output
    assert "--prune removes it" in again.output  # the old file, said
    pruned = _publish(fake_hub, root, "--all", "--secret", "acmecorpx", "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert "1 removed" in pruned.output, pruned.output
    assert sorted(p for p in fake_hub.files(REPO_ID) if p.startswith("sessions/")) == [row["path"]]


def test_a_project_published_alone_first_keeps_its_path_from_the_other_project(
    fake_hub: FakeHub, forks: tuple[Path, Path, Path]
) -> None:
    """Per-project runs (one cron job per project) that never published both copies at once:
    ``--cwd fork1`` put ONE up; ``--cwd fork2`` wrote TWO over it ("0 added, 1 updated", known
    by the id alone) and the next ``--cwd fork1`` put ONE back, run after run."""
    root, _, _ = forks
    plain = f"sessions/2025-06/{FORK_NAME}"
    second = plain.replace(".jsonl", "-2.jsonl")
    first = _publish(fake_hub, root, "--cwd", FORK_ONE)
    assert first.exit_code == 0, first.output
    assert _holding(fake_hub, b"branch ONE") == [plain]
    one_published = fake_hub.files(REPO_ID)[plain]

    other = _publish(fake_hub, root, "--cwd", FORK_TWO)
    assert other.exit_code == 0, other.output
    assert "1 added, 0 updated, 0 removed" in other.output, other.output
    assert fake_hub.files(REPO_ID)[plain] == one_published
    assert _holding(fake_hub, b"branch TWO") == [second]

    back = _publish(fake_hub, root, "--cwd", FORK_ONE)
    assert back.exit_code == 0, back.output
    assert "0 added, 0 updated, 0 removed, 1 unchanged" in back.output, back.output
    both = _publish(fake_hub, root, "--all")
    assert both.exit_code == 0, both.output
    assert "0 added, 0 updated, 0 removed, 2 unchanged" in both.output, both.output
    assert _holding(fake_hub, b"branch ONE") == [plain]
    assert _holding(fake_hub, b"branch TWO") == [second]


def test_a_copy_rewritten_in_place_keeps_its_own_path(
    fake_hub: FakeHub, forks: tuple[Path, Path, Path]
) -> None:
    """A copy rewritten rather than appended (Pi migrating the file): no state of it went up,
    so its bytes matched neither path; a ``--cwd fork2`` run took the first path, ONE's, and
    the next --all swapped them back."""
    root, _, two = forks
    plain = f"sessions/2025-06/{FORK_NAME}"
    second = plain.replace(".jsonl", "-2.jsonl")
    assert _publish(fake_hub, root, "--all").exit_code == 0
    one_published = fake_hub.files(REPO_ID)[plain]
    two.write_bytes(two.read_bytes().replace(b"Partial answer", b"Partial ANSWER", 1))

    rewritten = _publish(fake_hub, root, "--cwd", FORK_TWO)
    assert rewritten.exit_code == 0, rewritten.output
    assert "0 added, 1 updated, 0 removed" in rewritten.output, rewritten.output
    assert fake_hub.files(REPO_ID)[plain] == one_published
    assert _holding(fake_hub, b"Partial ANSWER") == [second]

    both = _publish(fake_hub, root, "--all")
    assert both.exit_code == 0, both.output
    assert "0 added, 0 updated, 0 removed, 2 unchanged" in both.output, both.output


@pytest.mark.parametrize("selection", ["all", "cwd"])
def test_a_session_moved_to_another_project_folder_updates_its_one_path(
    fake_hub: FakeHub, tmp_path: Path, fixtures_dir: Path, selection: str
) -> None:
    """One local copy, moved (a project folder renamed) and gone on: the path it went up at
    is updated, not joined by a second copy under ``-2``."""
    root = tmp_path / "sessions"
    old = root / encode_cwd("/home/dev/before") / FORK_NAME
    old.parent.mkdir(parents=True)
    old.write_bytes((fixtures_dir / "every-entry-type.jsonl").read_bytes())
    assert _publish(fake_hub, root, "--all").exit_code == 0
    new = root / encode_cwd("/home/dev/after") / FORK_NAME
    new.parent.mkdir(parents=True)
    old.rename(new)
    _went_on(new, "after the move")
    picked = ["--all"] if selection == "all" else ["--cwd", "/home/dev/after"]

    moved = _publish(fake_hub, root, *picked)
    assert moved.exit_code == 0, moved.output
    assert "0 added, 1 updated, 0 removed" in moved.output, moved.output
    assert _holding(fake_hub, b"after the move") == [f"sessions/2025-06/{FORK_NAME}"]
    assert len(_rows(fake_hub)) == 1


def test_a_copy_mark_only_another_key_made_is_matched_as_before(tmp_path: Path) -> None:
    """Another machine's marks (or none: an earlier version's entry) say nothing of this
    machine's copies: the session keeps the one path its id holds. A mark this key made of
    another copy sends the file, whose bytes never went up, to a new path."""
    from exporter.publish.hub_plan import Source, claim_paths, publisher_mark
    from exporter.publish.hub_state import RemoteFile

    def mark(value: str) -> str:
        return f"mark({value})"

    file = tmp_path / "copy" / FORK_NAME
    file.parent.mkdir()
    file.write_bytes(b'{"type":"session","id":"s1"}\n')
    path = f"sessions/2025-06/{FORK_NAME}"
    source = Source(file, path, "sha", 1, "s1")
    elsewhere = {"id": "s1", "source_mark": "mark(other)", "copy_mark": "mark(elsewhere)"}
    for entry, expected in (
        ({"id": "s1", "source_mark": "mark(other)"}, path),  # an earlier version's
        ({**elsewhere, "publisher": "mark(another machine)"}, path),
        ({**elsewhere, "publisher": publisher_mark(mark)}, path.replace(".jsonl", "-2.jsonl")),
    ):
        remote = RemoteState(exists=True, files={path: RemoteFile(1, "a")}, manifest={path: entry})
        (claimed,) = claim_paths([source], remote, mark=mark)
        assert claimed.repo_path == expected, entry
