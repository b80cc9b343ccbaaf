"""Terminal colours in a tool's output (SGR escape codes) read into styles, for the page.

A test runner's red ``FAIL`` or a diff's green ``+`` is written as ``␛[31m`` ... ``␛[0m``;
the page used to drop those codes and show plain text. :class:`AnsiText` reads them: the
plain text (what folds, counts and searches work on) and, for any part of it, escaped HTML
whose spans carry classes only (the page's policy allows no ``style`` attribute). The
classes and their colours are ``static/ansi.css``, inlined only on a page that uses them.

One design choice keeps that stylesheet fixed (one hash) and every colour readable: there
are 16 colours, theme variables each readable on the output's background in the light and
the dark theme. A 256-colour or truecolour code takes the nearest of them (by its hue, as a
terminal of 16 colours shows it; a grey by its lightness), so an ``rgb(250,250,250)`` meant
for a black terminal never vanishes on a white page. (Per-page classes for the exact colours
used would need a stylesheet, and a hash, made per page, and could not promise contrast.)

Only SGR sequences (``␛[`` parameters ``m``) are read. Any other escape sequence (a cursor
move, ``␛[K``, a window title) stays in the text and is treated as before, page-wide, by
:func:`exporter.formatting.show_controls`.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from html import escape

__all__ = ["ANSI_SPAN", "AnsiText", "has_colour", "nearest16", "nearest256"]

#: An SGR sequence: CSI, parameters (``;`` between them, ``:`` inside one), ``m``.
SGR = re.compile("\x1b\\[([0-9;:]*)m")

#: What a span of :meth:`AnsiText.html` starts with, and no other markup on a page (the
#: page's other ``<span class="a…">`` are the agent-context cards' ``ac-…``).
ANSI_SPAN = re.compile('<span class="a(?:[fbi]|[12349][ "])')

# A style: foreground, background (0-15 or None), then bold, dim, italic, underline,
# inverse, strike-through.
Style = tuple[int | None, int | None, bool, bool, bool, bool, bool, bool]
_FG, _BG, _BOLD, _DIM, _ITALIC, _UNDERLINE, _INVERSE, _STRIKE = range(8)
_PLAIN: Style = (None, None, False, False, False, False, False, False)
_FLAGS = {1: _BOLD, 2: _DIM, 3: _ITALIC, 4: _UNDERLINE, 21: _UNDERLINE, 7: _INVERSE, 9: _STRIKE}
_OFF = {22: (_BOLD, _DIM), 23: (_ITALIC,), 24: (_UNDERLINE,), 27: (_INVERSE,), 29: (_STRIKE,)}
_FLAG_CLASSES = ((_BOLD, "a1"), (_DIM, "a2"), (_ITALIC, "a3"), (_UNDERLINE, "a4"), (_STRIKE, "a9"))
#: A parameter longer than this is no code we know (and ``int`` of 5,000 digits raises).
_LONGEST_PARAMETER = 5


class AnsiText:
    """Text with its SGR sequences read: :attr:`text` without them (its line breaks all
    ``\\n``: a lone ``\\r`` ends a line, as the page shows it), and the style of each part."""

    __slots__ = ("_classes", "_starts", "text")

    def __init__(self, text: str) -> None:
        parts = SGR.split(text)  # text, parameters, text, parameters, ..., text
        plain: list[str] = [parts[0]]
        starts: list[int] = [0]
        classes: list[str] = [""]
        style, length = _PLAIN, len(parts[0])
        for index in range(1, len(parts), 2):
            style, name = _step(style, parts[index])
            piece = parts[index + 1]
            if name != classes[-1]:
                if starts[-1] == length:  # the last style covered nothing: replace it
                    starts.pop()
                    classes.pop()
                if not classes or classes[-1] != name:
                    starts.append(length)
                    classes.append(name)
            if piece:
                plain.append(piece)
                length += len(piece)
        joined = "".join(plain)
        if "\r" in joined:  # every line break one "\n" (a "\r\n" is one character less)
            starts = _without_crs(joined, starts)
            joined = joined.replace("\r\n", "\n").replace("\r", "\n")
        self.text = joined
        self._starts = starts
        self._classes = classes

    @classmethod
    def read(cls, text: str) -> AnsiText | None:
        """The text read, or None when it has no SGR sequence (most outputs: they keep
        the plain path, byte for byte)."""
        return cls(text) if "\x1b[" in text and SGR.search(text) else None

    def html(self, start: int = 0, end: int | None = None) -> str:
        """``text[start:end]`` as escaped HTML, each styled part in a ``<span>`` that ends
        before a line break and opens again after it: a fold may cut between any two lines,
        and each part it shows keeps its colours."""
        text, starts, classes = self.text, self._starts, self._classes
        end = len(text) if end is None else end
        first = bisect_right(starts, start) - 1
        stops = [*starts[first + 1 : bisect_left(starts, end)], end]
        out: list[str] = []
        at = start
        for name, stop in zip(classes[first : first + len(stops)], stops, strict=True):
            piece = escape(text[at:stop], quote=False)
            at = stop
            if not name or not piece:
                out.append(piece)
            elif "\n" not in piece:
                out.append(f'<span class="{name}">{piece}</span>')
            else:
                opening = f'<span class="{name}">'
                out.append(
                    "\n".join(
                        f"{opening}{part}</span>" if part else "" for part in piece.split("\n")
                    )
                )
        return "".join(out)


def _without_crs(text: str, starts: list[int]) -> list[int]:
    """Style offsets in ``text`` moved to where they are once each ``\\r\\n`` is one
    character."""
    pairs = [m.start() for m in re.finditer("\r\n", text)]
    if not pairs:
        return starts
    return [at - bisect_right(pairs, at - 2) for at in starts]


def has_colour(html: str) -> bool:
    """Whether rendered HTML holds a span of :class:`AnsiText` (then the page needs
    ``static/ansi.css``)."""
    return ANSI_SPAN.search(html) is not None


@lru_cache(maxsize=1024)
def _step(style: Style, parameters: str) -> tuple[Style, str]:
    """The style after one SGR sequence, and its classes (an output repeats a few
    sequences thousands of times: a test runner's green and reset)."""
    after = _apply(style, parameters)
    return after, _classes(after)


def _apply(style: Style, parameters: str) -> Style:
    """``style`` after one SGR sequence's parameters. Codes we do not draw (blink, fonts,
    overline) are skipped; a colour code missing its values ends the sequence (xterm
    ignores it too), so ``␛[38;5m`` changes nothing."""
    state = list(style)
    items = parameters.split(";")
    i = 0
    while i < len(items):
        item = items[i]
        i += 1
        if ":" in item:  # ITU T.416 form: 38:5:N, 38:2::R:G:B, 4:3 (curly underline)
            _apply_colon(state, item.split(":"))
            continue
        code = _number(item) if item else 0
        if code == 0:
            state = list(_PLAIN)
        elif code in _FLAGS:
            state[_FLAGS[code]] = True
        elif code in _OFF:
            for flag in _OFF[code]:
                state[flag] = False
        elif 30 <= code <= 37 or 90 <= code <= 97:
            state[_FG] = code - 30 if code < 90 else code - 82
        elif 40 <= code <= 47 or 100 <= code <= 107:
            state[_BG] = code - 40 if code < 100 else code - 92
        elif code == 39:
            state[_FG] = None
        elif code == 49:
            state[_BG] = None
        elif code in (38, 48, 58):
            colour, used = _extended(items[i:])
            if used == 0:
                break  # malformed: the rest of the sequence is no code we can trust
            i += used
            if colour is not None and code != 58:  # 58: underline colour, not drawn
                state[_FG if code == 38 else _BG] = colour
    return tuple(state)  # type: ignore[return-value]


def _apply_colon(state: list[int | bool | None], parts: list[str]) -> None:
    """One parameter in the colon form (ITU T.416) applied to ``state``."""
    code = _number(parts[0]) if parts[0] else 0
    if code in (38, 48):
        values = parts[1:]
        if values[:1] == ["2"] and len(values) >= 5:  # 38:2:[colour space]:R:G:B
            values = ["2", *values[-3:]]
        colour, used = _extended(values)
        if used and colour is not None:
            state[_FG if code == 38 else _BG] = colour
    elif code == 4:  # 4:0 no underline, 4:1 to 4:5 a kind of underline
        state[_UNDERLINE] = _number(parts[1]) not in (0, -1) if len(parts) > 1 else True


def _extended(values: list[str]) -> tuple[int | None, int]:
    """The 16-colour index of ``5;N`` or ``2;R;G;B`` (None: out of range) and how many
    values that took (0: no such colour here)."""
    kind = values[0] if values else ""
    if kind == "5" and len(values) >= 2:
        index = _number(values[1])
        return (nearest256(index) if 0 <= index <= 255 else None), 2
    if kind == "2" and len(values) >= 4:
        rgb = [_number(v) for v in values[1:4]]
        return (nearest16(*rgb) if all(0 <= c <= 255 for c in rgb) else None), 4
    return None, 0


def _number(item: str) -> int:
    """A parameter's value; -1 for one that is empty, not digits or too long to be a code."""
    return int(item) if item.isdigit() and len(item) <= _LONGEST_PARAMETER else -1


@lru_cache(maxsize=512)
def _classes(style: Style) -> str:
    """The span's classes: ``af<N>`` colour, ``ab<N>`` background (a tint of colour N),
    ``ai``/``ai<N>`` inverse (its background colour N, its text the output's background),
    ``a1`` bold, ``a2`` dim, ``a3`` italic, ``a4`` underline, ``a9`` struck through."""
    fg, bg = style[_FG], style[_BG]
    names = []
    if style[_INVERSE]:  # the colours swap: the text's colour fills the background
        names.append("ai" if fg is None else f"ai{fg}")
        if bg is not None:
            names.append(f"af{bg}")
    else:
        if fg is not None:
            names.append(f"af{fg}")
        if bg is not None:
            names.append(f"ab{bg}")
    names.extend(name for flag, name in _FLAG_CLASSES if style[flag])
    return " ".join(names)


# --- 256 colours and truecolour as the nearest of the 16 -----------------------------------


def nearest256(index: int) -> int:
    """The 16-colour index showing 256-colour ``index``: 0-15 are those colours; 16-231 a
    6x6x6 cube and 232-255 greys, as xterm draws them."""
    if index < 16:
        return index
    if index >= 232:
        grey = 8 + (index - 232) * 10
        return nearest16(grey, grey, grey)
    cube = index - 16
    level = (0, 95, 135, 175, 215, 255)
    return nearest16(level[cube // 36], level[cube // 6 % 6], level[cube % 6])


#: The 16-colour index of each sixth of the hue circle: red, yellow, green, cyan, blue, magenta.
_HUES = (1, 3, 2, 6, 4, 5)


@lru_cache(maxsize=4096)
def nearest16(red: int, green: int, blue: int) -> int:
    """The 16-colour index closest to an RGB colour: a grey (channels within 32 of each
    other) by its lightness (black, bright black, white, bright white); any other colour by
    its hue (the nearest of the six), bright when its strongest channel is 200 or more
    (``rgb(215,0,0)`` bright red, ``rgb(175,0,0)`` red), black when it is under 48."""
    high, low = max(red, green, blue), min(red, green, blue)
    spread = high - low
    if spread < 32:
        light = (red + green + blue) / 3
        return 0 if light < 48 else 8 if light < 144 else 7 if light < 224 else 15
    if high < 48:
        return 0
    if red == high:
        hue = (green - blue) / spread % 6
    elif green == high:
        hue = (blue - red) / spread + 2
    else:
        hue = (red - green) / spread + 4
    colour = _HUES[int(hue + 0.5) % 6]
    return colour + 8 if high >= 200 else colour
