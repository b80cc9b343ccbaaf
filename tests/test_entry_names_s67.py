"""Stop 67: an id a file writes twice was named three ways. ``--leaf a2`` and Pi's
``?targetId=a2`` choose the latest copy, ``stats`` called the earlier one ``a2~1``, but
``search`` printed ``a2`` for the earlier copy and ``a2~2`` for the latest, the page's
``#a2`` and ``data-entry-id="a2"`` were the earlier copy, and the warning said the latest
was "kept as 'a2~2'". And a label on an entry the file does not have was in ``stats
--json`` and the Markdown's list of labels but not in the header's count ("7 labels" over
a list of 8)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from tests.browser_util import PageServer, Viewer, open_recording_highlights, wait_highlighted

pytest_plugins = ["tests.browser_util"]


def _line(entry_id: str, parent: str | None, role: str, text: str, second: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": f"2025-06-01T10:00:{second:02d}.000Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 0},
    }


def _write(tmp_path: Path, lines: list[dict[str, Any]], name: str) -> Path:
    header = {"type": "session", "version": 3, "id": "s67-names", "cwd": "/srv/app",
              "timestamp": "2025-06-01T10:00:00.000Z"}  # fmt: skip
    path = tmp_path / name
    text = "".join(json.dumps(line) + "\n" for line in [header, *lines])
    path.write_text(text, encoding="utf-8")
    return path


def _twice_written(tmp_path: Path) -> Path:
    """``a2`` on lines 3 and 4; ``u3`` (line 5) names ``a2``: the latest copy, as in Pi, so
    the first copy is a leaf of its own."""
    return _write(
        tmp_path,
        [
            _line("u1", None, "user", "the question", 1),
            _line("a2", "u1", "assistant", "first copy words", 2),
            _line("a2", "u1", "assistant", "second copy words", 3),
            _line("u3", "a2", "user", "after the second copy", 4),
        ],
        "twice.jsonl",
    )


def test_search_names_each_copy_as_leaf_takes_it(tmp_path: Path) -> None:
    path = _twice_written(tmp_path)
    runner = CliRunner()
    found = runner.invoke(cli, ["search", "--json", "copy words", str(path)])
    assert found.exit_code == 0, found.output
    matches = [json.loads(line) for line in found.stdout.splitlines()]
    named = {m["entry_id"]: (m["snippet"], m["on_active_path"]) for m in matches}
    assert named == {"a2~1": ("first copy words", False), "a2": ("second copy words", True)}
    session = load_session(path)
    for name, (snippet, _) in named.items():  # the name --leaf takes chooses that copy
        session.set_leaf(name)
        assert session.by_id[session.leaf_id].text == snippet, name
    text = runner.invoke(cli, ["search", "copy words", str(path)]).stdout
    assert re.search(r"^  a2~1  assistant \(other branch\): first \[copy words\]$", text, re.M)
    assert re.search(r"^  a2    assistant: second \[copy words\]$", text, re.M), text


def test_stats_and_the_warning_name_the_copies_as_search_does(tmp_path: Path) -> None:
    done = CliRunner().invoke(cli, ["stats", str(_twice_written(tmp_path))])
    assert done.exit_code == 0, done.output
    warned = [line for line in done.stderr.splitlines() if "[duplicate-id]" in line]
    assert warned == [
        "pi-session: warning: line 4: id 'a2' already used on line 3; as in Pi, it names "
        "this later copy, and line 3's is 'a2~1' [duplicate-id]"
    ]
    table = done.stdout[done.stdout.index("Branches (") :].splitlines()[3:]
    assert [row[3:].split()[0] for row in table if row.strip()] == ["u3", "a2~1"]


def _articles(html: str) -> dict[str, tuple[str, str]]:
    """data-entry-id -> (DOM id, the article's markup)."""
    found = re.finditer(
        r'<article data-entry-id="([^"]+)"[^>]* id="([^"]+)">(.*?)</article>', html, re.S
    )
    return {m.group(1): (m.group(2), m.group(3)) for m in found}


def test_the_pages_anchor_and_target_id_are_the_copy_the_cli_names(
    tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    out = tmp_path / "twice.html"
    done = CliRunner().invoke(cli, ["export", str(_twice_written(tmp_path)), "-o", str(out)])
    assert done.exit_code == 0, done.output
    html = out.read_text(encoding="utf-8")
    articles = _articles(html)
    assert articles["a2"][0] == "a2" and "second copy words" in articles["a2"][1]
    assert articles["a2~1"][0] == "a2~1" and "first copy words" in articles["a2~1"][1]
    assert "a2~2" not in html.split("<main", 1)[1].split("session-jsonl", 1)[0]
    url = page_server.publish("s67-twice.html", html)
    for link in ("#a2", "?targetId=a2", "#" + quote("a2~1"), "?targetId=" + quote("a2~1")):
        page = open_recording_highlights(viewer, url + link)  # (a highlight lasts 2 s)
        wait_highlighted(page, "article")
        (shown,) = page.evaluate(
            "() => window.__highlighted.filter(e => e.matches('article')).map(e => e.innerText)"
        )
        copy = "first" if "~1" in link else "second"
        assert f"{copy} copy words" in shown, (link, shown)
    viewer.assert_clean()


def _labelled(tmp_path: Path) -> Path:
    """Two labels: one on u1, one on an id no line of the file has."""
    label = {"type": "label", "parentId": "a1", "timestamp": "2025-06-01T10:00:05.000Z"}
    return _write(
        tmp_path,
        [
            _line("u1", None, "user", "the question", 1),
            _line("a1", "u1", "assistant", "the answer", 2),
            {**label, "id": "l1", "targetId": "u1", "label": "on-the-question"},
            {**label, "id": "l2", "parentId": "l1", "targetId": "gone", "label": "on-nothing"},
        ],
        "labels.jsonl",
    )


def test_every_output_counts_the_labels_it_lists(tmp_path: Path) -> None:
    path = _labelled(tmp_path)
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["stats", "--json", str(path)]).stdout)["labels"]
    assert listed == {"u1": "on-the-question", "gone": "on-nothing"}
    said = "2 labels (1 on an entry not in the file)"
    stats = runner.invoke(cli, ["stats", str(path)]).stdout
    assert re.search(rf"^  tree +.*\b{re.escape(said)}$", stats, re.M), stats
    out = tmp_path / "labels.md"
    assert runner.invoke(cli, ["export", str(path), "-o", str(out)]).exit_code == 0
    document = out.read_text(encoding="utf-8")
    assert f"- **Tree:** 1 branch, {said}\n" in document
    marks = document.split("**Labels:**\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(marks) == len(listed) == 2
    page = tmp_path / "labels.html"
    assert runner.invoke(cli, ["export", str(path), "-o", str(page)]).exit_code == 0
    assert f"<dt>Tree</dt><dd>1 branch, {said}</dd>" in page.read_text(encoding="utf-8")
