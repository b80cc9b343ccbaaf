"""The files a page is made from, and the CSS and scripts it inlines.

Templates and static files are found next to the package when installed from a wheel
(``exporter/_data``) or at the top of a source checkout. Every page carries its CSS and
scripts inline (a page is one self-contained file), so they are minified once per process.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = [
    "NOSCRIPT_CSS",
    "agent_context_css",
    "ansi_css",
    "asset_dir",
    "head_script",
    "live_css_and_script",
    "minify_css",
    "minify_js",
    "page_css_and_script",
    "shared_script",
]


def asset_dir(kind: str) -> Path:
    """``templates`` or ``static``: from the installed wheel, else from the source checkout."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_data" / kind, package.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"pi-session-export is missing its {kind}/ folder (broken install?)")


@lru_cache(maxsize=1)
def page_css_and_script() -> tuple[str, str]:
    """The page CSS (with Pygments colours for both themes) and the enhancement script."""
    from exporter.render.pygments_css import pygments_css

    folder = asset_dir("static")
    css = minify_css((folder / "page.css").read_text(encoding="utf-8")) + pygments_css()
    js = shared_script(folder, "page.js")
    return css, js


def shared_script(folder: Path, name: str) -> str:
    """``theme.js`` (the theme toggle every page has) followed by the page's own script."""
    return minify_js(
        "\n".join((folder / n).read_text(encoding="utf-8") for n in ("theme.js", name))
    )


@lru_cache(maxsize=1)
def head_script() -> str:
    """The stored theme, applied in <head> before the first paint."""
    return minify_js((asset_dir("static") / "theme-head.js").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def agent_context_css() -> str:
    """The System prompt and Tools cards' style, on the pages that have them only."""
    return minify_css((asset_dir("static") / "agent-context.css").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def ansi_css() -> str:
    """The terminal colours of tool output (``render/ansi.py``), on the pages that show some."""
    return minify_css((asset_dir("static") / "ansi.css").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def live_css_and_script() -> tuple[str, str]:
    """What a page served by ``pi-session watch`` adds: its status line and the script that
    reloads the page when the session changed."""
    folder = asset_dir("static")
    css = minify_css((folder / "live.css").read_text(encoding="utf-8"))
    return css, minify_js((folder / "live.js").read_text(encoding="utf-8"))


#: Without a script nothing re-aims a jump into a folded branch once the entries above it
#: have rendered, so `content-visibility` placeholders left such links 2,000 px off target;
#: and a link to an entry the filter hides shows it, with the turn and branch blocks that
#: hold it (the script switches to All instead).
NOSCRIPT_CSS = (
    ".entry{content-visibility:visible}.layout :is([data-entry-id],.branch,.branch-group,#damaged)"
    ":is(:target,:has(:target)){display:block!important}"
)


# Our own scripts only (static/*.js), written so that these are safe: comments are whole
# lines, /* */ blocks or "  // " after ; { } ) , and no string contains "//".
_JS_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_JS_LINE_COMMENT = re.compile(r"^[ \t]*//.*\n", re.M)
_JS_TRAILING_COMMENT = re.compile(r"(?<=[;{}),])[ \t]+// .*$", re.M)
_JS_INDENT = re.compile(r"^[ \t]+|[ \t]+$", re.M)


def minify_js(js: str) -> str:
    """Drop comments, indentation and blank lines: the script ships inside every page."""
    js = _JS_BLOCK_COMMENT.sub("", js)
    js = _JS_LINE_COMMENT.sub("", js)
    js = _JS_TRAILING_COMMENT.sub("", js)
    js = _JS_INDENT.sub("", js)
    return "\n".join(line for line in js.split("\n") if line)


_CSS_STRING = re.compile(r'("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')')


def minify_css(css: str) -> str:
    """Drop comments, line breaks, indentation, the spaces after ``:`` and ``,`` and around
    the combinators ``>`` and ``~``, and each rule's last ``;`` (never inside a quoted
    ``content``): the CSS ships inside every page. A ``:`` in a selector is never followed
    by a space, so only declarations and lists lose one; the stylesheets have no ``>`` or
    ``~`` outside selectors and strings (no ``url()``, no media ranges)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"\s*\n\s*", " ", css)
    css = re.sub(r"\s*([{};])\s*", r"\1", css).strip()
    parts = _CSS_STRING.split(css)  # odd items are the strings, kept as written
    for index in range(0, len(parts), 2):
        part = re.sub(r"([:,]) +", r"\1", parts[index])
        part = re.sub(r" *([>~]) *", r"\1", part)
        parts[index] = part.replace(";}", "}")
    return "".join(parts)
