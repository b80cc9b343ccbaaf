"""Stop 73, the Markdown export as GitHub, VS Code (markdown-it) and marked read it: a message
nested deeper than markdown-it parses hid every entry after it; a table over a ``---`` was
a heading of pipe text; marked read a Unicode blank before ``javascript:``, tildes before a
code span and a fence line of backticks and tildes otherwise than CommonMark; GitHub took the
``&lt;`` after a bare address into it; indented code after a heading had ``&lt;`` in it; a
Codex file's dated name stayed with ``--no-timestamps``; a ``!`` command's full output file
was not named. Each document is the real CLI's, read by markdown-it as VS Code (CommonMark,
GFM-like, default presets, raw HTML on)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cmarkgfm
import pytest
from click.testing import CliRunner
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

from exporter import markdown_text
from exporter.cli import cli
from exporter.markdown_text import escaped, prose, quoted
from tests.conftest import FIXTURES_DIR, cpu_time_limit

SAMPLER = FIXTURES_DIR / "every-entry-type.jsonl"
CODEX = (
    Path(__file__).parent
    / "data"
    / "codex"
    / "rollout-2025-12-28T13-18-30-019b64e5-57fa-7463-b644-fba7e456f905.jsonl"
)


def _viewer(preset: str) -> MarkdownIt:
    viewer = MarkdownIt(preset, {"html": True})
    return viewer.disable("linkify", ignoreInvalid=True)  # (linkify-it is not installed)


#: markdown-it as VS Code's preview and its kin run it: maxNesting 20 in the first two.
VIEWERS = {preset: _viewer(preset) for preset in ("commonmark", "gfm-like", "default")}
#: markdown-it with no URL filter: what a link's destination is, as a viewer without one reads it
UNFILTERED = MarkdownIt("commonmark", {"html": True})
UNFILTERED.validateLink = lambda url: True  # type: ignore[method-assign]
_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>")


def _session(tmp_path: Path, name: str, **changes: dict) -> Path:
    """The sampler session with entries' messages changed (by id: the keys to set)."""
    lines = []
    for line in SAMPLER.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        entry.get("message", entry).update(changes.get(entry.get("id"), {}))
        lines.append(json.dumps(entry))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _export(tmp_path: Path, text: str, *options: str, name: str = "hostile") -> str:
    """The CLI's Markdown for the sampler whose last user message (e25) is ``text``."""
    source = _session(tmp_path, name, e25={"content": text})
    out = tmp_path / f"{name}.md"
    done = CliRunner().invoke(cli, ["export", str(source), "-o", str(out), *options])
    assert done.exit_code == 0, done.output
    return out.read_text(encoding="utf-8")


def _headings(markdown: str, preset: str) -> list[str]:
    return [title for _, title in _HEADING.findall(VIEWERS[preset].render(markdown))]


def _message(document: str) -> str:
    """The last user message's part of the document (e25: up to "Other branches")."""
    end = document.index("## Other branches")
    return document[document.rindex("### User", 0, end) : end]


@pytest.fixture(scope="module")
def plain_headings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    document = _export(tmp_path_factory.mktemp("plain"), "hello", name="plain")
    return {preset: _headings(document, preset) for preset in VIEWERS}


# --- 1: a message nested past markdown-it's limit ----------------------------------------


@pytest.mark.parametrize(
    "text",
    ["- " * 25 + "x", "- " * 101 + "x", ">" * 30 + " x", "1. " * 12 + "x\n\nafter"],
    ids=["list-25", "list-101", "quote-30", "ordered-24"],
)
def test_a_message_nested_too_deep_hides_nothing_after_it(
    tmp_path: Path, text: str, plain_headings: dict[str, list[str]]
) -> None:
    """markdown-it stops at 20 levels (100 in its default preset) and drops the rest of the
    document: "Other branches", every entry of it and "Not shown" were gone. Such a message
    is plain text in a fence, with a line saying why, as the page does past 50."""
    document = _export(tmp_path, text)
    for preset in VIEWERS:
        assert _headings(document, preset) == plain_headings[preset], preset
    assert "*Nested too deeply for Markdown viewers: shown as plain text.*" in _message(document)
    assert prose(text, 3).endswith(f"```\n{text}\n```")


