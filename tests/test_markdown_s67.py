"""Stop 67 (hunt 6, the Markdown export against the page): a call whose result is on another
branch said "no result" where the page says "result on another branch" and links to it;
entries a compaction took out of the model's context read as ordinary entries, where the
page marks each run of them; a read with no result printed an empty code block; and the
header lacked the page's "Tool calls" fact (this path's calls apart from all branches')."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from tests.conftest import Build
from tests.test_markdown_s66 import _export, _seen, github

RUN_START = "*Not in the model's context from here"
RUN_END = "*End of the entries not in the model's context.*"
#: Words each entry of the branched session says, to find it in either document.
WORDS = (
    "promptone", "turnone", "prompttwo", "turntwo", "readresultword", "promptfive",
    "turnfive", "promptsix", "turnsix", "promptthree", "turnthree", "promptfour", "turnfour",
)  # fmt: skip


def _turn(
    entry_id: str, parent: str, second: int, text: str, *calls: tuple[str, str, dict[str, Any]]
) -> dict[str, Any]:
    line = Build.assistant(entry_id, parent, text, second)
    line["message"]["content"] += [
        {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
        for call_id, name, arguments in calls
    ]
    if calls:
        line["message"]["stopReason"] = "toolUse"
    return line


def _result(entry_id: str, parent: str, second: int, call_id: str, name: str, text: str):
    line = Build.tool_result(entry_id, parent, call_id, name, second)
    line["message"]["content"] = [{"type": "text", "text": text}]
    return line


def _compaction(entry_id: str, parent: str, second: int, kept: str, summary: str):
    return Build.entry(
        "compaction",
        entry_id,
        parent,
        second,
        summary=summary,
        firstKeptEntryId=kept,
        tokensBefore=50_000,
    )


def _branched(write_session: Any) -> Path:
    """The active path calls read and goes on without its result, which is on the branch
    that forks there; a compaction on each line takes entries out of the model's context
    (on the branch, one that keeps an entry not in the file: nothing before it stays)."""
    return write_session(
        [
            Build.header(),
            Build.user("u1", None, "promptone", 1),
            _turn("a1", "u1", 2, "turnone", ("tc1", "bash", {"command": "ls"})),
            _result("r1", "a1", 3, "tc1", "bash", "file1"),
            Build.user("u2", "r1", "prompttwo", 4),
            _turn("a2", "u2", 5, "turntwo", ("tc2", "read", {"path": "x.py"})),
            # the branch: the read's result, then a compaction of its own
            _result("r2", "a2", 6, "tc2", "read", "print('hi') readresultword"),
            Build.user("u5", "r2", "promptfive", 7),
            Build.assistant("a5", "u5", "turnfive", 8),
            _compaction("c2", "a5", 9, "not-in-this-file", "branch summary words"),
            Build.user("u6", "c2", "promptsix", 10),
            _turn("a6", "u6", 11, "turnsix", ("tc3", "bash", {"command": "pwd"})),
            _result("r3", "a6", 12, "tc3", "bash", "/home"),
            # the active path goes on from the call without its result
            Build.user("u3", "a2", "promptthree", 20),
            Build.assistant("a3", "u3", "turnthree", 21),
            _compaction("c1", "a3", 22, "u2", "main summary words"),
            Build.user("u4", "c1", "promptfour", 23),
            Build.assistant("a4", "u4", "turnfour", 24),
        ]
    )


# --- 1: a call whose result is on another branch --------------------------------------------


def test_a_call_whose_result_is_on_another_branch_says_so_with_a_link(
    write_session: Any, tmp_path: Path
) -> None:
    source = _branched(write_session)
    page = _export(source, tmp_path / "page.html")
    document = _export(source, tmp_path / "doc.md")
    assert "result on another branch</a>" in page  # the page's words, linked to the result
    line = "**read** `x.py` · *result on another branch ([Branch 2 of 2](#branch-2-of-2))*"
    assert line in document, document
    assert "*no result*" not in document
    # the link goes where the fork's own line sends the reader, the branch that shows it
    assert "[Branch 2 of 2](#branch-2-of-2) forks here" in document
    branch = document.split("### Branch 2 of 2", 1)[1]
    assert "Tool result `read` (its call is on another branch)" in branch
    assert "readresultword" in branch
    rendered = github(document)
    assert '<em>result on another branch (<a href="#branch-2-of-2">Branch 2 of 2</a>)</em>' in (
        rendered
    )


def test_a_call_with_no_result_anywhere_still_says_no_result(write_session: Any) -> None:
    source = write_session(
        [
            Build.header(),
            Build.user("u1", None, "p1", 1),
            _turn("a1", "u1", 2, "calling", ("tc1", "bash", {"command": "make test"})),
        ]
    )
    document = session_markdown(load_session(source))
    assert "**bash** · *no result*" in document
    assert "another branch" not in document


# --- 2: entries out of the model's context ---------------------------------------------------


class _ContextRuns(HTMLParser):
    """The text inside the page's runs of entries out of the model's context."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # open divs inside the current run (0: not in a run)
        self.runs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        if self.depth:
            self.depth += 1
        elif "ctx-run" in (dict(attrs).get("class") or "").split():
            self.depth = 1
            self.runs.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.runs[-1] += data


def _markdown_runs(document: str) -> list[str]:
    """The text between each start line and its end line in the Markdown."""
    runs: list[str] = []
    inside = False
    for line in document.split("\n"):
        if line.startswith(RUN_START):
            assert not inside, "a run started inside another"
            inside = True
            runs.append("")
        elif line == RUN_END:
            assert inside, "a run ended that had not started"
            inside = False
        elif inside:
            runs[-1] += line + "\n"
    assert not inside, "a run was left open"
    return runs


