"""The session tree: ids, repairs (duplicates, cycles, orphans), leaf, labels, name, pairing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from exporter.entries import CompactionEntry, MessageEntry
from exporter.loader import load_session, parse_session_bytes
from exporter.render import render_session
from exporter.session import Session
from tests.browser_util import Element, parse_html
from tests.conftest import Build, time_limit
from tests.page_anchors import anchor_for


def load(dump, lines) -> Session:
    with time_limit(10):
        return parse_session_bytes(dump(lines))


def diag(session: Session, kind: str) -> list[int]:
    return [d.line for d in session.diagnostics if d.kind == kind]


def entry_id_around(element: Element) -> str | None:
    """The id of the rendered entry an element sits in."""
    return next(
        (a.get("data-entry-id") for a in element.ancestors() if a.get("data-entry-id")), None
    )


def assert_is_a_forest(session: Session) -> None:
    """Every entry is reached exactly once from the roots; every path ends at a root."""
    walked = list(session.walk())
    assert sorted(walked) == sorted(session.by_id)
    assert len(walked) == len(session.entries) == len(session.by_id)
    for entry in session.entries:
        path = session.path_to(entry.id)
        assert path[0] in session.roots and path[-1] == entry.id
        assert len(path) == len(set(path)) <= len(session.entries)
    owned = [i for b in session.branches() for i in b.entry_ids]
    assert sorted(owned) == sorted(session.by_id)


# --- duplicate ids ------------------------------------------------------------------------------


def test_duplicate_ids_are_renamed_deterministically_and_reported(build, dump) -> None:
    lines = [
        build.header(),
        build.user("a", None, "one", 1),
        build.user("b", "a", "two", 2),
        build.user("a", None, "three", 3),  # collides with line 2
        build.user("a", None, "four", 4),  # and again
        build.user("a~2", None, "five", 5),  # collides with the first rename
    ]
    first, second = load(dump, lines), load(dump, lines)
    ids = [e.id for e in first.entries]
    assert ids == [e.id for e in second.entries]
    assert ids == ["a", "b", "a~2", "a~3", "a~2~2"]
    assert [e.text for e in first.entries] == ["one", "two", "three", "four", "five"]
    assert diag(first, "duplicate-id") == [4, 5]
    messages = [d.message for d in first.diagnostics]
    assert "line 2" in messages[0] and "'a~2~1'" in messages[0]
    assert first.entries[2].raw["id"] == "a"  # the file's own id stays in the raw JSON
    assert first.leaf_id == "a~2~2"
    assert_is_a_forest(first)
    # the file already uses the names a rename would pick: the search goes on past them
    taken = [build.header(), build.user("x", None, "1", 1), build.user("x~2", None, "2", 2),
             build.user("x~3", None, "3", 3), build.user("x", None, "4", 4)]  # fmt: skip
    session = load(dump, taken)
    assert [e.id for e in session.entries] == ["x", "x~2", "x~3", "x~4"]
    assert len(session.by_id) == len(session.entries) == 4


def test_child_of_a_duplicate_id_attaches_to_the_nearest_earlier_entry(build, dump) -> None:
    """A linear session whose ids collide once (Pi's v1->v2 migration never checks collisions).

    Each entry was written as a child of the entry just above it, so ``parentId "x"`` means the
    latest entry called ``x`` at that point in the file. Pi itself resolves ids to the LAST
    entry of the file with that id, which turns this file into a cycle (Pi hangs; see
    test_differential_pi). Product bug: the loader resolves to the FIRST entry with that id, so
    ``d`` hangs off ``x`` on line 2: a fork that does not exist, and an active path that skips
    ``b`` and the second ``x``.
    """
    lines = [
        build.header(),
        build.user("x", None, "one", 1),
        build.assistant("b", "x", "two", 2),
        build.user("x", "b", "three (same id)", 3),
        build.assistant("d", "x", "four", 4),
    ]
    session = load(dump, lines)
    assert diag(session, "duplicate-id") == [4]
    assert [e.id for e in session.entries] == ["x", "b", "x~2", "d"]
    assert session.parent_of("b") == "x"
    assert session.parent_of("x~2") == "b"
    assert session.parent_of("d") == "x~2"
    assert session.active_path == ["x", "b", "x~2", "d"]
    assert session.fork_ids == [] and len(session.branches()) == 1


def test_a_compaction_keeps_from_the_copy_of_a_duplicated_id_on_its_line(build, dump) -> None:
    """Pi finds ``firstKeptEntryId`` by the id as written along the compaction's path, so
    of two entries ``x`` it keeps from the one on that path; looked up as ``x`` (the other
    copy, renamed entries being ``x~2``), the kept entries were marked out of context and
    the page said the kept entry "is not before this compaction" (bug hunt 2026-12-05)."""
    lines = [
        build.header(),
        build.user("a", None, "a", 1),
        build.user("x", "a", "first x", 2),
        build.user("x", "a", "second x", 3),
        build.user("z", "x", "z", 4),
        build.entry("compaction", "c", "z", 5, summary="S", firstKeptEntryId="x"),
        build.user("after", "c", "after", 6),
    ]
    session = load(dump, lines)
    assert session.active_path == ["a", "x~2", "z", "c", "after"]
    assert session.context_status() == {"a": "c"}  # Pi sends x, z, after and the summary
    page = render_session(session)
    assert f'context kept from <a href="#{anchor_for(session, "x~2")}"' in page
    assert "not before this compaction" not in page
    compaction = session.by_id["c"]
    assert isinstance(compaction, CompactionEntry)
    assert session.first_kept_id(compaction) == "x~2"


def test_duplicate_self_parent_is_a_root(build, dump) -> None:
    """Pi: ``parentId === id`` means root. Product bug (same fix as above): after renaming the
    second ``x`` to ``x~2`` its ``parentId "x"`` is no longer seen as a self-parent."""
    lines = [build.header(), build.user("x", None, "one", 1), build.user("x", "x", "two", 2)]
    session = load(dump, lines)
    assert session.roots == ["x", "x~2"]  # Pi: parentId === id means root
    assert_is_a_forest(session)


# --- cycles and orphans -----------------------------------------------------------------------


def test_self_parent_is_a_root(build, dump) -> None:
    session = load(dump, [build.header(), build.user("a", "a", "me", 1), build.user("b", "a")])
    assert session.roots == ["a"] and session.active_path == ["a", "b"]
    assert diag(session, "cycle") == [] and diag(session, "orphan") == []


@pytest.mark.parametrize("size", [2, 3, 7])
def test_cycles_are_broken_at_their_first_entry_and_reported(build, dump, size: int) -> None:
    ids = [f"c{i}" for i in range(size)]
    lines = [build.header(), build.user("root", None, "root", 0)]
    # c0 -> c_last, c1 -> c0, ... : a ring, plus a tail hanging off it and a healthy root.
    lines += [build.user(ids[i], ids[i - 1], f"ring {i}", i + 1) for i in range(size)]
    lines += [build.user("tail", ids[size // 2], "tail", 50), build.user("ok", "root", "ok", 51)]
    session = load(dump, lines)
    assert diag(session, "cycle") == [3]  # c0 (line 3) comes first in the file
    cycle_message = next(d.message for d in session.diagnostics if d.kind == "cycle")
    assert f"{size} entries" in cycle_message and "'c0'" in cycle_message
    assert session.roots == ["root", "c0"]
    assert session.parent_of("c0") is None
    assert session.leaf_id == "ok" and session.active_path == ["root", "ok"]
    assert session.path_to("tail") == [*ids[: size // 2 + 1], "tail"]
    assert_is_a_forest(session)
    with time_limit(5):
        session.set_leaf("tail")
        assert session.active_path[-1] == "tail"


def test_two_separate_cycles_are_both_reported(build, dump) -> None:
    lines = [
        build.header(),
        build.user("a", "b", "a", 1),
        build.user("b", "a", "b", 2),
        build.user("p", "r", "p", 3),
        build.user("q", "p", "q", 4),
        build.user("r", "q", "r", 5),
    ]
    session = load(dump, lines)
    assert diag(session, "cycle") == [2, 4]
    assert session.roots == ["a", "p"]
    assert session.active_path == ["p", "q", "r"]
    assert_is_a_forest(session)


def test_orphans_become_reported_roots(build, dump) -> None:
    lines = [
        build.header(),
        build.user("a", None, "a", 1),
        build.user("o", "missing", "orphan", 2),
        build.assistant("o2", "o", "child of orphan", 3),
        build.entry("custom", "k", None, 4),
        {"type": "custom", "id": "nop", "timestamp": "x"},  # parentId missing entirely
    ]
    session = load(dump, lines)
    assert diag(session, "orphan") == [3]
    assert "'missing'" in next(d.message for d in session.diagnostics if d.kind == "orphan")
    assert diag(session, "missing-parent") == [6]
    assert session.roots == ["a", "o", "k", "nop"]
    assert session.path_to("o2") == ["o", "o2"]
    assert session.leaf_id == "nop"
    assert_is_a_forest(session)


# --- leaf -----------------------------------------------------------------------------------


def test_leaf_is_the_last_entry_in_file_order(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u1", None, "q", 1),
        build.assistant("a1", "u1", "deep", 2),
        build.user("u2", "a1", "deeper", 3),
        build.assistant("a2", "u2", "deepest", 4),
        build.user("alt", None, "older timestamp, other root", 0),
    ]
    session = load(dump, lines)
    assert session.leaf_id == "alt"  # not the deepest node, not the newest timestamp
    assert session.active_path == ["alt"]
    lines.append(build.label("l1", "a1", "a1", "here", 9))  # written on an older branch
    session = load(dump, lines)
    assert session.leaf_id == "l1"
    assert session.active_path == ["u1", "a1", "l1"]


def test_set_leaf_by_id_and_unique_prefix(build, dump) -> None:
    lines = [
        build.header(),
        build.user("abc12345", None, "q", 1),
        build.assistant("abd00000", "abc12345", "a", 2),
        build.user("ffff0000", "abc12345", "other", 3),
    ]
    session = load(dump, lines)
    assert session.active_path == ["abc12345", "ffff0000"]
    session.set_leaf("abd00000")
    assert session.leaf_id == "abd00000"
    assert session.active_path == ["abc12345", "abd00000"]
    assert [b.leaf_id for b in session.branches()] == ["abd00000", "ffff0000"]
    assert session.branches()[0].is_active
    session.set_leaf("fff")
    assert session.leaf_id == "ffff0000"
    session.set_leaf("abc12345")  # an inner entry may be the leaf, like /tree in Pi
    assert session.active_path == ["abc12345"]
    for bad in ("zzz", "ABC12345"):
        with pytest.raises(KeyError, match=f"no entry with id '{bad}'"):
            session.set_leaf(bad)
    with pytest.raises(KeyError, match="prefix 'ab' is ambiguous: abc12345, abd00000"):
        session.set_leaf("ab")
    assert session.leaf_id == "abc12345"
    chosen = parse_session_bytes(dump(lines), leaf_id="abd")
    assert chosen.leaf_id == "abd00000"


# --- labels and name --------------------------------------------------------------------------


def test_labels_replay_latest_wins_and_clears(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u1", None, "q", 1),
        build.assistant("a1", "u1", "a", 2),
        build.label("l1", "a1", "u1", "first", 3),
        build.label("l2", "l1", "u1", "second", 4),  # latest wins
        build.label("l3", "l2", "a1", "answer", 5),
        build.label("l4", "l3", "a1", None, 6),  # no "label" key: clears
        build.label("l5", "l4", "ghost", "kept", 7),  # target not in the file
        build.label("l6", "l5", "u1", "", 8),  # empty string clears
        build.label("l7", "l6", "u1", "back", 9),  # and it can come back
        build.label("l8", "l7", "l7", "self", 10),
    ]
    session = load(dump, lines)
    assert session.labels == {"ghost": "kept", "u1": "back", "l7": "self"}
    assert session.label_times["u1"] == lines[-2]["timestamp"]
    assert "label" not in lines[6]
    assert session.active_path[-1] == "l8"  # label entries are appended at the leaf


def test_the_latest_label_of_a_target_wins(build: type[Build], dump: Callable[..., bytes]) -> None:
    """Pi keeps the newest label of an entry. The test above clears ``u1`` before its last
    label, so "first label wins" passed it too (audit M1, mutation M26)."""
    lines = [
        build.header(),
        build.user("u1", None, "q", 1),
        build.assistant("a1", "u1", "a", 2),
        build.label("l1", "a1", "u1", "first", 3),
        build.label("l2", "l1", "u1", "second", 4),
    ]
    session = load(dump, lines)
    assert session.labels == {"u1": "second"}
    assert session.label_times == {"u1": lines[4]["timestamp"]}
    assert lines[4]["timestamp"] != lines[3]["timestamp"]
    page = parse_html(render_session(session))
    badges = page.all(lambda e: e.tag == "span" and e.has_class("badge") and e.has_class("label"))
    assert [(b.text, entry_id_around(b)) for b in badges] == [("second", "u1")]
    outline = page.all(lambda e: e.tag == "span" and e.has_class("tlabel"))
    assert [t.text for t in outline] == ["[second]"]
    bookmarks = page.one(lambda e: e.tag == "nav" and e.has_class("bookmarks"))
    links = bookmarks.find_all(lambda e: e.tag == "a")
    assert [(a.text, a.get("href")) for a in links] == [("second", f"#{anchor_for(session, 'u1')}")]


def test_session_name_is_the_latest_session_info(build, dump) -> None:
    base = [build.header(), build.user("u1", None, "first prompt", 1)]
    cases = [
        ([("Alpha",)], "Alpha"),
        ([("Alpha",), ("  Beta  ",)], "Beta"),
        ([("Alpha",), ("",)], None),  # 0.73.1: an empty name clears
        ([("Alpha",), ("   ",)], None),
        ([("Alpha",), (None,)], None),  # no name key at all
        ([("Alpha",), ("",), ("Gamma",)], "Gamma"),
        ([("会话树导出",)], "会话树导出"),
    ]
    for names, expected in cases:
        lines = list(base)
        parent = "u1"
        for index, (name,) in enumerate(names):
            lines.append(build.name(f"n{index}", parent, name, 10 + index))
            parent = f"n{index}"
        session = load(dump, lines)
        assert session.name == expected, names
        assert session.title == (expected or "first prompt")


def test_title_falls_back_to_first_prompt_then_id(build, dump) -> None:
    session = load(dump, [build.header(), build.assistant("a", None), build.user("u", "a", " ")])
    assert session.first_prompt() is None
    assert session.title == "Session sess-0001"


# --- tree order and branches ------------------------------------------------------------------


def test_children_sorted_by_timestamp_stable_on_ties(build, dump) -> None:
    lines = [
        build.header(),
        build.user("r", None, "root", 0),
        build.user("late", "r", "late", 30),
        build.user("tie1", "r", "tie", 10),
        build.user("early", "r", "early", 5),
        build.user("tie2", "r", "tie", 10),
        build.entry("custom", "bad-time", "r", 0),
    ]
    lines[-1]["timestamp"] = "not a time"
    session = load(dump, lines)
    assert session.children["r"] == ["early", "tie1", "tie2", "late", "bad-time"]
    assert session.fork_ids == ["r"]
    assert list(session.walk()) == ["r", "early", "tie1", "tie2", "late", "bad-time"]
    branches = session.branches()
    assert branches[0].leaf_id == "bad-time" and branches[0].is_active  # last line = leaf
    assert [b.leaf_id for b in branches[1:]] == ["early", "tie1", "tie2", "late"]
    assert all(b.fork_id == "r" for b in branches[1:])
    assert branches[0].entry_ids == ["r", "bad-time"]


def test_roots_keep_file_order_as_in_pi(build: type[Build], dump: Callable[..., bytes]) -> None:
    """Roots keep file order, as Pi's getTree and its page keep them (only children are
    sorted by time there); they were sorted by time here, which put the orphan ``a``,
    written after ``b`` but dated before it, first (session 65). ``c`` (the leaf) heads the
    page, as Pi's page puts the root holding the active leaf first."""
    lines = [
        build.header(),
        build.user("b", None, "root b", 10 * 3600 + 5),  # line 2, 10:00:05
        build.user("a", "missing", "orphan a", 10 * 3600 + 1),  # line 3, 10:00:01
        build.user("c", None, "root c", 10 * 3600 + 9),  # line 4, the leaf
    ]
    session = load(dump, lines)
    assert diag(session, "orphan") == [3]
    assert session.roots == ["b", "a", "c"]
    assert session.leaf_id == "c" and session.active_path == ["c"]
    assert session.page_roots() == ("c", ["b", "a"])
    assert_is_a_forest(session)
    page = parse_html(render_session(session))
    articles = page.all(lambda e: e.tag == "article" and e.get("data-entry-id") is not None)
    assert [e.get("data-entry-id") for e in articles] == ["c", "b", "a"]
    trees = page.all(lambda e: e.tag == "details" and e.get("aria-label") == "Separate tree")
    inside = [[x.get("data-entry-id") for x in t.iter() if x.get("data-entry-id")] for t in trees]
    assert inside == [["b"], ["a"]]
    outline = page.one(lambda e: e.tag == "ul" and e.get("id") == "tree")
    hrefs = [a.get("href") for a in outline.iter() if a.tag == "a"]
    assert hrefs == [f"#{anchor_for(session, i)}" for i in ("c", "b", "a")]


