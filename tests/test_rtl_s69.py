"""Session 69: right-to-left words whose end punctuation was drawn at their start.

A Hebrew or Arabic name, prompt or label shown inside an English line took the line's
direction, so "שלום עולם!" was drawn with its "!" at the far right, where a reader of
Hebrew starts, while the page's title (``dir="auto"``) drew it on the left. The site
index's titles and prompts, and its search results, now carry their own direction.

The check is what a reader sees: in Chromium, for each right-to-left letter followed by
end punctuation on the same line, the punctuation must be drawn to the LEFT of the letter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from exporter.discover import session_files
from exporter.site import build_site

pytest_plugins = ["tests.browser_util"]
pytestmark = pytest.mark.browser

NAME = "שלום עולם!"
PROMPT = "מה שלומך? אני בודק."
REPLY = "בסדר גמור, הכל עובד!"
LABEL = "חשוב!"
HEADER = {"type": "session", "version": 3, "id": "rtl-s69", "cwd": "/home/alice/app"}
HEADER["timestamp"] = "2026-01-01T00:00:00.000Z"

#: Every right-to-left letter followed by end punctuation in a shown text node, and whether
#: the punctuation is drawn on the letter's left (as it is read: after it).
BIDI_PLACES = r"""(skip) => {
  const found = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const pattern = /([\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF])([!?.\u2026\u061F]+)/g;
  for (let node; (node = walker.nextNode()); ) {
    if (!node.parentElement.getClientRects().length) continue;  // not shown
    if (skip && node.parentElement.closest(skip)) continue;
    for (const m of node.nodeValue.matchAll(pattern)) {
      const range = document.createRange();
      range.setStart(node, m.index); range.setEnd(node, m.index + 1);
      const letter = range.getBoundingClientRect();
      range.setStart(node, m.index + 1); range.setEnd(node, m.index + 2);
      const mark = range.getBoundingClientRect();
      if (!letter.width || Math.abs(mark.top - letter.top) > 4) continue;  // wrapped
      const at = node.parentElement.closest("[id]");
      found.push({where: (at ? "#" + at.id + " " : "") + node.parentElement.localName,
                  text: node.nodeValue.slice(Math.max(0, m.index - 12), m.index + 2),
                  left: mark.right <= letter.left + 1});
    }
  }
  return found;
}"""


def _line(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        **fields,
    }


def write_rtl_session(folder: Path) -> Path:
    """A session named, prompted, answered and labelled in Hebrew."""
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}
    records = [
        HEADER,
        _line("message", "u1", None, message={"role": "user", "content": PROMPT}),
        _line(
            "message",
            "a1",
            "u1",
            message={
                "role": "assistant",
                "provider": "p",
                "model": "m",
                "usage": usage,
                "stopReason": "stop",
                "content": [{"type": "text", "text": REPLY}],
            },
        ),
        _line("label", "l1", "a1", targetId="u1", label=LABEL),
        _line("session_info", "n1", "l1", name=NAME),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "2026-01-01T00-00-00-000Z_rtl-s69.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rtl-site")
    write_rtl_session(base / "sessions" / "--home-alice-app--")
    report = build_site(session_files(base / "sessions"), base / "site", jobs=1, progress=False)
    assert report.rendered == 1 and not report.failed
    return base / "site"


@pytest.fixture(name="page")
def page_fixture(pw_browser: Any) -> Iterator[Any]:
    context = pw_browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


def misdrawn(
    page: Any, *, expected: tuple[str, ...], skip: str | None = None
) -> list[dict[str, Any]]:
    """The places whose punctuation is drawn on the wrong side (but under ``skip``); each of
    ``expected`` must be found among the places checked (else the check would pass by
    checking nothing)."""
    places = page.evaluate(BIDI_PLACES, skip)
    for text in expected:
        assert any(text[-3:] in place["text"] for place in places), (text, places)
    return [place for place in places if not place["left"]]


def test_the_index_draws_titles_and_prompts_in_their_own_direction(site: Path, page: Any) -> None:
    page.goto((site / "index.html").as_uri())
    assert misdrawn(page, expected=(NAME,)) == []
    page.locator("#filter").fill("שלומך")  # the prompts that match, under the title
    page.wait_for_selector("#session-table .prompt-hits li")
    assert misdrawn(page, expected=(NAME, PROMPT)) == []


def test_the_index_search_results_keep_a_prompt_s_direction(site: Path, page: Any) -> None:
    page.goto((site / "index.html").as_uri())
    page.get_by_label("Search text").fill("שלומך")
    page.wait_for_selector("#text-results li a")
    assert misdrawn(page, expected=(PROMPT,)) == []


def test_the_page_draws_names_and_labels_in_their_own_direction(tmp_path: Path, page: Any) -> None:
    from exporter.loader import load_session
    from exporter.render import render_session

    session = load_session(write_rtl_session(tmp_path))
    out = tmp_path / "rtl.html"
    out.write_text(render_session(session), encoding="utf-8")
    page.goto(out.as_uri())
    page.locator("label[for=flt-all]").click()  # the label and name entries too
    # rows quoted with their role ("user: …", "[label: …]") too: their words are isolated
    assert misdrawn(page, expected=(NAME, LABEL, PROMPT, REPLY)) == []
