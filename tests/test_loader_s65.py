"""Session 65's loader fixes, each held against Pi 0.73.1 where Pi decides:

1. number ids (``"id":1 … "parentId":1``) are one conversation, as Pi's Map finds them;
   the number 1 and the string "1" stay two ids, as there;
2. a custom message without a truthy ``display`` is hidden, as Pi's chat view hides it;
3. siblings come in Pi's getTree order: epoch numbers are times, a time JavaScript cannot
   read lands where V8's sort leaves it, times equal to the millisecond keep file order;
4. roots keep file order;
6. `stats --json` costs keep what a turn cost (rounded to 6 decimals, $0.0000004 read 0.0);
7. a token count that is no whole number from 0 to 2**53 counts as none, with a warning.

(5., the message's own time first as Pi's "modified" takes it, waits for `list`'s fast scan:
see ``exporter.times.message_time``.)
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.entries import MessageEntry
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from exporter.render import RenderOptions, render_session
from exporter.session import Session
from tests.conftest import dump_lines, iso
from tests.test_differential_pi import PI_EACH_FILE, roles_in_context, run_pi_script

pytest_plugins = ["tests.browser_util"]

#: What Pi's SessionManager makes of each file, entries named by their place in the file
#: (Pi's getEntries order): getTree's roots and its children where there are several, the
#: active path, the labels and the number of messages buildSessionContext sends.
PI_TREE_SCRIPT = (
    PI_EACH_FILE
    + r"""
  const place = new Map(sm.getEntries().map((e, i) => [e, i]));
  const tree = sm.getTree();
  const children = {};
  const stack = [...tree];
  while (stack.length) {
    const node = stack.pop();
    const kids = node.children.map((c) => place.get(c.entry));
    if (kids.length > 1) children[place.get(node.entry)] = kids;
    stack.push(...node.children);
  }
  const labels = [...sm.labelsById].map(([id, text]) => [place.get(sm.getEntry(id)) ?? null, text]);
  const roles = sm.buildSessionContext().messages.map((m) => m.role);
  console.log(JSON.stringify({
    file, roots: tree.map((r) => place.get(r.entry)), children,
    path: sm.getBranch().map((e) => place.get(e)), labels, roles,
  }));
}
rmSync(root, { recursive: true, force: true });
"""
)

HEADER = {"type": "session", "version": 3, "id": "s65", "timestamp": iso(0), "cwd": "/w/p"}


#: A line's timestamp left out (JavaScript's undefined), or the usual one.
_ABSENT, _USUAL = object(), object()


def _line(kind: str, entry_id: Any, parent: Any, stamp: Any = _USUAL, **fields: Any) -> dict:
    """A v3 line whose id, parent and timestamp may be any JSON value."""
    line: dict[str, Any] = {"type": kind, "id": entry_id, "parentId": parent}
    if stamp is not _ABSENT:
        line["timestamp"] = iso(1) if stamp is _USUAL else stamp
    return line | fields


def _user(entry_id: Any, parent: Any, text: str = "q", stamp: Any = _USUAL) -> dict:
    message = {"role": "user", "content": text, "timestamp": 1735689601000}
    return _line("message", entry_id, parent, stamp, message=message)


def _answer(entry_id: Any, parent: Any, text: str = "a", stamp: Any = _USUAL, **usage: Any) -> dict:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "provider": "p",
        "model": usage.pop("model", "m"),
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, **usage},
        "stopReason": "stop",
        "timestamp": 1735689602000,
    }
    return _line("message", entry_id, parent, stamp, message=message)


def _write(folder: Path, name: str, lines: list[dict]) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_bytes(dump_lines([HEADER, *lines]))
    return path


def _ours(session: Session) -> dict[str, Any]:
    """The script's facts, from our reading."""
    place = {entry.id: i for i, entry in enumerate(session.entries)}
    return {
        "roots": [place[r] for r in session.roots],
        "children": {
            str(place[parent]): [place[kid] for kid in kids]
            for parent, kids in session.children.items()
            if len(kids) > 1
        },
        "path": [place[i] for i in session.active_path],
        "labels": sorted([place.get(target), label] for target, label in session.labels.items()),
        "roles": roles_in_context(session),
    }


