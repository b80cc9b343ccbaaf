"""Long text folded, never cut: what shows before a <details> block and what is inside it.

A fold keeps a few lines in view (the last ones of a command's output, the first of a file)
and at most ``VISIBLE_CHARS`` characters, so one line of minified code does not become a
screens-long wall; everything else is in the page, collapsed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from exporter.render.ansi import AnsiText
from exporter.render.markup import highlight_lines, part_text

__all__ = [
    "VISIBLE_CHARS",
    "Folded",
    "cut_point",
    "fold",
    "fold_chars",
    "fold_code",
    "fold_command",
    "fold_text",
    "plain_lines",
]


@dataclass(slots=True)
class Folded:
    """Some lines of HTML, part visible and part inside a collapsed block."""

    visible: Markup
    hidden: Markup | None = None
    hidden_lines: int = 0
    hidden_first: bool = False  # True: the fold comes before the visible tail (bash output)
    total_lines: int = 0
    hidden_chars: int = 0  # > 0: the fold cuts inside a line (minified or one-line output)

    @property
    def summary(self) -> str:
        """What the collapsed block holds, for its <summary>."""
        where = "earlier" if self.hidden_first else "more"
        if self.hidden_chars:
            return f"{self.hidden_chars:,} {where} characters"
        return f"{self.hidden_lines:,} {where} line{'s' if self.hidden_lines != 1 else ''}"


def fold(lines: list[str], keep: int, *, tail: bool = False) -> Folded:
    """Fold escaped/highlighted lines so ``keep`` of them show; nothing is dropped."""
    total = len(lines)
    if total <= keep + 3:  # folding away two lines helps nobody
        return Folded(Markup("\n".join(lines)), total_lines=total)
    if tail:
        hidden, visible = lines[: total - keep], lines[total - keep :]
        shown, folded = "\n".join(visible), part_text(hidden)
    else:
        visible, hidden = lines[:keep], lines[keep:]
        shown, folded = part_text(visible), "\n".join(hidden)
    return Folded(
        Markup(shown),
        Markup(folded),
        len(hidden),
        hidden_first=tail,
        total_lines=total,
    )


# What a fold may show before its <details>: ~30 wrapped lines of a page column. Without
# it one line of minified JSON or JavaScript (200 KB, no newline) was a screens-long wall.
VISIBLE_CHARS = 3_000
_BREAK_BACK = VISIBLE_CHARS // 2  # a cut moves this far to land on a line break ...
_SPACE_BACK = 200  # ... or this far to land on a space


def _visible_span(lines: list[str], keep: int, tail: bool) -> int:
    """How many characters ``fold`` would show of these raw lines."""
    shown = lines if len(lines) <= keep + 3 else (lines[-keep:] if tail else lines[:keep])
    return sum(map(len, shown)) + len(shown) - 1


#: Characters that belong to the one before them beyond the Unicode marks (category M): a
#: cut between the two would split what the reader sees as one character (an emoji
#: sequence, a subdivision flag whose halves would read as hidden tag text, a Hangul
#: syllable written as jamo).
_JOINED = re.compile("[\u200d\ufe00-\ufe0f\u1160-\u11ff\U0001f3fb-\U0001f3ff\U000e0000-\U000e007f]")
_REGIONAL = range(0x1F1E6, 0x1F200)  # flags are pairs of regional indicators
_LONGEST_CHARACTER = 32  # code points a cut steps back over to keep one character whole


def _inside_a_character(text: str, cut: int) -> bool:
    """Would a cut before ``text[cut]`` split one user-perceived character?"""
    if not 0 < cut < len(text):
        return False
    after, before = text[cut], text[cut - 1]
    if before == "\u200d" or _JOINED.match(after) or unicodedata.category(after)[0] == "M":
        return True
    if ord(after) in _REGIONAL and ord(before) in _REGIONAL:
        run = 0  # a cut inside a pair: an odd number of indicators before it in the run
        while cut - run > 0 and ord(text[cut - run - 1]) in _REGIONAL:
            run += 1
        return run % 2 == 1
    return False


def cut_point(text: str, cut: int, tail: bool) -> tuple[int, bool]:
    """``cut`` moved onto a nearby line start (True) or after a space, so lines and words
    stay whole where they can, and never inside a character sequence."""
    for mark, reach in (("\n", _BREAK_BACK), (" ", _SPACE_BACK)):
        if tail:  # from just before the cut: a cut at a line start stays there
            found = text.find(mark, cut - 1, cut + reach)
        else:
            found = text.rfind(mark, max(0, cut - reach), cut)  # not from the end
        if found >= 0 and (mark == "\n" or not _inside_a_character(text, found + 1)):
            return found + 1, mark == "\n"
    for _ in range(_LONGEST_CHARACTER):  # "Zalgo" text of marks alone: cut it anyway
        if not _inside_a_character(text, cut):
            break
        cut -= 1
    return cut, False


def fold_chars(
    lines: list[str], keep: int, tail: bool, html: Callable[[int, int], str] | None = None
) -> Folded | None:
    """A fold inside a line when the raw lines ``fold`` would show are too long to read
    through; None when they fit. Joined again, the two parts are the text exactly (with
    the one line break between them when the cut is at a line start). ``html(start, end)``
    writes a part of the joined lines (escaped text unless given: coloured output's spans)."""
    if _visible_span(lines, keep, tail) <= VISIBLE_CHARS:
        return None
    text = "\n".join(lines)
    if len(text) <= VISIBLE_CHARS + 500:  # folding away a few hundred characters helps nobody
        return None
    cut, whole_lines = cut_point(text, len(text) - VISIBLE_CHARS if tail else VISIBLE_CHARS, tail)
    before_end, blank = cut, ""
    if whole_lines:
        before_end -= 1  # the line break is the gap between the two blocks
        if text[before_end - 1 : before_end] == "\n":  # a blank last line before it shows
            blank = "\n"  # (see part_text)
    before, after = text[:before_end] + blank, text[cut:]
    hidden, visible = (before, after) if tail else (after, before)
    if not hidden.strip() or not visible:  # nothing worth a fold (blank lines only)
        return None
    write = html or (lambda start, end: escape(text[start:end], quote=False))
    shown_before, shown_after = write(0, before_end) + blank, write(cut, len(text))
    return Folded(
        Markup(shown_after if tail else shown_before),
        Markup(shown_before if tail else shown_after),
        hidden.count("\n") + 1,
        hidden_first=tail,
        total_lines=len(lines),
        hidden_chars=0 if whole_lines else len(hidden),
    )


def _raw_lines(text: str) -> list[str]:
    if not text:
        return []
    text = text.rstrip("\r\n")
    return _LINE_BREAK.split(text) if "\r" in text else text.split("\n")  # 7x faster


_LEADING_BLANK_LINES = re.compile(r"(?:[ \t\r]*\n)+")


def terminal_text(text: str) -> str:
    """A shell's output without the blank lines it opens with (`cmd 2>&1 | tail -3` prints an
    empty first row) and its closing line breaks: whitespace a reader cannot tell apart."""
    match = _LEADING_BLANK_LINES.match(text)
    return (text[match.end() :] if match else text).rstrip("\r\n")


def fold_text(text: str, keep: int, *, tail: bool = False, ansi: bool = False) -> Folded:
    """Plain text folded by lines, or inside a line when the lines to show are too long.
    ``ansi``: a terminal's output, whose colour codes (SGR) show as colours."""
    coloured = AnsiText.read(text) if ansi else None
    if coloured is not None:
        return _fold_coloured(coloured, keep, tail)
    lines = _raw_lines(text)
    by_chars = fold_chars(lines, keep, tail)
    if by_chars is not None:
        return by_chars
    return fold([escape(line, quote=False) for line in lines], keep, tail=tail)


def _fold_coloured(coloured: AnsiText, keep: int, tail: bool) -> Folded:
    """:func:`fold_text` of a text with colour codes: the folds are worked out on its plain
    text, as for any other, and each line or part written with its colours."""
    body = coloured.text.rstrip("\n")  # its line breaks are all "\n" (see AnsiText)
    lines = body.split("\n") if body else []
    by_chars = fold_chars(lines, keep, tail, coloured.html)
    if by_chars is not None:
        return by_chars
    # one line of HTML per line: the spans end at each line break (see AnsiText.html)
    return fold(coloured.html(0, len(body)).split("\n") if body else [], keep, tail=tail)


def fold_code(text: str, language: str | None, keep: int, *, head_only: bool = True) -> Folded:
    """Highlighted text folded after ``keep`` lines; text too long to show that way (a
    minified file) is folded inside its line, plain, as ``fold_text`` does."""
    by_chars = fold_chars(text.split("\n"), keep, False)
    if by_chars is not None:
        return by_chars
    lines = highlight_lines(text, language, keep if head_only else None) if text else []
    return fold(lines, keep)


#: Lines of a long shell command shown in its tool's head (a heredoc that writes a whole
#: file made the head of one call several screens tall, above its output).
COMMAND_HEAD_LINES = 12


def fold_command(command: str) -> tuple[Markup, Folded | None]:
    """A shell command as its head shows it, and the rest of it folded (None when it reads
    whole there: most commands, kept exactly as written)."""
    short = command.count("\n") <= COMMAND_HEAD_LINES + 3
    if short and len(command) <= VISIBLE_CHARS + 500:
        return Markup(escape(command, quote=False)), None
    folded = fold_text(command, COMMAND_HEAD_LINES)
    if folded.hidden is None:
        return Markup(escape(command, quote=False)), None
    return folded.visible, folded


_LINE_BREAK = re.compile("\r\n|\r|\n")


def plain_lines(text: str) -> list[str]:
    """Escaped lines; a lone ``\r`` (a progress bar redrawing itself) ends a line too, as
    the browser shows it: folding counted only ``\n``, so 21 redraws stayed unfolded."""
    return [escape(line, quote=False) for line in _raw_lines(text)]
