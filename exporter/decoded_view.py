"""Text as a reader will see it, for the secret scanner, with a way back to the raw offsets.

The page decodes what the file holds: Markdown drops a backslash before punctuation
(``ghp\\_…``), character references become characters (``&#103;hp_…``), a bare address's
link text is shown percent-decoded (``%67hp_…``) and invisible Unicode tag text is shown as
the ASCII it spells. Zero-width characters and soft hyphens vanish from view (and from a
copy-paste). A token written any of these ways is whole on the page though no detector
matches the raw string, so the scanner also reads this decoded view and redacts the raw span
each of its finds came from.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass


def _escaped(match: str) -> str | None:
    return match[1]


def _reference(match: str) -> str | None:
    shown = html.unescape(match)
    if shown == match:
        return None
    return "" if _HIDDEN.fullmatch(shown) else shown  # `&#8203;` shows nothing


def _unicode_escape(match: str) -> str | None:
    return chr(int(match[2:], 16))


def _percent(match: str) -> str | None:
    return chr(int(match[1:], 16))


def _quote(match: str) -> str | None:
    return "'"


def _dropped(match: str) -> str | None:
    return ""


def _hidden(match: str) -> str:
    code = ord(match) - 0xE0000  # tag characters spell ASCII; the rest show nothing
    return chr(code) if 0x20 <= code <= 0x7E else ""


_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")

# Each form with the character it starts with, searched only in a string holding that
# character: over the three largest fixtures' strings 17 ms, where one pattern of all forms
# searched in every string took 206 ms (a third of the scan itself).
_FORMS = (
    # a Markdown backslash escape of punctuation a token or password may hold; not of a
    # quote, bracket or bar, which end one (`\"` in code, `\|` in a table cell), nor of a
    # backslash (a Windows path or a regex would decode at every other character)
    ("\\", re.compile(r"\\[!#$%&*+\-./:=?@^_~]"), _escaped),
    # JSON's `\u0067` in printed JSON, printable ASCII only (`\u0067hp_…` is a token)
    ("\\u", re.compile(r"\\u00[2-7][0-9A-Fa-f]"), _unicode_escape),
    ("&", _REFERENCE, _reference),
    ("%", re.compile(r"%[2-7][0-9A-Fa-f]"), _percent),  # printable ASCII: what tokens hold
    # a shell's quote inside single quotes, `'"'"'` or `'\''`: the command run (`psql -c
    # '… PASSWORD '"'"'X'"'"''`) holds a plain `'` there
    ("'\"'\"'", re.compile(r"'\"'\"'"), _quote),
    ("'\\''", re.compile(r"'\\''"), _quote),
    # a terminal's escape codes: the page and the Markdown drop them, so `grep --color`'s
    # `AKIA\x1b[m…` shows the key whole (CSI sequences as the page reads them, and OSC's
    # title and hyperlink sequences, ended by BEL or ST)
    (
        "\x1b",
        re.compile(
            "\x1b\\[[0-9;:?]*[ !#$%()*+,\\-./]*[@-~]|\x1b\\][^\x07\x1b]{0,2048}(?:\x07|\x1b\\\\)"
        ),
        _dropped,
    ),
)
_HIDDEN = re.compile(r"[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]")


@dataclass(frozen=True)
class DecodedView:
    """``text`` decoded, and for each run of it the raw span it came from."""

    text: str
    _starts: list[int]  # decoded offset where each piece starts
    _raw: list[tuple[int, int, bool]]  # the piece's raw span; True: copied as it is
    _changes: list[int]  # decoded offsets where something was decoded or left out

    def around_changes(self, reach: int = 1024) -> list[tuple[int, int]]:
        """Spans of ``text`` within ``reach`` of a change, merged: only there can the
        decoded text hold a secret the text as written does not show whole (a long string
        with one escaped dot is not scanned twice)."""
        spans: list[tuple[int, int]] = []
        for change in self._changes:
            start, end = max(change - reach, 0), min(change + reach, len(self.text))
            if spans and start <= spans[-1][1]:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        return spans

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """The raw span holding decoded ``text[start:end]`` (``end > start``)."""
        return self._raw_start(start), self._raw_end(end - 1)

    def _piece(self, position: int) -> int:
        return bisect.bisect_right(self._starts, position) - 1

    def _raw_start(self, position: int) -> int:
        piece = self._piece(position)
        raw_start, _, literal = self._raw[piece]
        return raw_start + (position - self._starts[piece]) if literal else raw_start

    def _raw_end(self, last: int) -> int:
        piece = self._piece(last)
        raw_start, raw_end, literal = self._raw[piece]
        return raw_start + (last - self._starts[piece]) + 1 if literal else raw_end


def decoded_view(text: str) -> DecodedView | None:
    """The decoded view of ``text``; None when a reader sees it as written."""
    found: list[tuple[int, int, str]] = []
    for first, pattern, decode in _FORMS:
        if first in text:
            for match in pattern.finditer(text):
                shown = decode(match.group())
                if shown is not None:
                    found.append((match.start(), match.end(), shown))
    if not text.isascii():
        found += ((m.start(), m.end(), _hidden(m.group())) for m in _HIDDEN.finditer(text))
    if not found:
        return None
    return replaced_view(text, sorted(found))


def replaced_view(text: str, found: list[tuple[int, int, str]]) -> DecodedView:
    """``text`` with each ``(start, end, shown)`` of ``found`` (in order) read as ``shown``,
    mapped back to it; a span inside the one before is skipped (that one is shown)."""
    parts: list[str] = []
    starts: list[int] = []
    raw: list[tuple[int, int, bool]] = []
    changes: list[int] = []
    length = position = 0
    for start, end, shown in found:
        if start < position:  # inside the one before (``\&#103;``): that one is shown
            continue
        if start > position:
            starts.append(length)
            raw.append((position, start, True))
            parts.append(text[position:start])
            length += start - position
        changes.append(length)
        if shown:  # a deleted character leaves no piece: the spans around it cover it
            starts.append(length)
            raw.append((start, end, False))
            parts.append(shown)
            length += len(shown)
        position = end
    if position < len(text):
        starts.append(length)
        raw.append((position, len(text), True))
        parts.append(text[position:])
    return DecodedView("".join(parts), starts, raw, changes)
