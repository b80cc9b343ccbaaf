"""The files a page is made from, and the CSS and scripts it inlines.

Templates and static files are found next to the package when installed from a wheel
(``exporter/_data``) or at the top of a source checkout. Every page carries its CSS and
scripts inline (a page is one self-contained file), so they are minified once per process,
and kept minified on disk for the next one (``template_cache.cached_text``).
"""

from __future__ import annotations

import hashlib
import re
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

from exporter.render.template_cache import cached_text, text_key

__all__ = [
    "NOSCRIPT_CSS",
    "agent_context_css",
    "ansi_css",
    "asset_dir",
    "head_script",
    "live_css_and_script",
    "minified_file",
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
    css = minified_file(folder, "page.css") + pygments_css()
    js = shared_script(folder, "page.js")
    return css, js


def shared_script(folder: Path, name: str) -> str:
    """``theme.js`` (the theme toggle every page has) followed by the page's own script."""
    source = "\n".join((folder / n).read_text(encoding="utf-8") for n in ("theme.js", name))
    return _minified("js", f"theme+{name}", source)


@lru_cache(maxsize=1)
def head_script() -> str:
    """The stored theme, applied in <head> before the first paint."""
    return minified_file(asset_dir("static"), "theme-head.js")


@lru_cache(maxsize=1)
def agent_context_css() -> str:
    """The System prompt and Tools cards' style, on the pages that have them only."""
    return minified_file(asset_dir("static"), "agent-context.css")


@lru_cache(maxsize=1)
def ansi_css() -> str:
    """The terminal colours of tool output (``render/ansi.py``), on the pages that show some."""
    return minified_file(asset_dir("static"), "ansi.css")


@lru_cache(maxsize=1)
def live_css_and_script() -> tuple[str, str]:
    """What a page served by ``pi-session watch`` adds: its status line and the script that
    reloads the page when the session changed."""
    folder = asset_dir("static")
    return minified_file(folder, "live.css"), minified_file(folder, "live.js")


def minified_file(folder: Path, name: str) -> str:
    """A static ``.css`` or ``.js`` file minified (through the disk cache)."""
    kind = "css" if name.endswith(".css") else "js"
    return _minified(kind, name, (folder / name).read_text(encoding="utf-8"))


def _minified(kind: str, label: str, source: str) -> str:
    """``minify_css`` or ``minify_js`` (``kind``) of ``source``: ~60 ms of every export
    before the disk cache kept them (a page's CSP hashes what it inlines, whichever)."""
    minify = minify_css if kind == "css" else minify_js
    fingerprint = _minifier_fingerprint()
    if fingerprint is None:
        return minify(source)
    key = text_key(kind, fingerprint, source)
    return cached_text(f"{kind}-{label}", key, lambda: minify(source))


@lru_cache(maxsize=1)
def _minifier_fingerprint() -> str | None:
    """What a minified text depends on besides its source: this module's code (the
    minifiers), and the Python that runs it (its ``re``, its Unicode tables); None when
    the code cannot be read (then nothing is cached)."""
    try:
        code = Path(__file__).read_bytes()
    except OSError:
        return None
    return text_key(hashlib.sha256(code).hexdigest(), sys.version, unicodedata.unidata_version)


#: Without a script nothing re-aims a jump into a folded branch once the entries above it
#: have rendered, so `content-visibility` placeholders left such links 2,000 px off target;
#: and a link to an entry the filter hides shows it, with the turn and branch blocks that
#: hold it (the script switches to All instead).
NOSCRIPT_CSS = (
    ".entry{content-visibility:visible}.layout :is([data-entry-id],.branch,.branch-group,#damaged)"
    ":is(:target,:has(:target)){display:block!important}"
)


# --- scripts ---------------------------------------------------------------------------
#
# A real tokenizer, not regexes: strings, template literals, regular expressions and
# comments are read whole, so nothing inside them is touched. Between two tokens the
# minifier writes nothing, one space (where the two would otherwise read as one token, as
# in ``a + +b``, ``return x`` or ``/re/ in``) or one line break: a break is kept wherever
# the source had one, unless the token before it cannot end a statement (``{ ; , (`` or an
# operator still waiting for its right side) or the token after it cannot start one
# (``} ) ] , ;`` ``.`` or a binary operator): only there can a line break never decide
# where a semicolon goes (``a\n++b``, ``return\nx`` keep theirs). Anything the tokenizer
# cannot read, or a ``/`` it cannot tell a division from a regular expression by without
# parsing, leaves the script as written; so does an output that would hold more
# ``</script``, ``<script`` or ``<!--`` than the source (the script is inlined into HTML).


def _spaced(words: str) -> frozenset[str]:
    """The set of the space-separated ``words``."""
    return frozenset(words.split())


_JS_PUNCTUATORS = (
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
    "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=",
    "/=", "%=", "&=", "|=", "^=", "<<", ">>", "**",
    "{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "+", "-", "*", "/", "%", "&", "|",
    "^", "!", "~", "?", ":", "=", ".",
)  # fmt: skip
#: One pattern for every punctuator, longest first (Python tries alternatives in order).
_JS_PUNCTUATOR = re.compile(
    "|".join(re.escape(text) for text in sorted(_JS_PUNCTUATORS, key=len, reverse=True))
)
#: Every start of a punctuator, a comment (``//``, ``/*``) or an HTML-like comment or end
#: tag: two tokens whose joint text begins one of these must stay apart.
_JS_JOINS = frozenset(
    text[:n]
    for text in (*_JS_PUNCTUATORS, "//", "/*", "<!--", "-->", "</")
    for n in range(1, len(text) + 1)
)
#: Words after which ``/`` starts a regular expression, not a division (unless the word
#: is a property name: ``o.in / 2``).
_JS_REGEX_AFTER_WORDS = _spaced("return typeof instanceof in new delete void throw case do else")
#: Words that are keywords in one place and names in another (``for (x of /re/…)`` but
#: ``of / 2``; ``await``, ``yield`` likewise): a ``/`` after one leaves the script as written.
_JS_REGEX_OR_DIVISION_WORDS = _spaced("of await yield")
#: Words whose ``( … )`` is followed by a statement, so a ``/`` after the ``)`` starts a
#: regular expression (``if (s) /^ +$/.test(s)``), where after any other ``)`` it divides.
_JS_CONDITION_WORDS = _spaced("if while for with")
#: Tokens after which a word is a property name, never a keyword.
_JS_MEMBER_ACCESS = _spaced(". ?.")
#: Tokens after which a line break is never where a semicolon would go.
_JS_BREAK_FREE_AFTER = _spaced(
    "{ ( [ ; , . ?. ... : ? = += -= *= /= %= **= <<= >>= >>>= &= |= ^= &&= ||= ??= == != "
    "=== !== < > <= >= << >> >>> + - * / % ** & | ^ ! ~ && || ??"
)
#: Tokens before which a line break is never where a semicolon would go (none can start
#: a statement or a class member; ``++ -- ( [ + - /`` can start a statement and ``*`` a
#: generator method after a field, ``class A { x\n*g() {} }``: they keep their line break).
_JS_BREAK_FREE_BEFORE = _spaced(
    "} ) ] , ; . ?. : ? = += -= *= /= %= **= <<= >>= >>>= &= |= ^= &&= ||= ??= == != === "
    "!== < > <= >= << >> >>> % ** & | ^ && || ??"
)
#: Words that a line break after changes (``return\nx`` returns nothing): never joined.
_JS_RESTRICTED_WORDS = _spaced("return throw break continue yield async await let get set static")
_JS_LINE_BREAKS = "\n\r\u2028\u2029"
#: What the HTML parser reads inside a <script> element: an end tag, or the start of an
#: escaped part in which ``<script`` changes where the element ends.
_HTML_IN_SCRIPT = ("</script", "<script", "<!--")
_JS_NUMBER = re.compile(
    r"0[xX][0-9a-fA-F_]+n?|0[oO][0-7_]+n?|0[bB][01_]+n?"
    r"|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?n?"
)
#: A run of ASCII spaces and line breaks (other spaces are read one at a time), and a line
#: comment's text.
_JS_BLANKS = " \t\v\f" + _JS_LINE_BREAKS
_JS_BLANK_RUN = re.compile(f"[{_JS_BLANKS}]+")
_JS_LINE_COMMENT = re.compile(r"//[^\n\r\u2028\u2029]*")
_JS_WORD = re.compile(r"(?:[\w$]|\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]+\}|[^\x00-\x7f\s\ufeff])+")


class _UnreadableScript(ValueError):
    """The tokenizer met something it does not read with certainty."""


def _is_js_space(char: str) -> bool:
    return char in " \t\v\f\u00a0\ufeff" or (char > "\x7f" and unicodedata.category(char) == "Zs")


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char in "_$\\" or (char > "\x7f" and not _is_js_space(char))


def _skip_quoted(js: str, start: int, quote: str) -> int:
    """The end of the string starting at ``start`` (its opening quote)."""
    index = start + 1
    while index < len(js):
        char = js[index]
        if char == "\\":
            index += 2
        elif char == quote:
            return index + 1
        elif char in "\n\r":
            break
        else:
            index += 1
    raise _UnreadableScript(f"unterminated string at {start}")


def _skip_template_part(js: str, start: int) -> tuple[int, bool]:
    """The end of the template text starting after ``start`` (its ` or }), and whether it
    stopped at a ``${`` (a substitution follows) rather than the closing `."""
    index = start + 1
    while index < len(js):
        char = js[index]
        if char == "\\":
            index += 2
        elif char == "`":
            return index + 1, False
        elif js.startswith("${", index):
            return index + 2, True
        else:
            index += 1
    raise _UnreadableScript(f"unterminated template at {start}")


def _skip_regex(js: str, start: int) -> int:
    """The end of the regular expression literal starting at ``start`` (flags included)."""
    index, in_class = start + 1, False
    while index < len(js):
        char = js[index]
        if char in _JS_LINE_BREAKS:
            break
        if char == "\\":
            index += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            flags = _JS_WORD.match(js, index + 1)
            return flags.end() if flags else index + 1
        index += 1
    raise _UnreadableScript(f"unterminated regular expression at {start}")


def _js_tokens(js: str) -> list[tuple[str, str, bool]]:
    """``(kind, text, broken)`` for each token: ``kind`` is word, number, string, template
    (``template-open`` when a substitution follows), regex or punct; ``broken``: a line
    break (or a comment holding one) stood between it and the token before."""
    tokens: list[tuple[str, str, bool]] = []
    braces: list[bool] = []  # one per open {, True where it opened a template substitution
    parens: list[bool] = []  # one per open (, True where it holds an if/while/for/with's head
    index, broken, after_condition = 0, False, False
    while index < len(js):
        char = js[index]
        if char in _JS_BLANKS:
            blank = _JS_BLANK_RUN.match(js, index).group()  # type: ignore[union-attr]
            broken = broken or any(c in blank for c in _JS_LINE_BREAKS)
            index += len(blank)
            continue
        if char > "\x7f" and _is_js_space(char):
            index += 1
            continue
        if char == "/" and js.startswith("//", index):
            index = _JS_LINE_COMMENT.match(js, index).end()  # type: ignore[union-attr]
            continue
        if char == "/" and js.startswith("/*", index):
            end = js.find("*/", index + 2)
            if end < 0:
                raise _UnreadableScript(f"unterminated comment at {index}")
            broken = broken or any(c in js[index:end] for c in _JS_LINE_BREAKS)
            index = end + 2
            continue
        if char in "<-" and (
            js.startswith("<!--", index) or (js.startswith("-->", index) and (not tokens or broken))
        ):
            raise _UnreadableScript(f"HTML-like comment at {index}")
        start, kind, closes_condition = index, "punct", False
        if char in "\"'":
            index, kind = _skip_quoted(js, index, char), "string"
        elif char == "`" or (char == "}" and braces and braces[-1]):
            if char == "}":
                braces.pop()
            index, opened = _skip_template_part(js, index)
            kind = "template-open" if opened else "template"
            if opened:
                braces.append(True)
        elif (char.isdecimal() or char == ".") and (number := _JS_NUMBER.match(js, index)):
            index, kind = number.end(), "number"
            if index < len(js) and _is_word_char(js[index]):
                raise _UnreadableScript(f"number followed by a letter at {start}")
        elif (word := _JS_WORD.match(js, index)) is not None:
            index, kind = word.end(), "word"
        elif char == "/" and (after_condition or _regex_may_start(tokens)):
            index, kind = _skip_regex(js, index), "regex"
        else:
            punctuator = _JS_PUNCTUATOR.match(js, index)
            if punctuator is None:
                raise _UnreadableScript(f"unexpected {char!r} at {index}")
            text = punctuator.group()
            if text == "?." and js[index + 2 : index + 3].isdigit():  # a ?.5 : b
                text = "?"
            index += len(text)
            if text == "{":
                braces.append(False)
            elif text == "}" and braces:
                braces.pop()
            elif text == "(":
                parens.append(_opens_condition(tokens))
            elif text == ")":
                if not parens:
                    raise _UnreadableScript(f"unmatched ) at {start}")
                closes_condition = parens.pop()
        tokens.append((kind, js[start:index], broken))
        broken, after_condition = False, closes_condition
    return tokens


def _is_property_name(tokens: list[tuple[str, str, bool]], at: int) -> bool:
    """Whether the word ``tokens[at]`` follows ``.`` or ``?.`` (``o.in``, ``o?.if``)."""
    return at > 0 and tokens[at - 1][0] == "punct" and tokens[at - 1][1] in _JS_MEMBER_ACCESS


def _opens_condition(tokens: list[tuple[str, str, bool]]) -> bool:
    """Whether a ``(`` after ``tokens`` opens the head of an if, while, for (``for await``
    too) or with, after whose ``)`` a statement starts."""
    at = len(tokens) - 1
    if at >= 1 and tokens[at][1] == "await" and tokens[at - 1][1] == "for":
        at -= 1
    if at < 0 or tokens[at][0] != "word" or tokens[at][1] not in _JS_CONDITION_WORDS:
        return False
    return not _is_property_name(tokens, at)


def _regex_may_start(tokens: list[tuple[str, str, bool]]) -> bool:
    """Whether a ``/`` after ``tokens`` starts a regular expression (else it divides); the
    ``)`` of an if/while/for/with head is the tokenizer's to know."""
    if not tokens:
        return True
    kind, text, _ = tokens[-1]
    if kind == "word":
        if _is_property_name(tokens, len(tokens) - 1):
            return False
        if text in _JS_REGEX_OR_DIVISION_WORDS:
            raise _UnreadableScript(f"a / after {text}")
        return text in _JS_REGEX_AFTER_WORDS
    if kind == "template-open":
        return True
    if kind != "punct":
        return False
    if text == "}":  # a block's end or an object's: the tokenizer cannot tell
        raise _UnreadableScript("a / after }")
    if text in ("++", "--"):  # a++ / 2 divides, ++/re/.lastIndex does not
        raise _UnreadableScript(f"a / after {text}")
    return text not in (")", "]")


def _js_gap(before: tuple[str, str, bool], after: tuple[str, str, bool]) -> str:
    """What must stand between two tokens for them to read as they did in the source."""
    kind, text, _ = before
    next_kind, next_text, broken = after
    if broken and not (
        (kind == "punct" and text in _JS_BREAK_FREE_AFTER)
        or kind == "template-open"
        or (
            next_kind == "punct"
            and next_text in _JS_BREAK_FREE_BEFORE
            and text not in _JS_RESTRICTED_WORDS
        )
    ):
        return "\n"
    word_end = kind in ("word", "number", "regex")
    if word_end and (_is_word_char(next_text[0]) or next_kind == "regex"):
        return " "
    if (kind == "number" and next_text[0] == ".") or (
        next_kind == "number" and (next_text[0] == "." or text[-1] == ".")
    ):
        return " "
    if kind == "punct" and text + next_text[0] in _JS_JOINS:
        return " "
    if _would_open_html_markup(text[-1], next_text):
        return " "
    return ""


def _would_open_html_markup(last_char: str, next_text: str) -> bool:
    """Whether a token ending in ``last_char`` and then ``next_text`` with nothing between
    would write ``</``, ``<!`` or ``<script`` (``a << /script>/``, ``a <<\\n!--b``), which
    the HTML parser may read as the end of the <script> element or an escaped part."""
    return last_char == "<" and (next_text[0] in "/!" or next_text[:6].lower() == "script")


def minify_js(js: str) -> str:
    """Drop comments and every space and line break the script reads the same without: it
    ships inside every page. A script the tokenizer cannot read is kept as written, and so
    is one whose minified text would hold more ``</script``, ``<script`` or ``<!--``."""
    try:
        tokens = _js_tokens(js)
    except _UnreadableScript:
        return js
    out: list[str] = []
    for index, token in enumerate(tokens):
        if index:
            out.append(_js_gap(tokens[index - 1], token))
        out.append(token[1])
    small = "".join(out)
    source_lower, small_lower = js.lower(), small.lower()
    if any(small_lower.count(markup) > source_lower.count(markup) for markup in _HTML_IN_SCRIPT):
        return js  # a safety net: _js_gap never writes one
    return small


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
