"""Stop 73 (a hunter timing each shape at N and 4N): two tree walks were quadratic.

* A branch holding a compaction was judged along the whole path from the root to its end,
  once per branch: 3,000 compacted branches off a deep line took 18 s. Now only the branch is
  walked (``Session.line_context_status``), with the same answer as the whole path's
  ``context_status`` for its entries (checked on random trees and the real fixtures).
* The child a line goes on with was found by looking through the parent's children, asked
  for each child: a fork of 24,000 took 20 s. Now one look-up (``Session.next_on_line``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from exporter.loader import load_session, parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.session import Session, _written_id
from tests.conftest import FIXTURES_DIR, Build, cpu_time_limit, dump_lines


def _compaction(entry_id: str, parent: str, second: int, kept: str) -> dict[str, Any]:
    return Build.entry(
        "compaction", entry_id, parent, second,
        summary="summary", firstKeptEntryId=kept, tokensBefore=1000,
    )  # fmt: skip


def _random_tree(seed: int, size: int = 60) -> Session:
    """Messages and compactions under random parents; each compaction keeps from a random
    entry (an ancestor, one in another branch, itself) or an id no entry has."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [Build.header(), Build.user("e0", None, "start", 1)]
    ids = ["e0"]
    for number in range(1, size):
        entry_id, parent = f"e{number}", rng.choice(ids)
        if rng.random() < 0.3:
            kept = rng.choice([*ids, entry_id, "missing"])
            lines.append(_compaction(entry_id, parent, number + 1, kept))
        elif rng.random() < 0.5:
            lines.append(Build.user(entry_id, parent, f"u{number}", number + 1))
        else:
            lines.append(Build.assistant(entry_id, parent, f"a{number}", number + 1))
        ids.append(entry_id)
    for line in rng.sample(lines[2:], size // 10):  # ids written twice (renamed x~2)
        line["id"] = rng.choice(ids[: int(line["id"][1:])] or ["e0"])
    return parse_session_bytes(dump_lines(lines))


def _first_kept_by_walk(session: Session, compaction: Any) -> str | None:
    """``first_kept_id`` as it was (stop 72): the first entry written with the id, walking
    from the root down to the compaction."""
    wanted = compaction.first_kept_entry_id
    if not wanted or session._latest_with_id.get(wanted, wanted) == wanted:
        return wanted
    for entry_id in session.path_to(compaction.id):
        if _written_id(session.by_id[entry_id]) == wanted:
            return entry_id
    return wanted


def _agree(session: Session, every_entry: bool = True) -> int:
    """Every line from an entry down (``every_entry``; else every line the page has, from
    a root or a branch's start) is judged alike by the branch alone and by the whole path;
    how many lines held a compaction."""
    path_set = set(session.active_path)
    held = 0
    for entry_id in session.by_id:
        parent = session.parent_of(entry_id)
        starts = parent is None or session.next_on_line(parent, path_set) != entry_id
        if not (every_entry or starts):
            continue
        line = session.line_from(entry_id, path_set)
        whole = session.context_status(session.path_to(line[-1]))
        expected = {k: v for k, v in whole.items() if k in set(line)}
        assert session.line_context_status(line) == expected, (entry_id, line)
        held += any(session.by_id[i].type == "compaction" for i in line)
    return held


@pytest.mark.parametrize("seed", range(40))
def test_a_branch_alone_is_judged_as_its_whole_path_is(seed: int) -> None:
    session = _random_tree(seed)
    assert _agree(session) > 0
    compactions = [e for e in session.entries if e.type == "compaction"]
    for compaction in compactions:  # an id written twice: the copy on the compaction's line
        assert session.first_kept_id(compaction) == _first_kept_by_walk(session, compaction)


#: The fixtures that hold a compaction.
COMPACTED = [*(f"pi-branched-{n}.jsonl" for n in range(1, 5)), "pi-v1-before-compaction.jsonl"]


@pytest.mark.parametrize("name", COMPACTED)
def test_the_fixtures_branches_are_judged_as_their_whole_paths_are(name: str) -> None:
    assert _agree(load_session(FIXTURES_DIR / name), every_entry=False) > 0


def _side_compactions(branches: int, depth: int) -> bytes:
    """A line of ``depth`` entries; off its tip, ``branches`` branches of a prompt and a
    compaction that keeps from the line's start; the active leaf the tip's newest child."""
    lines: list[dict[str, Any]] = [Build.header(), Build.user("m0", None, "start", 1)]
    for number in range(1, depth):
        lines.append(Build.assistant(f"m{number}", f"m{number - 1}", "go on", number + 1))
    tip, second = f"m{depth - 1}", depth + 1
    for number in range(branches):
        lines.append(Build.user(f"b{number}", tip, f"try {number}", second))
        lines.append(_compaction(f"c{number}", f"b{number}", second, "m0"))
        second += 1
    lines.append(Build.assistant("leaf", tip, "done", second))
    return dump_lines(lines)


def test_many_compacted_branches_off_a_deep_line_render_in_linear_time() -> None:
    session = parse_session_bytes(_side_compactions(branches=6_000, depth=12_000))
    with cpu_time_limit(12):  # ~2 s; the whole path per branch took ~30
        page = render_session(session, RenderOptions())
    assert page.count('data-entry-id="c') == 6_000


def test_a_kept_id_written_twice_does_not_walk_from_the_root_per_compaction() -> None:
    """The same shape, and one more entry written with the id the compactions keep from
    (so each compaction's kept entry was looked for from the root: quadratic again)."""
    data = _side_compactions(branches=6_000, depth=12_000)
    again = Build.user("m0", "leaf", "the id m0 again", 99_999)
    session = parse_session_bytes(data + dump_lines([again]))
    assert "m0~2" in session.by_id
    with cpu_time_limit(12):
        page = render_session(session, RenderOptions())
    assert page.count('data-entry-id="c') == 6_000


def test_a_fork_of_thousands_renders_in_linear_time() -> None:
    lines: list[dict[str, Any]] = [Build.header(), Build.user("u", None, "which?", 1)]
    lines += [Build.assistant(f"a{n}", "u", f"answer {n}", 2 + n) for n in range(24_000)]
    session = parse_session_bytes(dump_lines(lines))
    assert session.leaf_id == "a23999"
    with cpu_time_limit(12):  # ~5 s; the look through the children took 24
        page = render_session(session, RenderOptions())
    assert page.count('data-entry-id="a') == 24_000
