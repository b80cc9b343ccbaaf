"""Text on a session's page, session 68: a search found text stored decomposed (a macOS
path's "Cafe" and a combining accent, Hangul as jamo) but marked nothing in it, nor
anywhere else in the same text node; and a letter under dozens of combining marks
("Zalgo") in a prompt, the session's name or a label drew over the page's header and the
lines around it.

Each page is exported from a small session written to ``tmp_path`` and read in Chromium
over HTTP on 127.0.0.1 (tests/browser_util.py). Where marks may paint is read from the
page's geometry, with no screenshot: the box that clips them (an element whose overflow is
not visible, or which contains its paint) and, for ordinary text's ink, the canvas's
measure of the same text in the same font.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from exporter.loader import load_session
from exporter.render import render_session
from tests.browser_util import PageServer, Viewer, search_for

pytest_plugins = ["tests.browser_util"]

STAMP = "2025-06-01T10:00:00.000Z"
CAFE_NFD = "Cafe\u0301"
HANGUL_NFD = unicodedata.normalize("NFD", "\ud55c\uae00")  # 한글 as jamo (HFS+)
#: Several decomposed letters before the words searched for, in the same text node.
ACCENTS_FIRST = "re\u0301sume\u0301 de\u0301ja\u0300 vu, then the zebrafinch"
#: A letter under sixty marks, above and below it.
ZALGO = "Z" + "".join(chr(0x300 + n % 0x14) + chr(0x316 + n % 0x14) for n in range(30))
#: Ordinary text the clipping must leave whole: stacked Vietnamese accents over capitals,
#: a ring and an acute, a cedilla, descenders, CJK and emoji (shown as whatever glyphs the
#: machine has for them).
ORDINARY = "Ấ Ẫ Ỗ Ǻ Ḉ Ǖ gjpqy 漢字 한국어 👩\u200d👩\u200d👧 🏳️\u200d🌈"


def write_session(folder: Path, records: list[dict[str, Any]]) -> Path:
    path = folder / "session.jsonl"
    head = {"type": "session", "version": 3, "id": "s68", "timestamp": STAMP, "cwd": "/srv"}
    lines = [json.dumps(r, ensure_ascii=False) for r in [head, *records]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prompt(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    message = {"role": "user", "content": text, "timestamp": 0}
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP} | {
        "message": message
    }


def open_page(
    tmp_path: Path, viewer: Viewer, server: PageServer, records: list[Any], **options: Any
) -> Any:
    """The session's page, exported from its file and opened over HTTP (``options``: the
    browser context's, e.g. its viewport)."""
    html = render_session(load_session(write_session(tmp_path, records)))
    return viewer.open(server.publish(f"{tmp_path.name}.html", html), **options)


# --- 1. a match in decomposed text is marked where it stands ------------------------------


MARKED = """() => [...CSS.highlights.get('search-terms') || []].map(r => [
  r.startContainer.parentElement.closest('#tree') ? 'row' : 'entry',
  r.startContainer === r.endContainer ? r.startContainer.data.slice(r.startOffset, r.endOffset)
    : r.toString()])"""


@pytest.mark.parametrize(
    ("said", "typed", "marked"),
    [
        (f"open /Users/me/{CAFE_NFD}/notes.md", "caf\u00e9", CAFE_NFD),  # stored decomposed
        ("a caf\u00e9 composed", '"cafe\u0301 composed"', "caf\u00e9 composed"),  # typed so
        (ACCENTS_FIRST, "zebrafinch", "zebrafinch"),  # past several decomposed letters
        (ACCENTS_FIRST, "d\u00e9j\u00e0", "de\u0301ja\u0300"),  # itself decomposed, after one
        (ACCENTS_FIRST, '"sume\u0301 d"', "sume\u0301 d"),  # starting inside a word
        (f"the {HANGUL_NFD} notes", "\ud55c\uae00", HANGUL_NFD),  # jamo compose to syllables
        ("\u0130stanbul ve e\u0301 \u0130zmir", "izmir", "\u0130zmir"),  # and a dotted I
    ],
)
def test_search_marks_a_match_in_decomposed_text(
    tmp_path: Path, viewer: Viewer, page_server: PageServer, said: str, typed: str, marked: str
) -> None:
    """The row matched ("1 of 1 entries match") but neither the outline row nor the opened
    entry had a mark: the range was worked out on the composed copy, whose offsets are not
    the text node's, so such a node was left unmarked. Each mark now covers exactly the
    letters and accents of the match in the node as it is."""
    page = open_page(tmp_path, viewer, page_server, [prompt("u1", None, said)])
    search_for(page, typed)
    assert (page.text_content("#tree-status") or "").startswith("1 of 1 entries match")
    assert page.evaluate(MARKED) == [["row", marked]]
    page.keyboard.press("Enter")  # opens the match: its words are marked in the entry too
    page.wait_for_function("document.activeElement?.matches('article[data-entry-id=u1]')")
    assert sorted(page.evaluate(MARKED)) == [["entry", marked], ["row", marked]]
    viewer.assert_clean()


# --- 2. a Zalgo cluster stays in its own block ------------------------------------------------