def test_branches_partition_every_fixture(pi_fixture: Path) -> None:
    session = load_session(pi_fixture)
    branches = session.branches()
    assert branches[0].is_active and branches[0].leaf_id == session.leaf_id
    assert branches[0].fork_id is None and branches[0].entry_ids == session.active_path
    assert sum(b.is_active for b in branches) == 1
    assert sorted(b.leaf_id for b in branches) == sorted(session.leaf_ids)
    for branch in branches[1:]:
        assert branch.fork_id in session.fork_ids or branch.fork_id is None
        assert session.parent_of(branch.entry_ids[0]) == branch.fork_id
    assert_is_a_forest(session)


# --- tool call pairing ------------------------------------------------------------------------


def _nearest_call_above(session: Session, result_id: str) -> tuple[str, int] | None:
    """Brute force: walk up from the result to the nearest call with the same id."""
    result = session.by_id[result_id]
    assert isinstance(result, MessageEntry)
    for ancestor_id in reversed(session.path_to(result_id)[:-1]):
        ancestor = session.by_id[ancestor_id]
        if isinstance(ancestor, MessageEntry) and ancestor.role == "assistant":
            content = ancestor.message.get("content")
            for index in reversed(range(len(content))):
                block = content[index]
                if block.get("type") == "toolCall" and block.get("id") == result.tool_call_id:
                    return ancestor_id, index
    return None


