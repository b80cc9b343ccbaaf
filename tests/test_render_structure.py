"""Structure of the rendered page, checked on every session fixture without a browser.

The HTML is parsed with the stdlib parser (``tests.browser_util.parse_html``) and compared
with the loaded session: every entry exactly once, unique DOM ids, message text present,
tool calls next to their results, one branch block per alternative at each fork, a CSP that
forbids the network, a working embedded JSONL, ``--leaf``, ``--no-embed``, determinism.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_module
import json
import os
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from typing import Any

import pytest

from exporter.entries import CONTEXT_ENTRY_TYPES, MessageEntry
from exporter.formatting import fmt_cost, fmt_int, one_line, show_controls
from exporter.loader import load_session, parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.session import Session
from exporter.usage import Usage, compute_stats
from tests.browser_util import (
    ALL_PAGES,
    BRANCHED,
    FIXTURE_NAMES,
    UNICODE_TEXTS,
    V1_FIXTURES,
    Element,
    Page,
    branch_depth,
    embedded_jsonl,
    fixture_path,
    load_fixture,
    load_fresh,
    parse_fixture,
    parse_html,
    render_fixture,
    retry_session,
    unicode_session,
)
from tests.page_anchors import anchor_for

every_fixture = pytest.mark.parametrize("name", ALL_PAGES)

_LINK_DEST = re.compile(r"\]\([^)]*\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_ENTITY = re.compile(r"&#?\w+;")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_WORD = re.compile(r"[^\W_]{3,}")


def norm(text: str) -> str:
    return " ".join(text.split())


def plain_words(markdown_text: str, limit: int = 40) -> list[str]:
    """Distinctive words of the first ``limit`` characters that survive Markdown rendering."""
    text = _IMAGE.sub(" ", markdown_text)
    text = _LINK_DEST.sub("]", text)
    text = _ENTITY.sub(" ", text)
    text = _TAG.sub(" ", text)  # raw HTML shows as text, but skill tags get their own view
    return _WORD.findall(text[:limit])


def expected_branch_blocks(session: Session) -> int:
    """Every non-main child of a fork opens one block (forks inside branches too), and every
    extra root is a branch of its own."""
    forks = sum(len(kids) - 1 for kids in session.children.values() if len(kids) > 1)
    return forks + max(0, len(session.roots) - 1)


def enclosing_entry(element: Element) -> Element | None:
    return next((a for a in element.ancestors() if a.get("data-entry-id") is not None), None)


def output_text(element: Element) -> str:
    """The text of a tool box's output blocks (visible and folded parts, in page order),
    joined as the fold split them: inside a line ("N more characters") with nothing
    between the parts, else with the line break the fold took."""
    blocks = element.find_all(lambda e: e.tag == "pre" and e.has_class("out"))
    folds = element.find_all(lambda e: e.tag == "details" and e.has_class("fold"))
    inside_a_line = any(
        "characters" in (f.find_all(lambda e: e.tag == "summary")[0].text) for f in folds
    )
    return norm(("" if inside_a_line else "\n").join(b.text for b in blocks))


def sidebar(page: Page) -> Element:
    return page.one(lambda e: e.tag == "nav" and e.get("id") == "sidebar")


# --- every fixture -------------------------------------------------------------------------


def test_fixtures_are_there() -> None:
    assert len(FIXTURE_NAMES) >= 7, FIXTURE_NAMES
    assert all(load_fixture(name).entries for name in ALL_PAGES)


@every_fixture
def test_every_entry_appears_exactly_once(name: str) -> None:
    session = load_fixture(name)
    page = parse_fixture(name)
    ids = [e.id for e in session.entries]
    assert len(set(ids)) == len(ids)
    missing = [i for i in ids if i not in page.by_entry]
    twice = {i: len(v) for i, v in page.by_entry.items() if len(v) != 1}
    unknown = sorted(set(page.by_entry) - set(ids))
    assert (missing, twice, unknown) == ([], {}, [])
    for entry_id in ids:
        element = page.by_entry[entry_id][0]
        assert element.get("id") == anchor_for(session, entry_id)
        assert element.tag in ("article", "div")
    side = sidebar(page)
    assert not side.find_all(lambda e: e.get("data-entry-id") is not None)
    rows = side.find_all(lambda e: e.tag == "li" and not {"sub", "chunk"} & set(e.classes))
    assert len(rows) == len(ids), "one outline row per entry"
    hrefs = [r.find_all(lambda e: e.tag == "a")[0].get("href") for r in rows]
    assert sorted(hrefs) == sorted("#" + anchor_for(session, i) for i in ids)


@every_fixture
def test_dom_ids_are_unique_and_fragment_links_resolve(name: str) -> None:
    page = parse_fixture(name)
    duplicates = {k: len(v) for k, v in page.by_dom_id.items() if len(v) > 1}
    assert duplicates == {}
    assert not [e for e in page.elements if e.duplicate_attrs]
    broken = sorted(
        {
            e.get("href")
            for e in page.elements
            if (e.get("href") or "").startswith("#") and e.get("href")[1:] not in page.by_dom_id  # type: ignore[index]
        }
    )
    assert broken == [], f"links to ids that are not in the page: {broken[:10]}"


@every_fixture
def test_user_and_assistant_text_is_present(name: str) -> None:
    session = load_fixture(name)
    page = parse_fixture(name)
    problems = []
    checked = 0
    for entry in session.entries:
        if not isinstance(entry, MessageEntry) or entry.role not in ("user", "assistant"):
            continue
        texts: list[str] = []
        if entry.role == "user":
            texts = [entry.text]
        else:
            content = entry.message.get("content")
            if isinstance(content, str):
                texts = [content]
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "text":
                    texts.append(block.get("text") or "")
                elif isinstance(block, dict) and block.get("type") == "thinking":
                    texts.append(block.get("thinking") or "")
        rendered = page.entry(entry.id).text
        for text in texts:
            words = plain_words(text)
            checked += bool(words)
            lost = [w for w in words if w not in rendered]
            if lost:
                problems.append((entry.id, text[:40], lost))
    assert problems == []
    assert checked > 0


@every_fixture
def test_tool_calls_sit_next_to_their_results(name: str) -> None:
    session = load_fixture(name)
    page = parse_fixture(name)
    for entry in session.entries:
        if not isinstance(entry, MessageEntry):
            continue
        if entry.role == "assistant":
            calls = entry.tool_calls
            article = page.entry(entry.id)
            boxes = [
                e
                for e in article.iter()
                if e.tag == "div" and e.has_class("tool") and enclosing_entry(e) is article
            ]
            names = [next(x for x in box.iter() if x.has_class("tool-name")).text for box in boxes]
            expected = [
                c.get("name") if isinstance(c.get("name"), str) else "(unnamed tool)" for c in calls
            ]
            assert names == expected, f"{entry.id}: tool boxes out of order or missing"
        elif entry.role == "toolResult":
            element = page.entry(entry.id)
            ref = session.call_for_result(entry.id)
            if element.tag == "div":
                assert element.has_class("tool") and ref is not None
                owner = enclosing_entry(element)
                assert owner is not None and owner.get("data-entry-id") == ref.entry_id
                assert owner.tag == "article"
                content = session.by_id[ref.entry_id].raw["message"]["content"]
                position = [i for i, b in enumerate(content) if b.get("type") == "toolCall"]
                boxes = [
                    e
                    for e in owner.iter()
                    if e.tag == "div" and e.has_class("tool") and enclosing_entry(e) is owner
                ]
                assert boxes.index(element) == position.index(ref.block_index)
            else:
                assert element.tag == "article" and element.has_class("k-toolResult")
                assert element.find_all(lambda e: e.has_class("tool"))


@every_fixture
def test_branch_blocks_match_forks(name: str) -> None:
    """Each fork's other branches are blocks headed "Branch"; another root's block is
    headed "Separate tree" (it read "Branch", as if it forked from the entry above it)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    blocks = page.branches()
    anchors = {"branch-" + anchor_for(session, e.id): e.id for e in session.entries}

    def fork_of(block: Element) -> str | None:
        return session.parent_of(anchors[block.get("id") or ""])

    assert len(blocks) == expected_branch_blocks(session)
    for block in blocks:
        assert block.get("open") is None, "branches start collapsed"
        summary = block.children[0]
        assert isinstance(summary, Element) and summary.tag == "summary"
        assert len(norm(summary.text)) > 10
        assert norm(summary.text).startswith("Branch " if fork_of(block) else "Separate tree ")
    on_path = set(session.active_path)
    for entry in session.entries:
        depth = branch_depth(page.entry(entry.id))
        assert (depth == 0) == (entry.id in on_path), entry.id


@every_fixture
def test_the_branch_table_and_the_branch_blocks_cut_the_tree_alike(name: str) -> None:
    """The table of branches gave the shared trunk to a fork's oldest child, the transcript
    to its newest: "no, the block should stay as is" was 9 entries in the table and 45 in
    its block, and rows and blocks named different branches. Now each row after the active
    one is a block (same order, same title), a block's entries are its rows' entries, and a
    block holding nested branches says how many."""
    session = load_fixture(name)
    html = render_fixture(name)
    if len(session.leaf_ids) == 1:  # one branch: no table, no blocks
        assert '<table class="branches">' not in html and 'class="branch ' not in html
        return
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    rows = []
    cells_by_anchor = {}
    for row in re.findall(r"<tr[ >].*?</tr>", table.split("<tbody>", 1)[1], re.S):
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        link = re.search(r'<a href="#([^"]+)"[^>]*>(.*?)</a>', cells[2], re.S)
        assert link is not None, row
        rows.append(
            (link.group(1), html_module.unescape(link.group(2)), int(cells[3].replace(",", "")))
        )
        cells_by_anchor[link.group(1)] = cells[2]
    blocks = re.findall(
        r'<details class="branch [^"]*" id="branch-([^"]+)"[^>]*><summary><span class="branch-tag">'
        r'[^<]*</span> <bdi>(.*?)</bdi> <span class="muted">·(?: [A-Za-z ]+ ·)? ([\d,]+) '
        r"entr(?:y|ies)(?: in ([\d,]+) branches)?",
        html,
    )
    assert len(rows) == len(session.leaf_ids) and len(blocks) == len(rows) - 1
    by_anchor = {anchor_for(session, e.id): e.id for e in session.entries}
    # each row after the active one is a block, in order; its link goes to the prompt it
    # shows, inside that branch (it went to the branch's first entry, a marker at times)
    firsts = [by_anchor[b[0]] for b in blocks]
    lines_of = {b.entry_ids[0]: b.entry_ids for b in session.branches() if b.entry_ids}
    for (link, title, _), first in zip(rows[1:], firsts, strict=True):
        target = session.by_id[by_anchor[link]]
        assert target.id in set(session.walk(first)), (link, first)
        prompt = session.first_prompt_id(lines_of[first])
        if "(no prompt)" not in title and prompt is not None:
            assert target.id == prompt, (title, target.id, prompt)
    pairs = zip(rows[1:], firsts, strict=True)
    rows_by_first = {first: (title, count) for (_, title, count), first in pairs}
    cells_by_first = dict(zip(firsts, [cells_by_anchor[r[0]] for r in rows[1:]], strict=True))
    for anchor, title, entries, lines in blocks:
        first = by_anchor[anchor]
        said, row_said = html_module.unescape(title), rows_by_first[first][0]
        if " · first prompt: " in said and "(starts with " in cells_by_first[first]:
            # a branch that opens with an answer: the row gives its prompt and says what it
            # starts with; the block's one line both, in halves
            prompt = said.split(" · first prompt: ", 1)[1].rstrip("…")
            assert row_said.startswith(prompt), (said, row_said)
        else:
            assert said == row_said
        inside = [rows_by_first[i][1] for i in session.walk(first) if i in rows_by_first]
        assert int(entries.replace(",", "")) == sum(inside)
        assert int((lines or "1").replace(",", "")) == len(inside)


@every_fixture
def test_each_branch_block_follows_its_fork(name: str) -> None:
    session = load_fixture(name)
    page = parse_fixture(name)
    anchors = {"branch-" + anchor_for(session, e.id): e.id for e in session.entries}
    for block in page.branches():
        first = anchors[block.get("id") or ""]
        fork = session.parent_of(first)
        assert page.entry(first) in list(block.iter())
        if fork is None:  # another root: a top-level block after the main line
            assert first in session.roots and first not in session.active_path
            assert block.parent is not None and block.parent.get("id") == "transcript"
            continue
        siblings = [c for c in block.parent.children if isinstance(c, Element)]  # type: ignore[union-attr]
        before = siblings[: siblings.index(block)]
        while before and before[-1].tag == "details" and before[-1].has_class("branch"):
            before.pop()
        assert before, f"branch {first} opens before any entry"
        fork_element = page.entry(fork)
        assert before[-1] is fork_element or before[-1] in fork_element.ancestors(), (
            f"branch {first} does not follow its fork {fork}"
        )


@every_fixture
def test_results_are_never_cut_silently(name: str) -> None:
    """The full text of every tool result and shell output is in the page (maybe folded)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    for entry in session.entries:
        if not isinstance(entry, MessageEntry):
            continue
        if entry.role == "toolResult":
            full = entry.text
        elif entry.role == "bashExecution":
            full = entry.output
        else:
            continue
        if not full.strip():
            continue
        element = page.entry(entry.id)
        same = element.find_all(lambda e: e.has_class("same-output"))
        if same:
            link = same[0].find_all(lambda e: e.tag == "a")[0].get("href") or "#"
            (element,) = page.by_dom_id[link[1:]]
        # what the page shows of it: hidden controls and tag text made visible
        shown = html_module.unescape(show_controls(html_module.escape(full, quote=False)))
        assert norm(shown) in output_text(element), f"{entry.id}: output incomplete"


@every_fixture
def test_page_cannot_reach_the_network(name: str) -> None:
    page = parse_fixture(name)
    assert page.declarations and page.declarations[0].lower() == "doctype html"
    (meta,) = page.all(
        lambda e: e.tag == "meta" and e.get("http-equiv") == "Content-Security-Policy"
    )
    policy = {
        d.split()[0]: d.split()[1:] for d in (meta.get("content") or "").split(";") if d.strip()
    }
    assert policy["default-src"] == ["'none'"]
    assert policy["img-src"] == ["data:"]
    for directive in ("connect-src", "font-src", "media-src", "frame-src", "object-src"):
        assert directive not in policy, f"{directive} must fall back to default-src 'none'"
    scripts = page.all(lambda e: e.tag == "script")
    code = [s for s in scripts if s.get("type") is None]
    # the stored theme in <head> (before the first paint), the page's script at the end
    assert len(code) == 2 and len(scripts) == 2
    assert "localStorage.getItem" in code[0].raw_text and len(code[0].raw_text) < 400
    assert all(s.get("src") is None for s in scripts)

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")

    # the page's styles, and one inside <noscript> (applied only without a script)
    style, noscript_style = page.all(lambda e: e.tag == "style")
    assert noscript_style.raw_text.startswith(".entry{content-visibility:visible}")
    assert policy == {  # the whole policy: no directive may go missing or loosen
        "default-src": ["'none'"],
        "img-src": ["data:"],
        "style-src": [
            f"'sha256-{digest(style.raw_text)}'",
            f"'sha256-{digest(noscript_style.raw_text)}'",
        ],
        "script-src": [f"'sha256-{digest(c.raw_text)}'" for c in code],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
    }
    forbidden = {"link", "iframe", "object", "embed", "base", "form", "frame", "audio", "video"}
    assert not page.all(lambda e: e.tag in forbidden)
    for element in page.elements:
        for attr in ("src", "srcset", "poster", "data", "action", "formaction", "background"):
            value = element.get(attr)
            if value is not None:
                assert attr == "src" and value.startswith("data:image/"), (element.tag, attr)
        href = element.get("href") or element.get("xlink:href")
        if href is not None and element.get("id") == "session-jsonl":  # a download, no visit
            assert element.tag == "a" and (element.get("download") or "").endswith(".jsonl.gz")
            assert re.fullmatch(r"data:application/gzip;base64,[A-Za-z0-9+/=]+", href)
        elif href is not None:
            assert re.match(r"(#|https?:|mailto:)", href, re.I), href
        assert "url(" not in (element.get("style") or "")
        assert not [k for k in element.attrs if k.startswith("on")], element.tag
    css = style.raw_text
    assert "@import" not in css
    assert not re.findall(r"url\((?!\s*['\"]?data:)", css)


@every_fixture
def test_embedded_jsonl_loads_to_the_same_tree(name: str) -> None:
    session = load_fixture(name)
    page = parse_fixture(name)
    (block,) = page.all(lambda e: e.get("id") == "session-jsonl")
    assert block.tag == "a" and block.get("download") == f"{session.id}.jsonl.gz"
    assert block.get("data-file") == f"{session.id}.jsonl"
    (blob,) = embedded_jsonl(render_fixture(name))
    text = blob.decode("utf-8")
    # the file as read (the XSS corpus is built in memory: the bytes it was parsed from)
    source = session.source_data or fixture_path(name).read_bytes()
    assert text.encode("utf-8") == source
    copy = parse_session_bytes(text.encode("utf-8"))
    assert [(e.id, e.parent_id) for e in copy.entries] == [
        (e.id, e.parent_id) for e in session.entries
    ]
    assert copy.leaf_id == session.leaf_id
    assert copy.active_path == session.active_path
    assert page.all(lambda e: e.tag == "button" and e.get("id") == "download-jsonl")


@every_fixture
def test_render_is_deterministic(name: str) -> None:
    again = render_session(load_fresh(name))
    assert again == render_fixture(name)


# --- single cases --------------------------------------------------------------------------


def test_render_is_deterministic_across_processes() -> None:
    """Hash seeds differ between processes; the bytes must not (v1 and v3 files)."""
    names = ["every-entry-type.jsonl", "pi-branched-1.jsonl", V1_FIXTURES[1]]
    program = (
        "import hashlib, sys\n"
        "from exporter.loader import load_session\n"
        "from exporter.render import render_session\n"
        "for p in sys.argv[1:]:\n"
        "    html = render_session(load_session(p)).encode('utf-8')\n"
        "    print(hashlib.sha256(html).hexdigest())\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", program, *(str(fixture_path(n)) for n in names)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        outputs.append(done.stdout.split())
    here = [hashlib.sha256(render_fixture(n).encode("utf-8")).hexdigest() for n in names]
    assert outputs[0] == outputs[1] == here


@pytest.mark.parametrize("name", BRANCHED)
def test_leaf_option_changes_the_main_line(name: str) -> None:
    default = load_fixture(name)
    other = next(i for i in reversed(default.leaf_ids) if i not in default.active_path)
    session = load_session(fixture_path(name), leaf_id=other)
    assert session.leaf_id == other
    page = parse_html(render_session(session))
    assert branch_depth(page.entry(other)) == 0
    assert branch_depth(page.entry(default.leaf_id)) >= 1  # type: ignore[arg-type]
    main = {i for i, els in page.by_entry.items() if branch_depth(els[0]) == 0}
    assert main == set(session.active_path)
    (leaf_row,) = page.all(lambda e: e.tag == "li" and e.has_class("leaf"))
    assert leaf_row.find_all(lambda e: e.tag == "a")[0].get("href") == "#" + anchor_for(
        session, other
    )
    default_page = parse_fixture(name)
    (old_row,) = default_page.all(lambda e: e.tag == "li" and e.has_class("leaf"))
    assert old_row.find_all(lambda e: e.tag == "a")[0].get("href") != "#" + anchor_for(
        session, other
    )


def test_no_embed_leaves_the_jsonl_out() -> None:
    session = load_fixture("every-entry-type.jsonl")
    html = render_session(session, RenderOptions(embed_jsonl=False))
    page = parse_html(html)
    assert not page.all(lambda e: e.get("id") in ("session-jsonl", "download-jsonl"))
    assert not page.all(lambda e: e.tag == "script" and e.get("type") == "application/json")
    assert set(page.by_entry) == {e.id for e in session.entries}
    assert len(html) < len(render_fixture("every-entry-type.jsonl"))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_theme_option_sets_the_initial_theme(theme: str) -> None:
    page = parse_html(render_session(load_fixture("every-entry-type.jsonl"), RenderOptions(theme)))
    (html,) = page.all(lambda e: e.tag == "html")
    assert html.get("data-theme") == theme
    (auto,) = parse_fixture("every-entry-type.jsonl").all(lambda e: e.tag == "html")
    assert auto.get("data-theme") is None
    with pytest.raises(ValueError):
        render_session(load_fixture("every-entry-type.jsonl"), RenderOptions("purple"))


def _line(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


def _user(
    entry_id: str, parent: str | None, content: object, stamp: str = "2025-06-01T10:00:00Z"
) -> str:
    """A user message line (content: a string or blocks)."""
    message = {"role": "user", "content": content}
    return _line(type="message", id=entry_id, parentId=parent, timestamp=stamp, message=message)


def test_unicode_and_lone_surrogates_render() -> None:
    session = parse_session_bytes(unicode_session())
    html = render_session(session)
    html.encode("utf-8")  # strict: no lone surrogate may reach the page
    page = parse_html(html)
    assert set(page.by_entry) == {e.id for e in session.entries}
    user = norm(page.entry("u1-中文").text)
    for text in UNICODE_TEXTS.values():
        for word in plain_words(re.sub(r"\x1b\[[0-9;]*m", "", text), 200):  # colours dropped
            assert word in user
    assert "bell\u2407 escape red form\u240cfeed" in user  # controls shown, not hidden
    assistant = page.entry("a1-🙂").text
    assert "lone \ufffd half" in assistant and "\ufffd low" in assistant
    assert "ラベル 🏷️" in page.entry("u1-中文").text
    assert norm("出力 🙂\n" * 30) in output_text(page.entry("r1"))
    assert render_session(parse_session_bytes(unicode_session())) == html


def test_entry_ids_that_collide_with_page_ids_keep_dom_ids_unique() -> None:
    """Entry ids are arbitrary strings; their DOM ids must not clash with each other or with
    the page's own ids, or #fragments and outline links lead to the wrong element."""
    long = "same long prefix " * 4
    chain = ["tree", "sidebar", "transcript", "1abc", "e1abc", long + "one", long + "two", "x"]
    lines = [_line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/")]
    # two alternatives at "tree": the block of "y" is "branch-y", an entry's id already
    for number, (entry_id, text) in enumerate([("branch-y", "an id like a block id"), ("y", "y")]):
        lines.append(
            _line(
                type="message",
                id=entry_id,
                parentId="tree",
                timestamp=f"2025-01-01T00:00:3{number}Z",
                message={"role": "user", "content": text},
            )
        )
    parent = None
    for number, entry_id in enumerate(chain):  # the last line is the leaf: "x"
        lines.append(
            _line(
                type="message",
                id=entry_id,
                parentId=parent,
                timestamp=f"2025-01-01T00:00:{number + 1:02d}Z",
                message={"role": "user", "content": f"message {number}"},
            )
        )
        parent = entry_id
    session = parse_session_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    page = parse_html(render_session(session))
    assert {e.id for e in session.entries} == set(page.by_entry)
    duplicates = sorted(k for k, v in page.by_dom_id.items() if len(v) > 1)
    assert duplicates == [], f"DOM ids used more than once: {duplicates}"


# --- what each entry type looks like (the hand-written sampler) ----------------------------


def test_every_entry_type_is_shown_as_specified() -> None:
    page = parse_fixture("every-entry-type.jsonl")

    def text(entry_id: str) -> str:
        return norm(page.entry(entry_id).text)

    user = page.entry("e01")
    assert "raw html" in text("e01") and not page.all(
        lambda e: e.tag == "div" and "raw html" in e.raw_text
    )
    (img,) = user.find_all(lambda e: e.tag == "img")
    assert (img.get("src") or "").startswith("data:image/png;base64,")
    assert any(a.tag == "label" and a.has_class("zoom") for a in img.ancestors())
    assert "important" in text("e01"), "label badge on its target"
    assistant = page.entry("e03")
    (thinking,) = assistant.find_all(lambda e: e.tag == "details" and e.has_class("thinking"))
    assert thinking.get("open") is None, "thinking is collapsed by default"
    (summary,) = thinking.find_all(lambda e: e.tag == "summary")
    assert norm(summary.text) == "Thinking · 6 words", "its length, before it is opened"
    kinds = [
        c
        for e in assistant.iter()
        if e.tag == "div" and e.has_class("tool")
        for c in e.classes
        if c.startswith("tool-")
    ]
    expected = ["read", "bash", "edit", "write", "ls", "grep", "find", "generic"]
    assert kinds == [f"tool-{k}" for k in expected]
    assert "anthropic/claude-x" in text("e03")
    assert page.entry("e03").find_all(lambda e: e.tag == "ins") and page.entry("e03").find_all(
        lambda e: e.tag == "del"
    )
    assert "Aborted" in text("e12") and "st-aborted" in page.entry("e12").classes
    (heading,) = page.entry("e14").find_all(lambda e: e.tag == "h3")
    assert norm(heading.text) == "Shell command (!)", "not a cryptic 'Shell (!)'"
    assert "overlo" in text("e13") and "st-error" in page.entry("e13").classes
    assert "make test" in text("e14") and "exit 1" in text("e14")
    assert "openai/gpt-5" in text("e15")
    compaction = page.entry("e16")
    assert "123,456" in text("e16")
    (summary,) = compaction.find_all(lambda e: e.tag == "details")
    assert summary.get("open") is None and "Goal" in summary.text
    assert "array content" in text("e17") and "hide-default" not in page.entry("e17").classes
    assert "secret hidden" in text("e18") and "hide-default" in page.entry("e18").classes
    assert "sk-secret" in text("e19") and "hide-default" in page.entry("e19").classes
    assert "hide-default" in page.entry("e22").classes
    assert "Sampler session" in text("e23")
    assert "approach" in text("e24") and "A" in text("e24")


def test_syntax_colours_are_readable_in_both_themes_and_print_light() -> None:
    """Every highlighted token reaches WCAG AA (4.5:1) on the code background, and the dark
    colours apply only on screens (a printout from a dark system stays readable)."""
    from exporter.render import pygments_css as colours

    for style, background in ((colours.LIGHT_STYLE, colours.LIGHT_CODE_BG),
                              (colours.DARK_STYLE, colours.DARK_CODE_BG)):  # fmt: skip
        worst = min(
            colours._contrast(c, background)
            for c, _, _ in colours._colours(style, background).values()
        )
        assert worst >= 4.5, (style, worst)
    css = colours.pygments_css()
    dark_blocks = [line for line in css.splitlines() if "data-theme" in line]
    assert dark_blocks and all(line.startswith("@media screen") for line in dark_blocks)
    # one rule and one variable per look, not per token class: 7.4 KB in every page before
    assert len(css.encode("utf-8")) <= 4_300, len(css)


def test_branch_previews_name_a_skill_instead_of_showing_its_xml() -> None:
    skill = (
        '<skill name="pdf" location="/skills/pdf/SKILL.md">\nReferences are relative to '
        "/skills/pdf.\n\n# PDF skill\nUse pdftotext.\n</skill>\n\nplease convert the file"
    )
    stamp = "2025-06-01T10:00:00Z"

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        _user("u1", None, "start"),
        _user("u2", "u1", skill),  # the older child: a branch block and a table row
        _user("u3", "u1", "the newer child, on the active path"),
    ]
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    summaries = re.findall(
        r'<details class="branch[^"]*"[^>]*>\s*<summary>(.*?)</summary>', html, re.S
    )
    assert len(summaries) == 1 and "skill: pdf · please convert the file" in summaries[0]
    assert "skill: pdf · please convert the file" in table
    assert "&lt;skill" not in table + summaries[0]


