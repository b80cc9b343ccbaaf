"""Stop 65: the page of branches nested inside branches (each block's summary walked its
whole subtree: quadratic, 46 s for 2,500 nested forks), the outline past Chromium's
nesting limit (rows landed in the wrong list past ~253 levels; the transcript was capped at
MAX_BRANCH_NESTING, the outline was not), and an id written twice whose first copy no
``--leaf`` could choose though ``stats`` listed it as a leaf."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.formatting import fmt_cost
from exporter.loader import parse_session_bytes
from exporter.render import render_session
from exporter.render.view import MAX_BRANCH_NESTING, PageBuilder
from exporter.session import Session
from exporter.usage import sum_usage
from tests.browser_util import PageServer, Viewer

pytest_plugins = ["tests.browser_util"]

_HEADER = {"type": "session", "version": 3, "id": "s65", "timestamp": "2026-01-01T00:00:00.000Z",
           "cwd": "/w"}  # fmt: skip


def _at(second: int, offset: str = "Z") -> str:
    minutes, seconds = divmod(second, 60)
    hours, minutes = divmod(minutes, 60)
    return f"2026-01-01T{hours:02d}:{minutes:02d}:{seconds:02d}.000{offset}"


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(v) + "\n" for v in [_HEADER, *lines]).encode("utf-8")


def _user(entry_id: str, parent: str | None, text: str, second: int) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": _at(second),
            "message": {"role": "user", "content": text, "timestamp": 0}}  # fmt: skip


def _answer(
    entry_id: str, parent: str | None, text: str, second: int, cost: float = 0.0
) -> dict[str, Any]:
    usage = {
        "input": 10,
        "output": 5,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 15,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": _at(second),
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                        "usage": usage, "stopReason": "stop", "timestamp": 0}}  # fmt: skip


def _label(entry_id: str, parent: str, target: str, label: str, second: int) -> dict[str, Any]:
    return {"type": "label", "id": entry_id, "parentId": parent, "timestamp": _at(second),
            "targetId": target, "label": label}  # fmt: skip


# --- 1. branch blocks: the facts of each subtree, made once ---------------------------------


def _small_nested_tree() -> Session:
    """Branches inside branches, with costs, labels (one on extension data, which the
    Default rules hide), two times that are one instant written two ways, and a second root."""
    custom = {"type": "custom", "id": "c1", "parentId": "a4", "timestamp": _at(9),
              "customType": "todo-state", "data": {"todos": []}}  # fmt: skip
    lines = [
        _user("r", None, "root prompt", 1),
        _answer("a1", "r", "first answer", 2, 0.001),
        _user("u3", "a1", "a first try", 3),
        _answer("a3", "u3", "try answer", 4, 0.00025),
        _user("u4", "a3", "inner try", 5),
        _answer("a4", "u4", "inner answer", 7, 0.0001),
        _user("u5", "a3", "inner other", 6),
        # 02:00:25 at +02:00 is a5b's 00:00:25 UTC: the first in pre-order is the latest
        {**_answer("a5", "u5", "late answer", 25, 0.0002), "timestamp": _at(7200 + 25, "+02:00")},
        _answer("a5b", "a5", "late too", 25, 0.0003),
        custom,
        _label("l1", "c1", "c1", "state", 10),
        _label("l2", "a5b", "a5", "keep", 11),
        _label("l3", "l2", "u3", "tried", 12),
        _answer("x1", None, "a second root", 40, 0.5),
        _user("u2", "a1", "the kept way", 30),
        _answer("a2", "u2", "kept answer", 31, 0.004),  # the last line: the active leaf
    ]
    return parse_session_bytes(_jsonl(lines))


def _walked(builder: PageBuilder, first_id: str) -> dict[str, Any]:
    """A branch block's facts as the page made them before: a walk of its subtree."""
    session = builder.session
    ids = list(session.walk(first_id))
    entries = [session.by_id[i] for i in ids]
    times = [t for t in (e.moment for e in entries) if t]
    return {
        "first_prompt": builder.branch_title(builder.main_line(first_id)),
        "entries": len(ids),
        "lines": sum(i not in session.children for i in ids),
        "cost": fmt_cost(sum_usage(entries).cost),
        "last_activity": max(times).isoformat() if times else None,
        "labels": [session.labels[i] for i in ids if i in session.labels],
        "has_label_shown": any(not builder._outline_text(i)[2] for i in ids if i in session.labels),
        "has_user": any(getattr(e, "role", None) == "user" for e in entries),
    }