def test_tool_pairing_is_per_path_on_branched_4(fixtures_dir: Path) -> None:
    session = load_session(fixtures_dir / "pi-branched-4.jsonl")
    results = [m for m in session.iter_messages() if m.role == "toolResult"]
    calls: dict[str, int] = {}
    for message in session.iter_messages():
        for call in message.tool_calls:
            calls[call["id"]] = calls.get(call["id"], 0) + 1
    repeated = [call_id for call_id, n in calls.items() if n > 1]
    assert len(repeated) > 100  # ids really do repeat across branches in this file
    paired = 0
    for result in results:
        ref = session.call_for_result(result.id)
        expected = _nearest_call_above(session, result.id)
        assert (None if ref is None else (ref.entry_id, ref.block_index)) == expected
        if ref is None:
            continue
        paired += 1
        # The call and its result are on the same root path.
        path = session.path_to(result.id)
        assert ref.entry_id in path
        assert ref.call_id == result.tool_call_id
        assert session.result_for_call(ref.entry_id, ref.block_index, set(path)) is result
    assert paired == len(results) == 628


def test_tool_pairing_with_the_same_call_id_on_two_branches(build, dump) -> None:
    lines = [
        build.header(),
        build.user("u", None, "q", 1),
        build.assistant("A", "u", "branch A", 2, calls=[("call_1", "bash"), ("call_2", "read")]),
        build.tool_result("rA", "A", "call_1", "bash", 3),
        build.assistant("B", "u", "branch B", 4, calls=[("call_1", "bash")]),
        build.tool_result("rB", "B", "call_1", "bash", 5, is_error=True),
        build.tool_result("rB2", "B", "call_1", "bash", 6),  # a fork below the call
        build.tool_result("lost", "u", "call_1", "bash", 7),  # no call above it
    ]
    session = load(dump, lines)
    ref = session.call_for_result("rA")
    assert (ref.entry_id, ref.block_index, ref.call_id) == ("A", 1, "call_1")
    assert session.call_for_result("rB").entry_id == "B"
    assert session.call_for_result("rB2").entry_id == "B"
    assert session.call_for_result("lost") is None
    assert session.result_for_call("A", 1).id == "rA"
    assert session.result_for_call("A", 2) is None  # call_2 never answered
    assert session.result_for_call("B", 1).id == "rB"  # first in file order
    assert session.result_for_call("B", 1, within={"B", "rB2"}).id == "rB2"
    assert session.result_for_call("B", 1, within={"rA"}) is None