def test_a_message_nested_a_little_stays_markdown() -> None:
    """Nine lists in each other are Markdown still (every viewer shows them, in a thinking
    block's quote too: they went plain at 16 levels); ten are not, and the note says why
    in a reader's words, not in markdown-it's levels (review H, 4)."""
    nine = "- " * 9 + "x"
    assert prose(nine, 3) == nine
    html = VIEWERS["commonmark"].render(quoted(prose(nine, 3)))
    assert html.count("<li>") == 9 and "x" in html
    indented = "Plan:\n\n" + "\n".join("  " * i + f"- level {i + 1}" for i in range(9))
    assert prose(indented, 3) == indented
    ten = prose("- " * 10 + "x", 3)
    assert ten.startswith("*Nested too deeply for Markdown viewers: shown as plain text.*")
    assert "16" not in ten and "level" not in ten


# --- 2: a table over a rule -------------------------------------------------------------


TABLE = "Results:\n\n| name | value |\n|------|-------|\n| a    | 1     |\n{rule}\nNext part"


@pytest.mark.parametrize("rule", ["---", "==="])
def test_a_table_over_a_rule_stays_a_table(tmp_path: Path, rule: str) -> None:
    """The rows and a ``---`` (or ``===``) under them read as a setext heading, moved to
    "#### | name | value | ...": the page shows a table (then a rule)."""
    document = _export(tmp_path, TABLE.format(rule=rule), "--no-timestamps")
    said = _message(document)
    assert "| name | value |\n|------|-------|\n| a    | 1     |\n" + rule in said
    assert "#" not in said.split("\n", 1)[1]
    for preset in ("gfm-like", "default"):
        html = VIEWERS[preset].render(said)
        assert "<table>" in html and "<th>name</th>" in html
        assert not any("|" in title for title in _headings(said, preset))
        if rule == "---":
            assert html.index("</table>") < html.index("<hr") < html.index("Next part")


# --- 3: what marked reads otherwise -----------------------------------------------------


@pytest.mark.parametrize("blank", ["\u00a0", "\u3000", "\ufeff", "\u2003", "\u205f"])
def test_a_unicode_blank_before_an_unsafe_scheme_makes_no_link(tmp_path: Path, blank: str) -> None:
    """marked trims every Unicode blank (JavaScript's ``\\s``, U+FEFF too) off a
    destination: ``[docs](\\u00a0javascript:…)`` was a live link there. It is text."""
    document = _export(tmp_path, f"See [docs]({blank}javascript:alert(document.domain)) now")
    said = _message(document)
    assert f"[docs]\\({blank}javascript:" in said
    assert "<a " not in UNFILTERED.render(said)
    for viewer in VIEWERS.values():
        assert "<a " not in viewer.render(said)


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("~~`<img src=x onerror=alert(1)>`", "\\~\\~`<img src=x onerror=alert(1)>`"),
        ("a ~~~`<img src=x onerror=alert(1)>` b", "a \\~\\~\\~`<img src=x onerror=alert(1)>` b"),
        ("\\~~`<img src=x>`", "\\~\\~`<img src=x>`"),
        ("~``[a](javascript:alert(1))``", "\\~``[a](javascript:alert(1))``"),
    ],
    ids=["two", "three-mid-line", "one-escaped", "link-in-span"],
)
def test_tildes_before_a_code_span_are_escaped(tmp_path: Path, text: str, written: str) -> None:
    """marked read the tildes and the span's opening backticks as one run of text, the
    span's ``<img onerror=…>`` as raw HTML: an escaped ``~`` reads the same everywhere."""
    said = _message(_export(tmp_path, text))
    assert written in said
    for viewer in VIEWERS.values():
        html = viewer.render(said)
        assert "<img" not in html and "href" not in html and "<code>" in html


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("```\ncode\n```~~~", "````\ncode\n```~~~\n````"),
        (
            "text\n```\ncode\n```~~~\nmore\n```\n\nafter",
            "text\n````\ncode\n```~~~\nmore\n````\n\nafter",
        ),
        ("~~~ sh\nx\n~~~```\n~~~~`", "~~~~~ sh\nx\n~~~```\n~~~~`\n~~~~~"),
    ],
    ids=["left-open", "closed", "tildes"],
)
def test_a_fence_marked_would_end_early_is_opened_longer(
    tmp_path: Path, text: str, written: str, plain_headings: dict[str, list[str]]
) -> None:
    """marked ends a fence at a line of its run and more backticks or tildes (```` ```~~~ ````),
    CommonMark does not: the closing fence added to an open one opened a block in marked
    that swallowed the entries after it. Opened and closed longer, no line ends it early."""
    document = _export(tmp_path, text)
    assert written in _message(document)
    for preset in VIEWERS:
        assert _headings(document, preset) == plain_headings[preset], preset