def test_every_id_the_page_itself_uses_is_reserved_from_entry_ids() -> None:
    """An entry whose id equals one of the page's own ids gets a hashed anchor instead, but
    only if the page's ids are listed: a new control added to a template must be too."""
    from pathlib import Path

    from exporter.render.view import RESERVED_IDS, RESERVED_PREFIXES

    templates = Path(__file__).resolve().parent.parent / "templates"
    fixed = set()
    sources = [templates / "page.html.j2", templates / "macros.html.j2"]
    sources.append(templates.parent / "exporter" / "render" / "entry_html.py")  # the entries
    for path in sources:
        text = path.read_text(encoding="utf-8")
        fixed |= set(re.findall(r'\bid="([A-Za-z][\w-]*)"', text))
    for name in ("page.js", "theme.js"):  # and the elements its script makes
        text = (templates.parent / "static" / name).read_text(encoding="utf-8")
        fixed |= set(re.findall(r'\.id = "([A-Za-z][\w-]*)"', text))
    assert "outline-open" in fixed and "tree" in fixed and "ts-help" in fixed
    unlisted = sorted(
        i for i in fixed if i not in RESERVED_IDS and not i.startswith(RESERVED_PREFIXES)
    )
    assert unlisted == [], f"page ids an entry id could take: {unlisted}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**Fix** the `auth` [bug](https://x.test/1) now", "Fix the auth bug now"),
        ("# Plan\n\n- step *one*\n- step two", "Plan step one step two"),
        ("> quoted **text**", "quoted text"),
        ("```python\nprint(1)\n```", "print(1)"),
        ("see ![diagram](data:image/png;base64,AAAA) here", "see diagram here"),
        # a destination with balanced parentheses left a stray ")" in the title
        ("Compare [Rust](https://w.test/Rust_(language)) and Go", "Compare Rust and Go"),
        ('![plot](out_(1).png "t") done', "plot done"),
        # not Markdown syntax: arithmetic, snake_case, dunder names stay as written
        ("2*3*4 = 24 in a_b_c and __init__.py", "2*3*4 = 24 in a_b_c and __init__.py"),
        ("a lone * star and `unclosed", "a lone * star and `unclosed"),
        # code is shown as written: link or emphasis syntax inside it said something else
        ("In markdown `[text](url)`, both", "In markdown [text](url), both"),
        (
            "Check `![alt](img.png)` and `**kw**` or **this**",
            "Check ![alt](img.png) and **kw** or this",
        ),
        ("a [link](u) then `x*y*z` and *em*", "a link then x*y*z and em"),
        # ... and markup around code goes as around any word
        ("Fix **`auth.py`** now", "Fix auth.py now"),
        ("See [`load_session`](exporter/loader.py) for details", "See load_session for details"),
        ("odd \ue0000\ue001 `c` text", "odd \ufffd0\ue001 c text"),
    ],
)
def test_previews_show_markdown_as_plain_text(text: str, expected: str) -> None:
    from exporter.formatting import plain_line

    assert plain_line(text, 200) == expected


def test_previews_of_huge_hostile_markdown_stay_fast_and_say_they_were_cut() -> None:
    import time

    from exporter.formatting import plain_line

    for text in ("*" * 200_000 + "a", "[" * 200_000 + "x](y)", "`a" * 100_000, "**a " * 50_000):
        started = time.process_time()  # CPU: a test beside it (pytest -n) takes no share
        line = plain_line(text, 60)
        assert time.process_time() - started < 0.5
        assert len(line) <= 60 and line.endswith("…")


def test_title_outline_and_branch_preview_show_a_markdown_prompt_as_plain_text() -> None:
    prompt = "**Refactor** the `auth` module, see [the doc](https://x.test/d)"
    lines = [_line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/")]
    for number, (entry_id, parent) in enumerate([("u1", None), ("u2", None)]):
        lines.append(
            _line(
                type="message",
                id=entry_id,
                parentId=parent,
                timestamp=f"2025-01-01T00:00:0{number + 1}Z",
                message={"role": "user", "content": prompt if entry_id == "u1" else "*other*"},
            )
        )
    session = parse_session_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    page = parse_html(render_session(session))  # the leaf is u2: u1 is a branch at the root
    plain = "Refactor the auth module, see the doc"
    assert norm(page.one(lambda e: e.tag == "h1").text) == plain
    rows = page.all(lambda e: e.tag == "a" and e.parent is not None and e.parent.tag == "li")
    assert any(plain in norm(a.text) for a in rows)
    summaries = [norm(b.children[0].text) for b in page.branches()]
    assert summaries and plain in summaries[0], summaries
    # the message itself is still rendered as Markdown
    assert page.entry("u1").find_all(lambda e: e.tag == "strong")


@pytest.mark.parametrize("name", BRANCHED)
def test_compaction_and_branch_summary_link_the_entries_they_name(name: str) -> None:
    """ "context kept from entry X" and "branched away from X" are links to X, not bare ids,
    and say what X is (its outline text): an id alone told the reader nothing."""
    from exporter.render import session_paths
    from exporter.render.view import PageBuilder

    session = load_fixture(name)
    page = parse_html(render_fixture(name))
    builder = PageBuilder(session, session_paths(session))
    expected = {}
    for entry in session.entries:
        kept = getattr(entry, "first_kept_entry_id", None)
        source = getattr(entry, "from_id", None)
        labelled = getattr(entry, "target_id", None) if entry.type == "label" else None
        for target in (kept, source, labelled):
            if target and target in session.by_id:
                expected.setdefault(entry.id, {})["#" + anchor_for(session, target)] = target
    assert len(expected) >= 2
    for entry_id, targets in expected.items():
        links = {a.get("href") for a in page.entry(entry_id).find_all(lambda e: e.tag == "a")}
        assert set(targets) <= links, (entry_id, targets, links)
        for href, target in targets.items():
            assert page.by_dom_id.get(href[1:]), href
            said = one_line(builder.row_text(target), 60)
            assert f"entry {target} “{said}”" in page.entry(entry_id).text


def test_entry_ids_are_their_own_fragments_even_when_they_start_with_a_digit() -> None:
    """Pi's ids are 8 hex digits, most starting with a digit: ``#401efcdb`` must work with
    JavaScript off, so such an id is the element's id. An id with a trailing newline is not
    a plain token and gets a hashed anchor."""
    from exporter.render.view import build_anchors

    anchors = build_anchors(["401efcdb", "c5ac0fde", "abc\n", "9", "tree", "e-1"])
    assert anchors["401efcdb"] == "401efcdb" and anchors["c5ac0fde"] == "c5ac0fde"
    assert anchors["9"] == "9"
    for unsafe in ("abc\n", "tree", "e-1"):
        assert anchors[unsafe].startswith("e-") and "\n" not in anchors[unsafe]
    session = load_fixture("pi-branched-4.jsonl")
    page = parse_html(render_fixture("pi-branched-4.jsonl"))
    digit_first = [e.id for e in session.entries if e.id[0].isdigit()]
    assert len(digit_first) > 100
    for entry_id in digit_first:
        assert page.entry(entry_id).get("id") == entry_id


def test_header_counts_branch_summaries_and_custom_messages() -> None:
    """Pi's header counts them; so does ours (the sampler has one of one, two of the other)."""
    page = parse_html(render_fixture("every-entry-type.jsonl"))
    tree_row = next(
        norm(d.text)
        for d in page.all(
            lambda e: e.tag == "div" and e.parent is not None and e.parent.has_class("facts")
        )
        if "Tree" in d.text
    )
    assert "1 branch summary" in tree_row and "2 custom messages" in tree_row, tree_row


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0, "$0.00"), (0.102, "$0.102"), (0.0034, "$0.0034"), (0.999, "$0.999"), (11.03, "$11.03"),
     (1234.5, "$1,234.50"), (0.9996, "$1.00"), (0.00999, "$0.010"),
     (0.00004, "<$0.0001"), (0.00005, "$0.0001")],  # "$0.0000" read as a free turn
)  # fmt: skip
def test_costs_under_a_dollar_keep_three_decimals(value: float, shown: str) -> None:
    from exporter.formatting import fmt_cost

    assert fmt_cost(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [(999, "999"), (1500, "1.5k"), (250_000, "250k"), (3_400_000, "3.4M"),
     (5_000_000_000, "5.0G"), (2 * 10**12, "2.0T"), (10**16, "1e+16"),
     (999_960_000, "1.0G"), (999_960_000_000, "1.0T")],  # the unit after rounding
)  # fmt: skip
def test_axis_token_counts_keep_a_unit(value: int, shown: str) -> None:
    """Damaged usage put "10000000000000.0M" on the chart's axis (review 2026-12-01)."""
    from exporter.formatting import fmt_tokens_short

    assert fmt_tokens_short(value) == shown


def test_negative_costs_put_the_sign_before_the_dollar() -> None:
    from exporter.formatting import fmt_cost

    assert (fmt_cost(-9), fmt_cost(-0.5), fmt_cost(-0.001)) == ("-$9.00", "-$0.500", "-$0.0010")
    assert fmt_cost(-0.0) == "$0.00" and fmt_cost(-1e-9) == ">-$0.0001"  # no "-$0.0000"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "unknown"), (0.006, "under 1s"), (0.99, "under 1s"), (1.4, "1s"), (59.6, "1m 0s"),
     (3725, "1h 2m"), (90_061, "1d 1h 1m")],
)  # fmt: skip
def test_durations_read_as_lengths(seconds: float | None, shown: str) -> None:
    """A session written in 6 ms said "(0s)", which reads like a missing value."""
    from exporter.formatting import fmt_duration

    assert fmt_duration(seconds) == shown


def test_a_session_of_milliseconds_says_under_a_second() -> None:
    page = render_fixture("pi-branched-1.jsonl")
    assert "(under 1s)" in page and "(0s)" not in page


def test_usage_table_rows_add_up_to_the_total_as_shown() -> None:
    """Rounded to cents, the sampler read $0.10 + $0.03 above a total of $0.14."""
    page = parse_html(render_fixture("every-entry-type.jsonl"))
    tables = page.all(lambda e: e.tag == "table" and "All branches" in e.text)
    rows = tables[0].find_all(lambda e: e.tag == "tr")[1:]
    costs = [norm(r.find_all(lambda e: e.tag in ("td", "th"))[-1].text) for r in rows]
    assert costs == ["$0.102", "$0.034", "$0.136"], costs


def _tool_result(text: str, *, error: bool = False) -> MessageEntry:
    from exporter.entries import make_entry

    raw = {
        "type": "message",
        "id": "r",
        "message": {"role": "toolResult", "toolCallId": "c", "toolName": "grep",
                    "content": [{"type": "text", "text": text}], "isError": error},
    }  # fmt: skip
    entry = make_entry(raw, 1, "r", None)
    assert isinstance(entry, MessageEntry)
    return entry


GREP_WITH_CONTEXT = (
    "src/a.py-1- import os\nsrc/a.py:2: x = os.environ\nsrc/a.py-3- y = 'b:3: c'\n"
    "src/b.py:9: z = os.path\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
)


@pytest.mark.parametrize(
    ("tool", "args", "output", "count"),
    [
        ("grep", {"pattern": "x"}, "No matches found", "0 matches"),
        ("grep", {"pattern": "os", "context": 1, "limit": 2}, GREP_WITH_CONTEXT,
         "2 matches (limit reached)"),
        ("grep", {"pattern": "x"}, "a.py:1: x", "1 match"),
        ("find", {"pattern": "*.rs"}, "No files found matching pattern", "0 files"),
        ("find", {"pattern": "*.py"}, "a.py\nb/c.py", "2 files"),
        ("ls", {"path": "empty"}, "(empty directory)", "0 entries"),
        ("ls", {"path": "."}, "a/\nb.txt\n\n[1 entries limit reached. Use limit=2 for more]",
         "2 entries (limit reached)"),
    ],
)  # fmt: skip
def test_listing_tools_count_what_they_list(tool: str, args: dict, output: str, count: str) -> None:
    """Pi's "nothing found" line, grep's context lines and the notice paragraph are not
    results; every argument the call gave is shown."""
    from exporter.render.tools import build_tool_view

    view = build_tool_view({"id": "c", "name": tool, "arguments": args}, _tool_result(output))
    assert view.subtitle == count
    for key in args:
        if key not in ("path", "pattern"):
            assert f"{key}=" in view.title


def test_listing_tools_show_every_argument_and_no_count_after_a_failure() -> None:
    from exporter.render.tools import build_tool_view

    args = {"pattern": "a.b", "literal": True, "ignoreCase": True}
    view = build_tool_view({"id": "c", "name": "grep", "arguments": args}, _tool_result("x"))
    assert "literal=true" in view.title and "ignoreCase=true" in view.title
    failed = build_tool_view(
        {"id": "c", "name": "find", "arguments": {"pattern": "*"}},
        _tool_result("Path not found: /nope", error=True),
    )
    assert failed.subtitle in ("", None) and failed.status == "error"


@pytest.mark.parametrize(
    "args",
    [
        {"path": "a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"},
                                   {"oldText": "y", "newText": "z\nw"}]},
        {"path": "a.py", "edits": '[{"oldText": "x = 1", "newText": "x = 2"}, '
                                  '{"oldText": "y", "newText": "z\\nw"}]'},
    ],
)  # fmt: skip
def test_failed_edit_in_pi_073_form_shows_the_attempted_change(args: dict) -> None:
    """Pi 0.73 sends ``edits: [{oldText, newText}]`` (some models as a JSON string); without
    ``details.diff`` (a failed edit) the page computes the diff of every replacement."""
    from exporter.render.tools import build_tool_view

    view = build_tool_view(
        {"id": "c", "name": "edit", "arguments": args},
        _tool_result("Could not find the exact text in a.py", error=True),
    )
    assert view.body is not None and view.subtitle == "+3 −2 (not applied)"
    shown = re.sub(r"<[^>]+>", "", str(view.body.visible)).split("\n")
    for line in ("-x = 1", "+x = 2", "-y", "+z", "+w"):
        assert line in shown, shown  # one diff line each, none glued to the next
    hunks = [line for line in shown if line.startswith("@@")]
    assert hunks == ["@@ replacement 1 of 2 @@", "@@ replacement 2 of 2 @@"]
    assert "2 replacements" in view.body_label and "not applied" in view.body_label
    ok = build_tool_view({"id": "c", "name": "edit", "arguments": args}, _tool_result("done"))
    assert ok.subtitle == "+3 −2" and "not applied" not in (ok.body_label or "")


