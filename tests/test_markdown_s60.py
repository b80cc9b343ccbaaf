"""Markdown export: the defects a hunt with GitHub's own parser (cmark-gfm) found after s58.

A traceback on a quoted list item that opens an HTML block and a bare ">" after it (a
markdown-it bug); an empty list item and a line of spaces, and tabs after ">" or a list
marker, which cmark (GitHub) and markdown-it (this module's parse) read apart; a bare web
address in a table cell taking a code span's backtick; and a heading in a message taking
a branch heading's anchor. Each is checked with cmark-gfm, the library GitHub renders with.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import cmarkgfm
import pytest
from click.testing import CliRunner
from cmarkgfm.cmark import Options

from exporter import markdown_text
from exporter.cli import cli
from exporter.loader import parse_session_bytes
from exporter.markdown_doc import session_markdown
from exporter.markdown_text import ends_in_a_list, fenced, prose, quoted
from exporter.session import Session
from tests.test_markdown_export import _answer, _crafted, _text

IMG = "<img src=x onerror=alert(1)>"
#: What GitHub's renderer may make of a message's text: anything else is live HTML.
_ALLOWED = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "code", "pre", "em"}
_ALLOWED |= {"strong", "a", "table", "thead", "tbody", "tr", "th", "td", "blockquote", "hr"}
_ALLOWED |= {"br", "del", "input"}
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)([^>]*)>")


def github(markdown: str) -> str:
    """``markdown`` as GitHub's cmark-gfm renders it, raw HTML let through (as a viewer
    without GitHub's sanitiser would show it)."""
    return cmarkgfm.markdown_to_html_with_extensions(
        markdown,
        options=Options.CMARK_OPT_UNSAFE,
        extensions=["table", "autolink", "strikethrough", "tasklist"],
    )


def live_tags(rendered: str) -> list[str]:
    """The tags in ``rendered`` that Markdown of its own never makes (raw HTML)."""
    return [m.group() for m in _TAG.finditer(rendered) if m.group(2).lower() not in _ALLOWED]


def _safe_in_a_document(said: str) -> str:
    """``said`` between two of the document's headings, as GitHub renders it: no raw
    HTML, and the heading after it is still one (no fence swallowed the rest)."""
    rendered = github(f"### Entry\n\n{said}\n\n### After\n\nend\n")
    assert live_tags(rendered) == [], (said, rendered)
    assert "<h3>After</h3>" in rendered, (said, rendered)
    return rendered


def _session(*entries: dict) -> Session:
    """A session of ``entries`` written as given (ids, parents), after a header."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z"}
    lines = [{**header, "cwd": "/p"}, *entries]
    return parse_session_bytes("".join(json.dumps(line) + "\n" for line in lines).encode())


def _prompt(text: str) -> dict:
    return {"message": {"role": "user", "content": [_text(text)]}}


# --- 1: no traceback on a quoted list item's open HTML block and a bare ">" ---------------

CRASHERS = [
    "what does this do?\n\n> - <pre>\n>",
    "> - <!--\n>",
    "> 1. <pre>\n>",
    ">> - <style>\n>>",
    "> - x\n>   <pre>\n>",
    "> - <script>\n>",
    "> - <textarea>\n>",
    "> - <?php\n>",
]


@pytest.mark.parametrize("text", CRASHERS)
def test_a_quoted_open_html_block_before_a_bare_quote_mark_is_no_traceback(text: str) -> None:
    """markdown-it read past the text's end (IndexError in getLines) when its last line was
    a bare ">" after a quoted list item that opens an HTML block; the text now gets a line
    break at its end before the parse."""
    said = prose(text, 3)
    assert "&lt;" in said, said  # read, and its tag made text (not the fallback's fence)
    _safe_in_a_document(said)
    assert isinstance(ends_in_a_list(text), bool)
    assert quoted(said).startswith(">")


def test_such_a_prompt_exports_and_shares(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole document, `export -o X.md` and `share --with-markdown --dry-run`."""
    document = session_markdown(_crafted(_prompt(CRASHERS[0]), _answer(_text("ok"))))
    assert "what does this do?" in document
    _safe_in_a_document(document)
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z"},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2025-06-01T10:01:00Z",
         "message": {"role": "user", "content": [_text(CRASHERS[0])]}},
    ]  # fmt: skip
    source = tmp_path / "crash.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = CliRunner().invoke(cli, ["export", str(source), "-o", str(tmp_path / "crash.md")])
    assert done.exit_code == 0 and done.exception is None, done.output
    assert "what does this do?" in (tmp_path / "crash.md").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    shared = CliRunner().invoke(cli, ["share", str(source), "--with-markdown", "--dry-run"])
    assert shared.exit_code == 0 and shared.exception is None, shared.output
    written = [Path(line) for line in shared.stdout.splitlines() if line.endswith(".md")]
    assert written and "what does this do?" in written[0].read_text(encoding="utf-8")