# --- the files Pi reads too ---------------------------------------------------------------------


def _number_ids() -> list[dict]:
    """A conversation whose ids are numbers, a float among them, a label and a compaction
    naming entries by number (what a tool other than Pi may write)."""
    return [
        _user(1, None, "first question"),
        _answer(2, 1, "first answer"),
        _user(3, 2.0, "second question"),  # 2.0 is 2 to JavaScript
        _answer(4.5, 3, "second answer"),
        _line("label", 5, 4.5, targetId=2, label="the first answer"),
        _line("compaction", 6, 5, summary="so far", firstKeptEntryId=3, tokensBefore=9),
        _user(1e21, 6, "third question"),
        _answer(8, 1e21, "third answer"),
    ]


def _number_and_string() -> list[dict]:
    """The number 1 and the string "1": two ids to Pi's Map."""
    return [
        _user(1, None, "number one"),
        _answer(2, "1", "names the string: no such entry in Pi"),
        _user("1", None, "string one"),
        _answer(3, 1, "names the number"),
    ]


def _sibling_times() -> list[dict]:
    """Forks whose children's times Pi reads unlike an ISO-only reading: epoch numbers, a
    string of digits, null (0 to JavaScript), none, garbage, a time past the millisecond."""
    return [
        _user("r", None),
        # epoch milliseconds, written newest first: Pi puts them oldest first
        _answer("n1", "r", stamp=1735689605000),
        _answer("n2", "r", stamp=1735689604000),
        _answer("n3", "r", stamp=1735689603000),
        _user("s", "r", stamp="2025-01-01T00:00:09.000Z"),
        # the hunters' mixed fork
        _answer("k1", "s", stamp="bogus"),
        _answer("k2", "s", stamp="2025-01-01T00:00:05.000Z"),
        _answer("k3", "s", stamp="2025-01-01T02:00:03+02:00"),
        _answer("k4", "s", stamp="2025-01-01T00:00:1735689604000.000Z"),
        _answer("k5", "s", stamp=None),
        _answer("k6", "s", stamp="2025-01-01T00:00:02Z"),
        _answer("k7", "s", stamp=_ABSENT),
        _answer("k8", "s", stamp="1735689601000"),
        _user("t", "r", stamp="2025-01-01T00:00:10.000Z"),
        # the same millisecond to JavaScript: file order
        _answer("e1", "t", stamp="2025-01-01T00:00:05.0001Z"),
        _answer("e2", "t", stamp="2025-01-01T00:00:05Z"),
    ]


def _random_siblings(seed: int) -> list[dict]:
    """Forks of 2 to 100 children, their times drawn from every kind above."""
    rng = random.Random(seed)
    kinds = [
        lambda: rng.randint(0, 30) * 1000 + 1735689600000,
        lambda: iso(rng.randint(0, 30)),
        lambda: iso(rng.randint(0, 30)).replace(".000Z", f".{rng.randint(0, 9999):04d}Z"),
        lambda: "bogus",
        lambda: {"at": 1},
        lambda: _ABSENT,
        lambda: [iso(rng.randint(0, 30))],
        lambda: True,
    ]
    lines = [_user("r", None)]
    for fork, size in enumerate([2, 3, 5, 8, 13, 31, 63, 64, 70, 100]):
        lines.append(_user(f"f{fork}", "r", stamp=iso(40 + fork)))
        weights = [rng.random() for _ in kinds]
        for child in range(size):
            (kind,) = rng.choices(kinds, weights)
            lines.append(_answer(f"f{fork}c{child}", f"f{fork}", stamp=kind()))
    return lines


def _roots_order() -> list[dict]:
    """A root, an orphan and a second root dated before the first."""
    return [
        _user("u1", None, "main", stamp="2025-01-01T00:00:05.000Z"),
        _answer("a1", "u1", stamp="2025-01-01T00:00:06.000Z"),
        _user("o1", "gone", "orphan early", stamp="2025-01-01T00:00:01.000Z"),
        _user("r2", None, "root early", stamp="2025-01-01T00:00:02.000Z"),
        _user("u2", "a1", "q", stamp="2025-01-01T00:00:07.000Z"),
    ]