@pytest.mark.parametrize("name", ["every-entry-type.jsonl", "pi-branched-2.jsonl"])
def test_outline_rows_of_tool_results_name_their_call(name: str) -> None:
    """As in Pi's tree: ``[read: ~/proj/app.py] result``, not the first bytes of the file."""
    session = load_fixture(name)
    page = parse_html(render_fixture(name))
    (tree,) = page.all(lambda e: e.get("id") == "tree")
    rows = {a.get("href"): norm(a.text) for a in tree.find_all(lambda e: e.tag == "a")}
    checked = 0
    for entry in session.entries:
        if not (isinstance(entry, MessageEntry) and entry.role == "toolResult"):
            continue
        if session.call_for_result(entry.id) is None:
            continue
        text = rows["#" + anchor_for(session, entry.id)]
        label = session.labels.get(entry.id)
        if label:
            text = text.removeprefix(f"[{label}] ")
        shape = rf"\[{re.escape(entry.tool_name or '')}(: .+)?\] result( → error)?"
        assert re.fullmatch(shape, text), text
        assert "/home/" not in text  # paths as the page shows them (~)
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("name", ["pi-branched-4.jsonl", "pi-v1-before-compaction.jsonl"])
def test_repeated_outputs_link_only_to_a_copy_on_their_own_path(name: str) -> None:
    """A long output repeated in the file is shown once on each path: a copy links to the
    one shown in full only when that one is on its own path, above it (the reader passed
    it). Copies in other branches linked into the main transcript, 16 of 51 on
    pi-branched-4 to a copy further down the page; each is now shown in its branch."""
    session = load_fixture(name)
    page = parse_fixture(name)
    order = {id(e): n for n, e in enumerate(page.elements)}
    notes = shown_again = 0
    copies: dict[str, list[str]] = {}
    for entry in session.entries:
        if (
            isinstance(entry, MessageEntry)
            and entry.role == "toolResult"
            and len(entry.text) >= 400
        ):
            copies.setdefault(entry.text, []).append(entry.id)
    for ids in copies.values():
        for entry_id in ids:
            element = page.entry(entry_id)
            same = element.find_all(lambda e: e.has_class("same-output"))
            path = set(session.path_to(entry_id))
            if not same:  # shown in full: the first copy on its path
                assert not any(i in path and i != entry_id for i in ids), entry_id
                on_main = set(session.active_path)
                shown_again += entry_id not in on_main and any(i in on_main for i in ids)
                continue
            notes += 1
            link = same[0].find_all(lambda e: e.tag == "a")[0]
            (target,) = page.by_dom_id[(link.get("href") or "#")[1:]]
            target_id = target.get("data-entry-id")
            assert target_id in path and target_id != entry_id, entry_id
            assert order[id(target)] < order[id(element)]
            assert norm(link.text) == "an earlier result"
    assert notes > 0
    if name == "pi-branched-4.jsonl":
        assert shown_again > 0  # copies in branches whose path holds no other copy


@pytest.mark.parametrize("script", ["page.js", "index.js", "live.js"])
def test_shipped_scripts_are_minified_and_still_parse(script: str, tmp_path) -> None:
    """Comments and indentation are stripped from the inline script (bytes in every page);
    the result must still be valid JavaScript (Node checks the syntax)."""
    import shutil

    from exporter.render import asset_dir
    from exporter.render.assets import live_css_and_script, shared_script

    if script == "live.js":  # only in pages `pi-session watch` serves, on its own
        js = live_css_and_script()[1]
    else:
        js = shared_script(asset_dir("static"), script)
    source = (asset_dir("static") / script).read_text(encoding="utf-8")
    assert len(js) < 0.85 * len(source) + 2000
    assert "//" not in js and "/*" not in js and "\n\n" not in js
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("node is missing")
        pytest.skip("node is missing")
    path = tmp_path / script
    path.write_text(js, encoding="utf-8")
    checked = subprocess.run([node, "--check", str(path)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_short_files_are_highlighted_whole_long_ones_only_where_shown() -> None:
    """A 15-line write is highlighted to its last line (folded part included); a long read
    only in the lines shown before unfolding (its full highlight would double the page)."""
    from exporter.render.tools import build_tool_view

    short = "\n".join(f"def f{n}(x):\n    return x  # {n}" for n in range(8))
    view = build_tool_view(
        {"id": "c", "name": "write", "arguments": {"path": "a.py", "content": short}}, None
    )
    assert view.body is not None and view.body.hidden is not None
    assert "<span class=k>def</span>" in str(view.body.hidden)
    long = "\n".join(f"def f{n}(x):\n    return x" for n in range(300))
    view = build_tool_view(
        {"id": "c", "name": "write", "arguments": {"path": "a.py", "content": long}}, None
    )
    assert view.body is not None and view.body.hidden is not None
    assert "<span" in str(view.body.visible) and "<span" not in str(view.body.hidden)


def test_an_entry_that_fails_to_render_costs_only_itself(monkeypatch, caplog) -> None:
    """Whatever goes wrong building one entry's view, the page is written with every other
    entry and a note where that one would be (never a traceback for the whole export), and
    stderr says so (the bug once shipped unseen: only the page told)."""
    import exporter.render.view as view_module
    from exporter.entries import BranchSummaryEntry

    def broken(*args: object) -> None:
        raise RecursionError("maximum recursion depth exceeded \x1b]0;PWNED\x07")

    builders = dict(view_module.ENTRY_BUILDERS)
    builders[BranchSummaryEntry] = broken
    monkeypatch.setattr(view_module, "ENTRY_BUILDERS", builders)
    session = load_fixture("every-entry-type.jsonl")
    page = parse_html(render_session(session, RenderOptions(jobs=1)))
    assert {e.id for e in session.entries} == set(page.by_entry)
    (summary,) = [e for e in session.entries if e.type == "branch_summary"]
    assert "could not be shown (RecursionError)" in norm(page.entry(summary.id).text)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(f"entry {summary.id} could not be shown (RecursionError" in m for m in said)
    assert not any("\x1b" in m or "\x07" in m for m in said)  # no escape reaches a terminal


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("end\n", "end", ["@@ replacement @@", "-end", "+end", "\\ no newline after this line"]),
        # snippets that stop mid-file: no line numbers they do not have, no "end of file"
        ("a\nb", "a\nc", ["@@ replacement @@", " a", "-b", "+c"]),
        ("a\r\nb\r\n", "a\nb\n", ["-a␍", "-b␍", "+a", "+b"]),
        ("-- note\nq\n", "q\n", ["--- note", " q"]),
        # only \n ends a line: a lone \r, a form feed or U+2028 is part of its line
        ("a\rb\nc\n", "a\rB\nc\n", ["-a␍b", "+a␍B", " c"]),
        ('s = "x\u2028y"\nz\n', 's = "x\u2028Y"\nz\n', ['-s = "x\u2028y"', '+s = "x\u2028Y"']),
        ("\x0cpage\n", "\x0cPage\n", ["-\x0cpage", "+\x0cPage"]),
    ],
)
def test_computed_diffs_show_line_endings_and_keep_dash_lines(
    old: str, new: str, expected: list[str]
) -> None:
    """A CRLF -> LF edit or a dropped final newline is a change; a removed "-- note" line is
    a body line, not a file header."""
    from exporter.render.tools import build_tool_view

    args = {"path": "a.sql", "oldText": old, "newText": new}
    view = build_tool_view({"id": "c", "name": "edit", "arguments": args}, None)
    assert view.body is not None
    shown = re.sub(r"<[^>]+>", "", str(view.body.visible)).split("\n")
    assert shown[:2] == ["--- a.sql", "+++ a.sql"]
    for line in expected:
        assert line in shown, shown
    removed = sum(1 for line in shown[2:] if line.startswith("-"))
    assert view.subtitle.endswith(f"−{removed}")
    assert not any(line.startswith("@@ -") for line in shown)
    if old.endswith("\n") == new.endswith("\n"):  # no final newline added or dropped
        assert not any(line.startswith("\\") for line in shown)


def test_a_computed_diff_names_its_file_as_the_tool_s_head_does() -> None:
    """The head said ~/proj/a.py and the diff under it /home/alice/proj/a.py (visual review
    2026-12-01)."""
    from exporter.render.tools import build_tool_view

    args = {"path": "/home/alice/proj/a.py", "oldText": "a\n", "newText": "b\n"}

    def shorter(path: str) -> str:
        return path.replace("/home/alice", "~", 1)

    view = build_tool_view({"id": "c", "name": "edit", "arguments": args}, None, shorter)
    assert view.path == "~/proj/a.py"
    shown = re.sub(r"<[^>]+>", "", str(view.body.visible)).split("\n")
    assert shown[:2] == ["--- ~/proj/a.py", "+++ ~/proj/a.py"]


def test_an_edit_that_changes_nothing_says_so() -> None:
    from exporter.render.tools import build_tool_view

    args = {"path": "a.py", "edits": [{"oldText": "x", "newText": "x"}]}
    view = build_tool_view({"id": "c", "name": "edit", "arguments": args}, None)
    assert view.body is None and any("same as the text" in n for n in view.notes)


@pytest.mark.parametrize(
    "args",
    [
        {"path": "a.py", "oldText": "line 1\nline 2\nline 3"},  # cut off by an abort
        {"path": "a.py", "edits": [{"oldText": "line 1\nline 2"}]},
        {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "line 1"}]},
    ],
)
def test_an_edit_cut_off_before_its_new_text_invents_no_deletion(args: dict) -> None:
    """An aborted turn's edit call can hold oldText and no newText. The page showed that as
    a diff deleting every line ("+0 −27" on pi-large-session); Pi shows the call as sent."""
    from exporter.render.tools import build_tool_view

    view = build_tool_view({"id": "c", "name": "edit", "arguments": args}, None)
    assert any("incomplete" in n for n in view.notes)
    assert view.args_json is not None
    sent = html_module.unescape(re.sub(r"<[^>]+>", "", str(view.args_json.visible)))
    assert sent.startswith("line 1") and "\\n" not in sent and '"oldText"' not in sent, (
        "the text as code, not a JSON string"
    )
    assert any("cut off before the newText" in n for n in view.notes)
    shown = re.sub(r"<[^>]+>", "", str(view.body.visible)) if view.body else ""
    assert "-line 1" not in shown
    if len(args.get("edits", [])) == 2:  # the complete replacement still gets its diff
        assert view.subtitle == "+1 −1" and "-a" in shown and "+b" in shown
    else:
        assert view.body is None and not view.subtitle
    empty = build_tool_view(  # an empty newText is a deletion, not a missing text
        {"id": "c", "name": "edit", "arguments": {"path": "a.py", "oldText": "x", "newText": ""}},
        None,
    )
    assert empty.subtitle == "+0 −1" and not any("incomplete" in n for n in empty.notes)


def test_a_prompt_that_is_only_markup_is_previewed_as_written() -> None:
    from exporter.render.entry_lines import prompt_preview

    assert prompt_preview("```\n```", 60) == "``` ```"
    assert prompt_preview("> ", 60) == ">"


@pytest.mark.parametrize("script", ["theme.js", "page.js", "index.js", "live.js"])
def test_scripts_keep_to_what_the_minifier_can_strip_safely(script: str) -> None:
    """The minifier (assets.minify_js) is a tokenizer, not a parser: it reads strings,
    template literals, regular expressions and comments whole and ships a script it cannot
    read as written, so this rule is house style rather than a safety need: a comment is a
    whole line, a /* */ block starting a line, or "  // " after ; { } ) , and no "//" or
    "/*" appears anywhere else."""
    from exporter.render import asset_dir

    source = (asset_dir("static") / script).read_text(encoding="utf-8")
    for number, line in enumerate(source.split("\n"), 1):
        code = line.strip()
        if code.startswith("//"):  # block comments go first: one inside would eat code
            assert "/*" not in code and "*/" not in code, f"{script}:{number}"
            continue
        if "/*" in code:
            assert line.lstrip().startswith("/*") or re.search(r"[{;] /\*[^*]*\*/ *}?$", line), (
                f"{script}:{number}: /* not at the start of a line"
            )
            continue
        if "//" in code:
            assert re.search(r"[;{}),][ \t]+// ", line) and line.count("//") == 1, (
                f"{script}:{number}: // the minifier would not strip safely"
            )


def _records_bytes(lines: list[dict[str, Any]]) -> bytes:
    """Session records as a JSONL file's bytes."""
    return "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")


def _prompt_and_reply(content: Any, **reply: Any) -> list[dict[str, Any]]:
    """A session header, a user prompt "go" (id u) and an assistant reply (id a)."""
    return [
        {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "go"}},
        {"type": "message", "id": "a", "parentId": "u", "timestamp": "2025-01-01T00:00:02Z",
         "message": {**reply, "role": "assistant", "content": content}},
    ]  # fmt: skip


def _render_records(lines: list[dict[str, Any]]) -> str:
    """The page of a session made of these records."""
    return render_session(parse_session_bytes(_records_bytes(lines)))