def _facts(builder: PageBuilder, first_id: str) -> dict[str, Any]:
    info = builder.branch_info(first_id, 1)
    return {key: getattr(info, key) for key in _walked(builder, first_id)}


def test_branch_blocks_say_what_a_walk_of_their_subtree_says() -> None:
    session = _small_nested_tree()
    builder = PageBuilder(session, str)
    opened = [item.branch.first_id for item in builder.plan() if item.kind == "open"]
    assert opened == ["u3", "u4", "x1"]  # a branch, one inside it, another tree
    for entry in session.entries:  # any entry may start a block: each agrees with the walk
        assert _facts(builder, entry.id) == _walked(builder, entry.id), entry.id
    assert _facts(builder, "u3") == {
        "first_prompt": "a first try",
        "entries": 11,
        "lines": 2,
        "cost": "$0.0009",
        "last_activity": "2026-01-01T02:00:25+02:00",  # a5's, the first of two in the walk
        "labels": ["tried", "state", "keep"],
        "has_label_shown": True,
        "has_user": True,
    }
    hidden_only = _facts(builder, "c1")  # a label on extension data: Labeled shows nothing
    assert hidden_only["labels"] == ["state"] and hidden_only["has_label_shown"] is False
    assert _facts(builder, "x1")["has_user"] is False


def _nested(forks: int) -> bytes:
    """A chain whose every other entry forks, the newer child ending at once: the line goes
    on with that child, so each older child's subtree (the rest of the chain) is a branch
    inside the one before it (the hunter's ``gen.py nested``)."""
    lines = []
    for k in range(forks):
        parent = f"n{k - 1:05d}" if k else None
        make = _user if k % 2 == 0 else _answer
        lines.append(make(f"n{k:05d}", parent, f"nest {k}", 1 + k))
    for k in range(0, forks, 2):
        lines.append(_answer(f"y{k:05d}", f"n{k:05d}", f"alt {k}", 5000 + k))
    lines.append(_user("leafx", None, "other root", 20000))
    return _jsonl(lines)