def test_tool_pairing_when_one_message_repeats_a_call_id(build, dump) -> None:
    """Two calls of one message with the same id (backends that number calls per turn):
    every result went to the last call, so the bash call had none and the read call showed
    the bash output. Results now take the message's calls in order, by tool name first;
    on another branch the same calls are answered afresh."""
    calls = [("x1", "bash"), ("x1", "read")]
    lines = [
        build.header(),
        build.user("u", None, "q", 1),
        build.assistant("A", "u", "two calls", 2, calls=calls),
        build.tool_result("r_read", "A", "x1", "read", 3),  # answers out of order
        build.tool_result("r_bash", "r_read", "x1", "bash", 4),
        build.tool_result("r_more", "r_bash", "x1", "bash", 5),  # a third: the last call keeps it
        build.tool_result("s1", "A", "x1", "bash", 6),  # another branch, from the message
        build.tool_result("s2", "s1", "x1", "bash", 7),
    ]
    session = load(dump, lines)
    where = {r: session.call_for_result(r).block_index for r in ("r_read", "r_bash", "s1", "s2")}
    assert where == {"r_read": 2, "r_bash": 1, "s1": 1, "s2": 2}
    assert session.call_for_result("r_more").entry_id == "A"
    assert session.result_for_call("A", 1, within={"r_read", "r_bash"}).id == "r_bash"