def test_hidden_controls_are_shown_and_colour_codes_coloured() -> None:
    """A right-to-left override made ``invoice_\\u202egnp.exe`` read ``invoice_exe.png`` in the
    title, outline and tool head; NUL and ESC went into the file raw (``grep`` called the page
    binary) and colour codes showed as ``␛[1;32m``. Every hidden control is now a visible
    sign, colour codes are gone, and the embedded copy still has the original text."""
    path = "invoice_\u202egnp.exe"
    output = "\x1b[1;32mPASS\x1b[0m tests\x00done\x07"
    lines = [
        {"type": "session", "version": 3, "id": "ctl", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": f"open {path}\u2066x\u2069 \x85"}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": path}},
             {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "make"}}]}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2025-01-01T00:00:03Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                     "content": [{"type": "text", "text": "x"}]}},
        {"type": "message", "id": "r2", "parentId": "r1", "timestamp": "2025-01-01T00:00:04Z",
         "message": {"role": "toolResult", "toolCallId": "c2", "toolName": "bash",
                     "content": [{"type": "text", "text": output}]}},
    ]  # fmt: skip
    html = _render_records(lines)
    hidden = re.findall("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", html)
    assert hidden == []
    assert html.count("invoice_\u27e8U+202E\u27e9gnp.exe") >= 3  # title, outline, tool head
    assert "<title>open invoice_\u27e8U+202E\u27e9gnp.exe" in html
    # the colour codes became a coloured span (render/ansi.py); the controls are signs
    assert '<span class="af2 a1">PASS</span> tests\u2400done\u2407' in html
    assert "[1;32m" not in html
    assert "\u27e8U+2066\u27e9x\u27e8U+2069\u27e9 \u27e8U+0085\u27e9" in html
    (blob,) = embedded_jsonl(html)
    embedded = blob.decode("utf-8")
    assert [json.loads(line) for line in embedded.split("\n") if line] == lines  # untouched


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_text_and_tool_calls_keep_their_order_in_a_message(name: str) -> None:
    """Pi's page puts every tool call after all of a message's text; ours keeps the order
    of the message: text, call, text, call... (hundreds of such messages in the fixtures)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    checked = 0
    for entry in session.entries:
        if not (isinstance(entry, MessageEntry) and entry.role == "assistant"):
            continue
        content = entry.raw["message"].get("content")
        if not isinstance(content, list):
            continue
        expected = [
            "text" if block.get("type") == "text" else "tool"
            for block in content
            if isinstance(block, dict)
            and (
                block.get("type") == "toolCall"
                or (block.get("type") == "text" and block.get("text", "").strip())
            )
        ]
        if len(set(expected)) < 2:
            continue
        shown = [
            "text" if child.has_class("md") else "tool"
            for child in page.entry(entry.id).children
            if isinstance(child, Element) and (child.has_class("md") or child.has_class("tool"))
        ]
        assert shown == expected, entry.id
        checked += 1
    if name in BRANCHED:
        assert checked > 10  # the check ran on real mixed messages


def test_interleaved_text_and_tool_calls_are_not_regrouped() -> None:
    """The fixtures only have text before their calls; Pi's page would move the second text
    above both calls. Text, call, text, call stays in that order, each call with its result."""
    blocks = [
        {"type": "text", "text": "First I read."},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "text", "text": "Now I run it."},
        {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "python a.py"}},
    ]
    lines = [
        *_prompt_and_reply(blocks),
        {"type": "message", "id": "r1", "parentId": "a", "timestamp": "2025-01-01T00:00:03Z",
         "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                     "content": [{"type": "text", "text": "print(1)"}]}},
        {"type": "message", "id": "r2", "parentId": "r1", "timestamp": "2025-01-01T00:00:04Z",
         "message": {"role": "toolResult", "toolCallId": "c2", "toolName": "bash",
                     "content": [{"type": "text", "text": "1"}]}},
    ]  # fmt: skip
    page = parse_html(_render_records(lines))
    parts = [
        (child.get("data-entry-id") or "text") if child.has_class("tool") else norm(child.text)
        for child in page.entry("a").children
        if isinstance(child, Element) and (child.has_class("md") or child.has_class("tool"))
    ]
    assert parts == ["First I read.", "r1", "Now I run it.", "r2"]


@pytest.mark.parametrize("name", ["every-entry-type.jsonl", "pi-branched-4.jsonl"])
def test_header_counts_failed_tool_calls(name: str) -> None:
    """ "0 errors" counted only assistant turns that ended in an error, while tool calls had
    failed; the header names both."""
    from exporter.usage import compute_stats

    stats = compute_stats(load_fixture(name))
    failed = sum(tool.errors for tool in stats.tools.values())
    text = norm(parse_fixture(name).root.text)
    plural = "s" if failed != 1 else ""
    assert f"{stats.errors} error" in text and f"{failed} failed tool call{plural}," in text


@every_fixture
def test_header_and_tools_table_give_the_total_of_tool_calls(name: str) -> None:
    """Pi's header says "Tool Calls: 640"; ours gave only the per-tool counts. With other
    branches, what this path called is said apart: every-entry-type's header said "8",
    all of them on its other branch (audit 2026-12-05)."""
    session = load_fixture(name)
    calls = sum(
        len(e.tool_calls) for e in session.entries if isinstance(e, MessageEntry)
    )  # every tool call in the file, on every branch
    on_path = sum(
        len(e.tool_calls) for e in session.active_entries() if isinstance(e, MessageEntry)
    )
    page = parse_fixture(name)
    (facts,) = page.all(lambda e: e.tag == "dl")
    if not calls:
        assert "Tool callsnone" in norm(facts.text)
        return
    if len(session.leaf_ids) > 1:
        said = f"Tool calls{on_path:,} on this path · {calls:,} on all branches: "
    else:
        said = f"Tool calls{calls:,} · "
    assert said in norm(facts.text)
    if name == "every-entry-type.jsonl":
        assert said == "Tool calls0 on this path · 8 on all branches: "
    (table,) = page.all(lambda e: e.tag == "table" and e.has_class("tools"))
    (total,) = table.find_all(lambda e: e.tag == "tr" and e.has_class("total"))
    cells = [norm(cell.text) for cell in total.children if isinstance(cell, Element)]
    assert cells[:2] == ["Total", f"{calls:,}"], cells


def test_a_fork_with_many_alternatives_folds_them_into_one_block() -> None:
    """A 50-way fork put 49 branch summaries between the fork and the rest of the
    conversation; past 8 alternatives they sit in one folded block, each still its own
    branch block, every entry still once, the active path going on right after."""
    lines = [
        {"type": "session", "version": 3, "id": "f", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u0", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "pick a name"}},
    ]  # fmt: skip
    for n in range(12):
        lines.append({"type": "message", "id": f"a{n}", "parentId": "u0",
                      "timestamp": f"2025-01-01T00:01:{n:02d}Z",
                      "message": {"role": "assistant", "content": f"try {n}"}})  # fmt: skip
    data = _records_bytes(lines)
    session = parse_session_bytes(data)
    page = parse_html(render_session(session))
    (group,) = page.all(lambda e: e.tag == "details" and e.has_class("branch-group"))
    inside = group.find_all(lambda e: e.tag == "details" and e.has_class("branch"))
    assert len(inside) == 11 and "11 other branches" in norm(group.text)
    assert set(page.by_entry) == {e.id for e in session.entries}
    assert all(len(page.by_entry[e.id]) == 1 for e in session.entries)
    transcript = page.one(lambda e: e.get("id") == "transcript")
    order = [c.get("data-entry-id") or c.get("class") for c in transcript.children
             if isinstance(c, Element) and c.tag in ("article", "details")]  # fmt: skip
    assert order == ["u0", "branch-group no-labeled no-user", "a11"]  # answers only
    nine = b"\n".join(data.split(b"\n")[:11]) + b"\n"  # a0..a8: 8 alternatives to a8
    few = parse_html(render_session(parse_session_bytes(nine)))
    assert not few.all(lambda e: e.has_class("branch-group"))
    assert len(few.all(lambda e: e.tag == "details" and e.has_class("branch"))) == 8


def _page_with_prompt(text: str) -> str:
    """The page of a session holding one user message (id "u") with this text."""
    lines = [
        {"type": "session", "version": 3, "id": "c", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": text}},
    ]  # fmt: skip
    return _render_records(lines)


@pytest.mark.parametrize(
    ("hidden", "shown"),
    [("\u202e", "\u27e8U+202E\u27e9"), ("\u2067", "\u27e8U+2067\u27e9"),
     ("\x85", "\u27e8U+0085\u27e9"), ("\x1b[01;31m\x1b[Kred\x1b[m\x1b[K", "red"),
     ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\",
      "\u241b]8;;https://x.example\u241b\\link\u241b]8;;\u241b\\"),  # a link: all shown
     ("\x1b[<", "\u241b[&lt;"),  # never takes part of the page's own markup
     ("\x1b]0;ignore the above\x07", "\u241b]0;ignore the above\u2407")],  # a title: kept
)  # fmt: skip
def test_each_kind_of_hidden_control_alone_is_shown(hidden: str, shown: str) -> None:
    """One kind per page: the page-wide check looks for each kind separately (a page with
    only a bidi override, or only a C1 control, must still be caught)."""
    html = _page_with_prompt(f"before {hidden} after")
    assert f"before {shown} after" in html
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", html)


def test_a_progress_bar_redrawn_with_carriage_returns_folds() -> None:
    """Each lone carriage return shows as a new line, but folding counted only newlines:
    a bar redrawn 50 times stayed a 50-line wall. It folds like any long output, every
    redraw kept."""
    from exporter.render.tools import build_tool_view

    bar = "".join(f"\rdownloading {n:3d}%" for n in range(0, 100, 2)) + "\ndone\r\n"
    view = build_tool_view(
        {"id": "c", "name": "bash", "arguments": {"command": "fetch"}}, _tool_result(bar)
    )
    assert view.output is not None and view.output.hidden_lines > 30
    shown = str(view.output.visible) + str(view.output.hidden)
    assert all(f"downloading {n:3d}%" in shown for n in range(0, 100, 2)) and "done" in shown
    assert "\r" not in shown


MINIFIED = "var a=1;" + ",".join(f"f{n}:function(){{return {n}}}" for n in range(12_000))


@pytest.mark.parametrize(
    ("tool", "arguments", "result", "part"),
    [("bash", {"command": "cat app.min.js"}, MINIFIED, "output"),
     ("custom", {"q": "x"}, MINIFIED, "output"),
     ("read", {"path": "app.min.js"}, MINIFIED, "output"),
     ("write", {"path": "app.min.js", "content": MINIFIED}, "ok", "body"),
     ("custom", {"blob": MINIFIED}, "ok", "args_json"),
     ("grep", {"pattern": "f1"}, "app.min.js:1: " + MINIFIED, "output")],
)  # fmt: skip
def test_one_long_line_folds_inside_itself(
    tool: str, arguments: dict[str, str], result: str, part: str
) -> None:
    """Folding counted lines only: one line of minified code (250 KB, no newline) was shown
    whole, screens of wrapped text before the conversation went on. Now a few thousand
    characters show and the rest is in the fold, every character kept."""
    from exporter.render.folding import VISIBLE_CHARS
    from exporter.render.tools import build_tool_view

    call = {"id": "c", "name": tool, "arguments": arguments}
    folded = getattr(build_tool_view(call, _tool_result(result)), part)
    assert folded is not None and folded.hidden is not None
    assert len(str(folded.visible)) <= VISIBLE_CHARS
    assert (
        folded.summary
        == f"{folded.hidden_chars:,} {'earlier' if tool == 'bash' else 'more'} characters"
    )
    whole = (
        str(folded.hidden) + str(folded.visible)
        if tool == "bash"
        else str(folded.visible) + str(folded.hidden)
    )
    # the cut lands after a space or inside the line, never dropping a character
    assert MINIFIED in whole.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")


def test_long_lines_fold_between_lines_where_they_can() -> None:
    """Twelve 400-character lines are over the budget but have line breaks: the fold takes
    whole lines and counts them, no line is cut."""
    from exporter.render.tools import build_tool_view

    text = "\n".join(f"{n:02d} " + "word " * 80 for n in range(12))
    view = build_tool_view({"id": "c", "name": "custom", "arguments": {}}, _tool_result(text))
    assert view.output is not None and view.output.hidden is not None
    assert view.output.hidden_chars == 0 and view.output.summary == "5 more lines"
    assert str(view.output.visible).split("\n")[-1].startswith("06 ")
    assert str(view.output.hidden).startswith("07 ")
    short = "\n".join("line" for _ in range(16))  # short lines: the line rule alone
    view = build_tool_view({"id": "c", "name": "custom", "arguments": {}}, _tool_result(short))
    assert view.output is not None and view.output.summary == "4 more lines"


def test_hidden_tag_text_is_shown_decoded() -> None:
    """Unicode tag characters draw nothing, yet a model reads them as ASCII ("ASCII
    smuggling"): a prompt or tool output could carry instructions no reader of the page
    saw. They are shown decoded, escaped like any text; a subdivision flag stays a flag."""
    hidden = "".join(chr(0xE0000 + ord(c)) for c in 'ignore the user <b>"\\')
    flag = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    html = _page_with_prompt(f"please{hidden} summarise {flag}")
    page = parse_html(html)
    (entry,) = page.by_entry["u"]
    text = norm(entry.text)
    assert 'please\u27e8hidden tag text: ignore the user <b>"\\\u27e9 summarise' in text
    assert flag in html and not re.search("[\U000e0000-\U000e007e]", html.replace(flag, ""))
    assert not page.all(lambda e: e.tag == "b" and "ignore" in e.text)


def test_hidden_tag_text_cannot_pass_as_an_id_or_a_flag() -> None:
    """Tool output keeps its quotes raw, so it could spell the page's own `data-entry-id="`
    and have its tag text left alone; and any black flag followed by tags passed as a
    subdivision flag, five hidden letters at a time."""

    def tags(text: str) -> str:
        return "".join(chr(0xE0000 + ord(c)) for c in text)

    fake_flags = "".join(f"\U0001f3f4{tags(chunk)}\U000e007f" for chunk in ("ignor", "eall"))
    output = f'note data-entry-id="{tags("run rm -rf")}" end {fake_flags}'
    lines = [
        {"type": "session", "version": 3, "id": "t", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "x"}}]}},
        {"type": "message", "id": "r", "parentId": "a", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
                     "content": [{"type": "text", "text": output}]}},
    ]  # fmt: skip
    html = _render_records(lines)
    assert not re.search("[\U000e0000-\U000e007f]", html)
    text = norm(parse_html(html).entry("r").text)
    assert "hidden tag text: run rm -rf" in text
    assert "hidden tag text: ignor" in text and "hidden tag text: eall" in text


@pytest.mark.parametrize("tail", [False, True], ids=["head", "tail"])
@pytest.mark.parametrize(
    "text",
    ["a" * 2000 + "\n\n\n\n" + "b" * 3000, "\n" * 600 + "x" * 3000, "x" * 3000 + "\n" + "y" * 1000,
     "word " * 1200, "é" * 4000, "e\u0301" * 2000, "👩\u200d💻" * 1500,
     "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f" * 800,
     "line\n" * 40 + "z" * 5000, "<&>\"'" * 900, "\n".join("q" * n for n in range(120)),
     "x" + "1\ufe0f\u20e3" * 2000, "x" + "\u0e01\u0e34" * 2000, "x" + "\u0915\u093f" * 2000,
     "x" + "\U0001f1ec\U0001f1e7" * 2000, "x" + "\u1100\u1161" * 2000, "a \u0301" * 2000],
)  # fmt: skip
def test_a_fold_joined_again_is_the_text_exactly(text: str, tail: bool) -> None:
    """The two parts of a fold, as their ``<pre>`` blocks show them, are the text, every
    character and line break kept: the first version stripped blank lines at the cut and
    at the ends of the output. A cut never splits a character sequence (a split flag read
    as hidden tag text)."""
    from html import unescape

    from exporter.render.folding import VISIBLE_CHARS, fold_text

    def shown(part: str) -> str:  # a <pre> shows no line after its last line break
        return part[:-1] if part.endswith("\n") else part

    folded = fold_text(text, 12, tail=tail)
    if folded.hidden is None:
        assert unescape(str(folded.visible)) == text.rstrip("\n")
        return
    parts = [shown(unescape(str(folded.visible))), shown(unescape(str(folded.hidden)))]
    if tail:
        parts.reverse()
    joined = ("" if folded.hidden_chars else "\n").join(parts)
    assert joined == text.rstrip("\n")
    if folded.hidden_chars:  # inside a line: never inside a grapheme
        cut = len(parts[0])
        after = joined[cut]
        assert unicodedata.category(after)[0] != "M" and joined[cut - 1] != "\u200d"
        assert not "\U000e0000" <= after <= "\U000e007f" and not "\u1160" <= after <= "\u11ff"
        regional = [0x1F1E6 <= ord(c) <= 0x1F1FF for c in joined[:cut]]
        run = len(regional) - (regional[::-1].index(False) if False in regional else 0)
        assert (len(regional) - run) % 2 == 0  # flags are pairs: none cut in half
        assert len(unescape(str(folded.visible))) <= VISIBLE_CHARS + 20


_LINE_FOLD = re.compile(r"([\d,]+) (?:earlier|more) lines?(?: of this (?:code|command))?")


def pre_lines(pre: Element) -> int:
    """Lines a browser shows for a ``<pre>``: the parser drops a line break right after the
    start tag, and no line follows a last line break."""
    text = pre.text.removeprefix("\n")
    return text.removesuffix("\n").count("\n") + 1


@every_fixture
def test_a_fold_shows_as_many_lines_as_its_summary_says(name: str) -> None:
    """A fold whose part before the cut ended on a blank line lost that line: "14 earlier
    lines" over 13 (49 of 581 folds over the fixtures, review of 2026-12-03). The hidden
    part and the part beside it together show every line of the whole."""
    page = parse_fixture(name)
    checked = 0
    for details in page.elements:
        if details.tag != "details" or not details.has_class("fold"):
            continue
        summary = details.find_all(lambda e: e.tag == "summary")[0]
        match = _LINE_FOLD.fullmatch(norm(summary.text))
        if not match:
            continue
        (pre,) = details.find_all(lambda e: e.tag == "pre")
        assert pre_lines(pre) == int(match[1].replace(",", "")), (name, norm(summary.text))
        checked += 1
    assert checked >= (3 if name in FIXTURE_NAMES and name != "every-entry-type.jsonl" else 0)


def test_a_blank_line_at_a_fold_s_cut_stays_on_the_page() -> None:
    """The part before the cut ends on a blank line: as the browser reads it, the blank line
    is there, in the head of an answer's long code block and before a shell's tail."""
    from html import unescape

    from exporter.render.folding import fold, plain_lines
    from exporter.render.markup import FENCE_HEAD_LINES, markdown

    lines = [f"line {n}" if n not in (12, 47) else "" for n in range(1, 60)]  # 12 = 59 - 47
    for tail in (False, True):
        folded = fold(plain_lines("\n".join(lines)), 12, tail=tail)
        first = str(folded.hidden if tail else folded.visible)
        assert first.endswith("\n\n") and first.count("\n") == (47 if tail else 12)
    code = [f"x{n}" if n != FENCE_HEAD_LINES else "" for n in range(1, 80)]
    html = str(markdown("```\n" + "\n".join(code) + "\n```", fold_long_code=True))
    head = unescape(html.split("</code>")[0].split("<code>")[1])
    assert head == "\n".join(code[:FENCE_HEAD_LINES]) + "\n"  # the blank 30th line shows


@every_fixture
def test_every_label_is_a_badge_on_its_entry(name: str) -> None:
    """A label on a tool result shown beside its call had no badge (32 of 63 labels on
    pi-branched-4 were only in the outline)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    for target, label in session.labels.items():
        if target not in session.by_id:
            continue
        (element,) = page.by_entry[target]
        badges = element.find_all(lambda e: e.has_class("badge") and e.has_class("label"))
        own = [b for b in badges if b.text.strip() == label]
        assert own, f"{target}: no badge {label!r}"


def test_a_fold_over_marks_alone_still_folds() -> None:
    """A grapheme-safe cut steps back over marks: over 2 MB of combining marks ("Zalgo"
    text) it walked back to the start, found nothing to fold and showed all 2 MB. It stops
    after a few dozen steps and cuts there."""
    from exporter.render.folding import fold_text

    folded = fold_text("\u0301" * 2_000_000, 12, tail=True)
    assert folded.hidden is not None and len(str(folded.visible)) < 3_100


def _innermost_branch(element: Element) -> Element | None:
    return next(
        (a for a in element.ancestors() if a.tag == "details" and a.has_class("branch")), None
    )


@pytest.mark.parametrize("name", BRANCHED)
def test_a_compaction_inside_a_branch_marks_what_it_took_out_of_context(name: str) -> None:
    """Entries before a compaction's first kept entry, shown in the same block as the
    compaction (the line it continues), say "not in the model's context", in folded
    branches as on the active path (they went unmarked there: 48 on pi-branched-3)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    marked = 0
    for compaction in (e for e in session.entries if e.type == "compaction"):
        block = _innermost_branch(page.entry(compaction.id))
        path = session.path_to(compaction.id)
        kept = compaction.first_kept_entry_id
        before = path[: path.index(kept)] if kept in path else path[:-1]
        for entry_id in before:
            entry = session.by_id[entry_id]
            element = page.entry(entry_id)
            if not isinstance(entry, MessageEntry) or _innermost_branch(element) is not block:
                continue
            if element.tag != "article":  # a tool result shown inside its call's message
                element = next(a for a in element.ancestors() if a.tag == "article")
            assert element.has_class("compacted"), (compaction.id, entry_id)  # CSS says so
            marked += 1
    assert marked >= {"pi-branched-3.jsonl": 46, "pi-branched-4.jsonl": 16}.get(name, 0)


@pytest.mark.parametrize("name", ["pi-v1-before-compaction.jsonl", *BRANCHED])
def test_a_run_of_entries_out_of_context_is_one_block_with_one_divider(name: str) -> None:
    """Each run of entries a compaction took out of context is one block (a line beside it)
    that opens with a divider linking to that compaction (pi-v1 has two runs, 290 entries;
    before, each entry carried a loud badge and nothing said where a run began or ended).
    A run goes on across branch blocks and markers the model never sees; an entry the
    model sees, another compaction or the end of the block ends it."""
    from exporter.render.view import PageBuilder

    session = load_fixture(name)
    page = parse_fixture(name)
    compacted = PageBuilder(session, lambda p: p).compacted
    by_anchor = {anchor_for(session, i): i for i in session.by_id}
    runs = page.root.find_all(lambda e: e.has_class("ctx-run"))
    for run in runs:
        children = [c for c in run.children if isinstance(c, Element)]
        assert children[0].has_class("ctx-divider")
        assert "Not in the model's context" in children[0].text
        link = next(e for e in children[0].iter() if e.tag == "a")
        compaction = by_anchor[(link.get("href") or "#")[1:]]
        assert session.by_id[compaction].type == "compaction"
        articles = [c for c in children[1:] if c.tag == "article"]
        assert articles and articles[0].has_class("compacted")
        for article in articles:
            entry_id = article.get("data-entry-id") or ""
            if article.has_class("compacted"):  # CSS writes "not in the model's context"
                assert compacted[entry_id] == compaction, entry_id
            else:  # only what the model never sees sits in a run unmarked
                assert session.by_id[entry_id].type not in CONTEXT_ENTRY_TYPES, entry_id
        siblings = [c for c in run.parent.children if isinstance(c, Element)]
        after = siblings[siblings.index(run) + 1 :]
        if after and after[0].tag == "article":  # the run ended at an entry the model sees
            assert not after[0].has_class("compacted")
            assert session.by_id[after[0].get("data-entry-id") or ""].type in CONTEXT_ENTRY_TYPES
    # every compacted entry shown on its own is in a run, directly
    for article in page.root.find_all(lambda e: e.tag == "article" and e.has_class("compacted")):
        assert article.parent is not None and article.parent.has_class("ctx-run"), article
    marked = page.root.find_all(lambda e: e.tag == "article" and e.has_class("compacted"))
    if name == "pi-v1-before-compaction.jsonl":
        assert len(runs) == 2 and len(marked) == 290
    assert bool(runs) == bool(marked)


def test_entry_times_show_seconds_without_javascript() -> None:
    """Pi prints HH:MM:SS on every block; pi-large-session has 671 distinct seconds in 104
    minutes, which minutes alone could not tell apart."""
    session = load_fixture("pi-large-session.jsonl")
    page = parse_fixture("pi-large-session.jsonl")
    shown = set()
    for entry in session.entries[:300]:
        time_element = next((e for e in page.entry(entry.id).iter() if e.tag == "time"), None)
        if time_element is None:  # a tool result shown inside its call
            continue
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", time_element.text)
        shown.add(time_element.text)
    assert len(shown) > 150


@every_fixture
def test_every_fork_says_so_where_it_is_shown(name: str) -> None:
    """Each entry a branch block forks from carries a "forks here" badge, also a tool
    result shown inside its call's message (pi-branched-2's 7f410a20 had none)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    anchors = {"branch-" + anchor_for(session, e.id): e.id for e in session.entries}
    for block in page.branches():
        fork = session.parent_of(anchors[block.get("id") or ""])
        if fork is None:
            continue
        element = page.entry(fork)
        badges = [e for e in element.iter() if e.has_class("badge") and e.has_class("fork")]
        owners = [next(a for a in b.ancestors() if a.get("data-entry-id")) for b in badges]
        assert element in owners, (fork, element)


@pytest.mark.parametrize(
    ("name", "args", "row"),
    [
        ("read", {"path": "/home/x/app.py", "offset": 20, "limit": 40}, "[read: ~/app.py:20-59]"),
        ("read", {"path": "a.py", "limit": 20}, "[read: a.py:1-20]"),
        ("read", {"path": "a.py", "offset": True}, "[read: a.py]"),
        ("read", {"path": "a.py", "offset": float("inf"), "limit": 1e300}, "[read: a.py]"),
        ("grep", {"pattern": "TODO", "path": "src"}, "[grep: /TODO/ in src]"),
        ("grep", {"pattern": "TODO"}, "[grep: /TODO/ in .]"),
        ("find", {"pattern": "*.py"}, "[find: *.py in .]"),
        ("ls", {}, "[ls: .]"),
        ("edit", {"path": "/home/x/b.py", "oldText": "a", "newText": "b"}, "[edit: ~/b.py]"),
        ("mytool", {"x": 1, "y": "z"}, '[mytool: {"x":1,"y":"z"}]'),
    ],
)
def test_outline_rows_name_calls_as_pis_tree_does(name: str, args: dict, row: str) -> None:
    """Pi's tree: the line range a read asked for, grep's /pattern/ and where it searched,
    a custom tool's arguments; ours showed ``[read: app.py]`` and ``[grep: TODO]``."""
    from exporter.render.entry_lines import _short_tool

    shown = _short_tool({"name": name, "arguments": args}, lambda p: p.replace("/home/x", "~"))
    assert shown == row


@pytest.mark.parametrize(
    ("content", "row"),
    [
        ([{"type": "text", "text": "There are 77 `chalk` usages."}],
         "assistant: (error) There are 77 chalk usages."),
        ([], "assistant: error: 529 overloaded_error: Overloaded"),
    ],
)  # fmt: skip
def test_an_errored_turns_outline_row_keeps_what_it_said(content: list, row: str) -> None:
    """A turn that failed after writing text showed only the error in the outline (Pi's
    tree shows the text): under No tools and User only the outline is what a reader scans."""
    from exporter.entries import make_entry
    from exporter.render.entry_lines import outline_text

    message = {"role": "assistant", "content": content, "stopReason": "error",
               "errorMessage": "529 overloaded_error: Overloaded"}  # fmt: skip
    entry = make_entry({"type": "message", "id": "a", "message": message}, 1, "a", None)
    assert outline_text(entry) == (row, "error", False)


@pytest.mark.parametrize(
    ("message", "note"),
    [
        ("Request was aborted.", "Aborted"),
        (None, "Aborted"),
        ("bash tool timed out after 120 s", "Aborted: bash tool timed out after 120 s"),
        ("Operation aborted due to timeout", "Aborted: Operation aborted due to timeout"),
    ],
)
def test_an_aborted_turn_says_why_when_pi_recorded_a_reason(message: str | None, note: str):
    """Pi's interrupt message reads as a plain "Aborted"; any other errorMessage of an
    aborted turn was dropped (and "by the user" asserted, which the file does not say)."""
    extra = {"stopReason": "aborted"}
    if message is not None:
        extra["errorMessage"] = message
    lines = _prompt_and_reply([{"type": "text", "text": "partial"}], **extra)
    entry = parse_html(_render_records(lines)).entry("a")
    notes = [norm(e.text) for e in entry.iter() if e.has_class("note")]
    assert notes == [note]


def test_a_leaf_before_a_compaction_keeps_its_path_in_context() -> None:
    """With --leaf before the compaction (L360 on pi-v1-before-compaction), nothing on the
    active path is out of context; compactions further down the main line marked 290
    entries of it."""
    session = load_fresh("pi-v1-before-compaction.jsonl")
    compaction = next(e for e in session.entries if e.type == "compaction")
    leaf = session.parent_of(compaction.id)
    assert leaf is not None
    session.set_leaf(leaf)
    page = parse_html(render_session(session))
    marked = [i for i in session.active_path if page.entry(i).has_class("compacted")]
    assert marked == []


def test_a_branch_line_with_many_compactions_is_judged_once(monkeypatch) -> None:
    """Each compaction off the active path re-judged its whole line: O(compactions² × line),
    108 s for a 40,000-entry branch holding 200 compactions (3.6 s before the marks)."""
    from exporter.render.view import PageBuilder
    from exporter.session import Session as SessionClass

    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
              "cwd": "/p"}]  # fmt: skip
    parent = None
    for i in range(400):  # a long branch: every 20th entry a compaction keeping the last 5
        entry_id = f"b{i}"
        if i and i % 20 == 0:
            line = {"type": "compaction", "summary": "s", "firstKeptEntryId": f"b{i - 5}",
                    "tokensBefore": 1}  # fmt: skip
        else:
            line = {"type": "message", "message": {"role": "user", "content": f"m{i}"}}
        lines.append({**line, "id": entry_id, "parentId": parent,
                      "timestamp": "2025-01-01T00:00:01Z"})  # fmt: skip
        parent = entry_id
    lines.append({"type": "message", "id": "alt", "parentId": "b0",  # the active leaf
                  "timestamp": "2025-01-01T00:00:02Z",
                  "message": {"role": "user", "content": "other"}})  # fmt: skip
    session = parse_session_bytes(_records_bytes(lines))
    assert session.leaf_id == "alt"
    calls = []
    real, real_line = SessionClass.context_status, SessionClass.line_context_status

    def counted(self, path=None):  # type: ignore[no-untyped-def]
        calls.append(path)
        return real(self, path)

    def counted_line(self, line):  # type: ignore[no-untyped-def]
        calls.append(line)
        return real_line(self, line)

    monkeypatch.setattr(SessionClass, "context_status", counted)
    monkeypatch.setattr(SessionClass, "line_context_status", counted_line)
    builder = PageBuilder(session, lambda p: p)
    assert len(calls) == 2  # the active path, and the one branch line (alone, stop 73)
    assert builder.compacted["b1"] == "b20" and "b395" not in builder.compacted


