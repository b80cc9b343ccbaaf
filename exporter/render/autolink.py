"""Bare web addresses in Markdown prose become links, as GitHub's Markdown (and Pi's page)
makes them: ``https://…``, ``http://…`` and ``www.…`` after a space or an opening mark.

A markdown-it core rule over the parsed inline text, not the ``linkify`` option: that needs
another package and a test of every text for every top-level domain; here a text without
``://`` or ``www.`` costs one substring check. The address ends where GitHub ends it:
trailing ``?!.,:;*_'~`` are punctuation of the sentence, a closing bracket without its
opening one belongs to the text around, so does an ``&entity;``. The link still goes through
the renderer's ``validateLink`` (http(s) only here) and ``link_open`` rule.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["use_bare_links"]

#: Longer "addresses" stay text: a link cannot be folded inside (a pasted 100 KB JSON line)
MAX_URL_CHARS = 2048
#: The address runs to a space, ``<``/``>``, a double quote, a backquote or a backslash: none
#: is in a real address unescaped, and in pasted JSON they end it (``"url":"https://…","n"``).
_CANDIDATE = re.compile(
    r"(?<![^\s*_~(\[\"'])(?:[Hh][Tt][Tt][Pp][Ss]?://|www\.)[^\W_][^\s<>\"`\\]"
    rf"{{0,{MAX_URL_CHARS}}}"
)
_URL_CHAR = re.compile(r"[^\s<>\"`\\]")
_TRAILING_PUNCTUATION = "?!.,:;*_'~"
_CLOSERS = {")": "(", "]": "["}


def _trimmed(url: str) -> str:
    """The address without what GitHub leaves to the sentence around it: trailing
    punctuation, closing brackets without their opening ones, an ``&entity;``. By index, one
    step per character (slicing and counting at each step was quadratic)."""
    end = len(url)
    unmatched = {c: url.count(c) - url.count(o) for c, o in _CLOSERS.items()}
    while end:
        last = url[end - 1]
        if last == ";":
            amp = url.rfind("&", max(0, end - 34), end)
            if amp >= 0 and amp + 1 < end - 1 and url[amp + 1 : end - 1].isalnum():
                end = amp  # an entity (&amp; &quot;) belongs to the text after the address
                continue
        if last in _TRAILING_PUNCTUATION:
            end -= 1
        elif last in _CLOSERS and unmatched[last] > 0:
            unmatched[last] -= 1
            end -= 1
        else:
            break
    return url[:end]


def _linked(token: Token, md: MarkdownIt) -> list[Token] | None:
    """``token`` (a text) split around its bare addresses, or None when it has none."""
    text, parts, position = token.content, [], 0
    for match in _CANDIDATE.finditer(text):
        if match.start() < position:
            continue
        if _URL_CHAR.match(text, match.end()):  # longer than any address: left as text
            continue
        url = _trimmed(match.group())
        if "." not in url and "://" not in url:  # "www" and nothing after the dot
            continue
        href = md.normalizeLink(url if "://" in url else f"http://{url}")
        if not md.validateLink(href):
            continue
        if match.start() > position:
            parts.append(_text(text[position : match.start()], token.level))
        link_open = Token("link_open", "a", 1, level=token.level, markup="linkify", info="auto")
        link_open.attrs = {"href": href}
        parts += [
            link_open,
            _text(md.normalizeLinkText(url), token.level + 1),
            Token("link_close", "a", -1, level=token.level, markup="linkify", info="auto"),
        ]
        position = match.start() + len(url)
    if not parts:
        return None
    if position < len(text):
        parts.append(_text(text[position:], token.level))
    return parts


def _text(content: str, level: int) -> Token:
    return Token("text", "", 0, level=level, content=content)


def _bare_links(state: Any) -> None:
    md = state.md
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = block.children
        if not any(
            t.type == "text" and ("://" in t.content or "www." in t.content) for t in children
        ):
            continue
        out: list[Token] = []
        depth = 0  # inside a link already: its text stays as written
        for child in children:
            if child.type == "link_open":
                depth += 1
            elif child.type == "link_close":
                depth -= 1
            split = _linked(child, md) if child.type == "text" and not depth else None
            out.extend(split or (child,))
        block.children = out


def use_bare_links(md: MarkdownIt) -> None:
    """Link bare addresses once the inline text is parsed and joined."""
    md.core.ruler.push("bare_links", _bare_links)