#: The box that clips what an element paints: itself or its nearest ancestor whose overflow
#: is not visible or which contains its paint, widened by its overflow-clip-margin.
CLIP = """selector => {
  for (let n = document.querySelector(selector); n; n = n.parentElement) {
    const cs = getComputedStyle(n);
    if (cs.overflowY === 'visible' && !/paint|strict|content/.test(cs.contain)
        && cs.contentVisibility !== 'auto') continue;
    const margin = cs.overflowY === 'clip' ? parseFloat(cs.overflowClipMargin) || 0 : 0;
    const top = n.getBoundingClientRect().top + n.clientTop;
    return {top: top - margin, bottom: top + n.clientHeight + margin, by: n.tagName};
  }
  return {top: -Infinity, bottom: Infinity, by: 'nothing'};
}"""

#: Where a text's ink reaches: its baseline from the text's box, the ink's height from the
#: canvas's measure of the same text in the same font. (The canvas draws a letter's marks
#: over one another, not stacked as the page does: good for ordinary text only.)
INK = """([selector, text]) => {
  const el = document.querySelector(selector);
  const node = [...el.querySelectorAll('*'), el].flatMap(e => [...e.childNodes])
    .find(t => t.nodeType === 3 && t.data.includes(text));
  const range = new Range(), at = node.data.indexOf(text);
  range.setStart(node, at); range.setEnd(node, at + text.length);
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = getComputedStyle(node.parentElement).font;
  const m = ctx.measureText(text);
  const baseline = range.getClientRects()[0].top + m.fontBoundingBoxAscent;
  return {top: baseline - m.actualBoundingBoxAscent, bottom: baseline + m.actualBoundingBoxDescent};
}"""


def box(page: Any, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "e => e.getBoundingClientRect().toJSON()")


def zalgo_session(text: str) -> list[dict[str, Any]]:
    """``text`` in a prompt (with a paragraph after it), as the session's name and as a
    label on that prompt."""
    return [
        prompt("u1", None, f"first {text} words\n\nthe paragraph after it"),
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": STAMP} | {
            "message": {"role": "assistant", "content": [{"type": "text", "text": "fine"}],
                        "provider": "p", "model": "m"}},
        {"type": "label", "id": "l1", "parentId": "a1", "targetId": "u1", "label": f"tag {text}",
         "timestamp": STAMP},
        {"type": "session_info", "id": "i1", "parentId": "l1", "name": f"name {text}",
         "timestamp": STAMP},
    ]  # fmt: skip


PROMPT = 'article[data-entry-id="u1"]'


@pytest.mark.parametrize("width", [1280, 390])
def test_a_zalgo_cluster_stays_in_its_own_block(
    tmp_path: Path, viewer: Viewer, page_server: PageServer, width: int
) -> None:
    """Its sixty marks reached ~150 px above and below the letter: in the title over the
    session's facts and above the header card, in the Labels list over the line of keys,
    in an entry's label badge and prompt over the entry's header and the next paragraph
    (the entry, which contains its paint, was all that held them). Each block of the
    session's words now clips what it paints, short of the lines around it."""
    view = {"width": width, "height": 900}
    page = open_page(tmp_path, viewer, page_server, zalgo_session(ZALGO), viewport=view)
    places = {  # element holding the cluster: (what must stay clear above it, ... below)
        "#content h1": ("header.session-header", ".facts"),
        ".bookmarks ul": (".bookmarks h2", "#keys-help"),
        f"{PROMPT} .badge.label": (PROMPT, f"{PROMPT} .md"),
        f"{PROMPT} .md > p": (f"{PROMPT} > header", f"{PROMPT} .md > p + p"),
    }
    if width > 900:  # (narrower, the outline is folded away)
        places['#tree a[href="#u1"]'] = ("#tree-status", '#tree a[href="#a1"]')
    for selector, (above, below) in places.items():
        assert ZALGO in (page.text_content(selector) or ""), selector
        clip, own = page.evaluate(CLIP, selector), box(page, selector)
        over, under = box(page, above), box(page, below)
        # (the box above is a card or an entry holding it: its top, else its bottom)
        above_edge = over["top"] if over["bottom"] >= own["bottom"] else over["bottom"]
        assert clip["top"] >= above_edge - 0.5, (selector, clip, above, over)
        assert clip["bottom"] <= under["top"] + 0.5, (selector, clip, below, under)
    viewer.assert_clean()


@pytest.mark.parametrize("width", [1280, 390])
def test_ordinary_accents_and_scripts_are_not_clipped(
    tmp_path: Path, viewer: Viewer, page_server: PageServer, width: int
) -> None:
    """What holds a Zalgo cluster in leaves ordinary text whole: the ink of stacked
    accents, descenders, CJK and emoji is inside the box that clips it, in the title, the
    Labels list, a label badge, a prompt and a marker's line."""
    view = {"width": width, "height": 900}
    page = open_page(tmp_path, viewer, page_server, zalgo_session(ORDINARY), viewport=view)
    for selector in (
        "#content h1",
        ".bookmarks ul",
        f"{PROMPT} .badge.label",
        f"{PROMPT} .md > p",
        'article[data-entry-id="i1"] .title',
    ):
        clip = page.evaluate(CLIP, selector)
        for sample in ORDINARY.split():
            ink = page.evaluate(INK, [selector, sample])  # (1 px: the baseline is worked out)
            assert clip["top"] - 1 <= ink["top"] and ink["bottom"] <= clip["bottom"] + 1, (
                selector,
                sample,
                ink,
                clip,
            )
    viewer.assert_clean()