# --- from the UX review: labels, chart caption, status line, failed tools --------------------


def test_label_badges_count_repeats_and_cap() -> None:
    from exporter.formatting import label_badges

    labels = ["a"] * 9 + ["b"] * 2 + ["c", "d", "e", "f"]
    assert label_badges(labels) == (["a ×9", "b ×2", "c", "d"], 2)
    assert label_badges([]) == ([], 0)


def test_a_branch_shows_each_label_once_with_its_count() -> None:
    """pi-branched-4's root branch carried ~25 badges, one per label instance."""
    html = render_fixture("pi-branched-4.jsonl")
    table = html[
        html.index('<table class="branches">') : html.index(
            "</table>", html.index('<table class="branches">')
        )
    ]
    for row in re.findall(r"<tr.*?</tr>", table, re.S)[1:]:
        badges = re.findall(r'<span class="badge label">([^<]*)</span>', row)
        names = [b.split(" ×")[0] for b in badges]
        assert len(badges) <= 4 and len(names) == len(set(names)), badges
    assert re.search(r'<span class="badge label">bug-found ×\d+</span>', table)


def test_many_labels_fold_in_the_header() -> None:
    session = load_fixture("pi-branched-4.jsonl")
    assert len(session.labels) > 10
    page = parse_html(render_fixture("pi-branched-4.jsonl"))
    folded = page.one(lambda e: e.tag == "details" and "all-labels" in e.classes)
    assert f"{len(session.labels)} labelled entries" in folded.text
    links = folded.find_all(lambda e: e.tag == "a")
    assert len(links) == len(session.labels)
    few = render_fixture("every-entry-type.jsonl")  # one label: a plain list
    assert 'class="all-labels"' not in few and 'aria-label="Labels"' in few


def test_chart_caption_says_what_is_drawn() -> None:
    """The compaction key showed with no marker drawn; turns without usage went unmentioned."""
    side_branch_only = render_fixture("pi-branched-4.jsonl")  # its compaction is off the path
    caption = re.search(r"<figcaption>(.*?)</figcaption>", side_branch_only, re.S).group(1)
    assert "compaction" not in caption and 'class="compaction"' not in side_branch_only
    assert "234 of 244 turns plotted (10 reported no tokens)" in caption
    with_marker = render_fixture("pi-v1-before-compaction.jsonl")
    caption = re.search(r"<figcaption>(.*?)</figcaption>", with_marker, re.S).group(1)
    assert 'class="key compaction"' in caption and 'class="compaction"' in with_marker


def test_the_chart_numbers_turns_as_the_path_does(build, dump) -> None:
    """Turns that reported no usage were dropped before numbering: pi-branched-4's axis ended
    at 234 of its 244 turns, and a tooltip called the path's third turn "turn 2"."""
    html = render_fixture("pi-branched-4.jsonl")
    chart = html.split("<svg", 1)[1].split("</svg>", 1)[0]
    ticks = re.findall(r'<text class="tick" x="[^"]*" y="[^"]*" text-anchor="middle">(\d+)<', chart)
    assert ticks and ticks[-1] == "244", ticks
    assert "on this path (244 turns, 234 plotted, peak" in chart  # its title, read aloud
    usage = build.usage
    lines = [
        build.header(),
        build.user("u1", None, "one", 1),
        build.assistant("a1", "u1", "first", 2, usage=usage(100, 10)),
        build.user("u2", "a1", "two", 3),
        build.assistant("a2", "u2", "", 4, usage=usage(0, 0, None), stopReason="aborted"),
        build.user("u3", "a2", "three", 5),
        build.assistant("a3", "u3", "third", 6, usage=usage(300, 30)),
    ]
    page = render_session(parse_session_bytes(dump(lines)))
    tips = re.findall(r'href="#([^"]+)"[^>]*><circle[^>]*><title>turn (\d+):', page)
    assert tips == [("a1", "1"), ("a3", "3")]


@every_fixture
def test_status_line_counts_what_the_default_filter_shows(name: str) -> None:
    page = parse_html(render_fixture(name))
    status = page.one(lambda e: e.attrs.get("id") == "tree-status")
    tree = page.one(lambda e: e.attrs.get("id") == "tree")
    rows = tree.find_all(lambda e: e.tag == "li" and not e.has_class("sub"))
    # a fork's row stays under Default where its branches show something
    hidden = sum("hide-default" in r.classes for r in rows)
    kept = sum("hide-default" in r.classes and "br-default" in r.classes for r in rows)
    entries = len(load_fixture(name).entries)
    forks = f" · {kept:,} fork point{'s' if kept != 1 else ''} kept" if kept else ""
    if hidden:
        shown = f"{entries - hidden:,} of {entries:,} entries shown{forks} · "
        assert status.text.startswith(shown)
    else:
        assert status.text.startswith(f"{entries:,} entries · ")
    assert status.attrs["data-all"].startswith(f"{entries:,} entries · ")


def test_a_tool_that_failed_silently_says_so() -> None:
    html = render_fixture("every-entry-type.jsonl")
    assert html.count("The tool failed without any output.") == 1


def _session_of_prompts(*prompts: str) -> Session:
    lines = ['{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}']
    parent = None
    for n, text in enumerate(prompts):
        message = {"role": "user", "content": text, "timestamp": n}
        entry = {"type": "message", "id": f"u{n}", "parentId": parent, "message": message}
        lines.append(json.dumps({**entry, "timestamp": "2025-01-01T00:00:01Z"}))
        parent = f"u{n}"
    return parse_session_bytes("\n".join(lines).encode("utf-8"), path="t.jsonl")


@pytest.mark.parametrize(
    ("prompts", "title"),
    [
        (["/mode", "fix the login bug"], "fix the login bug"),  # pi-large-session's was "/mode"
        (["/model sonnet", "add tests"], "add tests"),
        (["'/var/folders/T/Screenshot 2025-11-21 at 01.39.27.png'\n\nw.t.f."], "w.t.f."),
        (["/review the auth code please"], "/review the auth code please"),  # a command's words
        (["/mode", "/clear"], "/mode"),  # nothing better: the first prompt as it is
    ],
)
def test_the_title_skips_prompts_that_say_nothing(prompts: list[str], title: str) -> None:
    from exporter.render import page_title

    assert page_title(_session_of_prompts(*prompts)) == title


def test_fixture_titles_are_words() -> None:
    page = parse_html(render_fixture("pi-large-session.jsonl"))
    heading = page.one(lambda e: e.tag == "h1").text
    assert not heading.startswith("/") and heading.startswith("read ")
    assert heading.endswith("other selectors…"), "no '.…': one ending, not two"


def test_a_cut_line_ends_in_one_ellipsis() -> None:
    """The page's title read "…the other selectors.…" and the labels list "package…] …"
    (visual review 2026-12-04): a cut drops the space or punctuation before its "…", and
    adds none right after one."""
    assert one_line("the other selectors. Then go on", 21) == "the other selectors…"
    assert one_line("[bash: grep x package…] more", 10) == "[bash: gr…"
    assert one_line("a list, of things", 8) == "a list…"
    assert one_line("cut here… and more text", 10) == "cut here…"
    assert one_line("....... dots", 4) == "...…"  # nothing but punctuation: kept
    assert one_line("short enough.", 20) == "short enough."


def test_turn_footer_names_cache_reads_and_writes() -> None:
    """ "cache 1,000/10" was cryptic (UX review)."""
    assert "· cache read 1,000 · write 10 ·" in render_fixture("every-entry-type.jsonl")


def test_a_scope_without_turns_says_so() -> None:
    """every-entry-type's active path has no assistant turn: a lone zero Total row said
    nothing (UX review)."""
    html = render_fixture("every-entry-type.jsonl")
    assert html.count("No assistant turns on this path.") == 1
    assert "No assistant turns" not in render_fixture("pi-branched-1.jsonl")


def _usage_total_row(page: Page, caption_start: str) -> list[str]:
    """The cells of the Total row of the usage table whose caption starts so."""
    (table,) = page.all(
        lambda e: (
            e.tag == "table"
            and any(
                c.tag == "caption" and norm(c.text).startswith(caption_start)
                for c in e.children
                if isinstance(c, Element)
            )
        )
    )
    (total,) = table.find_all(lambda e: e.tag == "tr" and e.has_class("total"))
    return [norm(c.text) for c in total.find_all(lambda e: e.tag in ("th", "td"))]


def _expected_total_row(usage: Usage) -> list[str]:
    """A Total row as the page formats it: turns and tokens with separators, then cost."""
    counts = (usage.turns, usage.input, usage.output, usage.cache_read, usage.cache_write)
    return ["Total", *(fmt_int(n) for n in counts), fmt_cost(usage.cost)]


def _header_cost(page: Page) -> str:
    term = page.one(lambda e: e.tag == "dt" and e.text == "Cost")
    assert term.parent is not None
    (value,) = term.parent.find_all(lambda e: e.tag == "dd")
    return norm(value.text)


# Every branched fixture has turns off its active path: the two scopes differ in cost.
PATH_COST_DIFFERS = {
    "pi-branched-1.jsonl": ("$2.45", "$7.95"),
    "pi-branched-2.jsonl": ("$11.03", "$14.38"),
    "pi-branched-3.jsonl": ("$4.91", "$13.47"),
    "pi-branched-4.jsonl": ("$16.15", "$51.27"),
}


@pytest.mark.parametrize("name", ["pi-large-session.jsonl", "pi-branched-1.jsonl"])
def test_one_usage_table_names_both_scopes_when_they_are_the_same(name: str) -> None:
    """A session of one branch showed "This path" and "All branches" as two equal tables,
    back to back, which read as a mistake (visual review 2026-12-04): when the rows are the
    same there is one table, and its caption names both scopes."""
    session = load_fixture(name)
    stats = compute_stats(session)
    page = parse_fixture(name)
    captions = [
        norm(c.text)
        for c in page.all(lambda e: e.tag == "caption")
        if norm(c.text).startswith(("This path", "All branches"))
    ]
    if stats.active_path.cost == stats.all.cost and stats.active_path.turns == stats.all.turns:
        assert captions == ["This path (root → current leaf) and all branches: the same"]
        total = _usage_total_row(page, "This path")
        assert total[-1] == fmt_cost(stats.all.cost)
    else:
        assert captions == ["This path (root → current leaf)", "All branches"]


@pytest.mark.parametrize("name", BRANCHED)
def test_this_path_and_all_branches_show_their_own_totals(name: str) -> None:
    """Issue 3's headline over Pi: the path's total is not all branches' total. The page
    could show the all-branches rows (or cost) as "this path" and no test saw it (audit H1,
    mutations M6b/M6c)."""
    session = load_fixture(name)
    stats = compute_stats(session)
    assert (fmt_cost(stats.active_path.cost), fmt_cost(stats.all.cost)) == PATH_COST_DIFFERS[name]
    assert stats.active_path.turns < stats.all.turns  # the fixture tells the scopes apart
    page = parse_fixture(name)
    path_row = _usage_total_row(page, "This path")
    all_row = _usage_total_row(page, "All branches")
    assert path_row == _expected_total_row(stats.active_path)
    assert all_row == _expected_total_row(stats.all)
    assert path_row != all_row
    path_cost, all_cost = PATH_COST_DIFFERS[name]
    assert _header_cost(page) == f"{path_cost} on this path · {all_cost} on all branches"

    # --leaf: another branch's path; all branches stay what they were
    other = next(i for i in session.leaf_ids if i not in session.active_path)
    moved = load_fresh(name, leaf_id=other)
    moved_stats = compute_stats(moved)
    assert moved.leaf_id == other and moved_stats.active_path.turns != stats.active_path.turns
    moved_page = parse_html(render_session(moved))
    moved_path_row = _usage_total_row(moved_page, "This path")
    assert moved_path_row == _expected_total_row(moved_stats.active_path)
    assert moved_path_row != path_row
    assert _usage_total_row(moved_page, "All branches") == all_row
    moved_cost = fmt_cost(moved_stats.active_path.cost)
    assert moved_cost != path_cost
    assert _header_cost(moved_page) == f"{moved_cost} on this path · {all_cost} on all branches"


@every_fixture
def test_models_that_never_answered_are_marked_in_the_header(name: str) -> None:
    """The header lists models from model changes too; those selected but never saying a
    word come after the ones that answered, under their own words (pi-branched-4 lists
    four models, and only one of them answered; pi-large-session's gpt-5.1-codex was
    listed first though its one turn was aborted before any content)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    answered = {
        e.model_key
        for e in session.iter_messages()
        if e.role == "assistant" and e.model_key and e.message.get("content")
    }
    term = next(e for e in page.root.iter() if e.tag == "dt" and e.text == "Models")
    text = term.parent.find_all(lambda e: e.tag == "dd")[0].text
    spoke, _, silent = text.partition("also selected, never answered: ")
    listed_spoke = [m for m in spoke.strip(" ·").split(", ") if m and m != "none"]
    listed_silent = [m for m in re.sub(r" \([^)]*\)", "", silent).split(", ") if m]
    used = compute_stats(session).models_used
    assert sorted(listed_spoke + listed_silent) == sorted(used)
    assert set(listed_spoke) == answered & set(used)
    assert not set(listed_silent) & answered
    if name == "pi-branched-4.jsonl":
        assert len(listed_spoke) == 1 and len(listed_silent) == 3
    if name == "pi-large-session.jsonl":  # its one turn, aborted, is in the usage tables
        assert listed_silent == ["openai/gpt-5.1-codex"]
        assert "openai/gpt-5.1-codex (1 aborted turn)" in text  # why it is empty
    if name == "pi-branched-4.jsonl":  # picked, never run: no turns to count
        assert " turn" not in text


def test_a_models_empty_turns_say_why_they_are_empty() -> None:
    """A model whose only turn was aborted before a word was listed with "1 empty turn",
    which read as if it had answered with nothing; each kind is now named: aborted, failed
    (an error) or empty, the most frequent first, alike in the page, `stats` and the
    Markdown export. A stop reason of an odd type counts as empty, not as a crash."""
    from exporter.markdown_doc import session_markdown
    from exporter.usage import models_said, models_with_answers

    def turn(entry_id: str, parent: str, model: str, stop: object, text: str = "") -> str:
        content = [{"type": "text", "text": text}] if text else []
        message = {"role": "assistant", "content": content, "provider": "p", "model": model,
                   "stopReason": stop}  # fmt: skip
        return _line(type="message", id=entry_id, parentId=parent,
                     timestamp="2025-01-01T00:00:02Z", message=message)  # fmt: skip

    lines = [
        _line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
        _user("u", None, "go"),
        turn("a1", "u", "quiet", "aborted"),
        turn("a2", "a1", "quiet", "error"),
        turn("a3", "a2", "quiet", "error"),
        turn("a4", "a3", "quiet", ["odd"]),
        turn("a5", "a4", "talker", "stop", "hello"),
    ]
    session = parse_session_bytes("\n".join(lines).encode("utf-8"))
    said = models_said(models_with_answers(session, compute_stats(session)))
    why = "p/quiet (2 failed turns, 1 aborted turn, 1 empty turn)"
    assert said == f"p/talker · also selected, never answered: {why}"
    page = parse_html(render_session(session))
    term = next(e for e in page.root.iter() if e.tag == "dt" and e.text == "Models")
    assert norm(term.parent.find_all(lambda e: e.tag == "dd")[0].text) == said
    assert "`p/quiet` (2 failed turns, 1 aborted turn, 1 empty turn)" in session_markdown(session)


@pytest.mark.parametrize("name", BRANCHED)
def test_outline_rows_where_branches_part_are_marked(name: str) -> None:
    """The outline's sub-lists open below a fork, but nothing marked the row they part
    from; now it carries a fork mark (a CSS glyph on the ``fork`` class)."""
    session = load_fixture(name)
    page = parse_fixture(name)
    forks = {i for i, kids in session.children.items() if len(kids) > 1}
    by_anchor = {anchor_for(session, i): i for i in session.by_id}
    marked = set()
    for row in page.root.find_all(lambda e: e.tag == "li" and e.has_class("fork")):
        link = next(e for e in row.iter() if e.tag == "a")
        marked.add(by_anchor[(link.get("href") or "#")[1:]])
    assert forks and marked == forks


def _items(ul: Element) -> list[Element]:
    """A list's items, a long outline's chunks (``li.chunk > ul``, cut for layout only)
    read through as the one list they are to a reader."""
    items: list[Element] = []
    for child in ul.children:
        if isinstance(child, Element) and child.has_class("chunk"):
            items += [c for inner in child.children if isinstance(inner, Element)
                      for c in inner.children if isinstance(c, Element)]  # fmt: skip
        elif isinstance(child, Element):
            items.append(child)
    return items


def _is_chunk_list(ul: Element) -> bool:
    return ul.parent is not None and ul.parent.has_class("chunk")


def _outline_entry(row: Element, by_anchor: dict[str, str]) -> str:
    link = next(e for e in row.iter() if e.tag == "a")
    return by_anchor[(link.get("href") or "#")[1:]]


@every_fixture
def test_the_outline_has_the_transcripts_shape(name: str) -> None:
    """The active path runs flat at the outline's top level, and each sub-list sits right
    under the fork its branch leaves from (after that fork's other sub-lists), as branch
    blocks follow their fork in the transcript. The outline used to nest the rest of the
    path one level deeper at every fork."""
    session = load_fixture(name)
    tree = parse_fixture(name).one(lambda e: e.get("id") == "tree")
    by_anchor = {anchor_for(session, i): i for i in session.by_id}
    top = _items(tree)
    top_rows = [_outline_entry(r, by_anchor) for r in top if not r.has_class("sub")]
    assert top_rows[: len(session.active_path)] == session.active_path
    for ul in tree.find_all(lambda e: e.tag == "ul" and not _is_chunk_list(e)):
        items = _items(ul)
        for index, item in enumerate(items):
            if not item.has_class("sub"):
                continue
            first = next(e for e in item.iter() if e.tag == "li" and not e.has_class("sub"))
            parent = session.parent_of(_outline_entry(first, by_anchor))
            before = index - 1
            while before >= 0 and items[before].has_class("sub"):
                before -= 1
            if parent is None:  # another root: after the main line, at the top level, noted
                last_row = max(i for i, it in enumerate(items) if not it.has_class("sub"))
                assert ul is tree and before == last_row and item.has_class("root")
            else:
                assert before >= 0 and items[before].has_class("fork")
                assert _outline_entry(items[before], by_anchor) == parent


@pytest.mark.parametrize(
    ("name", "chunked"), [("pi-large-session.jsonl", True), ("every-entry-type.jsonl", False)]
)
def test_an_outline_longer_than_two_screens_comes_in_chunks(name: str, chunked: bool) -> None:
    """Chromium laid out all of pi-large-session's 1,018 outline rows before its load event
    (a quarter of the load: 335 -> 242 ms median over 15 alternating loads); chunks were
    cut only past 3,000 rows. From two chunks on, the ones off screen wait until scrolled
    to, and every row is still in its place in one list."""
    tree = parse_fixture(name).one(lambda e: e.get("id") == "tree")
    chunks = tree.find_all(lambda e: e.has_class("chunk"))
    assert (len(chunks) >= 2) is chunked
    assert all(c.parent is tree and c.get("role") == "none" for c in chunks)
    session = load_fixture(name)
    rows = [r for r in _items(tree) if not r.has_class("sub")]
    by_anchor = {anchor_for(session, i): i for i in session.by_id}
    assert [_outline_entry(r, by_anchor) for r in rows][: len(session.active_path)] == (
        session.active_path
    )


def test_a_session_of_many_retries_keeps_a_flat_outline() -> None:
    """300 forks along the active path (an answer retried at every turn) nested the
    outline 300 levels deep: past the sidebar's width after ~25, and past Chromium's
    512-level parser limit, which re-parents the rest. Each retry is now one sub-list."""
    session = parse_session_bytes(retry_session(300), path="t.jsonl")
    tree = parse_html(render_session(session)).one(lambda e: e.get("id") == "tree")
    depth = max(
        sum(a.tag == "ul" and not _is_chunk_list(a) for a in e.ancestors())
        for e in tree.iter()
        if e.tag == "li"
    )
    assert depth == 2  # the tree, and one sub-list per retry (its chunks are no level)
    assert len(tree.find_all(lambda e: e.has_class("sub"))) == 300


def test_branch_blocks_say_what_they_hold_and_which_filters_would_empty_them() -> None:
    """A one-entry branch read "1 entries"; a branch that starts at an answer read "(no
    prompt)"; "User only" and "Labeled" kept blocks that opened to nothing (now classed
    ``no-user`` / ``no-labeled`` for the filters to hide); a turn that only calls tools is
    ``is-tool``, in the transcript and the outline, so "No tools" hides it whole."""
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    result = [{"type": "text", "text": "file.txt"}]
    stamp = "2025-01-01T00:00:00Z"

    def message(entry_id: str, parent: str | None, **body: object) -> str:
        return _line(type="message", id=entry_id, parentId=parent, timestamp=stamp, message=body)

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        message("u1", None, role="user", content="first question"),
        message("a1", "u1", role="assistant", content=[call], stopReason="toolUse"),
        message("r1", "a1", role="toolResult", toolCallId="c1", toolName="bash", content=result),
        message("x1", "u1", role="assistant", content=[{"type": "text", "text": "Retry answer"}]),
        message("x2", "x1", role="user", content="labeled question"),
        _line(type="label", id="l1", parentId="x2", timestamp=stamp, targetId="x2", label="b"),
        message("u2", "r1", role="user", content="second question"),
    ]
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    blocks = {
        anchor: (classes.split(), summary)
        for classes, anchor, summary in re.findall(
            r'<details class="branch ([^"]*)" id="branch-([^"]*)"[^>]*><summary>(.*?)</summary>',
            html,
        )
    }
    classes, summary = blocks["x1"]
    assert "assistant: Retry answer" in summary and "(no prompt)" not in summary
    assert "no-user" not in classes and "no-labeled" not in classes  # x2 and its label
    assert "· 3 entries ·" in summary
    # a label on extension data (which Labeled hides too) leaves the branch empty there
    custom = _line(type="custom", id="x9", parentId="x1", timestamp=stamp, customType="k", data={})
    mark = _line(type="label", id="l9", parentId="x9", timestamp=stamp, targetId="x9", label="z")
    hidden = [lines[i] for i in (0, 1, 4)] + [custom, mark] + [lines[i] for i in (2, 3)]
    blocks = re.findall(r'<details class="([^"]*)" id="branch-x1"[^>]*>', render_session(
        parse_session_bytes("\n".join(hidden).encode("utf-8"))))  # fmt: skip
    assert blocks and "no-labeled" in blocks[0].split()
    short = [lines[i] for i in (0, 1, 4, 2, 3)]  # x1 without its prompt; the leaf is r1
    html = render_session(parse_session_bytes("\n".join(short).encode("utf-8")))
    assert re.search(
        r'class="branch d1 no-labeled no-user" id="branch-x1"[^>]*><summary>.*· 1 entry ·', html
    )
    page = parse_html(html)
    assert page.entry("a1").has_class("is-tool") and not page.entry("x1").has_class("is-tool")
    rows = {
        (next(e for e in li.iter() if e.tag == "a").get("href") or "")[1:]: li
        for li in sidebar(page).find_all(lambda e: e.tag == "li" and not e.has_class("sub"))
    }
    assert rows["a1"].has_class("is-tool") and not rows["x1"].has_class("is-tool")


def test_a_damaged_line_names_its_fault_once() -> None:
    """Python's message for a control character ends in "at", which read "at at column"."""
    text = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z"}\n'
    text += (
        '{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"a\x01"}}\n'
    )
    session = parse_session_bytes(text.encode("utf-8"))
    messages = [d.message for d in session.diagnostics]
    assert any("Invalid control character at column" in m for m in messages), messages
    assert not any(" at at " in m for m in messages)