# --- 4: a bare address before a "<" ---------------------------------------------------


def test_a_web_address_before_a_tag_ends_where_the_page_ends_it(tmp_path: Path) -> None:
    """GitHub took the ``&lt;`` written for the ``<`` into the address
    (``…/users/&amp;lt;id%3E``): written ``<…>`` it ends there, as on the page. Not in a
    link's destination or text (the link would break)."""
    text = (
        "Open http://localhost:3000/users/<id> to check, see http://a.b/c.<id>\n\n"
        "[x](http://a.b/<id>) and [see http://a.b/<id>](http://c.d)"
    )
    said = _message(_export(tmp_path, text))
    assert "Open <http://localhost:3000/users/>&lt;id> to check" in said
    assert "see <http://a.b/c>.&lt;id>" in said
    assert "[x](http://a.b/&lt;id>) and [see http://a.b/&lt;id>](http://c.d)" in said
    html = VIEWERS["default"].render(said)
    assert (
        '<a href="http://localhost:3000/users/">http://localhost:3000/users/</a>&lt;id&gt;' in html
    )
    assert '<a href="http://a.b/%3Cid%3E">x</a>' in html and '<a href="http://c.d">' in html


def test_an_address_in_escaped_text_shows_as_written(tmp_path: Path) -> None:
    """The title (and labels, first prompts): a "<" after an address as for a message; a
    "[", "]" or "|" in it was escaped, and GitHub linked and showed the backslashes."""
    assert escaped("Open http://h/users/<id> ok") == "Open <http://h/users/>&lt;id> ok"
    assert escaped("See https://a.b/[x]|y.") == "See <https://a.b/[x]|y>."
    source = _session(tmp_path, "titled")
    named = source.read_text(encoding="utf-8").replace(
        '"name": "Sampler session"', '"name": "See https://a.b/[x]|y and http://h/u/<id> ok"'
    )
    source.write_text(named, encoding="utf-8")
    out = tmp_path / "titled.md"
    assert CliRunner().invoke(cli, ["export", str(source), "-o", str(out)]).exit_code == 0
    title = out.read_text(encoding="utf-8").split("\n", 1)[0]
    assert title == "# See <https://a.b/[x]|y> and <http://h/u/>&lt;id> ok"
    assert "\\" not in VIEWERS["default"].render(title)


# --- 5: indented code after a heading, a rule, a fence ----------------------------------


@pytest.mark.parametrize(
    "before",
    ["## Usage", "Title\n---", "***", "```\nx\n```"],
    ids=["atx", "setext", "rule", "fence"],
)
def test_indented_code_after_a_block_that_is_no_paragraph_is_code(
    tmp_path: Path, before: str
) -> None:
    """Only a paragraph's line takes the next one in (lazy continuation): after a heading,
    a rule or a closing fence the indented line is code, and its "<" was written "&lt;"."""
    said = _message(_export(tmp_path, f"{before}\n    Map<String, Integer> m = new HashMap<>();"))
    assert "\n    Map<String, Integer> m = new HashMap<>();" in said
    for viewer in VIEWERS.values():
        assert "<code>Map&lt;String, Integer&gt; m = new HashMap&lt;&gt;();" in viewer.render(said)


# --- 6: a Codex file's dated name -------------------------------------------------------


