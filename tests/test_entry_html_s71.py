"""Entries are written by exporter.render.entry_html (Python), not by a Jinja macro.

The HTML is the macro's, byte for byte (checked when the change was made, on every fixture,
generated sessions and the XSS corpus); these tests hold the HTML itself: every fixture's
page is made of the function's articles, each entry kind keeps its markup, and a hostile
string in any field the function writes comes out escaped while ``Markup`` stays as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from markupsafe import Markup, escape

from exporter.cli import cli
from exporter.loader import load_session
from exporter.render import session_paths
from exporter.render.entry_html import entry_article, folded_html
from exporter.render.folding import Folded
from exporter.render.model import EntryView, Part
from exporter.render.tools import DocumentPart, ImageView, ToolView
from exporter.render.view import PageBuilder
from tests.conftest import FIXTURES_DIR

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

#: What each fixture's page must show, one snippet per entry kind or tool shape it has.
SNIPPETS = {
    "every-entry-type.jsonl": [
        'class="entry k-compaction',
        '<details class="summary-block"><summary>Summary the model kept instead of the'
        ' earlier history</summary><div class="md">',
        '<details class="skill"><summary>Skill <b>',
        '<div class="tool tool-bashExecution st-error"><div class="tool-head"><code class="cmd">',
        '<details class="thinking"><summary>Thinking',
        'class="entry k-branchSummary',
        'class="entry k-customMessage',
        'class="entry k-custom ',
        'class="entry k-marker',
        '<span class="tool-name">bash</span><code class="cmd">',
        '<span class="status">error</span>',
        '<pre class="diff g4">',
        '<label class="zoom"><input type="checkbox" class="zoom-toggle" aria-label="Enlarge'
        ' the image"><img src="data:image/',
        '<span class="badge fork">forks here: 1 other branch below</span>',
        '<details class="fold fold-after"><summary>',
    ],
    "pi-branched-1.jsonl": [
        'class="entry k-compaction',
        '<pre class="diff g5">',
        '<details class="fold fold-before"><summary>',
        '<span class="badge fork">',
    ],
    "pi-branched-2.jsonl": [
        '<span class="status">no result</span>',
        '<div class="tool tool-edit st-pending"><div class="tool-head"><h4>',
        "</h4></div>",
    ],
    "pi-branched-3.jsonl": ['class="entry k-customMessage', '<pre class="diff g6">'],
    "pi-branched-4.jsonl": [
        '<p class="note same-output">Output: ',
        "identical to <a href=",
        '<details class="fold fold-after cmd-rest"><summary>',
        ' of this command</summary><pre class="cmd">',
        '<div class="tool tool-bashExecution st-ok">',
        '<pre class="diff">',
        '<div class="tool tool-read st-pending">',
    ],
    "pi-large-session.jsonl": [
        '<div class="tool tool-edit st-pending">',
        '<a class="permalink" href="#',
    ],
    "pi-v1-before-compaction.jsonl": [
        'class="entry k-compaction',
        'class="entry k-bashExecution',
    ],
}


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_every_fixture_page_is_made_of_the_functions_articles(name: str, tmp_path: Path) -> None:
    """The exported page holds each entry exactly as :func:`entry_article` writes it, in
    the plan's order, and nothing else writes an entry's ``<article data-entry-id``."""
    source = FIXTURES_DIR / name
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    session = load_session(source)
    builder = PageBuilder(session, session_paths(session))
    articles = [entry_article(builder.entry_view(i)) for i in builder.plan() if i.kind == "entry"]
    assert articles and page.count("<article data-entry-id=") == len(articles)
    at = 0
    for article in articles:
        found = page.find(article, at)
        assert found >= 0, article[:300]
        at = found + len(article)
    for snippet in SNIPPETS[name]:
        assert snippet in page, snippet


def test_the_snippets_cover_every_fixture() -> None:
    """A fixture added to the shared folder gets its snippets here."""
    assert sorted(p.name for p in FIXTURES_DIR.glob("*.jsonl")) == sorted(SNIPPETS)


def test_one_source_of_truth_for_the_entry_html() -> None:
    """The macros the function replaced are gone: two copies of one HTML drift apart."""
    assert not (TEMPLATES / "entry.html.j2").exists()
    macros = (TEMPLATES / "macros.html.j2").read_text(encoding="utf-8")
    for name in ("folded", "tool", "image", "command_rest", "entry"):
        assert f"macro {name}(" not in macros
    page = (TEMPLATES / "page.html.j2").read_text(encoding="utf-8")
    assert "{{ folded(d.text, " in page  # the damaged lines' folds: the Python global


# --- hostile values in every field ------------------------------------------------------

_used: list[str] = []


def _h(field: str) -> str:
    """A hostile value naming its field: markup, both quotes and an ampersand."""
    value = f"<i id=\"{field}\" onclick='x()'>&amp;"
    _used.append(value)
    return value


def _fold(field: str, *, hidden: bool = True, first: bool = False) -> Folded:
    visible = _h(f"{field}.visible")
    if not hidden:
        return Folded(visible, total_lines=2)  # type: ignore[arg-type]  # a str on purpose
    return Folded(
        visible,  # type: ignore[arg-type]
        _h(f"{field}.hidden"),  # type: ignore[arg-type]
        hidden_lines=4,
        hidden_first=first,
        total_lines=9,
    )


def _tool(prefix: str, **extra: object) -> ToolView:
    view = ToolView(
        call_id=_h(f"{prefix}.call_id"),
        name=_h(f"{prefix}.name"),
        kind=_h(f"{prefix}.kind"),
        title=_h(f"{prefix}.title"),
        subtitle=_h(f"{prefix}.subtitle"),
        path=_h(f"{prefix}.path"),
        command_rest=_fold(f"{prefix}.command_rest"),
        args_json=_fold(f"{prefix}.args_json", first=True),
        body=_fold(f"{prefix}.body", hidden=False),
        body_label=_h(f"{prefix}.body_label"),
        output=_fold(f"{prefix}.output"),
        images=[
            ImageView(_h(f"{prefix}.img.src"), _h(f"{prefix}.img.mime")),
            ImageView(None, _h(f"{prefix}.held.mime"), held=_h(f"{prefix}.img.held")),
            ImageView(None, _h(f"{prefix}.bad.mime")),
        ],
        documents=[
            DocumentPart(
                [Markup(escape(_h(f"{prefix}.doc.line")))],  # lines come escaped
                _h(f"{prefix}.doc.name"),
                _h(f"{prefix}.doc.text"),  # type: ignore[arg-type]
            )
        ],
        status=_h(f"{prefix}.status"),
        exit_code=_h(f"{prefix}.exit_code"),  # type: ignore[arg-type]
        notes=[_h(f"{prefix}.note")],
        result_entry_id=_h(f"{prefix}.result_entry_id"),
        invalid_args=[_h(f"{prefix}.invalid_arg")],
        other_args=_fold(f"{prefix}.other_args", hidden=False),
        details=_fold(f"{prefix}.details"),
        result_odd=_h(f"{prefix}.result_odd"),  # type: ignore[arg-type]
    )
    for key, value in extra.items():  # the hostile value replaced is not printed
        replaced = getattr(view, key)
        if isinstance(replaced, str) and replaced in _used:
            _used.remove(replaced)
        setattr(view, key, value)
    return view


def _views() -> list[EntryView]:
    """Entries whose every printed field is hostile, one per branch of the function."""
    message = EntryView(
        id=_h("e.id"),
        anchor=_h("e.anchor"),
        kind=_h("e.kind"),
        type="message",
        time=_h("e.time"),  # unreadable: shown as written
        label=_h("e.label"),
        classes=[_h("e.class")],
        title=_h("e.title"),
        meta=_h("e.meta"),
        html=_h("e.html"),  # type: ignore[arg-type]
        notes=[_h("e.note")],
        status=_h("e.status"),
        forks_here=2,
        odd=_h("e.odd"),  # type: ignore[arg-type]
        details=_fold("e.details", first=True),
        parts=[
            Part("text", html=_h("p.text.html")),  # type: ignore[arg-type]
            Part("thinking", html=_h("p.thinking.html"), name=_h("p.thinking.name")),  # type: ignore[arg-type]
            Part("skill", html=_h("p.skill.html"), name=_h("p.skill.name")),  # type: ignore[arg-type]
            Part("attachment", html=_h("p.attachment.html"), name=_h("p.attachment.name")),  # type: ignore[arg-type]
            Part("json", fold=_fold("p.json")),
            Part("image", image=ImageView(_h("p.image.src"), _h("p.image.mime"))),
            Part(
                "tool",
                tool=_tool("t"),
                tool_entry_anchor=_h("p.tool_entry_anchor"),
                tool_label=_h("p.tool_label"),
                tool_forks=3,
            ),
            Part(
                "tool",
                tool=_tool("t2", path=None, command=_h("t2.command")),
                tool_entry_anchor=None,
            ),
            Part("tool", tool=_tool("t3", path=None, title="", status="pending")),
            Part(
                "tool",
                tool=_tool(
                    "t4",
                    kind="bash",
                    command=_h("t4.command"),
                    status="pending",
                    result_elsewhere=_h("t4.result_elsewhere"),
                ),
            ),
            Part(
                "tool",
                tool=_tool("t5", path=None, same_output_as=_h("t5.same_output_as")),
            ),
        ],
    )
    heading = EntryView(
        id="h",
        anchor="h",
        kind="user",
        type="message",
        time=None,
        heading=_h("e.heading"),
        forks_here=1,
        is_leaf=True,
    )
    compaction = EntryView(
        id="c",
        anchor="c",
        kind="compaction",
        type="compaction",
        time=None,
        html=_h("compaction.html"),
        notes=[_h("compaction.note")],  # type: ignore[arg-type]
    )
    command_tool = _tool("bx", kind="bashExecution", command=None)
    command = EntryView(
        id="b",
        anchor="b",
        kind="bashExecution",
        type="message",
        time=None,
        status=_h("bx.entry.status"),
        html=_h("bx.entry.html"),  # type: ignore[arg-type]
        notes=[_h("bx.entry.note")],
        parts=[Part("tool", tool=command_tool)],
    )
    return [message, heading, compaction, command]


def test_a_hostile_string_in_any_field_is_escaped() -> None:
    """Each hostile value is in the HTML once or more, escaped as Jinja escaped it, and
    none of them opens an element or breaks out of an attribute."""
    _used.clear()
    views = _views()
    html = "".join(entry_article(view) for view in views)
    html += str(folded_html(_fold("page.damaged"), _h("page.cls")))
    # fields a view carries but the entry HTML never prints
    unprinted = {"t.call_id", "t2.call_id", "t3.call_id", "t4.call_id", "t5.call_id", "bx.call_id"}
    unprinted |= {"t2.result_entry_id", "t3.result_entry_id", "t4.result_entry_id"}
    unprinted |= {"t5.result_entry_id", "bx.result_entry_id"}  # shown with no anchor
    unprinted |= {f"{p}.path" for p in ("t4", "bx")} | {f"{p}.title" for p in ("t4", "bx")}
    unprinted |= {"t4.name", "bx.name", "t5.output.visible", "t5.output.hidden", "t2.command"}
    # a long command's rest shows its hidden lines only (its first ones are in the head)
    unprinted |= {f"{p}.command_rest.visible" for p in ("t", "t2", "t3", "t4", "t5", "bx")}
    unprinted |= {"bx.kind", "bx.status", "bx.title", "bx.subtitle", "bx.exit_code"}
    unprinted |= {"bx.invalid_arg", "bx.note", "bx.args_json.visible", "bx.args_json.hidden"}
    unprinted |= {"bx.body.visible", "bx.body_label", "bx.other_args.visible"}
    unprinted |= {"bx.details.visible", "bx.details.hidden", "bx.result_odd"}
    unprinted |= {f"bx.{x}" for x in ("img.src", "img.mime", "held.mime", "img.held")}
    unprinted |= {"bx.bad.mime", "bx.doc.line", "bx.doc.name", "bx.doc.text"}
    # an image kept elsewhere says where it is, not its type
    unprinted |= {f"{p}.held.mime" for p in ("t", "t2", "t3", "t4", "t5", "bx")}
    assert "<i id=" not in html and "onclick='" not in html
    missing = []
    for value in _used:
        field = value.split('"')[1]
        if field in unprinted:
            continue
        if str(escape(value)) not in html:
            missing.append(field)
    assert missing == []


def test_markup_goes_in_as_it_is_and_text_is_escaped() -> None:
    """A ``Markup`` value (HTML this tool made) is written as it is; the same characters
    in a plain string are escaped."""
    made = Markup('<p class="x">a &amp; b</p>')
    view = EntryView(
        id="m",
        anchor="m",
        kind="assistant",
        type="message",
        time=None,
        html=made,
        parts=[Part("text", html=Markup("<b>kept</b>"))],
        notes=["<b>note</b>"],
        odd=Markup('<span class="k">1</span>'),
    )
    html = entry_article(view)
    assert (
        '<div class="md"><b>kept</b></div><div class="md"><p class="x">a &amp; b</p></div>' in html
    )
    assert '<p class="note">&lt;b&gt;note&lt;/b&gt;</p>' in html
    assert '<pre class="args hl"><span class="k">1</span></pre>' in html


def test_an_entry_s_parts_and_tool_head_in_full() -> None:
    """One entry of each shape, its whole HTML: the order of every piece, the folds'
    blank-first-line rule (``pre_text``) and the singular and plural of the badges."""
    tool = ToolView(
        call_id="c1",
        name="read",
        kind="read",
        path="src/a.py",
        title="1-20",
        output=Folded(Markup("\nline"), total_lines=2),
        status="error",
        exit_code=2,
    )
    view = EntryView(
        id="e1",
        anchor="a1",
        kind="assistant",
        type="message",
        time="2026-01-02T03:04:05Z",
        forks_here=1,
        status="aborted",
        notes=["stopped"],
        parts=[Part("tool", tool=tool, tool_entry_anchor="r1", tool_forks=1, tool_label="ok")],
    )
    tool.result_entry_id = "r1"
    assert entry_article(view) == (
        '<article data-entry-id="e1" class="entry k-assistant st-aborted" id="a1"><header>'
        '<h3>Assistant</h3> <span class="badge fork">forks here: 1 other branch below</span>'
        '<a class="ts" href="#a1"><time datetime="2026-01-02T03:04:05Z">2026-01-02 03:04:05'
        ' UTC</time></a></header><div data-entry-id="r1" id="r1" class="tool tool-read'
        ' st-error is-tool is-labeled"><div class="tool-head"><h4><span class="tool-name">read'
        '</span> <code class="path">src/a.py</code> <code class="args">1-20</code> <span'
        ' class="badge label" title="label on the result">ok</span> <span class="badge fork">'
        'forks here: 1 other branch after this turn</span><span class="status">error, exit 2'
        '</span></h4><a class="permalink" href="#r1" aria-labelledby="lnk">#</a></div>'
        '<pre class="out hl">\n\nline</pre></div><p class="note warn">stopped</p></article>'
    )