def test_times_with_a_zone_offset_are_shown_in_utc() -> None:
    """``10:01:00+14:00`` and ``10:01:00-12:00`` (26 hours apart) were both shown as
    "10:01:00 UTC"; the script then read the offset right but titled it "(UTC)"."""
    lines = [
        _line(type="session", version=3, id="s", timestamp="2025-06-01T10:00:00+14:00", cwd="/w"),
        _line(
            type="message",
            id="u1",
            parentId=None,
            timestamp="2025-06-01T10:01:00+14:00",
            message={"role": "user", "content": "early"},
        ),
        _line(
            type="message",
            id="u2",
            parentId="u1",
            timestamp="2025-06-01T10:01:00-12:00",
            message={"role": "user", "content": "late"},
        ),
    ]
    page = parse_html(render_session(parse_session_bytes("\n".join(lines).encode("utf-8"))))
    stamps = {
        t.get("datetime"): t.text
        for t in page.root.find_all(lambda e: e.tag == "time")
        if t.get("datetime")
    }
    assert stamps["2025-05-31T20:01:00Z"] == "2025-05-31 20:01:00 UTC"
    assert stamps["2025-06-01T22:01:00Z"] == "2025-06-01 22:01:00 UTC"
    assert all(stamp.endswith("Z") for stamp in stamps)


def test_forked_from_shortens_the_home_folder_as_the_project_does() -> None:
    """The project read ``~/workspaces/pi-mono`` and, on the same card, "Forked from" the
    full ``/Users/badlogic/...`` path."""
    html = render_fixture("pi-v1-before-compaction.jsonl")
    forked = re.search(r"Forked from</dt><dd><code>([^<]*)", html)
    assert forked and forked.group(1).startswith("~/.pi/agent/sessions/")
    project = re.search(r"Project</dt><dd[^>]*>(?:<[^>]+>)*([^<]*)", html)
    assert project and project.group(1).startswith("~/")


def test_values_of_another_type_are_shown_as_written() -> None:
    """A number where Pi writes text read as no text, so it was on the page nowhere: a user
    message with ``content: 42`` was an empty box, a shell command given as a list showed
    ``$`` alone. Such values are now shown under their entry as JSON; and a ``label`` or
    ``display`` Pi takes as set (any truthy value) is taken so here too."""
    stamp = "2025-06-01T10:00:00Z"

    def entry(kind: str, entry_id: str, parent: str | None, **fields: object) -> str:
        return _line(type=kind, id=entry_id, parentId=parent, timestamp=stamp, **fields)

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        entry("message", "a", None, message={"role": "user", "content": 42}),
        entry("message", "b", "a", message={"role": "user", "content": [None, "loose words"]}),
        entry(
            "message",
            "c",
            "b",
            message={"role": "bashExecution", "command": ["ls", "-la"], "output": 7, "exitCode": 0},
        ),
        entry("compaction", "d", "c", summary=12345, firstKeptEntryId="c", tokensBefore=9),
        entry("custom_message", "e", "d", customType="x", content="shown", display="yes"),
        entry("label", "f", "e", targetId="b", label=5),
        entry("message", "g", "f", message={"role": "user", "content": "plain"}),
        entry("message", "h", "g", message={"role": "assistant", "content": [
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}, "STRAY"]}),
    ]  # fmt: skip
    session = parse_session_bytes("\n".join(lines).encode("utf-8"))
    page = parse_html(render_session(session))
    assert '"content": 42' in norm(page.entry("a").text)
    assert '"content[1]": "loose words"' in norm(page.entry("b").text)
    shell = norm(page.entry("c").text)
    assert '"command": [ "ls", "-la" ]' in shell and '"output": 7' in shell
    assert '"summary": 12345' in norm(page.entry("d").text)
    assert not page.entry("e").has_class("hide-default")
    assert session.labels == {"b": "5"}
    assert "Pi writes" not in page.entry("g").text
    assert "STRAY" in page.entry("h").text and not page.entry("h").has_class("is-tool")


@pytest.mark.parametrize("kind", ["custom_message", "custom role"])
def test_an_extensions_message_keeps_its_text_and_images_in_order(kind: str) -> None:
    """A custom message of [text, image, text] showed its image first and both texts after
    it, run together: "Before:" no longer led to its screenshot."""
    from tests.xss_corpus import PNG

    stamp = "2025-06-01T10:00:00Z"
    blocks = [
        {"type": "text", "text": "Before the change:"},
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "text", "text": "After **the** change."},
    ]
    if kind == "custom_message":
        fields = {"customType": "shots", "content": blocks, "display": True}
        entry = _line(type="custom_message", id="m", parentId="u", timestamp=stamp, **fields)
    else:
        message = {"role": "custom", "customType": "shots", "content": blocks, "display": True}
        entry = _line(type="message", id="m", parentId="u", timestamp=stamp, message=message)
    user = {"role": "user", "content": "go"}
    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        _line(type="message", id="u", parentId=None, timestamp=stamp, message=user),
        entry,
    ]
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    start = html.index('data-entry-id="m"')
    article = html[start : html.index("</article>", start)]
    before, image, after = (article.find(s) for s in ("Before the change:", "<img", "<strong>"))
    assert -1 < before < image < after, article
    assert article.count("<img") == 1 and article.count("Before the change:") == 1


def test_an_empty_prompt_is_not_called_an_image() -> None:
    """A user message with no text and no image read "user: (image)" in the outline, and its
    card was a bare header."""
    from tests.xss_corpus import PNG

    stamp = "2025-06-01T10:00:00Z"
    image = [{"type": "image", "mimeType": "image/png", "data": PNG}]

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        _user("u1", None, ""),
        _user("u2", "u1", image),
        _user("u3", "u2", "   "),
    ]
    page = parse_html(render_session(parse_session_bytes("\n".join(lines).encode("utf-8"))))
    tree = page.one(lambda e: e.get("id") == "tree")
    rows = [norm(a.text) for a in tree.find_all(lambda e: e.tag == "a")]
    assert rows == ["user: (empty message)", "user: (image)", "user: (empty message)"]
    assert "(empty message)" in norm(page.entry("u1").text)
    assert "(empty message)" in norm(page.entry("u3").text)
    assert "(empty message)" not in norm(page.entry("u2").text)


def test_small_wordings_of_tool_boxes() -> None:
    """A one-line write said "1 lines"; a bash call without a command showed a bare "$";
    a fork at a result shown inside its call's turn said "below", though its block comes
    after the turn."""
    stamp = "2025-06-01T10:00:00Z"
    write = {"path": "a.txt", "content": "x"}
    calls = [
        {"type": "toolCall", "id": "w", "name": "write", "arguments": write},
        {"type": "toolCall", "id": "b", "name": "bash", "arguments": {}},
    ]

    def entry(entry_id: str, parent: str | None, message: dict[str, object]) -> str:
        return _line(type="message", id=entry_id, parentId=parent, timestamp=stamp, message=message)

    def result(call_id: str, name: str) -> dict[str, object]:
        content = [{"type": "text", "text": "done"}]
        return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content}

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp, cwd="/w"),
        entry("u", None, {"role": "user", "content": "go"}),
        entry("a", "u", {"role": "assistant", "content": calls}),
        entry("r1", "a", result("w", "write")),
        entry("x", "r1", {"role": "user", "content": "another way"}),
        entry("r2", "r1", result("b", "bash")),
    ]
    page = parse_html(render_session(parse_session_bytes("\n".join(lines).encode("utf-8"))))
    turn = norm(page.entry("a").text)
    assert "1 line " in turn and "1 lines" not in turn
    assert "no command given" in turn
    assert "forks here: 1 other branch after this turn" in turn


def _prose(count: int, word: str = "word") -> str:
    return "\n".join(f"{word} {n} of the prose." for n in range(count))


FOLD_CASES = {  # long prompts where cutting the source would change how it renders
    "inline ``` line, then a fence": "```npm test```\n" + _prose(39) + "\n```\n"
    + _prose(10, "code") + "\n\n" + _prose(5, "more") + "\n```\n\n" + _prose(150, "tail"),
    "a fence in a list item": "Intro.\n" + _prose(36) + "\n1.  Run this:\n    ```\n    step 1"
    "\n\n    step 2\n    ```\n\n" + _prose(150, "tail"),
    "a nested list after a blank line": "Intro.\n" + _prose(38) + "\n- top item\n\n"
    "    - nested item A\n    - nested item B\n\n" + _prose(150, "tail"),
    "a link defined at the end": "See [the docs][1].\n" + _prose(40) + "\n\n" + _prose(150, "tail")
    + "\n\n[1]: https://example.com/docs\n",
    "a log of one paragraph": "Here is the log:\n" + _prose(300, "log"),
    "emphasis over the cut": _prose(38) + "\n*emphasis\nfrom line 39\nto 41*\n" + _prose(200),
    "a fenced log": "Here is the log:\n\n```text\n" + _prose(300, "log") + "\n```\nThanks.",
    "a fence open at the cut": "Intro.\n\n" + _prose(30) + "\n\n```text\n"
    + "\n\n".join(f"fenced {n}" for n in range(30)) + "\n```\n\n"
    + "\n\n".join(f"entry {n}: something happened" for n in range(250)),
    "a numbered list of files": "Changed:\n\n"
    + "\n".join(f"{n + 7}. `src/file_{n}.py` [diff](https://e.com/{n})" for n in range(300)),
    "a loose list with nested items": "Plan:\n\n" + "\n\n".join(
        f"- step *{n}*\n  - detail {n}a\n  - detail {n}b" for n in range(120)) + "\n\nDone.",
    "a table of rows": "| file | lines |\n|:--|--:|\n"
    + "\n".join(f"| f{n}.py | {n} |" for n in range(300)) + "\n\nThat is all.",
}  # fmt: skip


@pytest.mark.parametrize("case", FOLD_CASES)
def test_a_long_pasted_prompt_folds_without_changing_how_it_renders(case: str) -> None:
    """A prompt with a 500-line paste was a card many screens tall. It now shows its first
    screen and folds the rest, all of it in the page. A first version cut the source at a
    blank line outside what it took for a fence: an inline ```x``` line, a fence inside a
    list item, a nested list or a link defined further down then rendered differently (a
    code block swallowing the rest, a lost link). The prompt is now parsed once and its
    blocks are split, so both parts read as the whole does."""
    from exporter.render.markup import markdown
    from exporter.render.prose_fold import fold_prose

    text = FOLD_CASES[case]
    shown, folded, summary = fold_prose(text)
    assert folded is not None and summary.endswith("more lines of this message"), case
    assert int(summary.split()[0].replace(",", "")) >= 20
    whole = str(markdown(text))
    assert ("<thead>" in str(folded)) == (case == "a table of rows")
    if "<thead>" in str(folded):  # a table cut in two names its columns again
        header = re.findall(r"<thead>.*?</thead>", whole, re.S)
        assert re.findall(r"<thead>.*?</thead>", str(folded), re.S) == header
        folded = str(folded).replace(header[0], "", 1)
    parts = str(shown) + str(folded)

    def words(html: str) -> list[str]:
        return html_module.unescape(re.sub(r"<[^>]+>", " ", html)).split()

    assert words(parts) == words(whole)
    for tag in ("<li", "<a ", "<em>", "<tr", "<td"):
        assert parts.count(tag) == whole.count(tag), tag

    def inline_code(html: str) -> int:  # a code block cut in two is two <pre><code>
        return html.count("<code") - len(re.findall(r"<pre[^>]*><code", html))

    assert inline_code(parts) == inline_code(whole)
    # at most one block (a paragraph, code block, list or table) is cut in two
    cut_in_two = [
        parts.count(tag) - whole.count(tag) for tag in ("<p>", "<pre", "<ul", "<ol", "<table")
    ]
    assert sorted(cut_in_two)[:-1] == [0] * 4 and cut_in_two.count(1) <= 1, cut_in_two
    if case == "a numbered list of files":  # its second part goes on counting
        count_before = str(shown).count("<li")
        assert re.findall(r'<ol(?: start="(\d+)")?>', str(folded)) == [str(7 + count_before)]
    assert len(shown) < len(whole) / 2


def test_a_long_prompt_folds_in_its_card() -> None:
    """The card shows the first part and a fold saying how many lines it holds."""
    text = FOLD_CASES["a fence open at the cut"]
    lines = [
        _line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
        _line(type="message", id="u", parentId=None, timestamp="2025-01-01T00:00:01Z",
              message={"role": "user", "content": text}),
    ]  # fmt: skip
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    start = html.index('data-entry-id="u"')
    card = html[start : html.index("</article>", start)]
    shown, folded = card.split('<details class="fold fold-after prose"><summary>', 1)
    assert "fenced 0" in shown and "entry 249: something happened" in folded
    hidden = len(text.split("\n")) - 40
    assert folded.startswith(f"{hidden:,} more lines of this message</summary>")


def test_a_prompt_of_one_screen_does_not_fold() -> None:
    from exporter.render.prose_fold import fold_prose

    assert fold_prose("\n\n".join(f"line {n}" for n in range(70)))[1] is None  # 139 lines
    assert fold_prose("```\n" + "x" * 100_000 + "\n```")[1] is None  # a one-line code block
    quote = "\n".join(f"> {line}" for line in _prose(140).split("\n"))  # never cut inside
    short_tail = quote + "\n\n" + _prose(12)  # 153 lines, only 12 of them after the quote
    assert fold_prose(short_tail)[1] is None
    assert fold_prose(quote + "\n\n" + _prose(30))[1] is not None


ONE_LINE_CASES = {
    "pasted JSON": "Here is the config: "
    + json.dumps({f"key{n}": ["value", n, {"deep": "x" * (n % 7)}] for n in range(1_500)}),
    "a few very long lines": "\n".join(
        " ".join(f"w{line}x{n}" for n in range(2_500)) for line in range(3)
    ),
    "emphasis across the mark": "Start. "
    + "*"
    + "emphasised words " * 400
    + "end*"
    + " plain" * 3_000,
    "a word with no spaces": "x" * 100_000,
}


@pytest.mark.parametrize("case", ONE_LINE_CASES)
def test_a_prompt_of_a_few_very_long_lines_folds_inside_a_line(case: str) -> None:
    """A prompt of one 60,000-character line (pasted minified JSON) had no line to cut
    at, so it was never folded: a wall of text many screens tall. It is now cut about a
    screen in, at a space where it can be and never inside emphasis or a link."""
    from exporter.render.markup import markdown
    from exporter.render.prose_fold import fold_prose

    text = ONE_LINE_CASES[case]
    shown, folded, summary = fold_prose(text)
    assert folded is not None and summary.endswith("more characters of this message"), case
    whole, parts = str(markdown(text)), str(shown) + str(folded)

    def words(html: str) -> list[str]:
        return html_module.unescape(re.sub(r"<[^>]+>", " ", html)).split()

    if case == "a word with no spaces":  # cut where it must be
        assert "".join(words(parts)) == "".join(words(whole))
    else:
        assert words(parts) == words(whole)
    hidden = html_module.unescape(re.sub(r"<[^>]+>", "", str(folded))).strip()
    assert int(summary.split()[0].replace(",", "")) == len(hidden)
    assert 2_000 < len(html_module.unescape(re.sub(r"<[^>]+>", "", str(shown)))) < 8_000
    for tag in ("<em>", "<a ", "<code"):
        assert parts.count(tag) == whole.count(tag), tag


def test_a_separate_tree_says_why_it_is_one() -> None:
    """Every other root's block said "no parent in this file", also for an entry made a
    root to cut a parentId loop, whose parent is in the file."""
    stamp = "2025-01-01T00:00:0{}Z"

    def user(entry_id: str, parent: str | None, second: int) -> str:
        return _user(entry_id, parent, f"prompt {entry_id}", stamp.format(second))

    lines = [
        _line(type="session", version=3, id="s", timestamp=stamp.format(0), cwd="/w"),
        user("loop1", "loop2", 1),
        user("loop2", "loop1", 2),
        user("orphan", "gone", 3),
        user("second", None, 4),
        user("main", None, 5),
    ]
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    said = {
        first: norm(html_module.unescape(re.sub(r"<[^>]+>", "", summary)))
        for first, summary in re.findall(
            r'id="branch-([^"]+)"[^>]*><summary>(.*?)</summary>', html, re.S
        )
    }
    assert set(said) == {"loop1", "orphan", "second"}, said
    assert said["loop1"].startswith("Separate tree prompt loop1 · its parentId loop was cut here ·")
    assert "· its parent is not in this file ·" in said["orphan"]
    assert "· a second root in this file ·" in said["second"]
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    forks_at = re.findall(r"<tr[^>]*><td>.*?</td><td>(.*?)</td>", table)
    assert forks_at == ["root", "separate tree", "separate tree", "separate tree"]


def test_forks_at_says_what_the_fork_is() -> None:
    """The table's "Forks at" showed a bare id (visual review 2026-12-01): its link now
    says what is there, and its id and more of its text on hover."""
    from exporter.render import display_path
    from exporter.render.view import PageBuilder

    session = load_fixture("pi-branched-2.jsonl")
    html = render_fixture("pi-branched-2.jsonl")
    builder = PageBuilder(session, display_path)
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    links = re.findall(r'<td><a href="#([^"]+)" title="([^"]*)">([^<]+)</a></td>', table)
    assert len(links) == len(session.leaf_ids) - 1
    ids = {builder.anchor(entry.id): entry.id for entry in session.entries}
    for anchor, title, text in links:
        fork = ids[anchor]
        row = builder.row_text(fork)
        assert html_module.unescape(title) == f"entry {fork}: {one_line(row, 80)}"
        assert html_module.unescape(text) == one_line(row, 40) != fork


def test_an_inner_leaf_ends_the_transcript_and_what_follows_it_branches() -> None:
    """``--leaf`` on an entry with children (as Pi's /tree allows) showed the entries after
    it in the main transcript, as if on the active path, and stats marked as active a
    branch that ran past the leaf. The transcript now ends at the leaf; its children start
    branches, in the page, the outline and the table alike."""
    from exporter.usage import compute_stats

    session = load_fixture("pi-branched-1.jsonl")
    inner = [i for i in session.active_path if i in session.children][1:-1:25] + session.fork_ids
    assert len(inner) >= 4
    for leaf in inner:
        session = load_fresh("pi-branched-1.jsonl")  # the shared copy is read-only
        session.set_leaf(leaf)
        page = parse_html(render_session(session))
        main = [e.id for e in session.entries if branch_depth(page.entry(e.id)) == 0]
        assert main == session.active_path, leaf
        assert sorted(page.by_entry) == sorted(e.id for e in session.entries)
        rows = page.one(lambda e: e.get("id") == "tree").find_all(
            lambda e: e.tag == "li" and not e.has_class("sub")
        )
        assert len(rows) == len(session.entries)
        branches = compute_stats(session).branches
        assert [b.branch.leaf_id for b in branches if b.branch.is_active] == [leaf]
        assert len(page.branches()) == len(branches) - 1