def _in_runs(runs: list[str]) -> list[list[str]]:
    return [[word for word in WORDS if word in run] for run in runs]


def test_entries_out_of_context_are_marked_as_the_page_marks_them(
    write_session: Any, tmp_path: Path
) -> None:
    source = _branched(write_session)
    page = _export(source, tmp_path / "page.html")
    document = _export(source, tmp_path / "doc.md")
    parser = _ContextRuns()
    parser.feed(page)
    on_page = _in_runs(parser.runs)
    assert on_page == [["promptone", "turnone"], ["readresultword", "promptfive", "turnfive"]]
    assert _in_runs(_markdown_runs(document)) == on_page
    # each start says which compaction replaced them, in the page's words
    main, branch = document.split("## Transcript", 1)[1].split("### Branch 2 of 2", 1)
    assert (
        f"{RUN_START}, to the line “End of the entries not in the model's context”: the "
        "compaction below (2025-01-01 00:00:22 +00:00) replaced these entries with its summary.*"
    ) in main
    assert "the compaction below (2025-01-01 00:00:09 +00:00) replaced these" in branch
    # the start comes before the run's first entry's heading, the end before the first kept
    assert main.index(RUN_START) < main.index("### User") < main.index("promptone")
    assert main.index("turnone") < main.index(RUN_END) < main.index("prompttwo")
    assert branch.index(RUN_START) < branch.index("#### Tool result")
    assert branch.index("branch summary words") < branch.index(RUN_END) < branch.index("promptsix")
    # GitHub shows each as a paragraph of its own, outside any other block
    rendered = github(document)
    starts = re.findall(r"<p><em>Not in the model's context from here[^<]*</em></p>", rendered)
    ends = re.findall(r"<p><em>End of the entries not in the model's context\.</em></p>", rendered)
    assert len(starts) == len(ends) == 2


def test_without_timestamps_the_run_names_its_compaction_without_a_time(
    write_session: Any,
) -> None:
    document = session_markdown(load_session(_branched(write_session)), timestamps=False)
    said = "the compaction below replaced these entries with its summary.*"
    assert document.count(said) == 2
    assert "2025-01-01" not in document


def test_a_session_without_compactions_has_no_run_lines(write_session: Any) -> None:
    source = write_session(
        [Build.header(), Build.user("u1", None, "p1", 1), Build.assistant("a1", "u1", "ok", 2)]
    )
    document = session_markdown(load_session(source))
    assert "model's context" not in document


# --- 3: a read with no result ----------------------------------------------------------------


def test_a_read_with_no_result_has_no_empty_code_block(write_session: Any) -> None:
    source = write_session(
        [
            Build.header(),
            Build.user("u1", None, "p1", 1),
            _turn(
                "a1",
                "u1",
                2,
                "calling",
                ("tc1", "read", {"path": "a.py"}),
                ("tc2", "read", {"path": "b.py", "offset": 3, "limit": 2}),
            ),
        ]
    )
    document = session_markdown(load_session(source))
    assert "**read** `a.py` · *no result*\n\n**read** `b.py`" in document, document
    assert "```python\n```" not in document
    rendered = github(document)
    assert re.search(r"<pre[^>]*><code[^>]*></code></pre>", rendered) is None, rendered
    assert "read a.py · no result" in _seen(rendered)


# --- 4: the header's "Tool calls" -------------------------------------------------------------


def _page_tool_calls(page: str) -> str:
    found = re.search(r"<dt>Tool calls</dt><dd>(.*?)</dd>", page, re.S)
    assert found, "the page has a Tool calls fact"
    return _seen(found.group(1))


def _markdown_tool_calls(document: str) -> str:
    found = re.search(r"<li><strong>Tool calls:</strong>(.*?)</li>", github(document), re.S)
    assert found, "the Markdown has a Tool calls fact"
    return _seen(found.group(1))


def test_the_header_says_the_tool_calls_as_the_page_does(
    write_session: Any, tmp_path: Path
) -> None:
    branched = _branched(write_session)
    document = _export(branched, tmp_path / "doc.md")
    assert "- **Tool calls:** 2 on this path · 3 on all branches: `bash` 2, `read` 1\n" in document
    page = _export(branched, tmp_path / "page.html")
    assert _markdown_tool_calls(document) == _page_tool_calls(page)
    # after the entries, before the tree, as on the page
    head = document.split("\n\n## ", 1)[0]
    assert head.index("**Entries:**") < head.index("**Tool calls:**") < head.index("**Tree:**")

    one_line = write_session(
        [
            Build.header(),
            Build.user("u1", None, "p1", 1),
            _turn("a1", "u1", 2, "go", ("t1", "bash", {"command": "ls"})),
            _result("r1", "a1", 3, "t1", "bash", "x"),
        ]
    )
    document = _export(one_line, tmp_path / "one.md")
    assert "- **Tool calls:** 1 · `bash` 1\n" in document
    assert _markdown_tool_calls(document) == _page_tool_calls(
        _export(one_line, tmp_path / "one.html")
    )

    none = write_session(
        [Build.header(), Build.user("u1", None, "p1", 1), Build.assistant("a1", "u1", "ok", 2)]
    )
    document = _export(none, tmp_path / "none.md")
    assert "- **Tool calls:** none\n" in document
    assert _markdown_tool_calls(document) == _page_tool_calls(_export(none, tmp_path / "n.html"))
