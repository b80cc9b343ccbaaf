"""Tokens a terminal or a box-drawn table broke over two or more lines.

A ``ghp_…`` token printed in a 30-column box ends one line and goes on at the start of the
next; each part alone is too short for its format, or the format matches only the first
part and the rest leaks. This detector joins a token's head at the end of a line to the
run of token characters that opens the next line (after indentation, a table's border or a
Markdown quote's ``> ``; Markdown's ``<br>`` and a hard break's ``\\`` end a line too),
and to the runs of the lines after it while each run fills its line (a 93-character
``github_pat_`` in a 36-column box, a JWT in an 80-column terminal), asks the token formats
whether the joined text is one of their tokens across the breaks, and if so gives each
part as a span, so the line breaks and the borders stay as they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from exporter.detector_base import Detector, Span
from exporter.secret_heuristics import looks_random

__all__ = ["WrappedTokenDetector"]

#: Prefixes distinct enough that a token split after them is worth joining, with the
#: token's full length where the format fixes it (then the join stops exactly there).
_PREFIXES: dict[str, int | None] = {
    "ghp_": 40, "gho_": 40, "ghu_": 40, "ghs_": 40, "ghr_": 40, "github_pat_": 93,
    "glpat-": None, "hf_": 37, "npm_": 40, "AIza": 39, "AKIA": 20, "ASIA": 20,
    "sk-ant-": None, "sk-proj-": None, "sk-svcacct-": None, "sk-admin-": None,
    "sk-or-": None, "xoxb-": None, "xoxp-": None, "xapp-": None, "gsk_": None, "xai-": None,
    "pypi-Ag": None, "dckr_pat_": None, "eyJ": None,
}  # fmt: skip
#: Tokens whose whole shape is known though their prefix fixes no length: Anthropic's API
#: and admin keys are 93 characters and ``AA`` after the prefix. A head that is one of them
#: whole goes on nowhere: what opens the next line is other text.
_WHOLE_TOKEN = re.compile(r"sk-ant-(?:api03|admin01)-[A-Za-z0-9_\-]{93}AA")
_SHORTEST = 20  # no format here has shorter tokens (AKIA… key ids)
_BORDER = "│┃║|"
#: Blanks, then maybe a border and more blanks: each run matched one way only (two optional
#: runs around an optional border split a long run of spaces every way: quadratic).
_EDGE = rf"[ \t]{{0,200}}(?:[{_BORDER}][ \t]{{0,200}})?"
#: Markdown's line breaks inside a paragraph or a table's cell: a `<br>` (`<br/>`,
#: `<br />`) and a backslash before the line break (a hard break)
_MARKDOWN_BREAK = r"<br[ \t]{0,4}/?>"
#: The end of a line: blanks and a border (`_EDGE`), a hard break's backslash or a `<br>`
_LINE_END = rf"(?:\\|{_MARKDOWN_BREAK}[ \t]{{0,200}}|{_EDGE})\r?\n"
#: What opens the line a token goes on in: indentation and a border, or a Markdown quote's
#: `> ` (`> > ` nested), as it opens each line of the quote
_LINE_START = rf"[ \t]{{0,200}}(?:[{_BORDER}][ \t]{{0,200}}|(?:>[ \t]{{0,4}}){{1,4}})?"
#: A head: a prefix and token characters up to the end of its line (a border may close it)
#: or up to a `<br>` (a table's cell goes on after it, on the same line).
_HEAD = re.compile(
    "(?<![A-Za-z0-9_.\\-])("
    + "|".join(re.escape(p) for p in sorted(_PREFIXES, key=len, reverse=True))
    + rf")[A-Za-z0-9_.\-]{{0,1000}}(?={_LINE_END}|{_MARKDOWN_BREAK})"
)
#: The line break, the next line's indentation, border or quote, then the run that goes on;
#: or a `<br>` and the run after it.
_TAIL = re.compile(
    rf"(?:{_LINE_END}{_LINE_START}|{_MARKDOWN_BREAK}[ \t]{{0,200}})([A-Za-z0-9_.\-]{{1,1000}})"
)
#: The next line of a box of two or more columns: empty cells, then the run, which counts
#: only where it starts in the head's column (`│ GITHUB_TOKEN │ github_pat_…│` goes on as
#: `│              │ Op5Qr7…│`; a next row's name, `│ NEXT │ …`, starts elsewhere).
_BOX_TAIL = re.compile(
    rf"{_EDGE}\r?\n[ \t]{{0,200}}(?:[{_BORDER}][ \t]{{0,200}}){{2,6}}([A-Za-z0-9_.\-]{{1,1000}})"
)
#: A run that fills its line: the line ends right after it, after one blank and a border,
#: or after a Markdown break. Only such a run can go on at the start of the next line.
_FILLS_LINE = re.compile(
    rf"(?:\\|{_MARKDOWN_BREAK}[ \t]{{0,200}}|[ \t]?[{_BORDER}][ \t]{{0,200}})?\r?\n"
)
_MAX_LINES = 12  # a wrapped token is joined over at most this many lines (a JWT is long)
#: Joins over three or more lines that found no token, after which a text's heads are joined
#: to one line only (as before): every line of a wide block a head made each try 11 lines.
_MAX_FAILED_JOINS = 2000


def _random_looking(run: str) -> bool:
    """When the head is already a whole token, what opens the next line is joined only if
    it looks like more of a token, not a word (``v2``, ``x86_64``, ``md5sum``): 8 or more
    characters of two kinds (lower, upper, digit)."""
    return len(run) >= 8 and looks_random(run)


def _column(text: str, at: int) -> int:
    return at - text.rfind("\n", 0, at) - 1


def _tail(text: str, at: int, head_start: int) -> re.Match[str] | None:
    """The run that goes on at the start of the next line: after its indentation or border,
    or after a box's empty cells (:func:`_box_tail`)."""
    return _TAIL.match(text, at) or _box_tail(text, at, head_start)


