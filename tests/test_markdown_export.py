"""`export --format md`: one Markdown document per session.

The document is checked the way a viewer reads it: parsed by markdown-it (CommonMark with
raw HTML allowed, as a permissive viewer would), so a fence that swallowed the rest, a
message heading that broke the outline or session text that became HTML shows up as a
token, not as a string that happens to match.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from exporter.cli import cli
from exporter.entries import MessageEntry
from exporter.formatting import plain_text_shown, split_skill
from exporter.loader import load_session, parse_session_bytes
from exporter.markdown_doc import session_markdown
from exporter.markdown_text import code_span, escaped, fenced, prose
from exporter.render import render_session
from exporter.session import Session
from tests.conftest import FIXTURE_FILES, FIXTURES_DIR, cpu_time_limit
from tests.xss_corpus import build_corpus

VIEWER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _tokens(markdown: str) -> list:
    """Block tokens and, flattened after each inline token, its children."""
    out = []
    for token in VIEWER.parse(markdown):
        out.append(token)
        out.extend(token.children or ())
    return out


def _headings(markdown: str) -> list[str]:
    tokens = VIEWER.parse(markdown)
    return [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"
    ]  # the inline token after each heading_open holds its text


def _shown_messages(session: Session) -> list[MessageEntry]:
    return [
        e
        for e in session.entries
        if isinstance(e, MessageEntry) and e.role in ("user", "assistant")
    ]


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name)
def test_every_fixture_reads_as_the_page_does(path: Path) -> None:
    """Every user and assistant message has its heading (no fence swallowed one), every
    text is there whole, every result's text is there, one heading per other branch, and
    nothing in it is HTML to a viewer that renders raw HTML."""
    session = load_session(path)
    document = session_markdown(session)
    tokens = _tokens(document)
    assert not [t.content for t in tokens if t.type in ("html_block", "html_inline", "image")]
    headings = _headings(document)
    users = sum(1 for h in headings if h.startswith("User · ") or h == "User")
    answers = sum(1 for h in headings if h.startswith("Assistant · "))
    messages = _shown_messages(session)
    assert users == sum(1 for m in messages if m.role == "user")
    assert answers == sum(1 for m in messages if m.role == "assistant")
    branches = [h for h in headings if h.startswith("Branch ")]
    assert len(branches) == len(session.lines()) - 1
    for message in messages:
        for block in message.content:
            text = block.get("text") if block.get("type") == "text" else None
            if not isinstance(text, str) or not text.strip():
                continue
            skill, rest = split_skill(text) if message.role == "user" else (None, text)
            if skill is not None:  # a quoted block: each line after "> " (headings go down)
                body = [line for line in skill[1].split("\n") if line.strip()]
                assert all(f"> {line}" in document for line in body if line[0] != "#"), body
                text = rest
            whole = [plain_text_shown(prose(text, level)) for level in (3, 4)]
            assert any(w in document for w in whole), text[:80]
    for entry in session.entries:
        if isinstance(entry, MessageEntry) and entry.role == "toolResult":
            lines = [line for line in plain_text_shown(entry.text).split("\n") if line.strip()]
            if lines:
                assert lines[0] in document and lines[-1] in document, entry.id


def test_hostile_text_never_becomes_html_and_every_payload_is_still_there() -> None:
    session = load_session_bytes(build_corpus())
    document = session_markdown(session)
    html_tokens = [t.content for t in _tokens(document) if t.type in ("html_block", "html_inline")]
    assert html_tokens == []
    rendered = VIEWER.render(document)
    assert "<script" not in rendered and "<img" not in rendered and "<iframe" not in rendered
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in rendered  # shown as text
    assert '!<a href="https://evil.example/t.png">remote image</a>' in rendered  # not loaded


def load_session_bytes(data: bytes) -> Session:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.jsonl"
        path.write_bytes(data)
        return load_session(path)


# --- the pieces ---------------------------------------------------------------------------


def test_a_fence_a_message_leaves_open_is_closed_before_the_next_heading() -> None:
    document = "\n\n".join(
        [
            "### User",
            prose("look:\n```python\nprint(1)\n", 3),
            "### Assistant · x",
            "fine",
        ]
    )
    assert _headings(document) == ["User", "Assistant · x"]
    fence = next(t for t in VIEWER.parse(document) if t.type == "fence")
    assert fence.content == "print(1)\n"


def test_raw_html_in_prose_stays_text_but_code_keeps_its_angle_brackets() -> None:
    text = (
        "Use List<String> here, `Map<K, V>` there\n\n```java\nList<String> xs;\n```\n\n"
        "\\`<b>bold?</b>\\` and \\<i> stays"
    )
    rendered = VIEWER.render(prose(text))
    assert "List&lt;String&gt; here" in rendered
    assert "<code>Map&lt;K, V&gt;</code>" in rendered
    assert "List&lt;String&gt; xs;" in rendered  # the fence, as code
    assert "<b>" not in rendered and "<i>" not in rendered
    assert "&lt;b&gt;bold?&lt;/b&gt;" in rendered


def test_a_fence_closed_by_its_list_item_does_not_hide_html_after_it() -> None:
    """CommonMark ends a fence inside a list item with the item: the line after is not
    code, and ``<script>`` there opened an HTML block (which held the next fence)."""
    text = "- item\n  ```\n<script>alert(1)</script>\n\n```js\nopen <x>"
    rendered = VIEWER.render(prose(text) + "\n\n### Next")
    assert "<script>" not in rendered
    assert "&lt;script&gt;" in rendered
    assert "open &lt;x&gt;\n</code></pre>" in rendered  # code, closed before the heading
    assert "<h3>Next</h3>" in rendered


@pytest.mark.parametrize(
    "line",
    [
        "<`" * 100_000,
        "\\`<" * 100_000,
        "`" + "<" * 200_000,
        "".join("`" * i + "<b" for i in range(1, 1200)),
    ],
    ids=["brackets-and-backticks", "escaped-backticks", "one-opener", "runs-of-every-length"],
)
def test_a_long_line_of_brackets_and_backticks_is_made_safe_in_linear_time(line: str) -> None:
    """Each ``<`` looked back over the whole line for backslashes, and each backtick run
    searched the rest of the line for its closer: 1,199 runs of every length took 48 s.
    (A guard against a hang, not a speed measurement.)"""
    with cpu_time_limit(10):
        shown = prose(line)
    assert "<" not in VIEWER.render(shown).replace("<p>", "").replace("</p>", "").replace(
        "<code>", ""
    ).replace("</code>", "")


def test_message_headings_go_below_the_entry_heading() -> None:
    text = "# Plan\n## Step\n```\n# a comment\n```\n> # quoted\n###### six"
    shown = prose(text, 3)
    assert shown.split("\n")[:2] == ["#### Plan", "##### Step"]
    assert "# a comment" in shown.split("\n")  # code is not a heading
    assert shown.endswith("\n\n**six**")  # past level 6: a bold line (helper 154)
    assert _headings(shown) == ["Plan", "Step", "quoted"]


def test_underlined_headings_and_thinking_s_go_below_the_entry_heading_too() -> None:
    """A "Title" over "===" stayed a level 1 heading in the middle of the transcript, and a
    thinking block's "# heading" too (review 2026-12-02): the document's outline broke, and
    with it the README that `share --with-markdown` puts on the gist."""
    shown = prose("Title line\n=====\n\nSub\ntwo lines\n---\n\nA\n\n---\n\nafter", 3)
    assert shown.split("\n")[:3] == ["#### Title line", "", "##### Sub two lines"]
    assert "---" in shown.split("\n")  # a thematic break, not an underline: stays
    tokens = _tokens(shown)
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h4", "h5"]
    thought = {"type": "thinking", "thinking": "# heading in thinking\nand text"}
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": [thought, {"type": "text", "text": "ok"}]}},
    ]  # fmt: skip
    document = session_markdown(parse_session_bytes("\n".join(map(json.dumps, lines)).encode()))
    levels = [t.tag for t in _tokens(document) if t.type == "heading_open"]
    below = levels[levels.index("h2", levels.index("h2") + 1) :]  # after "## Transcript"
    assert "h1" not in below and "h2" not in below[1:], levels


@pytest.mark.parametrize(
    "text", ["plain", "a`b", "``two``", "`edge`", " spaced ", "x ``` y", "|pipe|", "<b>x</b>"]
)
def test_a_code_span_shows_exactly_its_text(text: str) -> None:
    token = next(t for t in _tokens(code_span(text)) if t.type == "code_inline")
    assert token.content == text


def test_a_code_block_holds_any_backticks() -> None:
    text = "before\n```\ninside\n````\nafter"
    block = fenced(text, "md")
    fences = [t for t in VIEWER.parse(block + "\n\n# After") if t.type == "fence"]
    assert [f.content for f in fences] == [text + "\n"]
    assert fences[0].info == "md"


def test_escaped_text_is_text() -> None:
    text = "**not bold** [not](a link) <b>x</b> # | ~~ !"
    rendered = VIEWER.render(escaped(text))
    assert rendered == "<p>**not bold** [not](a link) &lt;b&gt;x&lt;/b&gt; # | ~~ !</p>\n"


def test_a_result_away_from_its_call_says_where_the_call_is(tmp_path: Path) -> None:
    """A result after its call's first result, and one on a branch that left after the
    call: each under its own heading that says so, with the call it answers."""

    def message(entry_id: str, parent: str | None, second: int, **body: object) -> str:
        when = f"2025-01-01T00:00:{second:02d}Z"
        entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when}
        return json.dumps({**entry, "message": body})

    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "make"}}
    output = [{"type": "text", "text": "built"}]
    header = {"type": "session", "version": 3, "id": "s", "cwd": "/x", "timestamp": "2025"}
    lines = [
        json.dumps(header),
        message("u", None, 1, role="user", content="go"),
        message("a", "u", 2, role="assistant", content=[call], stopReason="toolUse"),
        message("r1", "a", 3, role="toolResult", toolCallId="c1", toolName="bash", content=output),
        message("r2", "r1", 4, role="toolResult", toolCallId="c1", toolName="bash", content=output),
        message("r3", "a", 5, role="toolResult", toolCallId="c1", toolName="bash", content=output),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path)
    session.set_leaf("r2")
    headings = _headings(session_markdown(session))
    said = [h.split(" · ")[0] for h in headings if h.startswith("Tool result")]
    assert said == [
        "Tool result `bash` (another result of a call above)",  # r2, on the main line
        "Tool result `bash` (its call is on another branch)",  # r3, a branch from the call
    ]


# --- the command --------------------------------------------------------------------------


def test_export_writes_markdown_when_asked_or_when_named_md(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = FIXTURES_DIR / "pi-branched-1.jsonl"
    runner = CliRunner()
    named = tmp_path / "notes.md"
    done = runner.invoke(cli, ["export", str(source), "-o", str(named)])
    assert done.exit_code == 0, done.output
    text = named.read_text(encoding="utf-8")
    assert text.startswith("# ") and "## Transcript" in text and "<!DOCTYPE" not in text
    to_stdout = runner.invoke(cli, ["export", str(source), "--format", "md", "-o", "-"])
    assert to_stdout.exit_code == 0 and to_stdout.stdout == text
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(cli, ["export", str(source), "--format", "md"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "pi-session-pi-branched-1.md").read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    "args, said",
    [
        (["--format", "md", "-o", "page.html"], "name the file .md"),
        (["--format", "html", "-o", "notes.md"], "name the file .html"),
        # the error names the option given (CLI review s43: it listed all five)
        (["-o", "notes.md", "--open"], "--open: for HTML pages"),
        (["-o", "notes.md", "--theme", "dark"], "--theme: for HTML pages"),
        (["-o", "notes.md", "-j", "2"], "-j: for HTML pages"),
        (["-o", "notes.md", "--no-embed", "-j", "2"], "--no-embed and -j: for HTML pages"),
        (["--format", "md", "--all", "-o", "site"], "for HTML pages"),
    ],
)
def test_options_that_do_not_fit_markdown_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    source = FIXTURES_DIR / "every-entry-type.jsonl"
    monkeypatch.chdir(tmp_path)
    all_sessions = "--all" in args
    done = CliRunner().invoke(cli, ["export", *([] if all_sessions else [str(source)]), *args])
    assert done.exit_code == 1 and said in done.output, done.output
    assert not list(tmp_path.iterdir())  # nothing written


def test_redaction_and_cuts_apply_to_markdown(tmp_path: Path) -> None:
    token = "ghp_DNxril3RavGD5MfvJ7NScUykT8C8UBkkpdhi"
    lines = (FIXTURES_DIR / "every-entry-type.jsonl").read_text(encoding="utf-8").splitlines()
    lines = [line.replace("please convert the file", f"please use {token}") for line in lines]
    source = tmp_path / "s.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "s.md"
    args = ["export", str(source), "-o", str(out), "--redact", "--no-thinking"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    assert token not in text and "[REDACTED:github-token:" in text
    assert "Let me think about this carefully" not in text
    plain = tmp_path / "plain.md"
    assert CliRunner().invoke(cli, ["export", str(source), "-o", str(plain)]).exit_code == 0
    assert token in plain.read_text(encoding="utf-8")


def test_cjk_emoji_controls_and_lone_surrogates_survive(tmp_path: Path) -> None:
    def entry(entry_id: str, parent: str | None, second: int, **message: object) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent,
                "timestamp": f"2025-01-01T00:00:0{second}Z", "message": message}  # fmt: skip

    header = {"type": "session", "version": 3, "id": "u1", "timestamp": "2025-01-01T00:00:00Z",
              "cwd": "/tmp"}  # fmt: skip
    user = entry("a", None, 1, role="user", content="漢字とかな 🎉 bad \ud800 end")
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    answer = entry("b", "a", 2, role="assistant", content=[call], stopReason="toolUse")
    output = [{"type": "text", "text": "\x1b[31mred\x1b[0m \x07bell"}]
    result = entry("c", "b", 3, role="toolResult", toolCallId="c1", toolName="bash",
                   content=output)  # fmt: skip
    path = tmp_path / "u.jsonl"
    path.write_text(
        "\n".join(json.dumps(x) for x in (header, user, answer, result)) + "\n", encoding="utf-8"
    )
    out = tmp_path / "u.md"
    done = CliRunner().invoke(cli, ["export", str(path), "-o", str(out)])
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    assert "漢字とかな 🎉 bad \ufffd end" in text
    assert "red ␇bell" in text and "\x1b" not in text
    assert "**bash**\n\n```sh\nls\n```\n\n```\nred ␇bell\n```" in text  # call, then result


def test_the_active_branch_alone_is_one_branch() -> None:
    """every-entry-type's label and name were set on the other branch: moved behind the
    chosen leaf, they made a second branch of the copy, "2 branches" and an "Other
    branches" section in the Markdown, where `redact --active-branch-only` wrote one
    (review 2026-12-02)."""
    fixture = str(FIXTURES_DIR / "every-entry-type.jsonl")
    for output in ("md", "html"):
        result = CliRunner().invoke(
            cli, ["export", fixture, "--format", output, "--active-branch-only", "-o", "-"]
        )
        assert result.exit_code == 0, result.output
        said = result.stdout
        assert "Other branches" not in said and "2 branches" not in said
        assert "1 branch, 1 branch summary, 1 label" in said


@pytest.mark.parametrize(
    ("name", "tables"), [("pi-large-session.jsonl", 1), ("pi-branched-1.jsonl", 2)]
)
def test_one_usage_table_when_this_path_is_all_branches(name: str, tables: int) -> None:
    """As on the page: a session of one branch had two equal usage tables."""
    document = session_markdown(load_session(FIXTURES_DIR / name))
    usage = document.split("## Usage", 1)[1].split("\n## ", 1)[0]
    assert usage.count("| model |") == tables
    said = "**This path** (root → leaf) **and all branches** (the same):"
    assert (said in usage) == (tables == 1) and ("**All branches:**" in usage) == (tables == 2)


def test_labels_say_what_their_entries_say() -> None:
    """The Markdown export listed labels as bare ids (`bug-found` on `729af5de`); the page's
    bookmarks show the entry's text (visual review 2026-12-04). The text is escaped: read as
    Markdown it is the text, not markup."""
    session = load_session(FIXTURES_DIR / "pi-branched-1.jsonl")
    document = session_markdown(session)
    labels = document.split("**Labels:**", 1)[1].split("\n\n", 2)[1]
    lines = labels.splitlines()
    assert len(lines) == len(session.labels)
    shown = VIEWER.render(labels)
    assert "bug-found</code> on <code>729af5de</code>: assistant: You're right! Let me add" in (
        shown.replace("&#x27;", "'").replace("&quot;", '"')
    )
    assert "<a " not in shown and "<em>" not in shown


def test_a_skill_wrapper_reads_as_the_page_shows_it() -> None:
    """every-entry-type.md printed Pi's skill wrapper raw (`&lt;skill name="pdf" …>`) in
    the user turn (visual review 2026-12-04); the page folds it as "Skill pdf". Now it is a
    quoted block under the skill's name, the prompt after it."""
    document = session_markdown(load_session(FIXTURES_DIR / "every-entry-type.jsonl"))
    assert "&lt;skill" not in document and "<skill" not in document
    skill = document.split("> **Skill** `pdf`\n", 1)[1]
    quote, after = skill.split("\n\n", 1)[0], skill.split("\n\n", 1)[1]
    lines = skill.split("please convert the file", 1)[0].rstrip("\n").splitlines()
    assert quote.startswith(">") and all(line.startswith(">") for line in lines), lines
    assert "> Use pdftotext." in lines
    assert after.split("\n\n")[-1] != "" and "\n\nplease convert the file\n" in skill


