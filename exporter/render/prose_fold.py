"""A long pasted prompt folded after its first screen, never cut.

A user who pastes a 500-line log or file into a prompt made a card many screens tall that
the reader had to scroll past. Markdown cannot be cut anywhere (a code fence or a paragraph
would break), so the cut is a blank line outside any fence, and both parts are rendered.
"""

from __future__ import annotations

import re

LONG_LINES = 150  # fold a prompt longer than this many lines...
LONG_CHARS = 15_000  # ...or characters
HEAD_LINES = 40  # show about this many lines
HEAD_CHARS = 4_000  # or this many characters, whichever comes first
MIN_HIDDEN_LINES = 20  # folding less is not worth a click

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def split_long_prose(text: str) -> tuple[str, str, int] | None:
    """``(shown, folded, folded line count)`` for a long Markdown text, else None."""
    if text.count("\n") < LONG_LINES and len(text) <= LONG_CHARS:
        return None
    lines = text.split("\n")
    fence: str | None = None  # the open fence's marker, e.g. "```"
    size = 0
    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
        elif fence is not None and opening and _closes(opening.group(1), line, fence):
            fence = None
        size += len(line) + 1
        if fence is None and not line.strip() and (index >= HEAD_LINES or size >= HEAD_CHARS):
            hidden = lines[index + 1 :]
            if sum(1 for h in hidden if h.strip()) < MIN_HIDDEN_LINES:
                return None
            return "\n".join(lines[:index]), "\n".join(hidden), len(hidden)
    return None


def _closes(marker: str, line: str, fence: str) -> bool:
    """A closing fence: the same character, at least as long, nothing after it."""
    return marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker) :]