def test_branch_blocks_of_nested_branches_take_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each block walked its subtree: 400 nested forks made ~60,000 walk steps for 601
    entries. Steps down the tree (a walk's, and a line's from an entry to the next) are
    counted, not timed: a few per entry, twice as many for twice the forks."""
    steps = 0
    walk, next_on_line = Session.walk, Session.next_on_line

    def walked(self: Session, start: str | None = None) -> Iterator[str]:
        nonlocal steps
        for entry_id in walk(self, start):
            steps += 1
            yield entry_id

    def stepped(self: Session, entry_id: str, path_set: Any) -> str | None:
        nonlocal steps
        steps += 1
        return next_on_line(self, entry_id, path_set)

    monkeypatch.setattr(Session, "walk", walked)
    monkeypatch.setattr(Session, "next_on_line", stepped)
    counted = []
    for forks in (400, 800):
        session = parse_session_bytes(_nested(forks))
        steps = 0
        builder = PageBuilder(session, str)
        items = builder.plan()
        builder.outline()
        assert sum(item.kind == "open" for item in items) == forks // 2 + 1  # + another tree
        assert steps <= 5 * len(session.entries), (forks, steps)
        counted.append(steps)
    assert counted[1] <= 2.2 * counted[0], counted


# --- 2. the outline nests no deeper than the transcript ----------------------------------


class _OutlineDepths(HTMLParser):
    """Each outline link's number of ``li.sub`` around it, as the source nests them."""

    VOID = frozenset({"input", "br", "img", "meta", "link", "hr", "wbr", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.tree_at: int | None = None
        self.depths: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        classes = (named.get("class") or "").split()
        if tag == "a" and self.tree_at is not None and (named.get("href") or "").startswith("#"):
            self.depths.append(sum(sub for _, sub in self.stack[self.tree_at :]))
        if tag in self.VOID:
            return
        self.stack.append((tag, tag == "li" and "sub" in classes))
        if named.get("id") == "tree":
            self.tree_at = len(self.stack)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            opened, _ = self.stack.pop()
            if self.tree_at is not None and len(self.stack) < self.tree_at:
                self.tree_at = None
            if opened == tag:
                break


_DOM_DEPTHS = """() => [...document.querySelectorAll('#tree a[href^="#"]')].map(a => {
  let depth = 0;
  for (let n = a; n && n.id !== 'tree'; n = n.parentElement)
    depth += n.tagName === 'LI' && n.classList.contains('sub');
  return depth;
})"""


@pytest.mark.browser
def test_the_outline_keeps_its_shape_in_chromium_past_the_nesting_limit(
    viewer: Viewer, page_server: PageServer
) -> None:
    """560 nested forks: 280 levels of sub-lists, past the ~253 Chromium's parser keeps
    (each level is two elements, and it stops nesting at 512): rows past it were shown in
    the wrong branch. Deeper forks now follow the sub-list they fork in, as their blocks do
    in the transcript."""
    session = parse_session_bytes(_nested(560))
    html = render_session(session)
    source = _OutlineDepths()
    source.feed(html)
    page = viewer.open(page_server.publish("s65-nested-outline.html", html))
    in_dom = page.evaluate(_DOM_DEPTHS)
    assert len(in_dom) == len(source.depths) == len(session.entries)
    wrong = [
        n for n, (dom, src) in enumerate(zip(in_dom, source.depths, strict=True)) if dom != src
    ]
    assert wrong == [], f"{len(wrong)} rows at another depth than the source's, from {wrong[0]}"
    assert max(in_dom) == MAX_BRANCH_NESTING
    assert _outline_ids(html) == _transcript_ids(html)  # in the transcript's order
    viewer.assert_clean()


def _outline_ids(html: str) -> list[str]:
    nav = html[html.index('<ul class="tree"') : html.index("</nav>")]
    return re.findall(r'<a href="#([^"]+)"', nav)


def _transcript_ids(html: str) -> list[str]:
    return re.findall(r'<article data-entry-id="([^"]+)"', html[html.index("<main") :])


def _deep_line_with_two_forks(steps: int) -> Session:
    """A staircase ``steps`` forks deep whose deepest line forks twice (F1, then F2), all
    answers but one prompt, deep in F2's branch."""
    lines = [_user("r", None, "root", 1), _answer("ra", "r", "root answer", 2)]
    parent = "ra"
    for step in range(steps):
        lines += [_answer(f"c{step}", parent, f"step {step}", 10),
                  _answer(f"l{step}", f"c{step}", f"leaf {step}", 20)]  # fmt: skip
        parent = f"c{step}"
    last = f"l{steps - 1}"
    lines += [
        _answer("f1", last, "fork one", 30),
        _answer("f1-alt", "f1", "branch of fork one", 31),
        _answer("f1-on", "f1", "fork one goes on", 32),
        _answer("f2", "f1-on", "fork two", 33),
        _answer("f2-alt", "f2", "branch of fork two", 34),
        _user("f2-prompt", "f2-alt", "the one prompt", 35),
        _answer("f2-on", "f2", "fork two goes on", 36),
        _user("active", "ra", "the active branch", 40),
    ]
    return parse_session_bytes(_jsonl(lines))


def test_branches_past_the_cap_follow_in_the_order_of_their_forks() -> None:
    """Past MAX_BRANCH_NESTING the transcript put a line's later fork's branches before an
    earlier one's; the outline (not capped) kept fork order, so the two disagreed."""
    session = _deep_line_with_two_forks(MAX_BRANCH_NESTING + 5)
    html = render_session(session)
    transcript = _transcript_ids(html)
    assert transcript.index("f1-alt") < transcript.index("f2-alt")
    assert _outline_ids(html) == transcript
    assert sorted(transcript) == sorted(e.id for e in session.entries)
    # nothing nests deeper than the cap, in the transcript or in the outline
    depth = deepest = 0
    for tag in re.finditer(r'<(/?)details\b(?: class="branch)?', html):
        depth += -1 if tag[1] else 1
        deepest = max(deepest, depth)
    assert deepest <= MAX_BRANCH_NESTING + 1  # (+ a details of the page's own)
    source = _OutlineDepths()
    source.feed(html)
    assert max(source.depths) == MAX_BRANCH_NESTING


def test_a_fork_row_keeps_the_filters_of_branches_placed_after_its_list() -> None:
    """A fork's row stays under a filter that shows a row in its branches, also when the
    branch follows the sub-list the fork is in (past the cap): every fork on the way to the
    one prompt shows under User only, and no other row does."""
    session = _deep_line_with_two_forks(MAX_BRANCH_NESTING + 5)
    html = render_session(session)
    path = session.path_to("f2-prompt")
    path_set = set(session.active_path)
    expected = {
        entry_id
        for entry_id, child in itertools.pairwise(path)
        if session.next_on_line(entry_id, path_set) != child
    }
    assert len(expected) > MAX_BRANCH_NESTING  # forks inside and past the cap
    nav = html[html.index('<ul class="tree"') : html.index("</nav>")]
    rows = re.findall(r'<li class="([^"]*)"><a href="#([^"]+)"', nav)
    assert {entry_id for classes, entry_id in rows if "br-user" in classes.split()} == expected


# --- 3. an id written twice: a name --leaf takes for each copy ---------------------------


def _duplicated(tmp_path: Path, *, copies: int = 2, extra: list[dict[str, Any]] = ()) -> Path:
    """The hunter's dupids.jsonl: ``u2`` written ``copies`` times, all answers to ``u1``; the
    next entry's ``parentId "u2"`` names the latest copy (as in Pi), so the first is a leaf."""
    lines = [_user("u1", None, "first", 1)]
    for n in range(copies):
        lines.append(_answer("u2", "u1", f"copy {n + 1} of u2", 2 + n, 0.002))
    lines += [_answer("u3", "u2", "after", 20, 0.002), *extra]
    path = tmp_path / "dupids.jsonl"
    path.write_bytes(_jsonl(lines))
    return path


def _branch_leaves(output: str) -> list[str]:
    table = output[output.index("Branches (") :].splitlines()[3:]
    return [row[3:].split()[0] for row in table if row.strip()]


def test_stats_names_each_branch_leaf_as_leaf_chooses_it(tmp_path: Path) -> None:
    path = _duplicated(tmp_path)
    runner = CliRunner()
    table = runner.invoke(cli, ["stats", str(path)])
    assert table.exit_code == 0, table.output
    leaves = _branch_leaves(table.stdout)
    assert leaves == ["u3", "u2~1"]  # the first u2: "u2" names the second (as in Pi)
    listed = json.loads(runner.invoke(cli, ["stats", "--json", str(path)]).stdout)
    ids = [b["leaf_id"] for b in listed["usage"]["by_branch"]]
    assert [b["leaf_name"] for b in listed["usage"]["by_branch"]] == leaves  # for scripts
    for said, leaf_id in zip(leaves, ids, strict=True):
        chosen = runner.invoke(cli, ["stats", "--json", "--leaf", said, str(path)])
        assert chosen.exit_code == 0, chosen.output
        assert json.loads(chosen.stdout)["leaf_id"] == leaf_id, said


def test_leaf_by_a_repeated_id_takes_the_latest_and_says_so(tmp_path: Path) -> None:
    path = _duplicated(tmp_path)
    out = tmp_path / "page.html"
    runner = CliRunner()
    latest = runner.invoke(cli, ["export", str(path), "--leaf", "u2", "-o", str(out)])
    assert latest.exit_code == 0, latest.output
    warned = [line for line in latest.stderr.splitlines() if "duplicate-leaf-id" in line]
    assert (
        len(warned) == 1
        and "the latest (line 4) is the leaf" in warned[0]
        and "'u2~1' (line 3)" in warned[0]
    )
    page = out.read_text(encoding="utf-8")
    assert re.search(r'class="[^"]* leaf"><a href="#u2"', page)
    first = runner.invoke(cli, ["export", str(path), "--leaf", "u2~1", "-o", str(out)])
    assert first.exit_code == 0, first.output
    assert "duplicate-leaf-id" not in first.stderr
    page = out.read_text(encoding="utf-8")
    assert re.search(r'class="[^"]* leaf"><a href="#u2~1"', page)
    assert "duplicate-leaf-id" not in page  # said of the choice made, not of an earlier one


def test_every_copy_has_a_name_that_chooses_it(tmp_path: Path) -> None:
    """Three copies, and a file that writes ``u2~1`` itself: each entry's name chooses it."""
    written = _answer("u2~1", "u1", "an id like a copy's name", 30)
    session = parse_session_bytes(_duplicated(tmp_path, copies=3, extra=[written]).read_bytes())
    names = {entry.id: session.leaf_name(entry.id) for entry in session.entries}
    assert names["u2"] == "u2~1~2" and names["u2~2"] == "u2~2" and names["u2~1"] == "u2~1"
    assert len(set(names.values())) == len(names)
    for entry_id, name in names.items():
        session.set_leaf(name)
        assert session.leaf_id == entry_id, name
    session.set_leaf("u2")
    assert session.leaf_id == "u2~3"  # Pi's rule for the plain id
    notes = [d for d in session.diagnostics if d.kind == "duplicate-leaf-id"]
    assert len(notes) == 1 and "'u2~1~2' (line 3), 'u2~2' (line 4)" in notes[0].message
    session.set_leaf("u3")
    assert not [d for d in session.diagnostics if d.kind == "duplicate-leaf-id"]