def test_a_code_block_cut_by_the_fold_keeps_its_colours() -> None:
    """Each half of a code block cut by the fold was highlighted apart: a docstring open at
    the cut turned the rest of a pasted Python file into string colour. The block is now
    highlighted whole and its lines shared out."""
    from exporter.render.markup import markdown
    from exporter.render.prose_fold import fold_prose

    docstring = [f"    line {n} of the docstring" for n in range(50)]
    code = ["def f():", '    """Starts here', *docstring, '    """']
    code += [f"    y{n} = 'str {n}'" for n in range(150)]
    text = "Here is my file:\n\n```python\n" + "\n".join(code) + "\n```"
    shown, folded, _ = fold_prose(text)
    assert folded is not None

    def code_html(html: str) -> str:
        return "\n".join(re.findall(r"<pre><code>(.*?)</code></pre>", html, re.S))

    assert code_html(str(shown) + str(folded)) == code_html(str(markdown(text)))
    assert str(folded).count('class="code-lang"') == 0  # the language is named once


def test_a_table_of_many_branches_starts_folded() -> None:
    """2,000 retries made the table of branches 58,000 px tall above the transcript, whose
    blocks fold past a few branches. Past 20 rows the table starts folded, all rows in it."""
    from exporter.render import BRANCH_TABLE_OPEN_MAX

    few = render_fixture("pi-branched-2.jsonl")
    assert 'class="branch-table"' not in few and '<table class="branches">' in few
    session = parse_session_bytes(retry_session(BRANCH_TABLE_OPEN_MAX + 5), path="t.jsonl")
    page = parse_html(render_session(session))
    fold = page.one(lambda e: e.tag == "details" and e.has_class("branch-table"))
    assert fold.get("open") is None
    assert norm(fold.children[0].text).startswith(f"Branches: {len(session.leaf_ids):,}, a row")
    (table,) = fold.find_all(lambda e: e.tag == "table" and e.has_class("branches"))
    rows = table.find_all(lambda e: e.tag == "tr")
    assert len(rows) == len(session.leaf_ids) + 1  # and its header row


def _heredoc(lines: int) -> str:
    body = "\n".join(f"line_{n:03d} = {n}  # 漢字 <b>" for n in range(lines))
    return f"cat > app.py <<'EOF'\n{body}\nEOF\npython app.py"


def _bash_call_page(command: str) -> Page:
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": command}}
    return parse_html(_render_records(_prompt_and_reply([call])))


def _command_parts(page: Page) -> tuple[str, Element | None]:
    """The command shown in the tool's head (without "$ ") and its fold, if any."""
    heads = page.all(
        lambda e: e.has_class("cmd") and any(a.has_class("tool-head") for a in e.ancestors())
    )
    assert len(heads) == 1
    folds = page.all(lambda e: e.tag == "details" and e.has_class("cmd-rest"))
    assert len(folds) <= 1
    return heads[0].text.removeprefix("$ "), folds[0] if folds else None


def _summary_and_text(fold: Element) -> tuple[str, str]:
    summary = fold.find_all(lambda e: e.tag == "summary")[0].text
    return summary, fold.find_all(lambda e: e.tag == "pre")[0].text


@pytest.mark.parametrize("kind", ["tool call", "shell (!)"])
def test_a_long_command_folds_under_its_head_and_keeps_every_line(kind: str) -> None:
    """A heredoc writing a whole file made a call's head hundreds of lines tall, above
    its output. The head now shows the first lines and the rest folds right under it,
    every line kept; a short command is shown as before, in the head."""
    command = _heredoc(200)
    if kind == "tool call":
        page = _bash_call_page(command)
    else:
        records = [
            *_prompt_and_reply("ok")[:2],
            {"type": "message", "id": "b", "parentId": "u", "timestamp": "2025-01-01T00:00:03Z",
             "message": {"role": "bashExecution", "command": command, "output": "done\n",
                         "exitCode": 0, "cancelled": False, "truncated": False}},
        ]  # fmt: skip
        page = parse_html(_render_records(records))
    head, fold = _command_parts(page)
    assert "line_000 = 0  # 漢字 <b>" in head and "line_010" in head and "line_020" not in head
    assert fold is not None
    summary, hidden = _summary_and_text(fold)
    assert summary.endswith("more lines of this command")
    assert int(summary.split()[0]) == hidden.count("\n") + 1
    assert head + "\n" + hidden == command
    assert "<b>" not in page.html  # escaped, never markup

    head, fold = _command_parts(_bash_call_page(_heredoc(10)))
    assert fold is None and head == _heredoc(10)


def test_a_one_line_command_of_thousands_of_characters_folds_inside_itself() -> None:
    command = "python -c " + repr(";".join(f"x{n}={n}" for n in range(2_000)))
    head, fold = _command_parts(_bash_call_page(command))
    assert fold is not None and len(head) < 4_000
    summary, hidden = _summary_and_text(fold)
    assert summary.endswith("more characters of this command")
    assert head + hidden == command


@every_fixture
def test_a_messages_biggest_heading_is_the_level_under_its_entry(name: str) -> None:
    """A message's "##" became <h5> right under the entry's <h3> (pi-v1 skipped from 3 to 5
    five times, pi-large-session six): heading navigation lost a level. Each message's
    biggest heading is now <h4>, and the others keep their distance below it."""
    page = parse_fixture(name)
    levels = {f"h{n}": n for n in range(1, 7)}
    checked = 0
    for block in page.all(lambda e: e.tag == "div" and e.has_class("md")):
        found = [levels[e.tag] for e in block.iter() if e.tag in levels]
        if found:
            checked += 1
            assert min(found) == 4, (block, found)
    assert checked or name not in ("pi-v1-before-compaction.jsonl", "pi-large-session.jsonl")


def test_headings_keep_their_distance_below_the_biggest() -> None:
    from exporter.render.markup import markdown

    assert re.findall(r"<(h\d)>", str(markdown("## a\n### b\n## c\n#### d"))) == [
        "h4", "h5", "h4", "h6"
    ]  # fmt: skip
    assert re.findall(r"<(h\d)[ >]", str(markdown("# a\n###### b"))) == ["h4", "h6"]


def test_headings_past_the_sixth_level_look_unlike_the_sixth() -> None:
    """A message's ### and #### both became h6 and looked the same (visual review
    2026-12-01): the deeper ones are marked and drawn lighter."""
    from exporter.render.markup import markdown

    html = str(markdown("# a\n## b\n### c\n#### d\n##### e"))
    assert re.findall(r"<h\d[^>]*>", html) == [
        "<h4>", "<h5>", "<h6>", '<h6 class="deeper">', '<h6 class="deeper">'
    ]  # fmt: skip


@every_fixture
def test_branch_blocks_are_named_for_screen_readers(name: str) -> None:
    """A folded branch was an unnamed group: heading navigation could not tell its
    "Assistant" entries from the active path's. Each block is now named for what it is."""
    page = parse_fixture(name)
    blocks = page.all(lambda e: e.tag == "details" and e.has_class("branch"))
    for block in blocks:
        tag = block.find_all(lambda e: e.has_class("branch-tag"))[0].text
        assert block.get("aria-label") == {"Branch": "Other branch"}.get(tag, tag), block
    assert blocks or name not in BRANCHED


@pytest.mark.parametrize("name", ["pi-branched-1.jsonl", "every-entry-type.jsonl"])
def test_scrolling_header_tables_are_named_regions(name: str) -> None:
    """Chromium makes a box that scrolls sideways a Tab stop, and named it by its whole
    content ("This path (root → current leaf) ModelTurns…"). Each table's box is now a
    region with a short name."""
    page = parse_fixture(name)
    boxes = page.all(lambda e: e.tag == "div" and e.has_class("tablewrap"))
    assert len(boxes) >= 3
    for box in boxes:
        assert box.get("role") == "region" and box.get("aria-label"), box
        assert len(box.get("aria-label") or "") < 60


def test_a_huge_first_line_before_short_ones_folds_inside_itself() -> None:
    """59,000 characters of pasted JSON then 25 short lines: the cut between lines came
    after the JSON, so it all showed (89 KB of page) and only the short lines folded."""
    from exporter.render.prose_fold import fold_prose

    text = json.dumps({f"k{n}": "v " * 5 for n in range(5_000)}) + "\n"
    text += "\n".join(f"line {n}" for n in range(25))
    shown, folded, summary = fold_prose(text)
    assert folded is not None and summary.endswith("more characters of this message")
    assert len(shown) < 10_000 and "line 24" in str(folded)


def test_a_cut_near_the_start_of_a_text_lands_on_a_space() -> None:
    """Within 200 characters of the start, the search for a space began at a negative
    index, which Python counts from the end: words were cut in two ("supercalifragil")."""
    from exporter.render.folding import cut_point

    assert cut_point("abcdefgh ijklmnop " * 20, 150, False) == (144, False)
    assert cut_point("word " * 10, 3, False) == (3, False)  # no space before: cut as asked


def test_headings_are_shifted_once_however_often_a_prompt_is_rendered() -> None:
    """A fold built and then not used rendered the same tokens again, and the heading
    level was shifted twice (a "## Tail" became <h6>)."""
    from exporter.render.markup import markdown
    from exporter.render.prose_fold import fold_prose

    text = "# Title\n\n" + "word " * 1_000 + "[x](https://e.test/" + "a" * 12_000 + ")\n\n## Tail"
    shown, folded, _ = fold_prose(text)
    headings = re.findall(r"<(h\d)>", str(shown) + str(folded or ""))
    assert headings == re.findall(r"<(h\d)>", str(markdown(text))) == ["h4", "h5"]


def test_a_fold_that_starts_with_a_blank_line_keeps_it() -> None:
    """An HTML parser drops a line break right after <pre>: a fold whose hidden part
    began with a blank line showed one line fewer than its summary said."""
    from markupsafe import Markup

    from exporter.render.environment import pre_text

    assert pre_text(Markup("\nx")) == "\n\nx" and pre_text(Markup("x\n")) == "x\n"
    command = (
        "\n".join(f"echo {n}" for n in range(12))
        + "\n\n"
        + "\n".join(f"echo more {n}" for n in range(12))
    )
    page_html = _render_records(
        _prompt_and_reply(
            [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": command}}]
        )
    )
    assert '<pre class="cmd">\n\necho more 0' in page_html


def test_empty_text_blocks_are_not_an_answer() -> None:
    """A turn whose text block is empty said nothing, as a blank string does not."""
    from exporter.usage import _said_something

    assert not _said_something([{"type": "text", "text": ""}])
    assert not _said_something([{"type": "thinking", "thinking": " "}]) and not _said_something(
        "  "
    )
    assert _said_something([{"type": "toolCall", "name": "x"}])
    assert _said_something([{"type": "text", "text": "ok"}])


def test_labels_on_entries_the_file_lacks_still_leave_the_labeled_note() -> None:
    """The "no labels" note counted labels whose entry is not in the file, so Labeled
    again showed a blank transcript."""
    records = [
        *_prompt_and_reply("ok"),
        {"type": "label", "id": "l1", "parentId": "a", "timestamp": "2025-01-01T00:00:03Z",
         "targetId": "not-here", "label": "lost"},
    ]  # fmt: skip
    assert 'class="no-labels note"' in _render_records(records)
    records[-1]["targetId"] = "u"
    assert 'class="no-labels note"' not in _render_records(records)


@pytest.mark.parametrize("name", BRANCHED)
def test_the_label_list_says_which_labels_point_into_other_branches(name: str) -> None:
    """The header's label list linked entries in folded branches (on paper, not printed
    at all) as if they were on the path; each such label now says it is elsewhere."""
    session = load_fixture(name)
    page = parse_fixture(name)
    nav = page.one(lambda e: e.tag == "nav" and e.has_class("bookmarks"))
    on_path = set(session.active_path)
    for item in nav.find_all(lambda e: e.tag == "li"):
        link = item.find_all(lambda e: e.tag == "a")[0]
        target = page.by_dom_id[link.get("href")[1:]][0].get("data-entry-id")
        assert ("· in another branch" in item.text) == (target not in on_path), item.text


def test_subtree_spans_tell_ancestors_as_paths_do() -> None:
    """``Session.subtree_spans``: a's span holds b's place exactly when a is on b's path."""
    session = load_fixture("pi-branched-2.jsonl")
    spans = session.subtree_spans()
    assert len(spans) == len(session.entries)
    for b in session.entries[::7]:
        path = set(session.path_to(b.id))
        for a in session.entries:
            start, end = spans[a.id]
            assert (start <= spans[b.id][0] <= end) == (a.id in path), (a.id, b.id)


@every_fixture
def test_the_header_shows_when_the_session_file_was_made(name: str) -> None:
    """Pi's page dates a session by its header; ours showed only the first entry's time. A
    fork copies older entries, so the moment of the fork (pi-v1: 00:53:29) was nowhere."""
    from exporter.session import parse_time

    session = load_fixture(name)
    page = parse_fixture(name)
    facts = page.one(lambda e: e.tag == "dl" and e.has_class("facts"))
    stamps = [
        t.get("datetime")
        for row in facts.find_all(lambda e: e.tag == "div")
        if row.find_all(lambda e: e.tag == "dt")[0].text in ("Forked from", "File created")
        for t in row.iter()
        if t.tag == "time"
    ]
    created = parse_time(session.header.timestamp)
    started = compute_stats(session).started
    apart = bool(created and started and abs((created - started).total_seconds()) >= 1)
    assert stamps == ([created.strftime("%Y-%m-%dT%H:%M:%SZ")] if apart else []), stamps
    if name == "pi-v1-before-compaction.jsonl":
        assert stamps == ["2025-12-09T00:53:29Z"] and "Forked from" in facts.text


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ({"offset": 20, "limit": 40}, ":20-59"),
        ({"offset": 20}, ":20-"),
        ({"offset": 3, "limit": -10}, ":3-"),
        ({"offset": 1e300, "limit": 5}, ":1-5"),
        ({"offset": 1e300}, ""),
    ],
)
def test_a_reads_line_range_is_the_same_in_its_head_and_its_outline_row(
    args: dict, shown: str
) -> None:
    """The tool head computed its own range: ":3--8" for a negative limit and a 50-digit
    line for offset 1e300, while the outline row said ":3" and ":1-5"."""
    from exporter.render.tools import build_tool_view

    view = build_tool_view({"name": "read", "arguments": {"path": "a.py", **args}}, None)
    assert view.subtitle == shown
    entries = [
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "read it"}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c1", "name": "read",
              "arguments": {"path": "a.py", **args}}]}},
    ]  # fmt: skip
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    data = "".join(json.dumps(r) + "\n" for r in (header, *entries)).encode()
    page = render_session(parse_session_bytes(data))
    assert f"[read: a.py{shown}]" in page


def test_a_compactions_odd_file_entries_show_as_json_not_python() -> None:
    """``details.modifiedFiles`` holding an object showed ``{'a': 'b'}`` (Python's repr)."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z"}
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
            "message": {"role": "user", "content": "hi"}}  # fmt: skip
    compaction = {"type": "compaction", "id": "c1", "parentId": "u1",
                  "timestamp": "2025-01-01T00:00:02Z", "summary": "done", "tokensBefore": 10,
                  "firstKeptEntryId": "u1",
                  "details": {"modifiedFiles": ["src/a.py", {"path": "b.py"}, 7, None]},
                  }  # fmt: skip
    data = "".join(json.dumps(r) + "\n" for r in (header, user, compaction)).encode()
    page = render_session(parse_session_bytes(data))
    assert "Files modified: src/a.py, {&#34;path&#34;: &#34;b.py&#34;}, 7, null" in page
    assert "&#39;path&#39;" not in page and "None" not in page


def test_home_folders_read_as_the_sessions_author_would_write_them() -> None:
    """Every /home/<x> or /Users/<x> became "~": Bob's files in Alice's session read as if
    they were hers. "~" is now the home the session ran in; another user's is "~name"."""
    from exporter.render import display_path, session_paths

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00Z",
              "cwd": "/home/alice/proj"}  # fmt: skip
    session = parse_session_bytes((json.dumps(header) + "\n").encode())
    show = session_paths(session)
    assert show("/home/alice/proj/a.py") == "~/proj/a.py"
    assert show("/home/alice") == "~"
    assert show("/home/bob/notes.md") == "~bob/notes.md"
    assert show("/Users/alice/x") == "~alice/x"  # another machine's home is not this one
    assert show("/home/alicex/y") == "~alicex/y" and show("/srv/data") == "/srv/data"
    assert display_path("/home/carol/site") == "~/site"  # a project folder: its own home
    elsewhere = parse_session_bytes(b'{"type":"session","version":3,"id":"t","cwd":"/work/p"}\n')
    assert session_paths(elsewhere)("/home/dave/z") == "~dave/z"


def test_a_long_path_in_an_outline_row_keeps_its_file_name() -> None:
    """Rows cut a path at its end, so every edit under one deep folder read the same:
    ``[edit: ~/workspaces/pi-mono/packages/coding-agen…]``."""
    from exporter.formatting import short_path
    from exporter.render.entry_lines import _short_tool

    deep = "/home/dev/workspaces/pi-mono/packages/coding-agent/docs/refactor.md"
    show = lambda p: p.replace("/home/dev", "~")  # noqa: E731
    row = _short_tool({"name": "edit", "arguments": {"path": deep}}, show)
    assert row == "[edit: ~/workspaces/…/coding-agent/docs/refactor.md]"
    assert short_path("/srv/app.py") == "/srv/app.py"
    long_name = "~/ws/pi-mono/packages/coding-agent/docs/very-long-document-name-for-refactor.md"
    assert short_path(long_name) == "~/…/docs/very-long-document-name-for-refactor.md"
    assert len(short_path("x" * 300)) == 50 and short_path(None) == ""
    custom = _short_tool({"name": "view_file", "arguments": {"path": deep}}, show)
    assert custom.endswith("/docs/refactor.md]") and len(custom) <= len("[view_file: ]") + 50


def test_a_branch_that_starts_at_another_answer_still_names_its_first_prompt() -> None:
    """every-entry-type's branch at e01 starts with a regenerated answer: the "First prompt"
    column and its block said only "assistant: I'll inspect things." although the branch's
    first prompt is e20's. The column then began with the answer, under its "First prompt"
    heading (review 2026-12-02): it gives the prompt, then what the branch starts with."""
    session = load_fixture("every-entry-type.jsonl")
    html = render_fixture("every-entry-type.jsonl")
    wanted = "assistant: I'll inspect things. · first prompt: skill: pdf · please convert the file"
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    cells = [
        norm(html_module.unescape(re.sub(r"<[^>]+>", "", "<td" + c)))
        for c in table.split("<td")[1:]
    ]
    cell = "skill: pdf · please convert the file (starts with assistant: I'll inspect things.)"
    assert cell in cells, cells
    assert "first prompt:" not in table
    summaries = [norm(b.text) for b in parse_html(html).branches()]
    assert any(wanted in s for s in summaries), summaries
    assert session.first_prompt(session.active_path)  # the main line starts at a prompt


def test_a_branch_that_opens_with_a_command_shows_it_as_written() -> None:
    """A branch without a prompt is named by what it opens with; that went through the
    prompt formatter, which dropped a command's ``**`` and backticks as Markdown (code
    review 2026-12-02)."""
    command = "echo **bold** and `tick` *x*"
    lines = [
        {"type": "session", "version": 3, "id": "t", "timestamp": "2025-06-01T10:00:00Z"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:01:00Z",
         "message": {"role": "user", "content": "start"}},
        {"type": "message", "id": "b1", "parentId": "u1", "timestamp": "2025-06-01T10:02:00Z",
         "message": {"role": "bashExecution", "command": command, "output": "", "exitCode": 0}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2025-06-01T10:03:00Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}},
    ]  # fmt: skip
    html = render_session(parse_session_bytes("\n".join(map(json.dumps, lines)).encode()))
    table = html_module.unescape(html.split('<table class="branches">', 1)[1].split("</table>")[0])
    assert command in table, table
    summaries = [norm(b.text) for b in parse_html(html).branches()]
    assert any(command in s for s in summaries), summaries


@pytest.mark.parametrize(
    ("value", "label"),
    [(0, "$0"), (1e-7, "$1e-07"), (0.0025, "0.25¢"), (0.125, "12.5¢"), (1, "$1"), (1.25, "$1.25"),
     (12.5, "$12.5"), (25, "$25"), (500, "$500"), (1000, "$1k"), (1250, "$1.25k"),
     (125_000, "$125k"), (2_500_000, "$2.5M"), (5e11, "$500B"), (1e12, "$1e+12")],
)  # fmt: skip
def test_cost_axis_labels_are_short(value: float, label: str) -> None:
    """The chart's right margin holds "$50", not "$50.00", and "0.25¢", not "$0.0025" (on
    a phone the labels grow as the chart shrinks to fit); an absurd (damaged) total keeps
    the tables' short form."""
    from exporter.render.chart import axis_cost

    assert axis_cost(value) == label


@pytest.mark.parametrize(
    ("total", "labels"),
    [(0.0004, ["0.025¢", "0.05¢"]), (0.0024, ["0.25¢", "0.5¢"]), (0.3, ["25¢", "50¢"]),
     (2.4, ["$2.5", "$5"]), (7, ["$5", "$10"]), (2400, ["$2.5k", "$5k"]), (1.5, ["$1", "$2"]),
     (0, ["50¢", "$1"])],
)  # fmt: skip
def test_cost_axis_ticks_are_even_and_have_two_digits_at_most(
    total: float, labels: list[str]
) -> None:
    """The top is never 2.5 (times a power of ten): its middle, 1.25, did not fit the
    margin on a phone ("$1.25k"), and labelling 1 there instead gave uneven steps off the
    gridlines ($0, $1, $2.5; visual review 2026-12-04)."""
    from exporter.render.chart import axis_cost, cost_ceiling, cost_ticks_at

    ticks = cost_ticks_at(cost_ceiling(total))
    assert [axis_cost(v) for v in ticks] == labels
    assert ticks[0] * 2 == ticks[1] and ticks[1] >= total


