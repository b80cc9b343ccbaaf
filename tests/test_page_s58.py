"""Stop 58 (helper hunts: a new user, the 25 MB profile): the outline's fold line said "45
entries in another branch" of what the transcript's block calls "45 entries in 3 branches"
(branches fork inside the folded one); ``is_before`` walks up for a session's first
questions instead of laying out the whole tree."""

from __future__ import annotations

import random
import re
from pathlib import Path

from exporter.loader import load_session
from exporter.render.view import PATH_WALKS_BEFORE_SPANS, PageBuilder
from tests.browser_util import render_fixture
from tests.conftest import FIXTURES_DIR

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