def test_a_lone_carriage_return_ends_a_line_as_a_renderer_reads_it() -> None:
    """A lone "\\r" is a line ending to a Markdown renderer: in a message it crashed the
    export (markdown-it's line numbers and ours disagreed: IndexError), and in a label or a
    model name it ended the code span, so `<img onerror>` and "# owned" became live HTML
    and a heading (Markdown review 2026-12-04)."""
    hostile = "<img src=x onerror=alert(1)>\r# owned"
    lines = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:01:00Z",
         "message": {"role": "user", "content": "first\r```\rcode\r# heading\rlast"}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2025-06-01T10:02:00Z",
         "message": {"role": "assistant", "provider": "p", "model": hostile,
                     "content": [{"type": "text", "text": "## Title\rbody\r\r- item"}]}},
        {"type": "label", "id": "l1", "parentId": "a1", "timestamp": "2025-06-01T10:03:00Z",
         "targetId": "u1", "label": hostile},
    ]  # fmt: skip
    data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
    markdown = session_markdown(parse_session_bytes(data))
    assert "\r" not in markdown
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    assert "<img" not in html and "<h1>owned" not in html
    assert "<h1" in html and html.count("<h1") == 1, "only the document's own title"
    assert "onerror=alert(1)&gt;" in html, "shown, as text"
    assert "first" in markdown and "last" in markdown and "- item" in markdown