def test_no_timestamps_names_a_codex_rollout_by_its_session_id(tmp_path: Path) -> None:
    """Codex names its file ``rollout-<time>-<id>.jsonl``: the footer kept the time."""
    out = tmp_path / "codex.md"
    done = CliRunner().invoke(cli, ["export", str(CODEX), "-o", str(out), "--no-timestamps"])
    assert done.exit_code == 0, done.output
    footer = out.read_text(encoding="utf-8").rstrip("\n").rsplit("\n", 1)[-1]
    assert footer.startswith("*Exported from session `019b64e5-57fa-7463-b644-fba7e456f905` by")
    with_times = tmp_path / "timed.md"
    assert CliRunner().invoke(cli, ["export", str(CODEX), "-o", str(with_times)]).exit_code == 0
    assert CODEX.name in with_times.read_text(encoding="utf-8")  # with times: the file's name


# --- 7: a "!" command's full output ---------------------------------------------------


def test_a_truncated_shell_output_names_its_full_output_file(tmp_path: Path) -> None:
    """The page says "output truncated by Pi (full output: PATH)"; the .md said less. The
    path is the session's: a code span, whatever it holds."""
    path = "/tmp/pi-bash-`1`<img src=x onerror=alert(1)>.log"
    source = _session(tmp_path, "shell", e14={"truncated": True, "fullOutputPath": path})
    out = tmp_path / "shell.md"
    assert CliRunner().invoke(cli, ["export", str(source), "-o", str(out)]).exit_code == 0
    document = out.read_text(encoding="utf-8")
    line = f"*exit 1 · output truncated by Pi (full output: ``{path}``)*"
    assert line in document
    for viewer in VIEWERS.values():
        assert "<img" not in viewer.render(line)


# --- review H: the new escapes, reviewed -----------------------------------------------


def _github(markdown: str) -> str:
    """cmark-gfm as GitHub runs it, raw HTML kept (what a viewer without a filter shows)."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


@pytest.mark.parametrize(
    "text",
    [
        "see http://a.b/" + ")" * 250_000 + "<x",
        "http://a.b/<x " * 71_428,
        "http://a.b/<x." * 71_428,
        "http://a.b/<x`y " * 62_500,
    ],
    ids=["parens-before-tag", "addresses-and-spaces", "addresses-one-line", "with-backticks"],
)
@pytest.mark.parametrize("helper", [prose, escaped], ids=["prose", "escaped"])
def test_addresses_before_tags_are_closed_in_linear_time(text: str, helper: object) -> None:
    """Each stripped ")" recounted the address's parentheses, and each "<" after an address
    searched to the line's end for a "](" and to the next blank for a backtick: 250 KB of
    ")" took 32 s, 1 MB of ``http://a.b/<x `` 35 s. (A guard against a hang.)"""
    assert callable(helper)
    with cpu_time_limit(10):
        said = helper(text)
    assert "<x" not in said.replace("<x`", "")  # every tag-opening "<" is "&lt;"
    assert "&lt;x" in said


@pytest.mark.parametrize(
    ("text", "link"),
    [
        (
            "[logs](https://c.d/go?to=http://a.b/<id>)",
            '<a href="https://c.d/go?to=http://a.b/%3Cid%3E">',
        ),
        ("[x]( http://a.b/<y>)", '<a href="http://a.b/%3Cy%3E">x</a>'),
        ("[x](\nhttp://a.b/<y>)", '<a href="http://a.b/%3Cy%3E">x</a>'),
        (
            "[see http://a.b/<x>\nhere](http://c.d)",
            '<a href="http://c.d">see http://a.b/&lt;x&gt;<br',
        ),
        (
            '[x](http://c.d "see http://a.b/<x>")',
            '<a href="http://c.d" title="see http://a.b/&lt;x&gt;">',
        ),
    ],
    ids=["after-equals", "after-space", "next-line", "text-over-lines", "title"],
)
def test_an_address_in_a_link_is_left_as_it_was(tmp_path: Path, text: str, link: str) -> None:
    """An address before a "<" written ``<…>`` inside a link's destination, text or title
    broke the link (GitHub showed ``[logs](https://c.d/go?to=`` and a second link). A
    paragraph with a ``](`` keeps its addresses as written: one link, to where it said."""
    said = _message(_export(tmp_path, text))
    assert "<http" not in said
    for html in (_github(said), VIEWERS["default"].render(said)):
        assert html.count("<a ") == 1 and link in html, html


