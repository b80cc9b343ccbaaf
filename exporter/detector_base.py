"""What every secret detector is: a name, cheap pre-checks and the spans it finds."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Finding:
    """A secret at ``text[start:end]`` found by ``detector`` (the name, not the secret)."""

    start: int
    end: int
    detector: str


class Detector:
    """One named detector. ``triggers``/``lower_triggers`` are cheap substring pre-checks."""

    name: str
    summary: str
    triggers: tuple[str, ...] = ()
    lower_triggers: tuple[str, ...] = ()
    #: The shortest text it can find anything in: shorter strings skip its pre-checks.
    min_length: int = 8
    #: Knows a secret by its shape alone (a token format), so it finds every copy itself;
    #: a context detector (``NAME=value``) knows only the copy that has the context.
    by_shape: bool = False
    #: Also looked at in any text that is not all ASCII (words of other scripts, for which a
    #: trigger per word would cost every string a substring pass each).
    non_ascii: bool = False
    #: Looked at in every text, trigger or not (a user's own regex has no trigger).
    always: bool = False

    def find(self, text: str, lower: str) -> Iterator[Span]:  # pragma: no cover
        """Spans of secrets; ``lower`` is ``text`` lowercased, index for index."""
        raise NotImplementedError


# `base64` wraps at 76 columns, `openssl base64` and YAML block scalars at 64: a block goes on
# over line breaks (and the indentation of a YAML block)
_NEXT_BASE64_LINE = re.compile(r"\r?\n[ \t]*([A-Za-z0-9+/]{1,200}={0,2})(?=[ \t]*(?:\r?\n|\Z))")


def wrapped_base64_end(text: str, end: int, start: int) -> int:
    """Where a base64 block whose first line is ``text[start:end]`` ends when wrapped at a
    fixed width: lines go on while the one before is full width (60+ columns, no ``=``
    padding). A short line is the last, and only when it completes the block (padded
    base64 is a multiple of 4 long), so a word after a one-line blob (``EOF``) is not taken."""
    width = total = end - start
    while width >= 60 and text[end - 1 : end] != "=":
        line = _NEXT_BASE64_LINE.match(text, end)
        if line is None:
            break
        width = len(line.group(1))
        if width < 60 and not line.group(1).endswith("=") and (total + width) % 4:
            break
        end, total = line.end(1), total + width
    return end