def _box_tail(text: str, at: int, head_start: int) -> re.Match[str] | None:
    """The run after a box's empty cells, where it starts in the column of the head's start
    (``head_start``)."""
    tail = _BOX_TAIL.match(text, at)
    if tail is not None and _column(text, tail.start(1)) != _column(text, head_start):
        return None
    return tail


def _more_runs(text: str, width: int, head_start: int, at: int, need: int) -> list[tuple[int, str]]:
    """After a first run that ends at ``at`` and fills its line, the runs that open the lines
    after it, with where each starts, while each fills its line up to the head's column,
    ``width`` (a wrap's lines all end there; its last is shorter), and until they hold
    ``need`` more characters (a format's fixed length). No box or terminal wraps tokens
    narrower than the shortest one, so the caller asks only for wider lines."""
    runs: list[tuple[int, str]] = []
    while need > 0 and len(runs) < _MAX_LINES - 2 and _column(text, at) == width:
        tail = _tail(text, at, head_start)
        if tail is None:
            break
        runs.append((tail.start(1), tail.group(1)))
        need -= len(tail.group(1))
        at = tail.end()
        if not _FILLS_LINE.match(text, at):
            break
    return runs


class WrappedTokenDetector(Detector):
    """Every part of a token broken over line breaks (see the module doc)."""

    by_shape = True
    name = "wrapped-token"
    summary = "a token broken over lines (a terminal's or a table's wrap)"
    # the formats' own pre-checks where they are as rare as the prefix ("sk-", "xox", "eyJ"
    # cost nothing more: the scan already looks for them), the prefix itself where they are
    # not ("gh" is in "high", "gl" in "glob")
    triggers = (
        "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "hf_", "npm_", "AIza",
        "AKIA", "ASIA", "sk-", "xox", "xapp-", "gsk_", "xai-", "pypi-Ag", "dckr_", "eyJ",
    )  # fmt: skip
    min_length = _SHORTEST + 1  # a head, a line break and a tail

    def __init__(self, formats: Iterable[Detector]) -> None:
        # per prefix, the formats it can start (one of their pre-checks is inside it)
        formats = tuple(formats)
        self.formats_of = {
            prefix: tuple(d for d in formats if any(t in prefix for t in d.triggers))
            for prefix in _PREFIXES
        }

    def find(self, text: str, lower: str) -> Iterator[Span]:
        if "\n" not in text and "<br" not in lower:
            return
        skip_to, failed_joins = 0, 0
        for head in _HEAD.finditer(text):
            end = head.end()
            if end <= skip_to:  # a line of the token found before: not a head of its own
                continue
            if _WHOLE_TOKEN.fullmatch(head.group()):
                continue
            tail = _TAIL.match(text, end) or _box_tail(text, end, head.start())
            if tail is None:
                continue
            width = end - text.rfind("\n", 0, end) - 1
            more = failed_joins < _MAX_FAILED_JOINS and width >= _SHORTEST
            if more and _FILLS_LINE.match(text, tail.end()):
                full = _PREFIXES[head.group(1)] or 10**9
                need = full - len(head.group()) - len(tail.group(1))
                more_runs = _more_runs(text, width, head.start(), tail.end(), need)
                runs = [(tail.start(1), tail.group(1)), *more_runs]
            elif end - head.start() + tail.end() - tail.start(1) < _SHORTEST:
                continue  # (most heads: checked before any list or call)
            else:
                runs = [(tail.start(1), tail.group(1))]
            spans = list(self._spans(head, runs))
            if len(runs) > 1 and not spans:
                failed_joins += 1
            if spans:  # the lines this token took hold no head of another
                skip_to = spans[-1][0]
            yield from spans

    def _spans(self, head: re.Match[str], runs: list[tuple[int, str]]) -> Iterator[Span]:
        """The head's and each run's part of the token they make together, if they do."""
        joined = "".join(run for _, run in runs)
        if len(head.group()) + len(joined) < _SHORTEST:
            return
        length = self._joined_length(head.group(1), head.group(), joined)
        if not length:
            return
        yield head.span()
        left = length - len(head.group())
        for start, run in runs:
            if left <= 0:
                break
            yield start, start + min(left, len(run))
            left -= len(run)

    def _joined_length(self, prefix: str, head: str, run: str) -> int:
        """How long the token that starts ``head`` and goes on in ``run`` is (0: none)."""
        full = _PREFIXES[prefix]
        if full is not None:  # the format's length says where the token ends
            if len(head) >= full or len(head) + len(run) < full:
                return 0
            run = run[: full - len(head)]
        joined = head + run
        longest, whole_head = 0, False
        for detector in self.formats_of[prefix]:
            ends = [e for s, e in detector.find(joined, joined.lower()) if s < len(head)]
            longest = max([longest, *ends])
            if full is None and ends:  # is the head alone already one of its tokens?
                whole_head = whole_head or any(
                    e == len(head) for _, e in detector.find(head, head.lower())
                )
        if longest <= len(head):
            return 0
        if whole_head and not _random_looking(joined[len(head) : longest]):
            return 0
        return longest