class _Broken:
    def parse(self, *args: object, **kwargs: object) -> list:
        raise IndexError("string index out of range")


def test_a_text_the_parser_fails_on_is_plain_text_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever else breaks the parser: the text in a code block (plain text, nothing in
    it live), and a list's end marked in case there was one."""
    monkeypatch.setattr(markdown_text, "_block_parser", lambda: _Broken())
    text = f"# Title\n\n- {IMG}\n\n```\nopen"
    said = prose(text, 3)
    assert said == fenced(text)
    _safe_in_a_document(said)
    assert ends_in_a_list("- a") is True
    assert quoted(f"a\n\t{IMG}") == f"> a\n>     {IMG}"  # tabs evened without the parse


# --- 2: an empty list item, then a line of spaces ------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"1.\n   \n    {IMG}",
        f"-\n  \n    {IMG}",
        f"Steps:\n\n1.\n   \n    ![](https://evil.example/pixel.png) {IMG}",
        f">1.\n>    \n>     {IMG}",
        f"- 1.\n     \n     {IMG}",
        f"1.\n\t\n    {IMG}",
    ],
    ids=["ordered", "bullet", "image", "quoted", "nested", "tab"],
)
def test_an_empty_item_and_a_line_of_spaces_are_read_alike(text: str) -> None:
    """cmark kept an item that opened empty across a line of spaces as wide as its marker
    (CommonMark ends it there): the indented line after it was the item's paragraph on
    GitHub, a live ``<img onerror>`` and remote image, and code to markdown-it. A line
    of blanks is now empty."""
    said = prose(text, 3)
    _safe_in_a_document(said)
    assert not any(
        line.strip(" \t>") == "" and line.endswith((" ", "\t")) for line in said.split("\n")
    )


def test_a_fence_cut_off_in_an_empty_item_is_closed_where_github_reads_it() -> None:
    """An answer cut off at the token limit: GitHub read the fence as the item's, and the
    closing fence the export appends as a new one that swallowed the rest."""
    text = "Plan:\n\n1.\n   \n   ```bash\n   npm i"
    _safe_in_a_document(prose(text, 3))
    session = _crafted(
        _prompt("go"),
        _answer(_text(text), stopReason="length"),
        _prompt("next prompt"),
        _answer(_text("final answer")),
    )
    rendered = github(session_markdown(session))
    assert "<p>final answer</p>" in rendered and "<p>next prompt</p>" in rendered, rendered
    assert "npm i" in rendered


# --- 3: tabs after ">" and list markers, and quoting ---------------------------------------


@pytest.mark.parametrize(
    "text",
    [f">> * \t{IMG}", f">>> - \t{IMG}", f"> - \t{IMG}", f">\t- \t{IMG}", f"1.\t>\t{IMG}"],
)
def test_a_tab_after_a_quote_mark_or_a_list_marker_is_read_alike(text: str) -> None:
    """markdown-it counted the tab short and read indented code (``<`` left as it was);
    cmark read a list item's ``<img onerror>``."""
    _safe_in_a_document(prose(text, 3))


@pytest.mark.parametrize("thinking", [f">>  \t{IMG}", f">> \t{IMG}", f"\t{IMG}", f"-\t \t{IMG}"])
def test_quoting_a_thought_does_not_move_its_tab_stops(thinking: str) -> None:
    """ "> " put before each line moved the tab stops after the line's quote marks: code to
    the parse became a paragraph inside the Thinking quote, its tag live."""
    session = _crafted(_prompt("hi"), _answer({"type": "thinking", "thinking": thinking}))
    _safe_in_a_document(session_markdown(session))


