"""Gaps a reader of every fixture's Markdown found (helper 154): runs of model and
thinking-level changes, branches that open with a summary, needless backslashes in
escaped text, headings past level 6 and cut-off edit calls."""

from __future__ import annotations

import json

from markdown_it import MarkdownIt

from exporter.loader import load_session, parse_session_bytes
from exporter.markdown_doc import session_markdown
from exporter.session import Session
from tests.conftest import FIXTURES_DIR

VIEWER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _document(name: str) -> str:
    return session_markdown(load_session(FIXTURES_DIR / name))


def _session(*entries: dict) -> Session:
    """A v3 session of ``entries`` in a chain (ids e1, e2, … unless given)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z",
              "cwd": "/p"}  # fmt: skip
    lines, parent = [header], None
    for number, entry in enumerate(entries, 1):
        entry = {"id": f"e{number}", "parentId": parent,
                 "timestamp": f"2025-06-01T10:{number:02d}:00Z", **entry}  # fmt: skip
        lines.append(entry)
        parent = entry["id"]
    return parse_session_bytes("".join(json.dumps(line) + "\n" for line in lines).encode())


def _user(text: str, **more: object) -> dict:
    return {"type": "message", "message": {"role": "user", "content": text}, **more}


def _level(level: str, **more: object) -> dict:
    return {"type": "thinking_level_change", "thinkingLevel": level, **more}


# --- 1. runs of model and thinking-level changes --------------------------------------------


def test_a_run_of_thinking_level_changes_is_one_line_in_the_large_session() -> None:
    """pi-large-session had runs of 10 to 16 "Thinking level" lines in a row."""
    document = _document("pi-large-session.jsonl")
    lines = [line for line in document.split("\n") if line]
    runs = [
        i
        for i in range(len(lines) - 1)
        if lines[i].startswith("*Thinking level") and lines[i + 1].startswith("*Thinking level")
    ]
    assert runs == []
    assert "\n*Thinking level: `low` → `off` (16 changes)*\n" in document
    assert "\n*Thinking level changed 15 times, ending at `off`*\n" in document
    assert "\n*Thinking level changed 10 times, back to `off`*\n" in document


def test_a_fork_or_label_inside_a_run_keeps_its_id_in_the_transcript() -> None:
    """A run ends at a change a branch leaves from or a label marks: the line under it
    names that entry's id, and the branch's link is there."""
    session = _session(
        _user("start"),
        _level("low"),
        _level("medium"),
        _level("high", id="fork"),
        _level("off"),
        _level("minimal", id="marked"),
        _level("low"),
        _user("main path"),
        _user("the other branch", id="other", parentId="fork"),
        {"type": "label", "targetId": "marked", "label": "here"},
    )
    session.set_leaf("e8")
    document = session_markdown(session)
    transcript = document.split("\n## Other branches\n", 1)[0]
    assert "*Thinking level changed 3 times, ending at `high`*" in transcript
    assert "forks here, after entry `fork`, the last of the 3 changes just above.*" in transcript
    assert "(#branch-2-of-2)" in transcript
    assert "**Label** `here` · id `marked`, the last of the 2 changes above" in transcript
    assert "\n*Thinking level: `minimal` → `low` (1 changes)*" not in transcript
    assert "\n*Thinking level: `low`*\n" in transcript  # a run of one says it as before


def test_a_run_says_the_level_before_it() -> None:
    session = _session(
        _user("start"),
        _level("off"),
        _user("go on"),
        _level("low"),
        _level("medium"),
        _level("high"),
        {"type": "model_change", "provider": "p", "modelId": "a"},
        {"type": "model_change", "provider": "p", "modelId": "b"},
        _user("done"),
    )
    document = session_markdown(session)
    assert (
        "\n*Model changed 2 times, ending at `p/b`; thinking level: `off` → `high` "
        "(3 changes)*\n" in document
    )


# --- 2. a branch that opens with a summary --------------------------------------------------


def test_a_branch_that_opens_with_a_summary_says_so_in_its_heading() -> None:
    """Branch 7 of pi-branched-1 opens with a branch summary: its heading said only its
    first prompt, which comes after the summary."""
    document = _document("pi-branched-1.jsonl")
    heading = document.split("\n### Branch 7 of 7\n", 1)[1].split("\n####", 1)[0]
    assert (
        "Starts with a summary of an abandoned branch: “Abandoned path: tried a rewrite in "
        "Rust and reverted.”" in heading
    )
    assert heading.index("Starts with") < heading.index("First prompt:")
    document = _document("pi-branched-3.jsonl")
    assert document.count("\nStarts with a summary of an abandoned branch: ") == 2


def test_a_branch_that_opens_with_a_compaction_says_so() -> None:
    session = _session(
        _user("start"),
        _user("main"),
        {
            "type": "compaction",
            "parentId": "e1",
            "summary": "Kept *the* plan [x](y)",
            "firstKeptEntryId": "e1",
            "tokensBefore": 10,
        },
        _user("after the compaction"),
    )
    session.set_leaf("e2")
    document = session_markdown(session)
    heading = document.split("\n### Branch 2 of 2\n", 1)[1].split("\n####", 1)[0]
    assert "Starts with a compaction: “Kept \\*the\\* plan \\[x\\](y)”" in heading
    assert not [t for t in VIEWER.parseInline(heading)[0].children if t.type == "link_open"]


# --- 3. escaping only what Markdown needs ---------------------------------------------------


def test_quoted_text_has_no_backslash_before_a_pipe() -> None:
    """The labels of pi-branched-1 quoted ``build 2\\>&1 \\|…``: a "|" makes no markup on a
    line of text (a table needs a delimiter row under it, in the same container)."""
    document = _document("pi-branched-1.jsonl")
    assert (
        "- `before-refactor` on `bb420369`: assistant: \\[bash: cd packages/coding-agent && "
        "npm run build 2>&1 |…\\]\n" in document
    )
    rendered = VIEWER.render(document.split("## Usage", 1)[0])
    assert "npm run build 2&gt;&amp;1 |…]" in rendered
    assert "<table>" not in rendered  # a pipe on a line of its own makes no table


def test_a_quote_marker_at_the_start_stays_text_and_pipes_in_a_table_stay_in_their_cell() -> None:
    from exporter.markdown_text import escaped

    said = escaped("> not a quote | nor | a table")
    assert said == "\\> not a quote | nor | a table"
    assert next(t.type for t in VIEWER.parse(said)) == "paragraph_open"
    session = _session(
        _user("hi"),
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "provider": "a|b",
                "model": "c|d",
                "content": [{"type": "text", "text": "ok"}],
                "stopReason": "stop",
                "usage": {"input": 1, "output": 1},
            },
        },
    )
    document = session_markdown(session)
    usage = document.split("## Usage", 1)[1].split("**Tools**", 1)[0]
    table = "\n".join(line for line in usage.split("\n") if line.startswith("|"))
    tokens = VIEWER.parse(table)
    cells = [t for t in tokens if t.type == "td_open"]
    assert len(cells) == 14  # two rows of seven: the model's "|" split no cell
    assert "a|b/c|d" in VIEWER.render(table)


# --- 4. headings past level 6 ---------------------------------------------------------------


def test_a_heading_past_level_6_is_a_bold_line_of_its_own() -> None:
    """pi-large-session's Markdown sampler: "Level 3 Heading" and "Level 4 Heading" were
    both level 6 headings, the depth between them lost."""
    document = _document("pi-large-session.jsonl")
    assert "\n###### Level 3 Heading\n\n**Level 4 Heading**\n\n##### Text Formatting\n" in document
    tokens = VIEWER.parse(document)
    texts = [
        (tokens[i - 1].type, tokens[i + 1].type)
        for i, t in enumerate(tokens)
        if t.type == "inline" and t.content == "**Level 4 Heading**"
    ]
    assert texts and set(texts) == {("paragraph_open", "paragraph_close")}


def test_deep_headings_in_quotes_and_lists_stay_there_and_seven_hashes_stay_text() -> None:
    from exporter.markdown_text import prose

    said = prose("# A\n## B\n### C\ntext\n> x\n> #### D ##\n> y\n\n####### seven\nmore", 4)
    # "seven\": a hard break, as the page shows "more" on a line of its own
    assert said.split("\n") == [
        "##### A", "###### B", "", "**C**", "", "text", "> x", ">", "> **D**", ">", "> y",
        "", "####### seven\\", "more",
    ]  # fmt: skip
    tokens = VIEWER.parse(said)
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h5", "h6"]
    assert "<p>####### seven<br />\nmore</p>" in VIEWER.render(said)


# --- 5. a cut-off edit call ------------------------------------------------------------------


def test_a_cut_off_edit_shows_what_could_be_read_and_says_it_was_cut_off() -> None:
    """pi-large-session's aborted edit of nord.json had its oldText and no newText: it
    was shown as one JSON string of escaped quotes, tabs and line breaks."""
    document = _document("pi-large-session.jsonl")
    at = document.index("**edit** `~/.pi/agent/themes/nord.json` · *no result*\n\n*Cut off")
    part = document[at:].split("> **Aborted** by the user", 1)[0]
    assert "*Cut off: the call's arguments end before its `newText`; what could be read" in part
    assert '*oldText:*\n\n```json\n\t\t"mdHeading": "#f0c674",\n\t\t"mdLink": "#81a2be",\n' in part
    assert '\\"' not in part and '"oldText":' not in part


def test_a_cut_off_edit_of_many_pairs_names_what_is_missing() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "edit",
            "arguments": {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"},
                                                    {"oldText": "<b>y</b>"}]}}  # fmt: skip
    session = _session(
        _user("edit it"),
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "provider": "p",
                "model": "m",
                "content": [call],
                "stopReason": "length",
            },
        },
    )
    document = session_markdown(session)
    assert "*Cut off: the call's arguments end before its `newText` (2 of 2); " in document
    assert "*oldText (2 of 2):*\n\n```python\n<b>y</b>\n```" in document
    assert "*newText (1 of 2):*\n\n```python\nx = 2\n```" in document
    tokens = VIEWER.parse(document)
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