@pytest.mark.parametrize(
    ("text", "heading"),
    [("Status |\n---\nall good", "Status |"), ("| a |\n---\nx", "| a |")],
    ids=["trailing-pipe", "both-pipes"],
)
def test_a_one_column_table_over_dashes_is_moved_as_the_heading_github_shows(
    tmp_path: Path, text: str, heading: str
) -> None:
    """markdown-it reads ``Status |`` over ``---`` as a table of one column, GitHub and
    marked as a level 2 heading: left unmoved, GitHub showed an h2 in the middle of the
    transcript. It goes below the entry's heading, as before tables were read."""
    said = _message(_export(tmp_path, text, "--no-timestamps"))
    assert f"#### {heading}\n" in said
    assert "<h4>" in _github(said) and "<h2>" not in _github(said)
    assert "<h2>" not in VIEWERS["default"].render(said)


def test_a_one_column_table_with_a_pipe_in_its_delimiter_row_stays_a_table() -> None:
    """A delimiter row with a pipe (or a colon) is no underline: a table everywhere."""
    for text in ("| a |\n| --- |\nx", "| a |\n:---\nx"):
        assert prose(text, 3) == text
        assert "<table>" in _github(text)


def test_a_closed_strikethrough_around_a_code_span_keeps_its_tildes(tmp_path: Path) -> None:
    """``~~`old_api()`~~`` lost its strikethrough (its tildes escaped) when other text in
    the paragraph needed escaping: tildes are escaped only when marked could not read
    them as a strikethrough, which left the span's ``<img …>`` raw HTML there."""
    text = "Removed ~~`old_api()`~~ (use `List<int>` now)."
    said = _message(_export(tmp_path, text))
    assert text in said
    assert "<del><code>old_api()</code></del>" in _github(said)
    assert "<s><code>old_api()</code></s>" in VIEWERS["default"].render(said)
    for open_only in (  # no closing run that marked reads: escaped, as before
        "~~`<img src=x>` and ~~",
        "~~`a` and `b~~<img src=x>`",
        "a ~~~`<img src=x>`~~~",
    ):
        assert prose(open_only).startswith(("\\~\\~`", "a \\~\\~\\~`")), open_only


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (
            "> ```\n> code\n> ```~~~\n> <img src=x>\n> ```",
            "> ````\n> code\n> ```~~~\n> <img src=x>\n> ````",
        ),
        (
            "- ```\n  code\n  ```~~~\n  <img src=x>\n  ```",
            "- ````\n  code\n  ```~~~\n  <img src=x>\n  ````",
        ),
    ],
    ids=["quote", "list-item"],
)
def test_a_fence_in_a_container_marked_would_end_early_is_opened_longer(
    tmp_path: Path, text: str, written: str
) -> None:
    """Only a fence at the top level was opened longer: in a quote or a list item marked
    still ended it at ```` ```~~~ ````, and the ``<img onerror=…>`` line after it was raw
    HTML there. The container's marks stay; the code stays code everywhere."""
    said = _message(_export(tmp_path, text))
    assert written in said
    for html in (_github(said), VIEWERS["commonmark"].render(said)):
        assert "<img" not in html and "&lt;img src=x&gt;" in html


def test_a_message_that_might_nest_deeply_is_parsed_once_for_both_questions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The depth check read a message with a ``--------`` line (or a date) and then the
    escaping read it again: the same text, parsed twice."""
    calls: list[str] = []
    real = markdown_text._tokens

    def counted(source: str, env: dict | None = None) -> list:
        calls.append(source)
        return real(source, env)

    monkeypatch.setattr(markdown_text, "_tokens", counted)
    text = "Notes\n\n--------\n\nsee `x` and <b>"
    prose(text, 3)
    assert len(calls) == len(set(calls)), calls