FILES = {
    "number-ids": _number_ids,
    "number-and-string": _number_and_string,
    "sibling-times": _sibling_times,
    "random-siblings-1": lambda: _random_siblings(1),
    "random-siblings-2": lambda: _random_siblings(2),
    "roots-order": _roots_order,
}


@pytest.fixture(scope="module")
def pi_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("s65-pi")
    return {name: _write(folder, name, make()) for name, make in FILES.items()}


@pytest.fixture(scope="module")
def pi_trees(pi_pkg: Path, pi_files, node_runner, tmp_path_factory) -> dict[str, dict]:
    """One node process for every file: Pi's reading of each."""
    folder = tmp_path_factory.mktemp("s65-script")
    spec = {"files": [str(p) for p in pi_files.values()], "tmp": str(folder)}
    records = run_pi_script(PI_TREE_SCRIPT, pi_pkg, spec, folder, node_runner)
    by_file = {record.pop("file"): record for record in records}
    return {name: by_file[str(path)] for name, path in pi_files.items()}


@pytest.mark.pi
@pytest.mark.parametrize("name", list(FILES))
def test_the_tree_is_pis(name: str, pi_files, pi_trees) -> None:
    """Roots, every fork's children in order, the active path, the labels and what the
    model is sent, entry by entry, as Pi's SessionManager reads the same file."""
    pi = pi_trees[name]
    pi["labels"] = sorted(pi["labels"])
    assert _ours(load_session(pi_files[name])) == pi


@pytest.mark.pi
def test_number_ids_are_one_conversation(pi_files, pi_trees) -> None:
    """Each number id was "no string id", each parent "no usable parentId": 4 roots, seven
    warnings, and the active path was the last answer alone."""
    session = load_session(pi_files["number-ids"])
    assert [e.id for e in session.entries] == ["1", "2", "3", "4.5", "5", "6", "1e+21", "8"]
    assert session.active_path == [e.id for e in session.entries]
    assert session.roots == ["1"] and session.diagnostics == []
    assert session.labels == {"2": "the first answer"}
    assert pi_trees["number-ids"]["path"] == list(range(8))
    assert load_session(pi_files["number-ids"], leaf_id="2").active_path == ["1", "2"]
    page = render_session(session, RenderOptions(jobs=1))
    assert page.count('data-entry-id="1e+21"') >= 1 and "third answer" in page


@pytest.mark.pi
def test_the_number_one_is_not_the_string_one(pi_files, pi_trees) -> None:
    """To Pi's Map, ``1`` and ``"1"`` are two ids: a parent "1" does not find the number."""
    session = load_session(pi_files["number-and-string"])
    number_one = session.entries[0].id
    assert number_one == "1 (number)" and session.entries[2].id == "1"
    assert session.parent_of(session.entries[3].id) == number_one
    assert session.parent_of(session.entries[1].id) == "1"  # the string one, written later
    (note,) = [d for d in session.diagnostics if d.kind == "number-ids"]
    assert note.message == (
        'the file writes "1" both as a number and as a string: two ids to Pi, so its number'
        " ids are named like '1 (number)' here"
    )
    assert pi_trees["number-and-string"]["roots"] == [0, 2]


# --- 2. custom messages Pi's chat view hides --------------------------------------------------


def _custom_display_lines() -> list[dict]:
    def custom(entry_id: str, parent: str, text: str, **display: Any) -> dict:
        message = {"role": "custom", "customType": "ext-state", "content": text, **display}
        return _line("message", entry_id, parent, iso(2), message=message)

    return [
        _user("u1", None, "hi"),
        custom("c1", "u1", "NO DISPLAY KEY"),
        custom("c2", "c1", "DISPLAY NULL", display=None),
        custom("c3", "c2", "DISPLAY ZERO", display=0),
        custom("c4", "c3", "DISPLAY EMPTY", display=""),
        custom("c5", "c4", "DISPLAY TRUE", display=True),
        custom("c6", "c5", "DISPLAY WORD", display="yes"),
        _user("u2", "c6", "bye"),
    ]


