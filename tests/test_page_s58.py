"""Stop 58 (helper hunts: a new user, the 25 MB profile): the outline's fold line said "45
entries in another branch" of what the transcript's block calls "45 entries in 3 branches"
(branches fork inside the folded one); ``is_before`` walks up for a session's first
questions instead of laying out the whole tree."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from exporter.loader import load_session
from exporter.render.view import PATH_WALKS_BEFORE_SPANS, PageBuilder
from tests.browser_util import PageServer, Viewer, render_fixture
from tests.conftest import FIXTURES_DIR

pytest_plugins = ["tests.browser_util"]

_FOLD = re.compile(
    r'<label class="ob">.*?<span class="n">([\d,]+) entries</span>.*? in '
    r"(another branch|(\d+) branches)</label>"
)


def test_a_fold_line_counts_the_branches_inside_it_as_the_transcript_does() -> None:
    page = render_fixture("pi-branched-2.jsonl")
    folds = [
        (int(m[1].replace(",", "")), 1 if m[2] == "another branch" else int(m[3]))
        for m in _FOLD.finditer(page)
    ]
    assert (45, 3) in folds, folds
    assert any(branches == 1 for _, branches in folds), folds
    for entries, branches in folds:
        if branches > 1:
            assert f"{entries:,} entries in {branches} branches" in page, (entries, branches)


def test_is_before_by_a_walk_up_answers_as_the_trees_spans_do() -> None:
    """A session's first questions walk up from the entry (the whole tree's spans cost up
    to 0.2 s on a 25 MB session for its one compaction); both must answer alike, in damaged
    and branched files too."""
    rng = random.Random(58)
    paths = [*FIXTURES_DIR.glob("*.jsonl"), *(Path(__file__).parent / "data").rglob("*.jsonl")]
    for path in paths:
        session = load_session(path)
        ids = [e.id for e in session.entries] + ["not-an-entry"]
        pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(300)]
        pairs += [(a, b) for b in ids[:40] for a in session.path_to(b)[-3:] if b in session.by_id]
        walked = PageBuilder(session, lambda p: p)
        spans = PageBuilder(session, lambda p: p)
        spans._path_walks = PATH_WALKS_BEFORE_SPANS  # straight to the spans
        for earlier, entry_id in pairs:
            walked._path_walks = 0  # every question by a walk
            assert walked.is_before(earlier, entry_id) == spans.is_before(earlier, entry_id), (
                path.name,
                earlier,
                entry_id,
            )


# a column's text, and the sticky last column's fade, as the reader sees them at the end
_CLEAR_OF_THE_FADE = """() => [...document.querySelectorAll(
    '#usage table:not(.tools):not(.files)')].map(table => {
  const wrap = table.closest('.tablewrap') || table.parentElement;
  wrap.scrollLeft = wrap.scrollWidth;
  const row = table.querySelector('thead tr') || table.rows[0];
  const before = row.cells[row.cells.length - 2], last = row.cells[row.cells.length - 1];
  const range = document.createRange();
  range.selectNodeContents(before);
  const text = range.getBoundingClientRect().right;
  const em = parseFloat(getComputedStyle(last).fontSize);
  const fade = last.getBoundingClientRect().left - em * 2.5;
  return [before.textContent, Math.round(fade - text)];
})"""


@pytest.mark.parametrize("width", [360, 390])
def test_on_a_phone_no_column_stays_under_the_sticky_costs_fade(
    viewer: Viewer, page_server: PageServer, width: int
) -> None:
    """At 390 px "Cache write" read "Cache wr" and its numbers lost a digit even scrolled to
    the end: the last column's fade covered 13 px of the one before it (helper hunt)."""
    for name in ("every-entry-type.jsonl", "pi-branched-1.jsonl"):
        url = page_server.publish(f"s58-{width}-{name}.html", render_fixture(name))
        page = viewer.open(url, viewport={"width": width, "height": 844}, is_mobile=True)
        clear = page.evaluate(_CLEAR_OF_THE_FADE)
        assert len(clear) >= 2 and all(gap >= 0 for _, gap in clear), (name, clear)
        cells = page.evaluate(
            """[...document.querySelectorAll('table.files td')].filter(td =>
                 td.querySelector(':scope > .muted')).map(td => td.getClientRects().length
                 && Math.round(td.getBoundingClientRect().height
                 / parseFloat(getComputedStyle(td).lineHeight)))"""
        )
        assert all(lines <= 2 for lines in cells), (name, cells)  # was "2 (and / 1 with / …"