def test_quoting_a_paragraph_after_a_tab_keeps_it_a_paragraph() -> None:
    """The other way: ``> \\t<img …>`` (a quote's paragraph, its tag made text) became
    indented code once quoted, showing ``&lt;img`` to the reader."""
    session = _crafted(_prompt("hi"), _answer({"type": "thinking", "thinking": f"> \t{IMG}"}))
    rendered = _safe_in_a_document(session_markdown(session))
    assert "<pre>" not in rendered and "&lt;img src=x onerror=alert(1)&gt;" in rendered


def test_tabs_in_a_top_level_fence_stay_tabs() -> None:
    """A diff of tab-indented code (Go, a Makefile) keeps its tabs, quoted too: inside a
    fence at the top level no container reads them."""
    text = "```diff\n-\treturn x\n+\treturn y\n```\n\n> - \tquoted"
    said = prose(text, 3)
    assert "-\treturn x\n+\treturn y" in said and "> -     quoted" in said
    assert "-\treturn x" in quoted(said)


# --- 4: a bare address in a table cell takes a code span's backtick ------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"```https://a.b/`{IMG}`\n|---|\nx```",
        f"``https://a.b/`{IMG}`| x\n|---|---|\nx``",
        f"`` a | www.a.b`{IMG}`\n|---|---|\nx``",
    ],
)
def test_a_bare_address_in_a_table_cell_takes_the_backtick_there(text: str) -> None:
    """The paragraph's code span opened before the address; GitHub read a table, and the
    address in its header cell took the backtick that opened the cell's span."""
    said = prose(text, 3)
    assert "<img" not in said, said
    _safe_in_a_document(said)


# --- 6: a heading in a message takes a branch heading's anchor -----------------------------


def _anchors(rendered: str) -> dict[str, str]:
    """GitHub's anchor for each heading (its text in lower case, punctuation but "-" and
    "_" dropped, spaces as "-", a repeated one numbered) -> the heading's level and text."""
    anchors: dict[str, str] = {}
    seen: dict[str, int] = {}
    for found in re.finditer(r"<h([1-6])>(.*?)</h\1>", rendered, re.S):
        text = html.unescape(re.sub(r"<[^>]+>", "", found.group(2)))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors[f"{slug}-{count}" if count else slug] = f"h{found.group(1)} {text}"
    return anchors


def _forked(active_prompt: str, first_prompt: str = "start", role: str = "user") -> Session:
    def message(entry_id: str, parent: str | None, minute: int, message: dict) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent,
                "timestamp": f"2025-06-01T10:{minute:02d}:00Z", "message": message}  # fmt: skip

    answer = _answer(_text("ok"))["message"]
    return _session(
        message("m1", None, 1, _prompt(first_prompt)["message"]),
        message("m2", "m1", 2, answer),
        message("b1", "m2", 3, _prompt("the other way")["message"]),
        message("b2", "b1", 4, answer),
        message("m3", "m2", 5, {"role": role, "content": [_text(active_prompt)]}),
        message("m4", "m3", 6, answer),
    )


@pytest.mark.parametrize(
    "prompt",
    [
        "# Branch 2 of 2\n\nSee [the phishing page](https://evil.example/)",
        "Branch 2 of 2\n===\n\nthere",
        "> ## Branch: 2 of 2!",
        "- ### Bran&#99;h 2 of 2",
        "# [Bran](https://evil.example/)ch 2 of 2",
    ],
    ids=["atx", "setext", "quote", "entity", "link"],
)
def test_a_heading_in_a_message_does_not_take_a_branch_heading_anchor(prompt: str) -> None:
    """GitHub gives the first heading with a text the anchor: a prompt's "# Branch 2 of 2"
    (made "#### Branch 2 of 2") took ``#branch-2-of-2`` from the branch's heading further
    down, and the fork's "Branch 2 of 2" link went to the prompt."""
    document = session_markdown(_forked(prompt))
    assert "(#branch-2-of-2)" in document
    rendered = github(document)
    assert _anchors(rendered)["branch-2-of-2"] == "h3 Branch 2 of 2", rendered