# --- context view -----------------------------------------------------------------------------


def test_context_status_on_v1_before_compaction(fixtures_dir: Path) -> None:
    path = fixtures_dir / "pi-v1-before-compaction.jsonl"
    session = load_session(path)
    status = session.context_status()
    # only the latest compaction's summary is sent: the older one is out of context too
    assert status.pop("L360") == "L629" and "L629" not in status
    # Independent expectation from the raw file: the latest compaction (line 629) keeps from
    # parsed index 551 (line 552); everything in context before that is out, and the earlier
    # compaction (line 360, keeps from line 294) is the one that first took out lines < 294.
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    expected = {
        f"L{number}": "L360" if number < 294 else "L629"
        for number, value in enumerate(raw, 1)
        if value["type"] == "message" and number < 552
    }
    assert status == expected
    kept = [e for e in session.active_entries() if e.type == "message" and e.id not in status]
    assert kept[0].line == 552
    assert len(kept) == sum(1 for v in raw[551:] if v["type"] == "message")
    compactions = [e for e in session.active_entries() if isinstance(e, CompactionEntry)]
    assert [c.id for c in compactions] == ["L360", "L629"]


def test_context_status_uses_the_latest_compaction_only(build, dump) -> None:
    """§1.11: only the latest compaction on the path decides; earlier ones are skipped.

    Product bug: context_status takes the union over every compaction, so when the newest
    compaction keeps from an entry that an older one had dropped (here ``u2``), those
    entries are still marked as out of context. Pi's buildSessionContext sends them.
    """
    lines = [
        build.header(),
        build.user("u1", None, "one", 1),
        build.user("u2", "u1", "two", 2),
        build.user("u3", "u2", "three", 3),
        build.entry("compaction", "c1", "u3", 4, summary="s1", firstKeptEntryId="u3"),
        build.user("u4", "c1", "four", 5),
        build.entry("compaction", "c2", "u4", 6, summary="s2", firstKeptEntryId="u2"),
        build.user("u5", "c2", "five", 7),
    ]
    session = load(dump, lines)
    assert session.context_status() == {"u1": "c1", "c1": "c2"}  # c1's summary is not sent