def test_a_web_autolink_stays_a_link() -> None:
    """`<https://…>` was escaped to "&lt;https://…>": GitHub then linked the address with a
    "%3E" tail, a 404 (Markdown review 2026-12-04). Only web and mail schemes stay links."""
    said = prose("See <https://example.com/a?b=c> and <HTTP://x.org>, not <javascript:alert(1)>.")
    html = MarkdownIt("commonmark", {"html": True}).render(said)
    assert '<a href="https://example.com/a?b=c">' in html and '<a href="HTTP://x.org">' in html
    assert "javascript:" not in html.split("&lt;javascript")[0] and "&lt;javascript:" in html
    assert prose("<div>x</div> <https://a.b") == "&lt;div>x&lt;/div> &lt;https://a.b"


# --- review of the Markdown export, 2026-12-04: the findings left open -------------------


def _crafted(*entries: dict) -> Session:
    """A session of ``entries`` (messages get ids m1, m2, … in a chain unless given)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z",
              "cwd": "/p"}  # fmt: skip
    lines, parent = [header], None
    for number, entry in enumerate(entries, 1):
        entry = {"type": "message", "id": f"m{number}", "parentId": parent,
                 "timestamp": f"2025-06-01T10:{number:02d}:00Z", **entry}  # fmt: skip
        lines.append(entry)
        parent = entry["id"]
    return parse_session_bytes("".join(json.dumps(line) + "\n" for line in lines).encode())


def _answer(*content: dict, **more: object) -> dict:
    message = {"role": "assistant", "provider": "p", "model": "m", "content": list(content)}
    return {"message": {**message, "stopReason": "stop", **more}}


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


#: A viewer with no URL filter (cmark --unsafe, many static-site tools): markdown-it's own
#: validateLink refuses javascript: links, which hid the problem.
UNFILTERED = MarkdownIt("commonmark", {"html": True})
UNFILTERED.validateLink = lambda url: True  # type: ignore[method-assign]


@pytest.mark.parametrize(
    "link",
    [
        "[click](javascript:alert(3))",
        "[click](JavaScript:alert(3))",
        "![pic](javascript:alert(3))",
        "[v](vbscript:msgbox(1))",
        "[d](data:text/html;base64,PHNjcmlwdD4=)",
        "[f](file:///etc/passwd)",
        "[e](&#106;avascript:alert(1))",
        "[e](java&Tab;script:alert(1))",
        "[e](java&#x73;cript&colon;alert(1))",
        "[s]( <javascript:alert(1)>)",
        "[n](\njavascript:alert(1))",
        "[t](" + "&Tab;" * 40 + "javascript:alert(1))",
        "[r][x]\n\n[x]: javascript:alert(1)\n\n",
        "<javascript:alert(1)>",
    ],
)
def test_links_to_script_data_and_file_addresses_become_text(link: str) -> None:
    """`[click](javascript:alert(3))` passed through: a viewer with HTML on and no URL
    filter made it a live link (Markdown review 2026-12-04, #10). Now it is text, in every
    spelling a browser would still run; web links stay links."""
    said = prose(f"before {link} after [web](https://example.com/x)", 3)
    html = UNFILTERED.render(said)
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs == ["https://example.com/x"], (said, html)
    assert "before" in html and "after" in html


def test_a_link_in_code_stays_as_written() -> None:
    said = prose("`[x](javascript:1)` and\n\n```\n[y](javascript:2)\n```", 3)
    assert "`[x](javascript:1)`" in said and "\n[y](javascript:2)\n" in said


def test_a_definition_in_one_message_links_nothing_in_another() -> None:
    """One document makes every link reference definition global: an answer's
    `[docs]: https://evil.example/phish` linked "[docs]" in a later prompt, and GitHub
    footnotes clashed the same way (#11). Definitions are text now, each on its line, as
    the page shows them; nothing links through one."""
    definitions = (
        "Sources:\n\n[docs]: https://evil.example/phish\n[2]: <https://b.example>\n"
        "> [q]: https://q.example\n\n- [l]: https://l.example\n\n"
        "[\nmulti\n]: https://m.example\n\n[^1]: a footnote"
    )
    session = _crafted(
        {"message": {"role": "user", "content": "go"}},
        _answer(_text(definitions)),
        {"message": {"role": "user", "content": "See [docs], [2], [q], [l], [multi] and [^1]."}},
    )
    document = session_markdown(session)
    html = UNFILTERED.render(document)
    assert "See [docs], [2], [q], [l], [multi] and [^1].</p>" in html
    assert not re.findall(r'href="https://(?:evil|q|l|m)\.example', html)
    assert "[docs]: https://evil.example/phish<br />" in html  # shown, on a line of its own
    assert "[^1]: a footnote" in html and "[q]: https://q.example" in html


def test_an_error_message_is_whole_with_its_lines() -> None:
    """Errors were squeezed onto one line and cut at 2,000 characters (#7): an API error's
    JSON body or a stack trace could not be read. Now fenced, like tool output."""
    said = 'API error 500\n{\n  "error": "```# not a heading <img src=x onerror=alert(1)>"\n}\n'
    said += "x" * 3_000 + "\nlast line"
    session = _crafted(
        {"message": {"role": "user", "content": "go"}},
        _answer(_text(""), stopReason="error", errorMessage=said),
    )
    document = session_markdown(session)
    fences = [t.content for t in _tokens(document) if t.type == "fence"]
    assert said + "\n" in fences
    assert not [t for t in _tokens(document) if t.type in ("html_block", "html_inline")]
    assert "\n\n\n" not in document  # the empty text block left four line breaks (#16)


@pytest.mark.parametrize(
    "said",
    ["overloaded_error: server busy", "rate `limit` <img src=x onerror=alert(1)> | # no"],
)
def test_a_short_one_line_error_stays_on_its_line(said: str) -> None:
    """A one-line error took five lines of the document (a quote, a blank line, a fence
    and its message, the closing fence: review 138); it is said on the line, as code."""
    session = _crafted(
        {"message": {"role": "user", "content": "go"}},
        _answer(_text(""), stopReason="error", errorMessage=said),
    )
    document = session_markdown(session)
    line = next(line for line in document.splitlines() if line.startswith("> **Error:**"))
    spans = next(t for t in _tokens(line) if t.type == "inline").children
    assert [c.content for c in spans if c.type == "code_inline"] == [said]
    assert not [t for t in _tokens(document) if t.type in ("html_block", "html_inline")]
    assert "```" not in document.split("> **Error:**", 1)[1].split("\n\n", 1)[0]


def test_problems_in_the_file_say_the_line_and_keep_its_text(tmp_path: Path) -> None:
    """The list said "not valid JSON (…)" without its line, and the damaged text was not
    in the document (#8); the page and the warning both say "line 4", and the page keeps
    the line as text."""
    good = [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-06-01T10:00:00Z"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-06-01T10:01:00Z",
         "message": {"role": "user", "content": "hi"}},
    ]  # fmt: skip
    broken = '{"type":"message", broken ``` <img src=x onerror=alert(1)>'
    path = tmp_path / "b.jsonl"
    path.write_text(f"{json.dumps(good[0])}\n{json.dumps(good[1])}\n{broken}\n", encoding="utf-8")
    document = session_markdown(load_session(path))
    problems = document.split("## Problems in the file", 1)[1]
    assert "- line 3: not valid JSON" in problems
    fences = [t.content for t in _tokens(problems) if t.type == "fence"]
    assert fences == [broken + "\n"]
    assert "**Line 3**" in problems


def test_a_fork_is_findable_in_the_transcript() -> None:
    """ "Branch 2 of 7 · forks at `88be28e6`" named an id the document showed nowhere
    (#4). Now each fork's entry has a line under it in the transcript saying which
    branches leave there, its heading (if it has one) shows its id, and the branch says
    where it forks by the entry's time and words."""
    session = load_session(FIXTURES_DIR / "pi-branched-1.jsonl")
    document = session_markdown(session)
    transcript, others = document.split("\n## Other branches\n", 1)
    branches = session.lines()[1:]
    assert len(branches) == 6
    forks = [session.parent_of(line[0]) for line in branches]
    for number, fork in enumerate(forks, 2):
        assert fork is not None
        link = rf"\[(?:Branch )?{number}(?: of 7)?\]\(#branch-{number}-of-7\)"
        marker = re.search(
            rf"\*⑂ (?:Branch(?:es)? [^*\n]*)?{link}[^*\n]* forks? here, after entry `{fork}`",
            document,
        )
        assert marker, (number, fork)
        said = f"\n### Branch {number} of 7\n"
        assert said in others
        after = others.split(said, 1)[1].split("\n\n", 2)[1]
        assert after.startswith(f"Forks after entry `{fork}` (2026-11-30 00:57:07 +00:00) “")
    assert f"· id `{forks[1]}`" in transcript  # 13e4c25d: an answer, with a heading
    assert "*⑂ [Branch 2 of 7](#branch-2-of-7) forks here, after entry `88be28e6`" in transcript


def test_summaries_say_what_they_keep_and_where_they_come_from() -> None:
    """A compaction's "context kept from entry e01 …" and files, and a branch summary's
    "branched away from entry e03 …", were on the page only (#5)."""
    document = session_markdown(load_session(FIXTURES_DIR / "every-entry-type.jsonl"))
    assert "*Files read:* `/home/alice/proj/app.py`" in document
    assert "*Context kept from entry `e01` “user: Look at this image and code:" in document
    assert "*Branched away from entry `e03` “assistant: I'll inspect things.”*" in document


def test_a_tool_results_structured_details_are_shown() -> None:
    """The page shows a result's ``details`` ("Details (the tool's structured result)");
    the Markdown dropped them (#6), for extension and MCP tools often the real payload.
    What a view shows of them already (an edit's diff) is not repeated."""
    document = session_markdown(load_session(FIXTURES_DIR / "every-entry-type.jsonl"))
    part = document.split("*Details (the tool's structured result):*", 1)[1]
    fence = next(t for t in _tokens(part) if t.type == "fence")
    assert json.loads(fence.content) == {"items": 2}
    assert document.count("*Details (the tool's structured result):*") == 1


def test_headings_in_quotes_and_lists_go_below_the_entry_heading_too() -> None:
    """`> # H1` and `- # H1` kept level 1 in the middle of the transcript (#9); and a
    message's top heading goes one level under its entry's, so under a branch's entries
    (level 4) `##` and `###` stay apart (#17: both were level 6)."""
    text = "> # H1 in a quote\n\n- # H1 in a list item\n\n> Quoted title\n> ===\n\n1. ## Two"
    tags = [t.tag for t in _tokens(prose(text, 3)) if t.type == "heading_open"]
    assert tags == ["h4", "h4", "h4", "h5"]
    tags = [t.tag for t in _tokens(prose("## A\n\n### B\n\n#### C", 4)) if t.type == "heading_open"]
    assert tags == ["h5", "h6"]  # "#### C" past level 6: a bold line (helper 154)


def test_escaped_text_keeps_mentions_and_issue_numbers_as_written() -> None:
    """An invisible word joiner after "@" and "#" (`&#x2060;`) was junk in the Markdown
    source, broke a copied `@packages/…` path and guarded the titles only, while the
    messages kept their mentions (review 2026-12-04, #5): "@" and "#" are as written."""
    said = escaped("read @packages/x.ts and @mariozechner, see #12; bob@example.com")
    assert "&#x2060;" not in said and "\u2060" not in said
    html = VIEWER.render(said)
    assert "read @packages/x.ts and @mariozechner, see \\#12; bob@example.com" in said
    assert "read @packages/x.ts and @mariozechner, see #12; bob@example.com" in html


def test_a_note_in_place_of_tool_output_is_not_a_code_block(tmp_path: Path) -> None:
    """--no-tool-output's note was fenced as the read file's language (#18)."""
    source = str(FIXTURES_DIR / "every-entry-type.jsonl")
    done = CliRunner().invoke(
        cli, ["export", source, "--no-tool-output", "--format", "md", "-o", "-"]
    )
    assert done.exit_code == 0, done.output
    tokens = _tokens(done.stdout)
    assert not [t for t in tokens if t.type == "fence" and "tool output left out" in t.content]
    notes = [t for t in tokens if t.type == "text" and "tool output left out" in t.content]
    assert notes


def test_the_entry_count_reads_as_on_the_page() -> None:
    """ "**Entries:** 25: 8 tool results" read like a time or a ratio (#19)."""
    document = session_markdown(load_session(FIXTURES_DIR / "every-entry-type.jsonl"))
    assert "- **Entries:** 25 · 8 tool results, 4 assistant" in document


def test_a_prompt_of_blocks_leaves_one_blank_line() -> None:
    """Every prompt of content blocks was followed by two blank lines (#16)."""
    session = _crafted(
        {"message": {"role": "user", "content": [_text("first"), _text("second")]}},
        _answer(_text("ok")),
    )
    assert "\n\n\n" not in session_markdown(session)


@pytest.mark.parametrize(
    "line",
    ["](&" * 100_000, "](" + "&Tab;" * 200_000, "[a]: b\n" * 50_000, "\\[x]: y " * 100_000],
    ids=["destinations", "one-long-destination", "definitions", "definition-like"],
)
def test_links_and_definitions_are_made_safe_in_linear_time(line: str) -> None:
    with cpu_time_limit(10):
        said = prose(line, 3)
    assert "href" not in UNFILTERED.render(said[:20_000])


def test_web_addresses_in_escaped_text_open_what_they_say() -> None:
    """A title's `<https://…>` was escaped to `\\<https://…\\>`, and a bare address's "_" to
    "\\_": GitHub links a bare address as written, backslashes too ("docs%5C%3E", a 404:
    #3, the title's half). And a backslash GitHub takes into an address must not leave
    the "<" after it open: "<" is written "&lt;"."""
    said = escaped("Docs at <https://example.com/docs>, https://e.com/a_b?x=1&y=2 and <b>")
    assert "<https://example.com/docs>" in said and "https://e.com/a_b?x=1&y=2 " in said
    html = VIEWER.render(said)
    assert '<a href="https://example.com/docs">' in html and "&lt;b&gt;" in html
    assert "\\<" not in escaped("https://a.b/x<img src=x onerror=alert(1)>")
    said = escaped("https://a.b/[x](javascript:alert(1))")
    assert said == "<https://a.b/[x](javascript:alert(1))>"  # one https link, no "\\[" shown
    assert 'href="javascript' not in VIEWER.render(said)


# --- review of the Markdown export, 2026-12-04 (second round) -----------------------------

LIVE = re.compile(r"<img src=x|href=\"javascript")


@pytest.mark.parametrize(
    "text",
    [
        "x `start\n` <img src=x onerror=alert(1)> `y`",
        "x `start\n` [a](javascript:alert(1)) `y`",
        "> x `start\n> ` <img src=x onerror=alert(1)> `y`",
        "- x `start\n  ` <img src=x onerror=alert(1)> `y`",
        "x ``start\nmore\n`` <img src=x onerror=alert(1)> ``",
        "[a](x`y) <img src=x onerror=alert(1)> `",
        "> [a](\n> javascript:alert(1))",
    ],
    ids=[
        "html",
        "script-link",
        "quote",
        "list-item",
        "three-lines",
        "link-takes-it",
        "quoted-dest",
    ],
)
def test_a_code_span_over_lines_leaves_no_html_or_script_link_live(text: str) -> None:
    """A backtick on the second line of a paragraph closes the span the first opened
    (CommonMark): taken line by line, the text after it was read as code and its
    `<img …>` or `javascript:` link left live (review 2026-12-04, #1)."""
    said = prose(text, 3)
    html = UNFILTERED.render(said)
    assert not LIVE.search(html), (said, html)
    assert "alert(1)" in html


def test_a_code_span_over_lines_still_reads_as_code() -> None:
    said = prose("Run `make\nall` then open <b>it</b> and `x<y`", 3)
    html = VIEWER.render(said)
    assert "<code>make all</code>" in html and "<code>x&lt;y</code>" in html
    assert "<b>" not in html and "&lt;b&gt;it" in html


@pytest.mark.parametrize(
    "text",
    [
        "see https://ok.example/p\\<img src=x onerror=alert(1)> now",
        "see https://ok.example/p`<img src=x onerror=alert(1)>` now",
        "www.ok.example\\<img src=x onerror=alert(1)>",
        "<https://a`b> <img src=x onerror=alert(1)> `",
        "``(` `(`<img src=x onerror=alert(1)>`",
        "| a | b |\n|---|---|\n| `a | <img src=x onerror=alert(1)> | b` |",
    ],
    ids=["address-backslash", "address-backticks", "www", "autolink-backtick", "cmark", "table"],
)
def test_no_tag_is_left_open_where_github_reads_the_text_otherwise(text: str) -> None:
    """cmark-gfm (GitHub's renderer) with raw HTML on showed each `<img …>` live: its bare
    web address takes in a backslash or a backtick after it (#2), its search for a closing
    backtick run stops early, and a table cell ends a span at a "|". The tag stays text."""
    said = prose(text, 3)
    assert "<img" not in said and "&lt;img src=x onerror=alert(1)>" in said


@pytest.mark.parametrize(
    "unit",
    [
        "`<a ``\n",
        "x \\`<b\n",
        "https://a.b/`<c` |`<d\n",
        "".join("`" * i + "<b " for i in range(1, 40)) + "\n",
    ],
    ids=["backticks-and-brackets", "escaped", "addresses-and-cells", "runs-of-every-length"],
)
def test_a_paragraphs_spans_are_found_in_linear_time(unit: str) -> None:
    """Spans are paired over a paragraph's lines now: 200 KB of backticks and "<" on many
    lines takes about half as long as 400 KB (a guard against quadratic pairing)."""

    def seconds(size: int) -> float:
        text = unit * (size // len(unit))
        with cpu_time_limit(20):
            began = time.process_time()  # CPU: a test beside it (pytest -n) takes no share
            said = prose(text, 3)
            took = time.process_time() - began
        assert said.count("\n") == text.rstrip("\n").count("\n")
        return took

    small, large = seconds(200_000), seconds(400_000)
    assert small < 5 and large < 3 * small + 0.5, (small, large)


def test_a_fork_at_an_entry_not_shown_says_which_entry_it_is() -> None:
    """Branch 7 of the demo forks at extension data the document leaves out: its marker
    stood under "Thinking level: high" with an id found nowhere else (review, #6)."""
    document = session_markdown(load_session(FIXTURES_DIR / "pi-branched-2.jsonl"))
    transcript = document.split("\n## Other branches\n", 1)[0]
    assert (
        "*⑂ [Branch 7 of 7](#branch-7-of-7) forks here, after entry `59d793e4` "
        "“\\[todo-state\\] (extension data)”, which is not shown: it comes right after the "
        "entry above" in transcript
    )
    assert "(#branch-6-of-7) forks here, after entry `08e81de0`.*\n" in transcript  # shown


# --- review of the Markdown export, 2026-12-04 (third round) ------------------------------


def _message_line(entry_id: str, parent: str | None, second: int, **body: object) -> str:
    when = f"2025-01-01T00:00:{second:02d}Z"
    entry = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when}
    return json.dumps({**entry, "message": body})


def test_a_fork_at_the_first_of_two_results_is_marked_under_that_result(
    tmp_path: Path,
) -> None:
    """A turn with two tool calls, a branch leaving after the first result: its line stood
    under the whole turn, below the second command's output, as if it left after that."""
    session = _two_call_session(tmp_path, "r1")
    document = session_markdown(session)
    transcript = document.split("\n## Other branches\n", 1)[0]
    marker = transcript.index("forks here, after entry `r1`, the `bash` result just above")
    assert transcript.index("FIRST-OUTPUT") < marker < transcript.index("pwd")
    assert transcript.count("forks here") == 1
    assert "\n### Branch 2 of 2\n" in document and "(#branch-2-of-2)" in transcript


@pytest.mark.parametrize("name", ["pi-branched-1.jsonl", "pi-branched-4.jsonl"])
def test_a_branch_says_where_it_forks_once(name: str) -> None:
    """ "### Branch 2 of 7 · forks at `883559ff` · …" then "Forks after entry `883559ff` …":
    the id twice. The heading is "Branch 2 of 7" alone (the anchor the fork's line links
    to); the facts and the fork said once below it."""
    session = load_session(FIXTURES_DIR / name)
    document = session_markdown(session)
    others = document.split("\n## Other branches\n", 1)[1]
    total = len(session.lines())
    for number, line in enumerate(session.lines()[1:], 2):
        fork = session.parent_of(line[0])
        assert fork is not None
        head = f"\n### Branch {number} of {total}\n"
        intro = others.split(head, 1)[1].split("\n#", 1)[0]
        assert intro.count(f"`{fork}`") == 1, intro
        assert f"Forks after entry `{fork}`" in intro
        assert f"(#branch-{number}-of-{total})" in document  # the fork's line links here


def test_a_safe_link_destination_is_not_read_again_and_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every "](" had its destination decoded and read for a scheme: 1 MB of "](" took
    2.7 s. A destination that cannot start an unsafe scheme is not read (and the text is
    the same); one that can still is."""
    import exporter.markdown_text as markdown_text

    read: list[int] = []
    real = markdown_text._unsafe_link

    def counted(text: str, parenthesis: int, following: str) -> bool:
        read.append(parenthesis)
        return real(text, parenthesis, following)

    monkeypatch.setattr(markdown_text, "_unsafe_link", counted)
    plain = "see [a](https://e.com/a) and ]( x " * 1000
    assert prose(plain) == plain.strip("\n") and read == []
    said = prose(
        "[x](https://e.com) [y]( javascript:alert(1)) [z](&#106;avascript:x)"
        + " " * 200
        + "[w](`x`)"
    )
    assert said.count("]\\(") == 3 and len(read) == 3


@pytest.mark.parametrize("unit", ["](", "[a](https://e.com/x) ", "](\\](&#106;"])
def test_links_are_made_safe_in_linear_time(unit: str) -> None:
    """8 times the text takes well under 20 times as long (a guard against quadratic
    work, not a speed measurement)."""

    def seconds(size: int) -> float:
        text = unit * (size // len(unit))
        with cpu_time_limit(60):
            began = time.process_time()  # CPU: a test beside it (pytest -n) takes no share
            prose(text, 3)
            return time.process_time() - began

    prose(unit * 10, 3)  # the parser made once
    small, large = seconds(100_000), seconds(800_000)
    assert large < 20 * small + 0.2, (small, large)


# --- review of the Markdown export, 2026-12-04 (fourth round) -----------------------------


def _two_call_session(tmp_path: Path, fork_from: str) -> Session:
    """A turn ``a1`` with two bash calls and their results, then an answer; a second
    branch whose first entry's parent is ``fork_from``."""
    calls = [
        {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "pwd"}},
    ]
    header = {"type": "session", "version": 3, "id": "s", "cwd": "/x", "timestamp": "2025"}
    result = {"role": "toolResult", "toolName": "bash"}
    lines = [
        json.dumps(header),
        _message_line("u1", None, 1, role="user", content="look"),
        _message_line("a1", "u1", 2, role="assistant", content=calls, stopReason="toolUse"),
        _message_line("r1", "a1", 3, **result, toolCallId="c1", content="FIRST-OUTPUT"),
        _message_line("r2", "r1", 4, **result, toolCallId="c2", content="SECOND-OUTPUT"),
        _message_line("a2", "r2", 5, role="assistant", content="done", stopReason="stop"),
        _message_line("u2", fork_from, 6, role="user", content="no, stop"),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    session = load_session(path)
    session.set_leaf("a2")
    return session


def test_a_fork_at_an_assistant_turn_says_it_leaves_before_the_results(tmp_path: Path) -> None:
    """A branch whose first entry's parent is the assistant message leaves before any of
    its tool results arrive; its line stood under the whole turn, below both outputs,
    saying "forks here" as if it left after them."""
    document = session_markdown(_two_call_session(tmp_path, "a1"))
    transcript = document.split("\n## Other branches\n", 1)[0]
    assert "forks here" not in transcript
    line = (
        "*⑂ [Branch 2 of 2](#branch-2-of-2) forks after entry `a1`, the assistant message "
        "above, before its tool results: the results shown with its calls are on this "
        "path, not on that branch.*"
    )
    assert transcript.count("⑂") == 1 and line in transcript
    turn = transcript.split("· id `a1`\n", 1)[1]  # the fork's heading shows its id
    assert turn.index("SECOND-OUTPUT") < turn.index(line) < turn.index("done")
    links = [t.attrs.get("href") for t in _tokens(line) if t.type == "link_open"]
    assert links == ["#branch-2-of-2"]


def test_an_assistant_turn_without_its_results_still_forks_here(tmp_path: Path) -> None:
    """A fork at a turn whose results this path does not show keeps "forks here"."""
    session = _two_call_session(tmp_path, "a1")
    session.set_leaf("u2")  # the results are on the other branch now
    transcript = session_markdown(session).split("\n## Other branches\n", 1)[0]
    assert "*⑂ [Branch 2 of 2](#branch-2-of-2) forks here, after entry `a1`.*" in transcript


@pytest.mark.parametrize("name", ["pi-branched-1.jsonl", "pi-branched-2.jsonl"])
def test_a_fork_line_says_where_the_branch_is_once(name: str) -> None:
    """ "[Branch 2 of 7](#branch-2-of-7) forks here, after entry `x` (under “Other
    branches”)": the link already says where the branch is."""
    document = session_markdown(load_session(FIXTURES_DIR / name))
    lines = [line for line in document.splitlines() if line.startswith("*⑂ ")]
    assert lines
    for line in lines:
        assert "Other branches" not in line, line
        assert re.search(r"\]\(#branch-\d+-of-\d+\)", line), line


def test_a_label_on_a_result_shown_with_its_call_is_in_the_transcript() -> None:
    """Three of the nine labels in the demo are on tool results shown with their calls:
    they were in the header's list only, by an id the transcript never showed."""
    session = load_session(FIXTURES_DIR / "pi-branched-1.jsonl")
    document = session_markdown(session)
    transcript = document.split("\n## Transcript\n", 1)[1]
    for target, label in session.labels.items():
        assert f"`{label}` · id `{target}`" in transcript, (target, label)
    said = "**Label** `checkpoint` · id `3aa54557`, the `edit` result above"
    assert said in transcript


def test_a_fork_at_an_entry_without_a_heading_says_what_it_is() -> None:
    """ "forks here, after entry `88be28e6`" under "Thinking level: low": that id was
    nowhere else in the transcript."""
    transcript = session_markdown(load_session(FIXTURES_DIR / "pi-branched-1.jsonl"))
    assert (
        "*Thinking level: `low`*\n\n*⑂ [Branch 2 of 7](#branch-2-of-7) forks here, after "
        "entry `88be28e6`, the thinking-level change just above.*" in transcript
    )
    assert "after entry `d3da583d`, the model change just above.*" in transcript


def test_escaped_text_has_no_needless_backslashes() -> None:
    """ "Done\\!" and "cd x \\&\\& make 2\\>\\&1" in every quoted prompt: a "!" starts an
    image only before a "[" (escaped), an "&" matters only before a reference."""
    said = escaped("Done! cd x && make 2>&1 ![i](https://e.com/i.png) &amp; &#106;")
    assert said.startswith("Done! cd x && make 2>&1 !\\[i\\]")
    tokens = _tokens(said)
    assert not [t for t in tokens if t.type in ("image", "link_open", "html_inline")]
    assert VIEWER.renderInline(said) == (
        "Done! cd x &amp;&amp; make 2&gt;&amp;1 ![i](https://e.com/i.png) &amp;amp; &amp;#106;"
    )


def test_a_quote_sign_is_escaped_only_where_it_would_quote() -> None:
    """ ">" needs no backslash inside a line ("2>&1": every "<" is "&lt;", so it closes no
    tag); at the start of the text it would make a quote of the line, or of a list item."""
    for text in ("> not a quote", ">>x", "> - [link](https://e.com)"):
        said = escaped(text)
        assert said.startswith("\\>"), said
        for line in (said, f"- {said}"):
            assert "blockquote_open" not in [t.type for t in VIEWER.parse(line)]
    assert escaped("a -> b => c") == "a -> b => c"


# --- bug hunt of the Markdown export, 2026-12-05 -------------------------------------------


@pytest.mark.parametrize("lead", ["\t", " \t", "  \t"])
def test_a_tab_indented_line_in_quoted_text_stays_code(lead: str) -> None:
    """At the top level a tab-indented line is code, so its HTML was left as written; in
    a quote (thinking, a compaction's summary) the tab after "> " reached only two columns:
    the line became a paragraph and ``<img onerror>``, ``<script>`` and a definition that
    linked ``[docs]`` in another message went out live."""
    thinking = f"Plan:\n\n{lead}<img src=x onerror=alert(1)>\n\n{lead}[docs]: javascript:alert(2)"
    session = _crafted(
        {"message": {"role": "user", "content": "see the [docs] please"}},
        _answer({"type": "thinking", "thinking": thinking}, _text("ok")),
        {
            "type": "compaction",
            "summary": f"Summary\n\n{lead}<script>alert(3)</script>",
            "firstKeptEntryId": "m1",
            "tokensBefore": 10,
        },
        {"message": {"role": "user", "content": "bye"}},
    )
    html = UNFILTERED.render(session_markdown(session))
    assert "<img src=x" not in html and "<script>" not in html
    assert "javascript:" not in html.split("see the", 1)[1].split("</p>", 1)[0]
    assert 'href="javascript' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # still there, as code


@pytest.mark.parametrize(
    "text",
    ["> Release notes\n> ===\n>\n> body", "10. step\n\n    Details\n    -------"],
    ids=["quote", "list-item"],
)
def test_an_underlined_heading_behind_a_quote_or_an_indent_goes_below(text: str) -> None:
    """Without a "#" in the text, the look for a setext underline missed one behind "> "
    or a list item's four spaces, and the text went out unparsed: an h1 and an h2 in the
    middle of the transcript."""
    tags = [t.tag for t in _tokens(prose(text, 3)) if t.type == "heading_open"]
    assert tags == ["h4"]


def test_how_a_turn_ended_reads_as_on_the_page() -> None:
    """The page's notes on how a turn ended were missing from the Markdown but for error,
    aborted and length: an aborted turn's own message (a timeout read "Aborted by the
    user"), an unknown stop reason, an error message on a turn that stopped, and the
    provider's diagnostics."""
    session = _crafted(
        {"message": {"role": "user", "content": "go"}},
        _answer(_text("a"), stopReason="aborted", errorMessage="Tool call timed out after 30s"),
        {"message": {"role": "user", "content": "again"}},
        _answer(_text("b"), stopReason="content_filter"),
        {"message": {"role": "user", "content": "once more"}},
        _answer(
            _text("c"),
            errorMessage="overloaded, retried",
            diagnostics=[{"type": "fallback", "error": {"message": "used model B"}}],
        ),
        {"message": {"role": "user", "content": "stop"}},
        _answer(_text("d"), stopReason="aborted", errorMessage="Request was aborted."),
    )
    document = session_markdown(session)
    page = render_session(session)
    for said in (
        "> **Aborted:** `Tool call timed out after 30s`",
        "> **Stopped:** `content_filter` (stopReason)",
        "> **Error message:** `overloaded, retried`",
        "> **Diagnostic:** `fallback: used model B`",
        "> **Aborted** by the user",
    ):
        assert said in document, said
    for said in ("Tool call timed out after 30s", "content_filter", "overloaded, retried"):
        assert said in page  # what the page says too
    assert "used model B" in page


@pytest.mark.parametrize("indent", ["    ", "\t", "   "])
def test_an_indented_block_after_a_list_is_not_read_into_it(indent: str) -> None:
    """Blocks are joined by a blank line: an indented one after a block that ends in a
    list was read as part of its last item, its code lines a paragraph with live HTML
    (bug hunt 2026-12-05). A blank HTML comment ends the list first; where nothing is
    indented, nothing is added."""
    code = f"{indent}x = <b>bold</b> *emph*\n{indent}second_line()"
    session = _crafted(
        {"message": {"role": "user", "content": "show me"}},
        _answer(_text("Steps:\n\n1. run it"), _text(code)),
        {"message": {"role": "user", "content": [_text("- a\n- b"), _text(code)]}},
        _answer(_text("- one"), _text("plain words")),
    )
    document = session_markdown(session)
    html = UNFILTERED.render(document)
    assert "<b>bold</b>" not in html
    if indent != "   ":  # four columns: code, shown as written
        assert html.count("x = &lt;b&gt;bold&lt;/b&gt; *emph*\nsecond_line()") == 2
        assert "<em>emph</em>" not in html
    assert document.count("<!-- -->") == 2  # and none before "plain words"