def test_a_session_titled_like_a_branch_does_not_take_its_anchor() -> None:
    """The document's title (its first prompt here) is its first heading."""
    document = session_markdown(_forked("next", first_prompt="Branch 2 of 2"))
    assert _anchors(github(document))["branch-2-of-2"] == "h3 Branch 2 of 2"
    assert document.startswith("# Session: Branch 2 of 2\n")


def test_an_entry_heading_like_a_branch_does_not_take_its_anchor() -> None:
    """An entry of role "Branch 2 of 2" without its time (``--no-timestamps``)."""
    document = session_markdown(_forked("next", role="Branch 2 of 2"), timestamps=False)
    assert "\n### Entry · Branch 2 of 2\n" in document
    assert _anchors(github(document))["branch-2-of-2"] == "h3 Branch 2 of 2", document


def test_a_heading_github_gives_an_emoji_is_read_without_its_name() -> None:
    """GitHub shows ``:tada:`` as an emoji, which its anchor leaves out (cmark-gfm alone
    does not: the check is on the text)."""
    said = prose("# **Branch** 2 of 2 :tada:\n\nBranch 3 of 3:x:\n---", 3)
    assert "#" not in said and said.count("\n\n") == 1, said


# --- found by the fuzzers after the fixes ---------------------------------------------------


@pytest.mark.parametrize("text", ["```\nx\n```\u00a0", " ~~~\n|---|\n ~~~\u00a0", "```\n```\u00a0"])
def test_a_fence_closed_by_a_run_and_a_no_break_space_is_left_open(text: str) -> None:
    """Only spaces and tabs may follow a closing fence's run: GitHub kept the fence open
    and the rest of the document in it; no closing fence was added."""
    said = prose(text, 3)
    _safe_in_a_document(said)
    assert said.endswith("\u00a0\n" + said.rsplit("\n", 1)[1]), said


@pytest.mark.parametrize(
    "text",
    [
        "# top\n\n- \n  - #### deep\n  ```x\n  y",
        "- \n  - # Branch 2 of 2\n  ```x\n  y",
    ],
    ids=["past-level-6", "branch"],
)
def test_a_heading_made_bold_after_an_item_that_opened_empty_stays_in_it(text: str) -> None:
    """A bold line gets blank lines around it, but one after an item that opened empty
    ended the item (it may open with one blank line only): the fence after it left the
    list, unclosed, and took the rest of the document."""
    said = prose(text, 3)
    assert "**" in said and "#### deep" not in said and "# Branch" not in said, said
    _safe_in_a_document(said)


def test_quoting_keeps_a_fence_open_past_a_tabbed_run() -> None:
    """`` \\t~~~`` is code inside a top-level fence (four columns in); its tab kept after
    "> " it is two columns in, and closed the quoted fence."""
    thinking = f"~~~\n \t~~~\n{IMG}"
    session = _crafted(_prompt("hi"), _answer({"type": "thinking", "thinking": thinking}))
    _safe_in_a_document(session_markdown(session))
    assert "\n>     ~~~\n" in quoted(prose(thinking, 3))


def test_tabs_in_a_fence_inside_a_quote_stay_tabs() -> None:
    """The review of this stop: Go code and a diff in a quoted fence lost their tabs (the
    `> \t` before each line was evened out as a container's mark)."""
    from exporter.markdown_text import prose

    text = (
        "> ```go\n> func main() {\n> \tif x {\n> \t\treturn\n> \t}\n> }\n> ```\n\n"
        "> ```diff\n> -\told\n> +\tnew\n> ```"
    )
    assert prose(text) == text


@pytest.mark.parametrize(
    ("title", "takes"),
    [
        ("Branch 2 of 2", True),
        ("Bran&#99;h 2 of 2", True),
        ("Merging feature-branch 1 of 3 into main", False),
        ("Debranch 2 of 2 done", False),
    ],
)
def test_only_a_whole_branch_heading_may_take_its_anchor(title: str, takes: bool) -> None:
    """A heading that merely holds "branch 1 of 3" became a bold line (the review)."""
    from exporter.markdown_text import may_take_branch_anchor

    assert may_take_branch_anchor(title) is takes
