"""Syntax colours for both themes, generated from Pygments styles once per process.

Token rules are written once and read their colour from CSS variables; each theme only sets
the variables. That keeps the CSS that ships in every page small.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
# The code backgrounds of page.css (--code-bg) and the contrast every token must reach on
# them: WCAG AA for normal text is 4.5:1, a little margin for anti-aliasing.
LIGHT_CODE_BG, DARK_CODE_BG = "#f3f4f7", "#12141a"
MIN_CONTRAST = 4.6


def _colours(style_name: str, background: str) -> dict[str, tuple[str, bool, bool]]:
    """css class -> (colour, bold, italic) for tokens that have a colour in this style, each
    colour adjusted until it is readable on ``background``."""
    style = get_style_by_name(style_name)
    result = {}
    for token_type, css in STANDARD_TYPES.items():
        if not css:
            continue
        info = style.style_for_token(token_type)
        if info["color"]:
            colour = _readable("#" + info["color"], background)
            result[css] = (colour, bool(info["bold"]), bool(info["italic"]))
    return result


def _readable(colour: str, background: str) -> str:
    """``colour``, mixed step by step toward black (light background) or white (dark) until
    its contrast with ``background`` reaches MIN_CONTRAST."""
    toward = 0.0 if _luminance(background) > 0.5 else 255.0
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    for step in range(21):
        mixed = [round(c + (toward - c) * step / 20) for c in rgb]
        candidate = "#" + "".join(f"{c:02x}" for c in mixed)
        if _contrast(candidate, background) >= MIN_CONTRAST:
            return candidate
    return candidate


def _luminance(colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@lru_cache(maxsize=1)
def pygments_css() -> str:
    """One rule and one variable per look (light colour, dark colour, bold, italic), not
    per token class: 80 classes share 45 looks, and the dark colours are written twice (a
    chosen theme, the system's), so this cut the CSS every page carries from 7.4 KB to 4.1."""
    light = _colours(LIGHT_STYLE, LIGHT_CODE_BG)
    dark = _colours(DARK_STYLE, DARK_CODE_BG)
    looks: dict[tuple[str, str, bool, bool], list[str]] = {}
    for css in sorted(set(light) | set(dark)):
        light_colour, bold, italic = light.get(css, ("", False, False))
        dark_colour, dark_bold, dark_italic = dark.get(css, ("", False, False))
        if not light_colour:  # only the dark style colours it: its weight and slant then
            bold, italic = dark_bold, dark_italic
        looks.setdefault((light_colour, dark_colour, bold, italic), []).append(css)
    rules, light_vars, dark_vars = [], [], []
    for number, ((light_colour, dark_colour, bold, italic), classes) in enumerate(looks.items()):
        extra = (";font-weight:bold" if bold else "") + (";font-style:italic" if italic else "")
        members = (
            f":is({','.join(f'.{css}' for css in classes)})" if classes[1:] else f".{classes[0]}"
        )
        # a theme without a colour for it leaves the variable unset: the text's own colour
        fallback = "" if light_colour and dark_colour else ",inherit"
        rules.append(f":is(.hl,.code) {members}{{color:var(--h{number}{fallback}){extra}}}")
        if light_colour:
            light_vars.append(f"--h{number}:{light_colour}")
        if dark_colour:
            dark_vars.append(f"--h{number}:{dark_colour}")
    dark_block = ";".join(dark_vars)
    return (
        "\n"
        + "\n".join(rules)
        + f"\n:root{{{';'.join(light_vars)}}}"
        + f"\n@media screen{{:root[data-theme=dark]{{{dark_block}}}}}"  # print: light
        + "\n@media screen and (prefers-color-scheme: dark){:root:not([data-theme=light]){"
        + dark_block
        + "}}\n"
    )