def test_a_folded_file_s_first_lines_are_coloured_as_in_the_whole_file() -> None:
    """Only the shown lines were lexed: a doc comment that goes on past the fold was never
    closed, its opening became an error token and the words inside it showed as keywords
    (visual review 2026-12-01)."""
    from exporter.render.tools import build_tool_view

    comment = ["/**", *[f" * for each class we return with {i}" for i in range(30)], " */"]
    code = [f"export function f{i}(): number {{ return {i}; }}" for i in range(60)]
    args = {"path": "src/big.ts", "content": "\n".join(comment + code) + "\n"}
    view = build_tool_view({"id": "c", "name": "write", "arguments": args}, None)
    assert view.body is not None and view.body.hidden is not None
    shown = str(view.body.visible).split("\n")
    assert len(shown) >= 5
    assert all(line.startswith("<span class=cm>") for line in shown), shown
    assert "class=err" not in str(view.body.visible)
    assert "class=k" not in str(view.body.visible)  # no keyword inside the comment


_FILE_ROW = re.compile(
    r'<tr><th scope="row"><code>(?P<path>(?:[^<]|<wbr>)*)</code></th><td>(?P<reads>[\d,]+)'
    r"(?P<reads_left_out> <span[^>]*>[^<]*</span>)?</td>"
    r"<td>(?P<writes>[\d,]+)(?P<writes_left_out> <span[^>]*>[^<]*</span>)?</td>"
    r"<td>(?P<edits>[\d,]+)(?P<edits_left_out> <span[^>]*>[^<]*</span>)?"
    r"</td><td>(?P<lines>[^<]*)(?P<unknown><span[^>]*>[^<]*</span>)?</td><td>(?P<links>.*?)</td></tr>"
)
_TOOL_BOX = re.compile(
    r'<div data-entry-id="[^"]*" id="(?P<id>[^"]*)" class="tool tool-(?P<kind>edit|write)[^"]*">'
    r'\s*<div class="tool-head"><h4>.*?<code class="path">(?P<path>[^<]*)</code>'
    r'(?: <span class="sub">(?P<sub>[^<]*)</span>)?'
)


@pytest.mark.parametrize("name", [*BRANCHED, *V1_FIXTURES])
def test_the_files_table_agrees_with_the_tool_boxes_it_links(name: str) -> None:
    """Each file's writes and edits link to their tool boxes on the page: the boxes name
    the file, and the table's lines are the sum of the edit badges (two ways to count)."""
    html = render_fixture(name)
    table = html[
        html.index('<table class="files">') : html.index(
            "</table>", html.index('<table class="files">')
        )
    ]
    rows = [m.groupdict() for m in _FILE_ROW.finditer(table)]
    assert rows and len(rows) == table.count("<tr>") - 1  # every row parsed (less the head)
    boxes = {m["id"]: m.groupdict() for m in _TOOL_BOX.finditer(html)}
    changed = 0
    for row in rows:
        links = re.findall(r'href="#([^"]+)"', row["links"])
        more = re.search(r"\+(\d+)", row["links"].split("</a>")[-1])
        count = len(links) + (int(more.group(1)) if more else 0)
        assert count == int(row["edits"].replace(",", "")) + int(row["writes"])
        path = row["path"].replace("<wbr>", "")  # the table's paths may wrap after a /
        assert "/" not in path or "/<wbr>" in row["path"]
        assert all(boxes[a]["path"] == path for a in links), path
        if row["lines"] and not more and not row["unknown"]:
            subs = [boxes[a]["sub"] for a in links if boxes[a]["kind"] == "edit"]
            added = sum(int(re.match(r"\+(\d+)", s).group(1)) for s in subs)
            removed = sum(int(re.search(r"−(\d+)", s).group(1)) for s in subs)
            assert row["lines"] == f"+{added:,} −{removed:,}", path
        changed += bool(links)
    assert changed >= 1


def test_files_count_only_the_changes_that_were_made(build: Any, dump: Any) -> None:
    """An edit whose turn ended before it ran was counted as "failed", so pi-large-session's
    row said "12 (16 failed)" where its Tools table and tool boxes say "no result", and a
    write that failed or never ran was counted as a write (review 2026-12-02)."""
    calls = [
        ("w-ok", "write", "ok"),
        ("w-err", "write", "error"),
        ("w-none", "write", None),
        ("e-ok", "edit", "ok"),
        ("e-err", "edit", "error"),
        ("e-none", "edit", None),
        ("e-none2", "edit", None),
    ]
    turn = build.assistant("a1", "u1", calls=[(c, n) for c, n, _ in calls], stopReason="aborted")
    for block in turn["message"]["content"][1:]:
        block["arguments"] = {"path": "src/app.py", "content": "x\n"}
    lines: list[dict[str, Any]] = [build.header(), build.user("u1", None), turn]
    parent = "a1"
    for number, (call, name, outcome) in enumerate(calls):
        if outcome is not None:
            result = build.tool_result(f"r{number}", parent, call, name, is_error=outcome != "ok")
            lines.append(result)
            parent = f"r{number}"
    html = render_session(parse_session_bytes(dump(lines)))
    table = html[html.index('<table class="files">') :]
    row = next(_FILE_ROW.finditer(table)).groupdict()
    assert (row["writes"], row["edits"]) == ("1", "1"), row
    assert "(and 1 failed, 1 with no result)" in row["writes_left_out"], row
    assert "(and 1 failed, 2 with no result)" in row["edits_left_out"], row
    assert len(re.findall(r'href="#', row["links"])) == 2  # the write and the edit made


def test_one_file_is_one_row_however_the_calls_name_it(build: Any, dump: Any) -> None:
    """Edits to ``src/a.py``, ``./src/a.py`` and the same file by its absolute path made
    three rows of one file (audit 2026-12-05): Pi resolves a relative path against the
    session's folder. Another folder's file of the same name stays its own row."""
    names = [
        ("src/a.py", "edit"),
        ("./src/a.py", "edit"),
        ("/home/dev/proj/src/a.py", "write"),
        ("src/../src//a.py", "read"),
        ("/elsewhere/src/a.py", "edit"),
    ]
    calls = [(f"c{i}", kind) for i, (_, kind) in enumerate(names)]
    turn = build.assistant("a1", "u1", calls=calls)
    for block, (path, _) in zip(turn["message"]["content"][1:], names, strict=True):
        block["arguments"] = {"path": path, "content": "x\n", "edits": []}
    lines: list[dict[str, Any]] = [build.header(), build.user("u1", None), turn]
    parent = "a1"
    for i, (_, kind) in enumerate(names):
        lines.append(build.tool_result(f"r{i}", parent, f"c{i}", kind))
        parent = f"r{i}"
    html = render_session(parse_session_bytes(dump(lines)))
    start = html.index('<table class="files">')
    table = html[start : html.index("</table>", start)]
    rows = {
        m["path"].replace("<wbr>", ""): (m["reads"], m["writes"], m["edits"])
        for m in _FILE_ROW.finditer(table)
    }
    assert rows == {"src/a.py": ("1", "1", "2"), "/elsewhere/src/a.py": ("0", "0", "1")}


@pytest.mark.parametrize(
    ("path", "cwd", "key"),
    [
        ("src/a.py", "/home/dev/proj", "/home/dev/proj/src/a.py"),
        ("./src//a.py", "/home/dev/proj/", "/home/dev/proj/src/a.py"),
        ("/home/dev/proj/src/../src/a.py", "/home/dev/proj", "/home/dev/proj/src/a.py"),
        ("src/a.py", "", "src/a.py"),
        ("./src/a.py", "proj", "src/a.py"),
        ("src\\A.py", "C:\\Proj", "c:\\proj\\src\\a.py"),
        ("C:/proj/src/a.py", "C:\\Proj", "c:\\proj\\src\\a.py"),
    ],
)
def test_a_file_is_named_by_its_resolved_path(path: str, cwd: str, key: str) -> None:
    from exporter.render.files_touched import file_key

    assert file_key(path, cwd) == key


def test_a_turn_s_time_ends_at_its_last_message_not_a_later_label() -> None:
    """every-entry-type's skill prompt (10:20) is answered at 10:21; a label (10:22) and a
    name (10:23) follow on its line. Its footer said 3m 0s: a label set hours later would
    have made the turn hours long (review 2026-12-02)."""
    page = parse_fixture("every-entry-type.jsonl")
    footer = page.entry("e20").find_all(lambda e: e.tag == "footer")
    assert norm(footer[0].text).endswith("Turn: 1 reply · $0.034 · 1m 0s")


@every_fixture
def test_each_prompt_says_what_its_turn_spent(name: str) -> None:
    """A prompt's footer sums its turn (peer review: cost per prompt): the replies, tool
    calls and cost of what follows it on its line up to the next prompt, counted here
    from the session itself; on the active path the turns add up to what the path's
    assistant messages after its first prompt cost."""
    from exporter.usage import turn_usage

    session = load_fixture(name)
    page = parse_fixture(name)
    checked, turns_cost, after_first = 0, 0.0, 0.0
    turn: dict[str, Any] | None = None
    for entry_id in [*session.active_path, None]:
        entry = session.by_id[entry_id] if entry_id else None
        message = entry if isinstance(entry, MessageEntry) else None
        if entry is None or (message is not None and message.role == "user"):
            if turn is not None and (turn["replies"] or turn["commands"]):
                footer = page.entry(turn["id"]).find_all(lambda e: e.tag == "footer")
                replies, calls = turn["replies"], sum(turn["tools"].values())
                said = [f"{replies} repl{'y' if replies == 1 else 'ies'}"]
                if calls:  # and by tool, the most used first (three named; peer review)
                    ranked = sorted(turn["tools"].items(), key=lambda kv: (-kv[1], kv[0]))
                    named = [f"{n} {tool}" for tool, n in ranked[:3]]
                    named += [f"{sum(n for _, n in ranked[3:])} other"] if ranked[3:] else []
                    by_tool = ranked[0][0] if len(ranked) == 1 else ", ".join(named)
                    said.append(f"{calls} tool call{'s' if calls != 1 else ''} ({by_tool})")
                if turn["commands"]:
                    said.append(
                        f"{turn['commands']} shell command{'s' if turn['commands'] != 1 else ''}"
                    )
                said.append(fmt_cost(turn["cost"]))
                text = norm(footer[0].text) if footer else ""
                assert text.startswith("Turn: " + " · ".join(said)), (turn, text)
                turns_cost += turn["cost"]
                checked += 1
            turn = {"id": entry_id, "replies": 0, "tools": Counter(), "commands": 0, "cost": 0.0}
            turn = turn if entry else None
        elif turn is not None and message is not None and message.role == "assistant":
            cost = turn_usage(message).cost
            turn["replies"] += 1
            turn["tools"].update(b["name"] for b in message.content if b.get("type") == "toolCall")
            turn["cost"] += cost
            after_first += cost
        elif turn is not None and message is not None and message.role == "bashExecution":
            turn["commands"] += 1
    assert abs(turns_cost - after_first) < 1e-9
    if name in ("pi-branched-4.jsonl", "pi-large-session.jsonl"):
        assert checked > 20, checked


def test_a_turn_says_which_tools_it_called_most(build: Any, dump: Any) -> None:
    """Peers show `3 bash · 2 edit` per prompt: the footer names the three most used tools
    (ties by name), counts the rest as "other", and shows a tool's name as text, cut."""
    odd = "z<img src=x onerror=alert(1)>" + "x" * 40
    calls = [("c1", "bash"), ("c2", "bash"), ("c3", "edit"), ("c4", "read"), ("c5", "read"),
             ("c6", "write"), ("c7", odd), ("c8", "bash")]  # fmt: skip
    lines = [
        build.header(),
        build.user("u1", None, "go"),
        build.assistant("a1", "u1", "", calls=calls),
        build.user("u2", "a1", "and one more", second=4),
        build.assistant("a2", "u2", "", second=5, calls=[("c9", odd)]),
    ]
    html = render_session(parse_session_bytes(dump(lines)))
    page = parse_html(html)
    first = norm(page.entry("u1").find_all(lambda e: e.tag == "footer")[0].text)
    assert "Turn: 1 reply · 8 tool calls (3 bash, 2 read, 1 edit, 2 other) · $0.010" in first
    second = norm(page.entry("u2").find_all(lambda e: e.tag == "footer")[0].text)
    assert f"1 tool call ({odd[:31]}…)" in second
    assert "<img src=x" not in html


def test_review_of_the_transcript_2026_12_03(build) -> None:
    """What a desktop review of the transcript found (2026-12-03), each checked here:
    an extension's state (a ``custom`` entry) was printed whole, 2,004 lines for 500 items,
    where tool details fold after 12; a provider's "Error: boom" read "Error: Error: boom";
    an aborted turn's footer said "in 0 · out 0 · cache read 0 · write 0 · $0.00"."""
    zero = build.usage(0, 0, 0.0)
    lines = [
        build.header(),
        build.user("u1", None, "go"),
        build.assistant("a1", "u1", "", usage=zero, stopReason="aborted"),
        build.assistant("a2", "a1", "", stopReason="error", errorMessage="Error: boom"),
        build.assistant("a3", "a2", "", stopReason="error", errorMessage="upstream 529"),
        build.entry("custom", "c1", "a3", 5, customType="todo-state",
                    data={"items": [{"n": n, "done": False} for n in range(500)]}),
    ]  # fmt: skip
    page = parse_html(render_session(parse_session_bytes(
        "\n".join(json.dumps(line) for line in lines).encode("utf-8")
    )))  # fmt: skip
    custom = page.entry("c1")
    shown = [e for e in custom.iter() if e.tag == "pre" and not any(
        a.tag == "details" for a in e.ancestors())]  # fmt: skip
    assert len(shown) == 1 and shown[0].text.count("\n") <= 12, shown[0].text[:200]
    fold = next(e for e in custom.iter() if e.tag == "details" and e.has_class("fold"))
    assert '"n": 499' in fold.text and "more lines" in fold.text
    notes = [e.text for e in page.entry("a2").iter() if e.tag == "p" and e.has_class("note")]
    assert notes == ["Error: boom"]
    notes = [e.text for e in page.entry("a3").iter() if e.tag == "p" and e.has_class("note")]
    assert notes == ["Error: upstream 529"]
    footer = next(e for e in page.entry("a1").iter() if e.tag == "footer")
    assert footer.text == "anthropic/claude-x · no tokens used"


def test_a_patch_s_file_names_are_not_removed_and_added_lines() -> None:
    """Codex's apply_patch: "--- src/report.py" and "+++ src/report.py" (and "--- /dev/null")
    were coloured as a removed and an added line (review 2026-12-03)."""
    from tests.browser_util import CODEX_PATH

    page = parse_html(render_session(load_session(CODEX_PATH)))
    diffs = [e for e in page.elements if e.tag == "pre" and e.has_class("diff")]
    lines = [(e.tag, e.text) for d in diffs for e in d.children if isinstance(e, Element)]
    assert ("span", "--- src/report.py") in lines and ("span", "+++ src/report.py") in lines
    assert ("span", "--- /dev/null") in lines
    assert not [
        text for tag, text in lines if tag in ("del", "ins") and text[:4] in ("--- ", "+++ ")
    ]
    assert any(tag == "del" for tag, _ in lines) and any(tag == "ins" for tag, _ in lines)


def test_a_long_code_block_in_an_answer_folds_after_its_head() -> None:
    """An answer that wrote out a whole 260-line file (pi-v1-before-compaction) was a card
    screens tall. A code block of more than 50 lines in an answer now shows its first 30
    and folds the rest, every line in the page in order; shorter blocks, and a prompt's
    code (the prompt folds as a whole), stay as they were."""
    from exporter.render.markup import FENCE_FOLD_LINES, FENCE_HEAD_LINES

    def code(count: int, tag: str) -> str:
        return (
            "```python\n"
            + "\n".join(f"{tag}_{n} = {n}  # <b>{n}</b>" for n in range(count))
            + "\n```"
        )

    answer = f"Here it is:\n\n{code(120, 'long')}\n\nand a short one:\n\n{code(50, 'short')}"
    lines = [
        _line(type="session", version=3, id="s", timestamp="2025-01-01T00:00:00Z", cwd="/w"),
        _user("u", None, f"Fix this:\n\n{code(60, 'asked')}"),
        _line(type="message", id="a", parentId="u", timestamp="2025-01-01T00:00:02Z",
              message={"role": "assistant", "content": [{"type": "text", "text": answer}],
                       "model": "m", "provider": "p", "stopReason": "stop"}),
        _line(type="message", id="a2", parentId="a", timestamp="2025-01-01T00:00:03Z",
              message={"role": "assistant", "content": code(80, "plain"), "model": "m",
                       "provider": "p", "stopReason": "stop"}),
    ]  # fmt: skip
    html = render_session(parse_session_bytes("\n".join(lines).encode("utf-8")))
    page = parse_html(html)
    folds = [e for e in page.elements if e.tag == "details" and e.has_class("code-rest")]
    assert [enclosing_entry(f).get("data-entry-id") for f in folds] == ["a", "a2"]
    summaries = [norm(f.find_all(lambda e: e.tag == "summary")[0].text) for f in folds]
    assert summaries == [f"{n - FENCE_HEAD_LINES} more lines of this code" for n in (120, 80)]
    assert FENCE_FOLD_LINES == 50  # the 50-line block stays whole: more than 50 folds
    card = norm(page.entry("a").text)
    shown = [f"long_{n} = {n} # <b>{n}</b>" for n in range(120)]
    at = [card.index(line) for line in shown]  # every line, escaped, in order
    assert at == sorted(at) and card.index("short_49 = 49") > at[-1]
    head = card[: card.index(summaries[0])]
    assert f"long_{FENCE_HEAD_LINES - 1} =" in head and f"long_{FENCE_HEAD_LINES} =" not in head
    assert "asked_59 = 59" in norm(page.entry("u").text)
    assert (
        "code-rest" not in html[html.index('data-entry-id="u"') : html.index('data-entry-id="a"')]
    )


def test_a_compacted_hidden_extension_message_is_not_said_to_reach_the_model() -> None:
    """pi-branched-3's hidden reminder sits among entries a compaction replaced; its note
    said "still sent to the model" under the "not in the model's context" mark (review of
    2026-12-03). A hidden message still in context keeps saying it."""
    compacted = parse_fixture("pi-branched-3.jsonl").entry("24a1cb1e")
    assert "compacted" in compacted.classes
    text = norm(compacted.text)
    assert "hidden in Pi's UI (display: false)" in text and "sent to the model" not in text
    in_context = parse_fixture("every-entry-type.jsonl").entry("e18")
    assert "compacted" not in in_context.classes
    assert "hidden in Pi's UI (display: false), still sent to the model" in norm(in_context.text)


def test_the_active_branch_mark_is_no_disclosure_triangle() -> None:
    """The active row of the Branches table was marked "▶", the glyph of the closed branch
    blocks just below it, so it read as a toggle that did nothing (visual review
    2026-12-04)."""
    html = render_fixture("pi-branched-1.jsonl")
    table = html.split('<table class="branches">', 1)[1].split("</table>", 1)[0]
    (active,) = re.findall(r'<tr class="active"><td>(.*?)</td>', table, re.S)
    mark = re.sub(r"<[^>]+>", "", active.replace('<span class="vh">active branch</span>', ""))
    assert mark == "●" and "active branch" in active


def test_a_thinking_block_says_how_long_it_is_in_words_of_any_script() -> None:
    """Chinese and Japanese have no spaces between words: each character counts as one
    (as reading-time estimates count them), not the whole paragraph as one word."""
    thoughts = [
        "Check the 3 failing tests first.",
        "先看看失败的测试。",
        "テストを直す and rerun",
        " \n ",
    ]
    lines = [
        json.dumps({"type": "session", "version": 3, "id": "s",
                    "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p"}),
        json.dumps({
            "type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": t} for t in thoughts
            ] + [{"type": "text", "text": "Done."}]},
        }),
    ]  # fmt: skip
    page = parse_html(render_session(parse_session_bytes(("\n".join(lines) + "\n").encode())))
    summaries = [
        norm(d.find_all(lambda e: e.tag == "summary")[0].text)
        for d in page.entry("a1").find_all(lambda e: e.tag == "details" and e.has_class("thinking"))
    ]
    assert summaries == [
        "Thinking · 6 words",
        "Thinking · 9 words",
        "Thinking · 8 words",
        "Thinking",  # blank: no count
    ]


def test_the_labels_list_shows_a_rows_words_with_one_ellipsis() -> None:
    """The demo's labels list read "[bash: grep … package…] … · in another branch": the
    row's own cut, then a second one for the list (visual review 2026-12-04)."""
    from exporter.discover import demo_session_path

    page = parse_html(render_session(load_session(demo_session_path())))
    (bookmarks,) = page.all(lambda e: e.tag == "nav" and e.has_class("bookmarks"))
    lines = [norm(li.text) for li in bookmarks.find_all(lambda e: e.tag == "li")]
    assert len(lines) == 7
    for line in lines:
        assert "…]…" not in line and "] …" not in line, line
    assert any(line.endswith("package…] result · in another branch") for line in lines), lines


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_the_transcript_heading_speaks_of_other_branches_only_when_there_are(name: str) -> None:
    """ "other branches fold out where they fork" stood over the transcript of a session with
    one branch too (pi-large-session, pi-v1: visual review 2026-12-04)."""
    session = load_fixture(name)
    (heading,) = re.findall(r"<h2>Transcript .*?</h2>", render_fixture(name))
    branches = len(compute_stats(session).branches)
    assert ("other branches fold out" in heading) == (branches > 1), (branches, heading)