def test_a_custom_message_without_a_truthy_display_is_hidden(tmp_path: Path) -> None:
    """Pi's chat view shows a custom message only ``if (message.display)``
    (interactive-mode.js, addMessageToChat); those without it, null, 0 or "" were shown
    here. Other roles have no such field and stay shown."""
    session = load_session(_write(tmp_path, "custom", _custom_display_lines()))
    shown = {e.id: e.display for e in session.entries if isinstance(e, MessageEntry)}
    assert shown == {"u1": True, "c1": False, "c2": False, "c3": False, "c4": False,
                     "c5": True, "c6": True, "u2": True}  # fmt: skip
    markdown = session_markdown(session)
    assert "DISPLAY TRUE" in markdown and "DISPLAY WORD" in markdown
    for hidden in ("NO DISPLAY KEY", "DISPLAY NULL", "DISPLAY ZERO", "DISPLAY EMPTY"):
        assert hidden not in markdown


@pytest.mark.browser
def test_the_page_hides_them_until_all_is_chosen(tmp_path: Path, viewer, page_server) -> None:
    """In Chromium: under the Default filter the reader sees the shown custom messages and
    not the hidden ones; under All, every one."""
    session = load_session(_write(tmp_path, "custom", _custom_display_lines()))
    url = page_server.publish("s65-custom.html", render_session(session, RenderOptions(jobs=1)))
    page = viewer.open(url)

    def visible(entry_id: str) -> bool:
        return page.is_visible(f'#transcript article[data-entry-id="{entry_id}"]')

    assert page.is_checked("#flt-default")
    assert [visible(i) for i in ("c1", "c2", "c3", "c4", "c5", "c6", "u2")] == [
        False, False, False, False, True, True, True,
    ]  # fmt: skip
    page.click('label[for="flt-all"]')
    assert all(visible(i) for i in ("c1", "c2", "c3", "c4", "c5", "c6"))
    viewer.assert_clean()


# --- 6. and 7. `stats`: a cost kept, a token count that is none ----------------------------


def _stats(*args: str) -> Result:
    return CliRunner().invoke(cli, ["stats", *args], catch_exceptions=False)


def test_stats_json_keeps_a_small_cost_and_drops_float_noise(tmp_path: Path) -> None:
    """Each model's row was rounded to 6 decimals: 0.0 under a total of 1e-06."""
    path = _write(tmp_path, "costs", [
        _user("u1", None),
        _answer("a1", "u1", model="tiny-1", cost={"total": 0.0000004}),
        _user("u2", "a1"),
        _answer("a2", "u2", model="tiny-2", cost={"total": 0.0000004}),
        _user("u3", "a2"),
        _answer("a3", "u3", model="big", cost={"total": 0.1}),
        _user("u4", "a3"),
        _answer("a4", "u4", model="big", cost={"total": 0.2}),
    ])  # fmt: skip
    usage = json.loads(_stats("--json", str(path)).stdout)["usage"]
    assert [(m["model"], m["cost"]) for m in usage["by_model"]] == [
        ("p/tiny-1", 4e-07), ("p/tiny-2", 4e-07), ("p/big", 0.3),
    ]  # fmt: skip
    assert usage["all"]["cost"] == 0.3000008


def test_an_absurd_token_count_is_none_and_said(tmp_path: Path) -> None:
    """``"input": 1e308`` became a 309-digit count that widened every table, -500 took
    tokens away; a count is a whole number from 0 to 2**53 (``100.0`` is 100 to Pi's
    JavaScript), else 0 with one warning, as another agent's are."""
    path = _write(tmp_path, "tokens", [
        _user("u1", None),
        _answer("a1", "u1", input=1e308, output=1e308),
        _user("u2", "a1"),
        _answer("a2", "u2", input=-500, output=1.5),
        _user("u3", "a2"),
        _answer("a3", "u3", input="100", output=100.0),
        _user("u4", "a3"),
        _answer("a4", "u4", input=2**53, output=10**30),
    ])  # fmt: skip
    done = _stats(str(path))
    assert max(len(line) for line in done.stdout.splitlines()) < 120, done.stdout
    assert (
        "line 3: token count 1e+308 in a turn's usage is not a whole number from 0 to 2**53 "
        "(and 3 more turns); counted as 0 tokens [bad-usage]"
    ) in done.stderr
    usage = json.loads(_stats("--json", str(path)).stdout)["usage"]["all"]
    assert (usage["input"], usage["output"]) == (2**53, 100)