def test_context_status_unknown_or_forward_first_kept_keeps_nothing_before(build, dump) -> None:
    for first_kept in ("nope", "u3", None):
        lines = [
            build.header(),
            build.user("u1", None, "one", 1),
            build.entry("custom_message", "cm", "u1", 2, customType="x", content="c"),
            build.entry("compaction", "c1", "cm", 3, summary="s", firstKeptEntryId=first_kept),
            build.user("u3", "c1", "three", 4),
        ]
        session = load(dump, lines)
        assert session.context_status() == {"u1": "c1", "cm": "c1"}, first_kept


def test_leaf_option_with_a_duplicated_id_names_the_latest_entry(build, dump) -> None:
    """Pi's id map keeps the last entry with an id, so the leaf it hands /export-html as
    ``--leaf c`` is the later ``c``; the earlier one stays reachable as ``c`` in the page."""
    lines = [
        build.header(),
        build.user("a", None, "one", 1),
        build.user("b", "a", "two", 2),
        build.user("c", "b", "three", 3),
        build.user("e", "a", "four", 4),
        build.user("c", "e", "five", 5),  # the same id again, on the other branch
        build.user("g", "b", "six", 6),  # the file's last entry: the default leaf
    ]
    session = load(dump, lines)
    assert session.leaf_id == "g"
    session.set_leaf("c")
    assert session.leaf_id == "c~2" and session.active_path == ["a", "e", "c~2"]
