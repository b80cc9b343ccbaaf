"""Stop 58 (helper hunt: a new user): the outline's fold line said "45 entries in another
branch" of what the transcript's block calls "45 entries in 3 branches" (branches fork
inside the folded one)."""

from __future__ import annotations

import re

from tests.browser_util import render_fixture

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
