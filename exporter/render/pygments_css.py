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


def _colours(style_name: str) -> dict[str, tuple[str, bool, bool]]:
    """css class -> (colour, bold, italic) for tokens that have a colour in this style."""
    style = get_style_by_name(style_name)
    result = {}
    for token_type, css in STANDARD_TYPES.items():
        if not css:
            continue
        info = style.style_for_token(token_type)
        if info["color"]:
            result[css] = ("#" + info["color"], bool(info["bold"]), bool(info["italic"]))
    return result


@lru_cache(maxsize=1)
def pygments_css() -> str:
    light = _colours(LIGHT_STYLE)
    dark = _colours(DARK_STYLE)
    classes = sorted(set(light) | set(dark))
    rules = []
    for css in classes:
        bold = light.get(css, dark.get(css, ("", False, False)))[1]
        italic = light.get(css, dark.get(css, ("", False, False)))[2]
        extra = (";font-weight:bold" if bold else "") + (";font-style:italic" if italic else "")
        rules.append(f".hl .{css},.code .{css}{{color:var(--h-{css},inherit){extra}}}")

    def variables(colours: dict[str, tuple[str, bool, bool]]) -> str:
        return ";".join(f"--h-{css}:{colour}" for css, (colour, _, _) in sorted(colours.items()))

    return (
        "\n"
        + "\n".join(rules)
        + f"\n:root{{{variables(light)}}}"
        + f"\n:root[data-theme=dark]{{{variables(dark)}}}"
        + "\n@media (prefers-color-scheme: dark){:root:not([data-theme=light]){"
        + variables(dark)
        + "}}\n"
    )
